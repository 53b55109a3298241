// A micro-batch of several sequences (tandem-gen --sequences) splits along
// them: attention runs once per sequence, so when the parts are whole
// sequences the split sees through the generator's per-sequence slices and
// joins. Each part's attention then reads its own part's qkv GEMM directly,
// and the layer runs as independent parts end to end, so one part's native
// collective can run under the other part's compute (issue 15, item 1).
//
// RUN: tandem-gen --model llama3-8b --layers 1 --tp 8 --seq 2048 --sequences 2 --print-locations -o %t.mlir
// RUN: tandem-opt %t.mlir --tandem-split-batch=parts=2 --mlir-print-op-on-diagnostic=false -o %t.2.mlir 2>&1 | FileCheck %s --check-prefix=REMARK2
// RUN: FileCheck %s --check-prefix=IR2 --input-file=%t.2.mlir
// RUN: tandem-opt %t.2.mlir --tandem-verify-schedule="reference=%t.mlir allow-reordered-collectives=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=VERIFIED
//
// REMARK2: batch split: '@train_step' split into 2 parts: {{[0-9]+}} op(s) run as parts, {{[0-9]+}} take assembled operands (not row-local: attention, opaque kernels, wgrad contractions), 4 run whole on one part (a sequence's or a causal segment's attention), 6 slice(s)/concat(s) of sequences seen through, {{.*}}; chose 2 (parts=2)
//
// Part 0's all-gather feeds its qkv GEMM, whose output is sequence 0's
// attention input as it stands: no concat or slice between them.
// IR2: %[[AG0:[0-9]+]] = tandem.all_gather %{{[0-9]+}} on @tp dim 0 : tensor<256x4096xbf16> -> tensor<2048x4096xbf16>
// IR2: %[[QKV0:[0-9]+]] = tandem.matmul fprop %[[AG0]], %arg2 {layer = "l0.qkv"} : tensor<2048x4096xbf16>, tensor<4096x768xbf16> -> tensor<2048x768xbf16>
// IR2-NEXT: %[[ATT0:[0-9]+]] = tandem.attention %[[QKV0]] heads(4, 1) head_dim(128) causal {layer = "l0.attn"} : tensor<2048x768xbf16> -> tensor<2048x512xbf16>
// IR2-NEXT: tandem.matmul fprop %[[ATT0]], %arg3 {layer = "l0.proj"} : tensor<2048x512xbf16>, tensor<512x4096xbf16> -> tensor<2048x4096xbf16>
// IR2-NOT: tandem.attention {{.*}} tensor<4096x768xbf16>
//
// VERIFIED: op(s) recognised as parts of a batch split; returned values match the reference
// VERIFIED: values match the reference
//
// Four sequences in two parts: each part holds two whole sequences, so each
// part's attention inputs are slices of that part's qkv (nested parts).
// RUN: tandem-gen --model llama3-8b --layers 1 --tp 8 --seq 1024 --sequences 4 --print-locations -o %t.s4.mlir
// RUN: tandem-opt %t.s4.mlir --tandem-split-batch=parts=2 --mlir-print-op-on-diagnostic=false -o %t.s4.2.mlir 2>&1 | FileCheck %s --check-prefix=REMARK4
// RUN: tandem-opt %t.s4.2.mlir --tandem-verify-schedule="reference=%t.s4.mlir allow-reordered-collectives=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=VERIFIED
// REMARK4: split into 2 parts: {{.*}} 8 run whole on one part (a sequence's or a causal segment's attention), 10 slice(s)/concat(s) of sequences seen through
//
// More parts than sequences: a part is less than a sequence, attention needs
// its whole sequence, so nothing is seen through and attention's operands
// are assembled from the parts; the program still verifies.
// RUN: tandem-opt %t.mlir --tandem-split-batch=parts=4 --mlir-print-op-on-diagnostic=false -o %t.4.mlir 2>&1 | FileCheck %s --check-prefix=REMARK4OF2
// RUN: tandem-opt %t.4.mlir --tandem-verify-schedule="reference=%t.mlir allow-reordered-collectives=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=VERIFIED4
// VERIFIED4: returned values match the reference
// REMARK4OF2: split into 4 parts: {{.*}} 0 slice(s)/concat(s) of sequences seen through
