// The op sequence tandem-gen writes for one layer of a small custom model:
// forward, the opaque loss, backward in the documented order, with per-rank
// shapes. Each configuration is also parsed and verified by tandem-opt.

// DEFINE: %{gen} = tandem-gen --model custom --hidden 256 --heads 4 --ffn 1024 --layers 1 --seq 64

// GELU, LayerNorm, 4 heads on TP=2: s = 64, s/tp = 32, h = 256, 2 heads and
// 2 KV heads of 64 per rank (qkv: 6 * 64 = 384 columns), ffn/tp = 512.
// RUN: %{gen} --tp 2 -o %t.base.mlir && tandem-opt %t.base.mlir -o /dev/null
// RUN: FileCheck %s --input-file=%t.base.mlir

// CHECK-LABEL: module attributes {tandem.target = #tandem.target<"h200">} {
// CHECK-NEXT: tandem.group @tp size(2) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
// CHECK-NOT: tandem.group
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %x.mb0: tensor<32x256xbf16>, %l0.ln1.w: tensor<256xbf16>, %l0.qkv.w: tensor<256x384xbf16>, %l0.proj.w: tensor<128x256xbf16>, %l0.ln2.w: tensor<256xbf16>, %l0.fc1.w: tensor<256x512xbf16>, %l0.fc2.w: tensor<512x256xbf16>)
// CHECK-SAME: -> (tensor<256xbf16>, tensor<256x384xbf16>, tensor<128x256xbf16>, tensor<256xbf16>, tensor<256x512xbf16>, tensor<512x256xbf16>) {
// CHECK-NEXT: %l0.ln1.norm.mb0 = tandem.norm layer %x.mb0, %l0.ln1.w {layer = "l0.ln1"} : tensor<32x256xbf16>, tensor<256xbf16>
// CHECK-NEXT: %l0.qkv.ag.mb0 = tandem.all_gather %l0.ln1.norm.mb0 on @tp dim 0 : tensor<32x256xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT: %l0.qkv.fprop.mb0 = tandem.matmul fprop %l0.qkv.ag.mb0, %l0.qkv.w {layer = "l0.qkv"} : tensor<64x256xbf16>, tensor<256x384xbf16> -> tensor<64x384xbf16>
// CHECK-NEXT: %l0.attn.fprop.mb0 = tandem.attention %l0.qkv.fprop.mb0 heads(2, 2) head_dim(64) causal {layer = "l0.attn"} : tensor<64x384xbf16> -> tensor<64x128xbf16>
// CHECK-NEXT: %l0.proj.fprop.mb0 = tandem.matmul fprop %l0.attn.fprop.mb0, %l0.proj.w {layer = "l0.proj"} : tensor<64x128xbf16>, tensor<128x256xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT: %l0.proj.rs.mb0 = tandem.reduce_scatter %l0.proj.fprop.mb0 on @tp dim 0 : tensor<64x256xbf16> -> tensor<32x256xbf16>
// CHECK-NEXT: %l0.attn.residual.mb0 = tandem.elementwise add %x.mb0, %l0.proj.rs.mb0 : tensor<32x256xbf16>, tensor<32x256xbf16> -> tensor<32x256xbf16>
// CHECK-NEXT: %l0.ln2.norm.mb0 = tandem.norm layer %l0.attn.residual.mb0, %l0.ln2.w {layer = "l0.ln2"} : tensor<32x256xbf16>, tensor<256xbf16>
// CHECK-NEXT: %l0.fc1.ag.mb0 = tandem.all_gather %l0.ln2.norm.mb0 on @tp dim 0 : tensor<32x256xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT: %l0.fc1.fprop.mb0 = tandem.matmul fprop %l0.fc1.ag.mb0, %l0.fc1.w {layer = "l0.fc1"} : tensor<64x256xbf16>, tensor<256x512xbf16> -> tensor<64x512xbf16>
// CHECK-NEXT: %l0.act.gelu.mb0 = tandem.elementwise gelu %l0.fc1.fprop.mb0 : tensor<64x512xbf16> -> tensor<64x512xbf16>
// CHECK-NEXT: %l0.fc2.fprop.mb0 = tandem.matmul fprop %l0.act.gelu.mb0, %l0.fc2.w {layer = "l0.fc2"} : tensor<64x512xbf16>, tensor<512x256xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT: %l0.fc2.rs.mb0 = tandem.reduce_scatter %l0.fc2.fprop.mb0 on @tp dim 0 : tensor<64x256xbf16> -> tensor<32x256xbf16>
// CHECK-NEXT: %l0.mlp.residual.mb0 = tandem.elementwise add %l0.attn.residual.mb0, %l0.fc2.rs.mb0 : tensor<32x256xbf16>, tensor<32x256xbf16> -> tensor<32x256xbf16>
// CHECK-NEXT: %loss_grad.mb0 = tandem.opaque "loss_grad"(%l0.mlp.residual.mb0) flops(0.000000e+00) bytes(32768) : (tensor<32x256xbf16>) -> tensor<32x256xbf16>
// CHECK-NEXT: %l0.fc2.grad_ag.mb0 = tandem.all_gather %loss_grad.mb0 on @tp dim 0 : tensor<32x256xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT: %l0.fc2.dgrad.mb0 = tandem.matmul dgrad %l0.fc2.grad_ag.mb0, %l0.fc2.w transpose_rhs {layer = "l0.fc2"} : tensor<64x256xbf16>, tensor<512x256xbf16> -> tensor<64x512xbf16>
// CHECK-NEXT: %l0.fc2.wgrad.mb0 = tandem.matmul wgrad %l0.act.gelu.mb0, %l0.fc2.grad_ag.mb0 transpose_lhs {layer = "l0.fc2"} : tensor<64x512xbf16>, tensor<64x256xbf16> -> tensor<512x256xbf16>
// CHECK-NEXT: %l0.act.gelu_grad.mb0 = tandem.elementwise gelu_grad %l0.fc2.dgrad.mb0, %l0.fc1.fprop.mb0 : tensor<64x512xbf16>, tensor<64x512xbf16> -> tensor<64x512xbf16>
// CHECK-NEXT: %l0.fc1.dgrad.mb0 = tandem.matmul dgrad %l0.act.gelu_grad.mb0, %l0.fc1.w transpose_rhs {layer = "l0.fc1"} : tensor<64x512xbf16>, tensor<256x512xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT: %l0.fc1.wgrad_ag.mb0 = tandem.all_gather %l0.ln2.norm.mb0 on @tp dim 0 : tensor<32x256xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT: %l0.fc1.wgrad.mb0 = tandem.matmul wgrad %l0.fc1.wgrad_ag.mb0, %l0.act.gelu_grad.mb0 transpose_lhs {layer = "l0.fc1"} : tensor<64x256xbf16>, tensor<64x512xbf16> -> tensor<256x512xbf16>
// CHECK-NEXT: %l0.fc1.grad_rs.mb0 = tandem.reduce_scatter %l0.fc1.dgrad.mb0 on @tp dim 0 : tensor<64x256xbf16> -> tensor<32x256xbf16>
// CHECK-NEXT: %l0.ln2.norm_grad.mb0, %[[DW_LN2:l0.ln2.norm_grad.mb0_[0-9]+]] = tandem.norm_grad layer %l0.fc1.grad_rs.mb0, %l0.attn.residual.mb0, %l0.ln2.w {layer = "l0.ln2"} : tensor<32x256xbf16>, tensor<256xbf16>
// CHECK-NEXT: %l0.mlp.residual_grad.mb0 = tandem.elementwise add %loss_grad.mb0, %l0.ln2.norm_grad.mb0 : tensor<32x256xbf16>, tensor<32x256xbf16> -> tensor<32x256xbf16>
// CHECK-NEXT: %l0.proj.grad_ag.mb0 = tandem.all_gather %l0.mlp.residual_grad.mb0 on @tp dim 0 : tensor<32x256xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT: %l0.proj.dgrad.mb0 = tandem.matmul dgrad %l0.proj.grad_ag.mb0, %l0.proj.w transpose_rhs {layer = "l0.proj"} : tensor<64x256xbf16>, tensor<128x256xbf16> -> tensor<64x128xbf16>
// CHECK-NEXT: %l0.proj.wgrad.mb0 = tandem.matmul wgrad %l0.attn.fprop.mb0, %l0.proj.grad_ag.mb0 transpose_lhs {layer = "l0.proj"} : tensor<64x128xbf16>, tensor<64x256xbf16> -> tensor<128x256xbf16>
// CHECK-NEXT: %l0.attn.dgrad.mb0 = tandem.attention_grad %l0.proj.dgrad.mb0, %l0.qkv.fprop.mb0, %l0.attn.fprop.mb0 heads(2, 2) head_dim(64) causal {layer = "l0.attn"} : tensor<64x128xbf16>, tensor<64x384xbf16>, tensor<64x128xbf16> -> tensor<64x384xbf16>
// CHECK-NEXT: %l0.qkv.dgrad.mb0 = tandem.matmul dgrad %l0.attn.dgrad.mb0, %l0.qkv.w transpose_rhs {layer = "l0.qkv"} : tensor<64x384xbf16>, tensor<256x384xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT: %l0.qkv.wgrad_ag.mb0 = tandem.all_gather %l0.ln1.norm.mb0 on @tp dim 0 : tensor<32x256xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT: %l0.qkv.wgrad.mb0 = tandem.matmul wgrad %l0.qkv.wgrad_ag.mb0, %l0.attn.dgrad.mb0 transpose_lhs {layer = "l0.qkv"} : tensor<64x256xbf16>, tensor<64x384xbf16> -> tensor<256x384xbf16>
// CHECK-NEXT: %l0.qkv.grad_rs.mb0 = tandem.reduce_scatter %l0.qkv.dgrad.mb0 on @tp dim 0 : tensor<64x256xbf16> -> tensor<32x256xbf16>
// CHECK-NEXT: %l0.ln1.norm_grad.mb0, %[[DW_LN1:l0.ln1.norm_grad.mb0_[0-9]+]] = tandem.norm_grad layer %l0.qkv.grad_rs.mb0, %x.mb0, %l0.ln1.w {layer = "l0.ln1"} : tensor<32x256xbf16>, tensor<256xbf16>
// CHECK-NEXT: return %[[DW_LN1]], %l0.qkv.wgrad.mb0, %l0.proj.wgrad.mb0, %[[DW_LN2]], %l0.fc1.wgrad.mb0, %l0.fc2.wgrad.mb0 : tensor<256xbf16>, tensor<256x384xbf16>, tensor<128x256xbf16>, tensor<256xbf16>, tensor<256x512xbf16>, tensor<512x256xbf16>
// CHECK-NEXT: }

