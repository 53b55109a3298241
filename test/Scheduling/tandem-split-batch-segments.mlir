// One sequence laid out in causal segments (tandem-gen --segments) splits
// along them: segment j's attention reads the keys of segments 0 .. j and
// computes its own query rows (queries(N)), so when the parts are whole
// segments the forward runs as parts end to end, part 1's attention waiting
// only for part 0's qkv GEMM (issue 15, item 1: the causal token split).
// The backward's attention_grad runs once on the sequence in token order.
//
// RUN: tandem-gen --model llama3-8b --layers 1 --tp 8 --seq 2048 --segments 2 --print-locations -o %t.mlir
// RUN: tandem-opt %t.mlir --tandem-split-batch=parts=2 --mlir-print-op-on-diagnostic=false -o %t.2.mlir 2>&1 | FileCheck %s --check-prefix=CHECK-REMARK2
// RUN: FileCheck %s --check-prefix=CHECK-IR2 --input-file=%t.2.mlir
// RUN: tandem-opt %t.2.mlir --tandem-verify-schedule="reference=%t.mlir allow-reordered-collectives=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHECK-VERIFIED
//
// CHECK-REMARK2: batch split: '@train_step' split into 2 parts: {{.*}} 8 run whole on one part (a sequence's or a causal segment's attention), {{.*}}; chose 2 (parts=2)
//
// Part 0's qkv GEMM feeds segment 0's attention directly; part 1's attention
// reads the concat of both parts' qkv GEMMs (its causal prefix).
// CHECK-IR2: %[[AG0:[0-9]+]] = tandem.all_gather %{{[0-9]+}} on @tp dim 0 : tensor<128x4096xbf16> -> tensor<1024x4096xbf16>
// CHECK-IR2: %[[AG1:[0-9]+]] = tandem.all_gather %{{[0-9]+}} on @tp dim 0 : tensor<128x4096xbf16> -> tensor<1024x4096xbf16>
// CHECK-IR2: %[[QKV0:[0-9]+]] = tandem.matmul fprop %[[AG0]], %arg2 {layer = "l0.qkv"} : tensor<1024x4096xbf16>, tensor<4096x768xbf16> -> tensor<1024x768xbf16>
// CHECK-IR2-NEXT: %[[ATT0:[0-9]+]] = tandem.attention %[[QKV0]] heads(4, 1) head_dim(128) causal queries(1024) {layer = "l0.attn"} : tensor<1024x768xbf16> -> tensor<1024x512xbf16>
// CHECK-IR2: %[[QKV1:[0-9]+]] = tandem.matmul fprop %[[AG1]], %arg2 {layer = "l0.qkv"}
// CHECK-IR2: %[[KEYS:[0-9]+]] = tandem.concat %[[QKV0]], %[[QKV1]] dim 0 : tensor<1024x768xbf16>, tensor<1024x768xbf16> -> tensor<2048x768xbf16>
// CHECK-IR2-NEXT: tandem.attention %[[KEYS]] heads(4, 1) head_dim(128) causal queries(1024) {layer = "l0.attn"} : tensor<2048x768xbf16> -> tensor<1024x512xbf16>
// CHECK-IR2: tandem.attention_grad {{.*}} : tensor<2048x512xbf16>, tensor<2048x768xbf16>, tensor<2048x512xbf16> -> tensor<2048x768xbf16>
//
// CHECK-VERIFIED: {{(chunk pipeline\(s\)|op\(s\) recognised as parts of a batch split)}}{{.*}}returned values match the reference
// CHECK-VERIFIED: values match the reference
//
// Four segments in two parts (each part two segments, nested), and TP=1
// (no interleave): both verify against the unsplit step.
// RUN: tandem-gen --model llama3-8b --layers 2 --tp 8 --seq 2048 --segments 4 --print-locations -o %t.g4.mlir
// RUN: tandem-opt %t.g4.mlir --tandem-split-batch=parts=2 -o %t.g4.2.mlir 2>/dev/null
// RUN: tandem-opt %t.g4.2.mlir --tandem-verify-schedule="reference=%t.g4.mlir allow-reordered-collectives=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHECK-VERIFIED
// RUN: tandem-gen --model llama3-8b --layers 2 --tp 1 --seq 1024 --segments 2 --print-locations -o %t.tp1.mlir
// RUN: tandem-opt %t.tp1.mlir --tandem-split-batch=parts=2 -o %t.tp1.2.mlir 2>/dev/null
// RUN: tandem-opt %t.tp1.2.mlir --tandem-verify-schedule="reference=%t.tp1.mlir allow-reordered-collectives=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHECK-VERIFIED
//
// Two segments in four parts: the parts are not whole segments, attention
// takes its operands assembled, and the result still verifies.
// RUN: tandem-opt %t.mlir --tandem-split-batch=parts=4 -o %t.4.mlir 2>/dev/null
// RUN: tandem-opt %t.4.mlir --tandem-verify-schedule="reference=%t.mlir allow-reordered-collectives=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHECK-VERIFIED
//
// The same sequence without segments: its attention is a barrier between
// the parts, and the remark says what would split it.
// RUN: tandem-gen --model llama3-8b --layers 1 --tp 8 --seq 2048 -o %t.plain.mlir
// RUN: tandem-opt %t.plain.mlir --tandem-split-batch=parts=2 -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHECK-PLAIN
// CHECK-PLAIN: chose 2 (parts=2); 1 causal attention(s) over a whole sequence stay barriers between the parts (a sequence laid out in causal segments, tandem-gen --segments, splits there too)
// CHECK-REMARK2-NOT: causal attention(s) over a whole sequence
