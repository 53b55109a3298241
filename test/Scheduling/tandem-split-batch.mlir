// Batch splitting on a generated TP=2 layer, forced to 2 parts: every
// row-local op runs twice on half the rows, attention reads its parts
// assembled by rank (interleave 2), the wgrads read both operands as
// in-place concats of their parts, a norm's weight gradient adds its parts;
// the result is proven equal to the input by the schedule verifier.
//
// RUN: tandem-gen --model custom --hidden 256 --heads 4 --ffn 512 --layers 1 --tp 2 --seq 64 --print-locations -o %t.mlir
// RUN: tandem-opt %t.mlir --tandem-split-batch=parts=2 --mlir-print-op-on-diagnostic=false -o %t.split.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --input-file=%t.split.mlir
// RUN: tandem-opt %t.split.mlir --tandem-verify-schedule=reference=%t.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=VERIFY
// RUN: tandem-opt %t.split.mlir --tandem-overlap=strategy=reschedule -o /dev/null
//
// REMARK: batch split: '@train_step' split into 2 parts: 27 op(s) run as parts, 7 take assembled operands
// REMARK-SAME: predicted span with bulk overlap: 1 part {{[0-9.]+}} us; 2 parts {{[0-9.]+}} us; chose 2 (parts=2)
//
// CHECK-LABEL: func.func @train_step
// CHECK-DAG: tandem.slice %arg0 dim 0 chunk 0 of 2 : tensor<32x256xbf16> -> tensor<16x256xbf16>
// CHECK-DAG: tandem.slice %arg0 dim 0 chunk 1 of 2 : tensor<32x256xbf16> -> tensor<16x256xbf16>
// CHECK-DAG: tandem.all_gather %{{.*}} on @tp dim 0 : tensor<16x256xbf16> -> tensor<32x256xbf16>
// CHECK: %[[QKV:.*]] = tandem.concat %{{.*}}, %{{.*}} dim 0 interleave 2 : tensor<32x384xbf16>, tensor<32x384xbf16> -> tensor<64x384xbf16>
// CHECK: tandem.attention %[[QKV]]
// CHECK: tandem.slice %{{.*}} dim 0 chunk 0 of 2 interleave 2 : tensor<64x128xbf16> -> tensor<32x128xbf16>
// CHECK-COUNT-2: tandem.reduce_scatter %{{.*}} on @tp dim 0 : tensor<32x256xbf16> -> tensor<16x256xbf16>
// CHECK-COUNT-2: tandem.norm_grad layer {{.*}} {layer = "l0.ln2"}
// CHECK: tandem.concat %{{.*}}, %{{.*}} dim 0 : tensor<32x256xbf16>, tensor<32x256xbf16> -> tensor<64x256xbf16>
// CHECK: tandem.matmul wgrad %{{.*}}, %{{.*}} transpose_lhs {layer = "l0.fc2"} : tensor<64x256xbf16>, tensor<64x256xbf16>
// CHECK: tandem.attention_grad
// CHECK-COUNT-2: tandem.norm_grad layer {{.*}} {layer = "l0.ln1"}
// CHECK: tandem.elementwise add %{{.*}}, %{{.*}} : tensor<256xbf16>, tensor<256xbf16> -> tensor<256xbf16>
// CHECK: return
//
// VERIFY: op(s) recognised as parts of a batch split; returned values match the reference
// VERIFY: schedule verified {{.*}} values match the reference