// SwiGLU (fc1 twice as wide, swiglu halves it), RMSNorm and grouped-query
// attention: 2 query heads and 1 KV head per rank, qkv (2 + 2 * 1) * 64 = 256
// columns.
// RUN: %{gen} --tp 2 --mlp=swiglu --norm=rms --kv-heads 2 -o %t.swiglu.mlir && tandem-opt %t.swiglu.mlir -o /dev/null
// RUN: FileCheck %s --check-prefix=SWIGLU --input-file=%t.swiglu.mlir

// SWIGLU-LABEL: func.func @train_step(
// SWIGLU-SAME: %l0.qkv.w: tensor<256x256xbf16>, %l0.proj.w: tensor<128x256xbf16>, %l0.ln2.w: tensor<256xbf16>, %l0.fc1.w: tensor<256x1024xbf16>, %l0.fc2.w: tensor<512x256xbf16>)
// SWIGLU: %l0.ln1.norm.mb0 = tandem.norm rms %x.mb0, %l0.ln1.w
// SWIGLU: %l0.qkv.fprop.mb0 = tandem.matmul fprop {{.*}} -> tensor<64x256xbf16>
// SWIGLU-NEXT: %l0.attn.fprop.mb0 = tandem.attention %l0.qkv.fprop.mb0 heads(2, 1) head_dim(64) causal {layer = "l0.attn"} : tensor<64x256xbf16> -> tensor<64x128xbf16>
// SWIGLU: %l0.fc1.fprop.mb0 = tandem.matmul fprop %l0.fc1.ag.mb0, %l0.fc1.w {layer = "l0.fc1"} : tensor<64x256xbf16>, tensor<256x1024xbf16> -> tensor<64x1024xbf16>
// SWIGLU-NEXT: %l0.act.swiglu.mb0 = tandem.elementwise swiglu %l0.fc1.fprop.mb0 : tensor<64x1024xbf16> -> tensor<64x512xbf16>
// SWIGLU-NEXT: %l0.fc2.fprop.mb0 = tandem.matmul fprop %l0.act.swiglu.mb0, %l0.fc2.w {{.*}} -> tensor<64x256xbf16>
// SWIGLU: %l0.fc2.dgrad.mb0 = tandem.matmul dgrad {{.*}} -> tensor<64x512xbf16>
// SWIGLU-NEXT: %l0.fc2.wgrad.mb0 = tandem.matmul wgrad %l0.act.swiglu.mb0, {{.*}} -> tensor<512x256xbf16>
// SWIGLU-NEXT: %l0.act.swiglu_grad.mb0 = tandem.elementwise swiglu_grad %l0.fc2.dgrad.mb0, %l0.fc1.fprop.mb0 : tensor<64x512xbf16>, tensor<64x1024xbf16> -> tensor<64x1024xbf16>
// SWIGLU-NEXT: %l0.fc1.dgrad.mb0 = tandem.matmul dgrad %l0.act.swiglu_grad.mb0, %l0.fc1.w transpose_rhs {layer = "l0.fc1"} : tensor<64x1024xbf16>, tensor<256x1024xbf16> -> tensor<64x256xbf16>
// SWIGLU: %l0.fc1.wgrad.mb0 = tandem.matmul wgrad {{.*}} -> tensor<256x1024xbf16>
// SWIGLU: tandem.norm_grad rms %l0.fc1.grad_rs.mb0
// SWIGLU: %l0.attn.dgrad.mb0 = tandem.attention_grad {{.*}} heads(2, 1) head_dim(64) causal {{.*}} -> tensor<64x256xbf16>
// SWIGLU: %l0.qkv.wgrad.mb0 = tandem.matmul wgrad {{.*}} -> tensor<256x256xbf16>
// SWIGLU: tandem.norm_grad rms %l0.qkv.grad_rs.mb0

