// With several micro-batches the batch split's list scheduler also runs on
// the unsplit step (one "part"): it interleaves the micro-batches, so that
// one micro-batch's compute runs under another's collectives. That reorders
// each group's collectives, which the verifier accepts only when told
// (allow-reordered-collectives, which tandem-overlap sets for the split
// strategies): one function runs on every rank, so every rank issues the
// new order.
//
// RUN: tandem-gen --model llama3-8b --layers 1 --tp 8 --seq 2048 --micro-batches 2 --print-locations -o %t.mlir
// RUN: tandem-opt %t.mlir --tandem-split-batch --mlir-print-op-on-diagnostic=false -o %t.out.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: tandem-opt %t.out.mlir --tandem-verify-schedule="reference=%t.mlir allow-reordered-collectives=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALLOWED
// RUN: not tandem-opt %t.out.mlir --tandem-verify-schedule="reference=%t.mlir" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: tandem-opt %t.mlir --tandem-overlap --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO
//
// REMARK: batch split: '@train_step' left unsplit, its ops reordered by the list scheduler (independent chains such as micro-batches interleaved); predicted span with bulk overlap: 1 part {{[0-9.]+}} us; 1 part reordered {{[0-9.]+}} us; 2 parts {{.*}} chose 1 reordered
// ALLOWED: the collectives on @tp are the reference's, issued in another order (allowed)
// ALLOWED: values match the reference
// STRICT: error: collective #{{[0-9]+}} on @tp differs from the reference's: the group's issue order or the collective's value changed
// AUTO: strategy split chosen