// Two layers: the backward pass runs from the last layer down, layer 1's
// input gradient feeds layer 0, and layer 0 ends with its norm_grad (its
// input gradient would be dead).
// RUN: %{gen} --tp 2 --layers 2 -o %t.layers.mlir && tandem-opt %t.layers.mlir -o /dev/null
// RUN: FileCheck %s --check-prefix=LAYERS --input-file=%t.layers.mlir

// LAYERS: %l1.mlp.residual.mb0 = tandem.elementwise add
// LAYERS-NEXT: %loss_grad.mb0 = tandem.opaque "loss_grad"(%l1.mlp.residual.mb0)
// LAYERS-NEXT: %l1.fc2.grad_ag.mb0 = tandem.all_gather %loss_grad.mb0 on @tp
// LAYERS: %l1.ln1.norm_grad.mb0, %{{.*}} = tandem.norm_grad layer %l1.qkv.grad_rs.mb0, %l0.mlp.residual.mb0, %l1.ln1.w
// LAYERS-NEXT: %l1.attn.residual_grad.mb0 = tandem.elementwise add %l1.mlp.residual_grad.mb0, %l1.ln1.norm_grad.mb0
// LAYERS-NEXT: %l0.fc2.grad_ag.mb0 = tandem.all_gather %l1.attn.residual_grad.mb0 on @tp
// LAYERS: %l0.ln1.norm_grad.mb0, %{{.*}} = tandem.norm_grad layer %l0.qkv.grad_rs.mb0, %x.mb0, %l0.ln1.w
// LAYERS-NEXT: return
// LAYERS-NOT: l0.attn.residual_grad

// Two micro-batches: each weight gradient of micro-batch 1 is added to
// micro-batch 0's right after it is produced, and the sums are returned.
// RUN: %{gen} --tp 2 --micro-batches 2 -o %t.mb.mlir && tandem-opt %t.mb.mlir -o /dev/null
// RUN: FileCheck %s --check-prefix=MB --input-file=%t.mb.mlir

// MB-LABEL: func.func @train_step(%x.mb0: tensor<32x256xbf16>, %x.mb1: tensor<32x256xbf16>, %l0.ln1.w: tensor<256xbf16>,
// MB-NOT: wgrad_acc
// MB: %loss_grad.mb0 = tandem.opaque "loss_grad"(%l0.mlp.residual.mb0)
// MB-NOT: wgrad_acc
// MB: %l0.ln1.norm_grad.mb0, %[[LN1_0:l0.ln1.norm_grad.mb0_[0-9]+]] = tandem.norm_grad
// MB-NOT: wgrad_acc
// MB: %l0.ln1.norm.mb1 = tandem.norm layer %x.mb1, %l0.ln1.w
// MB: %l0.fc2.wgrad.mb1 = tandem.matmul wgrad
// MB-NEXT: %l0.fc2.wgrad_acc.mb1 = tandem.elementwise add %l0.fc2.wgrad.mb0, %l0.fc2.wgrad.mb1 : tensor<512x256xbf16>, tensor<512x256xbf16> -> tensor<512x256xbf16>
// MB: %l0.fc1.wgrad.mb1 = tandem.matmul wgrad
// MB-NEXT: %l0.fc1.wgrad_acc.mb1 = tandem.elementwise add %l0.fc1.wgrad.mb0, %l0.fc1.wgrad.mb1 : tensor<256x512xbf16>, tensor<256x512xbf16> -> tensor<256x512xbf16>
// MB: %l0.ln2.norm_grad.mb1, %[[LN2_1:l0.ln2.norm_grad.mb1_[0-9]+]] = tandem.norm_grad
// MB-NEXT: %l0.ln2.wgrad_acc.mb1 = tandem.elementwise add %l0.ln2.norm_grad.mb0_{{[0-9]+}}, %[[LN2_1]] : tensor<256xbf16>, tensor<256xbf16> -> tensor<256xbf16>
// MB-NEXT: %l0.mlp.residual_grad.mb1 = tandem.elementwise add %loss_grad.mb1, %l0.ln2.norm_grad.mb1
// MB: %l0.proj.wgrad.mb1 = tandem.matmul wgrad
// MB-NEXT: %l0.proj.wgrad_acc.mb1 = tandem.elementwise add %l0.proj.wgrad.mb0, %l0.proj.wgrad.mb1
// MB: %l0.qkv.wgrad.mb1 = tandem.matmul wgrad
// MB-NEXT: %l0.qkv.wgrad_acc.mb1 = tandem.elementwise add %l0.qkv.wgrad.mb0, %l0.qkv.wgrad.mb1
// MB: %l0.ln1.norm_grad.mb1, %[[LN1_1:l0.ln1.norm_grad.mb1_[0-9]+]] = tandem.norm_grad
// MB-NEXT: %l0.ln1.wgrad_acc.mb1 = tandem.elementwise add %[[LN1_0]], %[[LN1_1]]
// MB-NEXT: return %l0.ln1.wgrad_acc.mb1, %l0.qkv.wgrad_acc.mb1, %l0.proj.wgrad_acc.mb1, %l0.ln2.wgrad_acc.mb1, %l0.fc1.wgrad_acc.mb1, %l0.fc2.wgrad_acc.mb1 :

// Data parallelism inside the node (TP=2 x DP=2): a @dp group of the same
// form as @tp, and after the last micro-batch one all-reduce per accumulated
// gradient, in the order the gradients became final.
// RUN: %{gen} --tp 2 --dp 2 --micro-batches 2 -o %t.dp.mlir && tandem-opt %t.dp.mlir -o /dev/null
// RUN: FileCheck %s --check-prefix=DP --input-file=%t.dp.mlir

// DP: tandem.group @tp size(2) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
// DP-NEXT: tandem.group @dp size(2) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
// DP-NOT: tandem.all_reduce
// DP: %l0.ln1.wgrad_acc.mb1 = tandem.elementwise add
// DP-NEXT: %l0.fc2.wgrad_ar = tandem.all_reduce %l0.fc2.wgrad_acc.mb1 on @dp : tensor<512x256xbf16> -> tensor<512x256xbf16>
// DP-NEXT: %l0.fc1.wgrad_ar = tandem.all_reduce %l0.fc1.wgrad_acc.mb1 on @dp : tensor<256x512xbf16> -> tensor<256x512xbf16>
// DP-NEXT: %l0.ln2.wgrad_ar = tandem.all_reduce %l0.ln2.wgrad_acc.mb1 on @dp : tensor<256xbf16> -> tensor<256xbf16>
// DP-NEXT: %l0.proj.wgrad_ar = tandem.all_reduce %l0.proj.wgrad_acc.mb1 on @dp : tensor<128x256xbf16> -> tensor<128x256xbf16>
// DP-NEXT: %l0.qkv.wgrad_ar = tandem.all_reduce %l0.qkv.wgrad_acc.mb1 on @dp : tensor<256x384xbf16> -> tensor<256x384xbf16>
// DP-NEXT: %l0.ln1.wgrad_ar = tandem.all_reduce %l0.ln1.wgrad_acc.mb1 on @dp : tensor<256xbf16> -> tensor<256xbf16>
// DP-NEXT: return %l0.ln1.wgrad_ar, %l0.qkv.wgrad_ar, %l0.proj.wgrad_ar, %l0.ln2.wgrad_ar, %l0.fc1.wgrad_ar, %l0.fc2.wgrad_ar :

// TP=8 x DP=4 spans four nodes: @dp is hierarchical with one member per node.
// RUN: tandem-gen --model custom --hidden 512 --heads 8 --ffn 1024 --layers 1 --seq 64 --tp 8 --dp 4 -o %t.hier.mlir && tandem-opt %t.hier.mlir -o /dev/null
// RUN: FileCheck %s --check-prefix=HIER --input-file=%t.hier.mlir

// HIER: tandem.group @tp size(8) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
// HIER-NEXT: tandem.group @dp size(4) hierarchical links(18 x 2.500000e+01 GBps, 2.000000e+00 us) {gpus_per_node = 1 : i64, inter_node_bandwidth_gbps = 5.000000e+01 : f64, inter_node_latency_us = 5.000000e+00 : f64}
// HIER: func.func @train_step(%x.mb0: tensor<8x512xbf16>,
// HIER: %l0.fc2.wgrad_ar = tandem.all_reduce %l0.fc2.wgrad.mb0 on @dp : tensor<128x512xbf16> -> tensor<128x512xbf16>

// TP=1: no @tp group and no collectives; the step is pure compute on the
// whole sequence.
// RUN: %{gen} --tp 1 -o %t.tp1.mlir && tandem-opt %t.tp1.mlir -o /dev/null
// RUN: FileCheck %s --check-prefix=TP1 --implicit-check-not=tandem.all_gather --implicit-check-not=tandem.reduce_scatter --implicit-check-not=tandem.all_reduce --input-file=%t.tp1.mlir

// TP1-NOT: tandem.group
// TP1: func.func @train_step(%x.mb0: tensor<64x256xbf16>, %l0.ln1.w: tensor<256xbf16>, %l0.qkv.w: tensor<256x768xbf16>
// TP1-NEXT: %l0.ln1.norm.mb0 = tandem.norm layer %x.mb0, %l0.ln1.w
// TP1-NEXT: %l0.qkv.fprop.mb0 = tandem.matmul fprop %l0.ln1.norm.mb0, %l0.qkv.w {layer = "l0.qkv"} : tensor<64x256xbf16>, tensor<256x768xbf16> -> tensor<64x768xbf16>
// TP1: %l0.attn.residual.mb0 = tandem.elementwise add %x.mb0, %l0.proj.fprop.mb0
// TP1: %l0.fc1.wgrad.mb0 = tandem.matmul wgrad %l0.ln2.norm.mb0, %l0.act.gelu_grad.mb0 transpose_lhs
// TP1: return

// TP=1 with DP=2: the gradient all-reduces are the only collectives.
// RUN: %{gen} --tp 1 --dp 2 -o %t.tp1dp2.mlir && tandem-opt %t.tp1dp2.mlir -o /dev/null
// RUN: FileCheck %s --check-prefix=TP1DP2 --implicit-check-not=tandem.all_gather --implicit-check-not=tandem.reduce_scatter --input-file=%t.tp1dp2.mlir

// TP1DP2-NOT: @tp
// TP1DP2: tandem.group @dp size(2) switch
// TP1DP2-NOT: @tp
// TP1DP2-COUNT-6: tandem.all_reduce {{.*}} on @dp
// TP1DP2-NEXT: return

// Printing: --print-names=false numbers the values; --print-locations writes
// the NameLocs, which survive a trip through tandem-opt.
// RUN: %{gen} --tp 2 --print-names=false | FileCheck %s --check-prefix=NUMBERED
// RUN: %{gen} --tp 2 --print-locations | tandem-opt --mlir-use-nameloc-as-prefix | FileCheck %s --check-prefix=LOCS

// NUMBERED: func.func @train_step(%arg0: tensor<32x256xbf16>, %arg1: tensor<256xbf16>,
// NUMBERED-NEXT: %0 = tandem.norm layer %arg0, %arg1 {layer = "l0.ln1"}
// NUMBERED-NEXT: %1 = tandem.all_gather %0 on @tp dim 0

// LOCS: func.func @train_step(%x.mb0: tensor<32x256xbf16>, %l0.ln1.w: tensor<256xbf16>,
// LOCS: %l0.fc1.wgrad.mb0 = tandem.matmul wgrad %l0.fc1.wgrad_ag.mb0, %l0.act.gelu_grad.mb0 transpose_lhs

// Two sequences per micro-batch (--sequences 2 --seq 64 on TP=2): each rank
// holds 32 tokens of each sequence, sequence-major (64 local rows). The
// gathered qkv is rank-major, so sequence s is chunk s of 2 within every
// rank's block (interleave 2); attention runs once per sequence and its
// outputs are joined back in the same layout. Backward slices the proj dgrad
// the same way, reuses each sequence's qkv and attention output, and joins
// the attention gradients before the qkv GEMMs.
// RUN: %{gen} --tp 2 --sequences 2 -o %t.seqs.mlir && tandem-opt %t.seqs.mlir -o /dev/null
// RUN: FileCheck %s --check-prefix=SEQS --input-file=%t.seqs.mlir
// SEQS-LABEL: func.func @train_step(
// SEQS-SAME: %x.mb0: tensor<64x256xbf16>
// SEQS: %l0.qkv.fprop.mb0 = tandem.matmul fprop %l0.qkv.ag.mb0, %l0.qkv.w {layer = "l0.qkv"} : tensor<128x256xbf16>, tensor<256x384xbf16> -> tensor<128x384xbf16>
// SEQS-NEXT: %l0.qkv.seq.s0.mb0 = tandem.slice %l0.qkv.fprop.mb0 dim 0 chunk 0 of 2 interleave 2 : tensor<128x384xbf16> -> tensor<64x384xbf16>
// SEQS-NEXT: %l0.attn.fprop.s0.mb0 = tandem.attention %l0.qkv.seq.s0.mb0 heads(2, 2) head_dim(64) causal {layer = "l0.attn"} : tensor<64x384xbf16> -> tensor<64x128xbf16>
// SEQS-NEXT: %l0.qkv.seq.s1.mb0 = tandem.slice %l0.qkv.fprop.mb0 dim 0 chunk 1 of 2 interleave 2 : tensor<128x384xbf16> -> tensor<64x384xbf16>
// SEQS-NEXT: %l0.attn.fprop.s1.mb0 = tandem.attention %l0.qkv.seq.s1.mb0 heads(2, 2) head_dim(64) causal {layer = "l0.attn"} : tensor<64x384xbf16> -> tensor<64x128xbf16>
// SEQS-NEXT: %l0.attn.join.mb0 = tandem.concat %l0.attn.fprop.s0.mb0, %l0.attn.fprop.s1.mb0 dim 0 interleave 2 : tensor<64x128xbf16>, tensor<64x128xbf16> -> tensor<128x128xbf16>
// SEQS-NEXT: %l0.proj.fprop.mb0 = tandem.matmul fprop %l0.attn.join.mb0, %l0.proj.w
// SEQS: %l0.proj.wgrad.mb0 = tandem.matmul wgrad %l0.attn.join.mb0, %l0.proj.grad_ag.mb0 transpose_lhs
// SEQS-NEXT: %l0.attn.grad_seq.s0.mb0 = tandem.slice %l0.proj.dgrad.mb0 dim 0 chunk 0 of 2 interleave 2 : tensor<128x128xbf16> -> tensor<64x128xbf16>
// SEQS-NEXT: %l0.attn.dgrad.s0.mb0 = tandem.attention_grad %l0.attn.grad_seq.s0.mb0, %l0.qkv.seq.s0.mb0, %l0.attn.fprop.s0.mb0 heads(2, 2) head_dim(64) causal
// SEQS-NEXT: %l0.attn.grad_seq.s1.mb0 = tandem.slice %l0.proj.dgrad.mb0 dim 0 chunk 1 of 2 interleave 2 : tensor<128x128xbf16> -> tensor<64x128xbf16>
// SEQS-NEXT: %l0.attn.dgrad.s1.mb0 = tandem.attention_grad %l0.attn.grad_seq.s1.mb0, %l0.qkv.seq.s1.mb0, %l0.attn.fprop.s1.mb0 heads(2, 2) head_dim(64) causal
// SEQS-NEXT: %l0.attn.grad_join.mb0 = tandem.concat %l0.attn.dgrad.s0.mb0, %l0.attn.dgrad.s1.mb0 dim 0 interleave 2 : tensor<64x384xbf16>, tensor<64x384xbf16> -> tensor<128x384xbf16>
// SEQS-NEXT: %l0.qkv.dgrad.mb0 = tandem.matmul dgrad %l0.attn.grad_join.mb0, %l0.qkv.w transpose_rhs

// On TP=1 there is nothing to interleave: sequence s is rows [s*64, s*64+64).
// RUN: %{gen} --tp 1 --sequences 2 | FileCheck %s --check-prefix=SEQS-TP1
// SEQS-TP1: %l0.qkv.seq.s1.mb0 = tandem.slice %l0.qkv.fprop.mb0 dim 0 chunk 1 of 2 : tensor<128x768xbf16> -> tensor<64x768xbf16>

// One sequence in two causal segments (--segments 2 --seq 64 on TP=2): each
// rank holds 16 tokens of each segment, so segment g is chunk g of 2 within
// every rank's block of the gathered qkv (interleave 2). Segment 0 attends to
// itself, segment 1 to the concat of segments 0 and 1 in token order, each
// computing only its own 32 query rows (queries(32)). Backward runs one
// attention_grad on the sequence in token order and cuts its gradient back
// into the segments' rows of the gathered layout.
// RUN: %{gen} --tp 2 --segments 2 -o %t.segs.mlir && tandem-opt %t.segs.mlir -o /dev/null
// RUN: FileCheck %s --check-prefix=SEGS --input-file=%t.segs.mlir
// SEGS-LABEL: func.func @train_step(
// SEGS-SAME: %x.mb0: tensor<32x256xbf16>
// SEGS: %l0.qkv.seq.s0.g0.mb0 = tandem.slice %l0.qkv.fprop.mb0 dim 0 chunk 0 of 2 interleave 2 : tensor<64x384xbf16> -> tensor<32x384xbf16>
// SEGS-NEXT: %l0.attn.fprop.s0.g0.mb0 = tandem.attention %l0.qkv.seq.s0.g0.mb0 heads(2, 2) head_dim(64) causal queries(32) {layer = "l0.attn"} : tensor<32x384xbf16> -> tensor<32x128xbf16>
// SEGS-NEXT: %l0.qkv.seq.s0.g1.mb0 = tandem.slice %l0.qkv.fprop.mb0 dim 0 chunk 1 of 2 interleave 2
// SEGS-NEXT: %l0.qkv.prefix.s0.g1.mb0 = tandem.concat %l0.qkv.seq.s0.g0.mb0, %l0.qkv.seq.s0.g1.mb0 dim 0 : tensor<32x384xbf16>, tensor<32x384xbf16> -> tensor<64x384xbf16>
// SEGS-NEXT: %l0.attn.fprop.s0.g1.mb0 = tandem.attention %l0.qkv.prefix.s0.g1.mb0 heads(2, 2) head_dim(64) causal queries(32) {layer = "l0.attn"} : tensor<64x384xbf16> -> tensor<32x128xbf16>
// SEGS-NEXT: %l0.attn.join.mb0 = tandem.concat %l0.attn.fprop.s0.g0.mb0, %l0.attn.fprop.s0.g1.mb0 dim 0 interleave 2
// SEGS: %l0.attn.grad_tokens.s0.mb0 = tandem.concat %l0.attn.grad_seq.s0.g0.mb0, %l0.attn.grad_seq.s0.g1.mb0 dim 0 : tensor<32x128xbf16>, tensor<32x128xbf16> -> tensor<64x128xbf16>
// SEGS-NEXT: %l0.attn.tokens.s0.mb0 = tandem.concat %l0.attn.fprop.s0.g0.mb0, %l0.attn.fprop.s0.g1.mb0 dim 0 : tensor<32x128xbf16>, tensor<32x128xbf16> -> tensor<64x128xbf16>
// SEGS-NEXT: %l0.attn.dgrad.s0.mb0 = tandem.attention_grad %l0.attn.grad_tokens.s0.mb0, %l0.qkv.prefix.s0.g1.mb0, %l0.attn.tokens.s0.mb0 heads(2, 2) head_dim(64) causal
// SEGS-NEXT: %l0.attn.grad_seg.s0.g0.mb0 = tandem.slice %l0.attn.dgrad.s0.mb0 dim 0 chunk 0 of 2 : tensor<64x384xbf16> -> tensor<32x384xbf16>
// SEGS-NEXT: %l0.attn.grad_seg.s0.g1.mb0 = tandem.slice %l0.attn.dgrad.s0.mb0 dim 0 chunk 1 of 2
// SEGS-NEXT: %l0.attn.grad_join.mb0 = tandem.concat %l0.attn.grad_seg.s0.g0.mb0, %l0.attn.grad_seg.s0.g1.mb0 dim 0 interleave 2 : tensor<32x384xbf16>, tensor<32x384xbf16> -> tensor<64x384xbf16>
// SEGS-NEXT: %l0.qkv.dgrad.mb0 = tandem.matmul dgrad %l0.attn.grad_join.mb0, %l0.qkv.w transpose_rhs
