// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
//
// Round trip of every tandem op and of the #tandem.target attribute, in the
// custom form and through the generic form.

// CHECK-LABEL: module attributes {tandem.target = #tandem.target<"h200">}
module attributes {tandem.target = #tandem.target<"h200">} {

//===----------------------------------------------------------------------===//
// Target attribute: a preset, a preset with overrides, a custom target.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: module @preset_target attributes {tandem.target = #tandem.target<"mi300x">}
module @preset_target attributes {tandem.target = #tandem.target<"mi300x">} {}

// CHECK-LABEL: module @override_target
// CHECK-SAME: attributes {tandem.target = #tandem.target<"h100", hbm_gbps = 3.000000e+03, collective_sms = 16>}
module @override_target attributes {
    tandem.target = #tandem.target<"h100", collective_sms = 16, hbm_gbps = 3000.0>} {}

// CHECK-LABEL: module @custom_target
// CHECK-SAME: attributes {tandem.target = #tandem.target<"my-gpu", sm_count = 100,
// CHECK-SAME: bf16_tflops = 5.000000e+02, f16_tflops = 4.000000e+02,
// CHECK-SAME: fp8_tflops = 1.000000e+03, f32_tflops = 6.000000e+01,
// CHECK-SAME: hbm_gbps = 3.000000e+03, hbm_bytes = 68719476736,
// CHECK-SAME: gemm_efficiency = 7.500000e-01, hbm_efficiency = 8.500000e-01,
// CHECK-SAME: collective_sms = 16, gemm_tile_m = 128, gemm_tile_n = 64,
// CHECK-SAME: launch_overhead_us = 5.000000e+00>}
module @custom_target attributes {tandem.target = #tandem.target<"my-gpu",
    sm_count = 100, bf16_tflops = 500.0, f16_tflops = 400.0,
    fp8_tflops = 1000.0, f32_tflops = 60.0, hbm_gbps = 3000.0,
    hbm_bytes = 68719476736, gemm_efficiency = 0.75, hbm_efficiency = 0.85,
    collective_sms = 16, gemm_tile_m = 128, gemm_tile_n = 64,
    launch_overhead_us = 5.0>} {}

//===----------------------------------------------------------------------===//
// Process groups in all four topologies.
//===----------------------------------------------------------------------===//

// CHECK: tandem.group @tp size(8) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us){{$}}
// CHECK-NEXT: tandem.group @mesh size(8) full_mesh links(7 x 6.400000e+01 GBps, 1.500000e+00 us){{$}}
// CHECK-NEXT: tandem.group @ring size(4) ring links(2 x 5.000000e+01 GBps, 0.000000e+00 us){{$}}
// CHECK-NEXT: tandem.group @dp size(32) hierarchical links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
// CHECK-SAME: {gpus_per_node = 8 : i64, inter_node_bandwidth_gbps = 5.000000e+01 : f64, inter_node_latency_us = 5.000000e+00 : f64}{{$}}
tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
tandem.group @mesh size(8) full_mesh links(7 x 64.0 GBps, 1.5 us)
tandem.group @ring size(4) ring links(2 x 50.0 GBps, 0.0 us)
tandem.group @dp size(32) hierarchical links(18 x 25.0 GBps, 2.0 us)
    {gpus_per_node = 8 : i64, inter_node_bandwidth_gbps = 50.0 : f64,
     inter_node_latency_us = 5.0 : f64}

//===----------------------------------------------------------------------===//
// Compute ops.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @matmul_roles(
// CHECK-SAME: %[[X:.*]]: tensor<64x32xbf16>, %[[W:.*]]: tensor<32x16xbf16>, %[[DY:.*]]: tensor<64x16xbf16>)
// CHECK-NEXT: %[[Y:.*]] = tandem.matmul fprop %[[X]], %[[W]] {layer = "l0.fc1"} : tensor<64x32xbf16>, tensor<32x16xbf16> -> tensor<64x16xbf16>
// CHECK-NEXT: %[[DX:.*]] = tandem.matmul dgrad %[[DY]], %[[W]] transpose_rhs : tensor<64x16xbf16>, tensor<32x16xbf16> -> tensor<64x32xbf16>
// CHECK-NEXT: %[[DW:.*]] = tandem.matmul wgrad %[[X]], %[[DY]] transpose_lhs : tensor<64x32xbf16>, tensor<64x16xbf16> -> tensor<32x16xf32>
// CHECK-NEXT: return %[[Y]], %[[DX]], %[[DW]]
func.func @matmul_roles(%x: tensor<64x32xbf16>, %w: tensor<32x16xbf16>,
                        %dy: tensor<64x16xbf16>)
    -> (tensor<64x16xbf16>, tensor<64x32xbf16>, tensor<32x16xf32>) {
  %y = tandem.matmul fprop %x, %w {layer = "l0.fc1"}
      : tensor<64x32xbf16>, tensor<32x16xbf16> -> tensor<64x16xbf16>
  %dx = tandem.matmul dgrad %dy, %w transpose_rhs
      : tensor<64x16xbf16>, tensor<32x16xbf16> -> tensor<64x32xbf16>
  %dw = tandem.matmul wgrad %x, %dy transpose_lhs
      : tensor<64x32xbf16>, tensor<64x16xbf16> -> tensor<32x16xf32>
  return %y, %dx, %dw
      : tensor<64x16xbf16>, tensor<64x32xbf16>, tensor<32x16xf32>
}

// lhs is 8x4 (or 4x8 transposed), rhs 4x2 (or 2x4 transposed): always 8x2.
// CHECK-LABEL: func.func @matmul_transposes(
// CHECK-SAME: %[[A:.*]]: tensor<8x4xf16>, %[[AT:.*]]: tensor<4x8xf16>, %[[B:.*]]: tensor<4x2xf16>, %[[BT:.*]]: tensor<2x4xf16>)
// CHECK-NEXT: %[[NN:.*]] = tandem.matmul fprop %[[A]], %[[B]] : tensor<8x4xf16>, tensor<4x2xf16> -> tensor<8x2xf16>
// CHECK-NEXT: %[[TN:.*]] = tandem.matmul fprop %[[AT]], %[[B]] transpose_lhs : tensor<4x8xf16>, tensor<4x2xf16> -> tensor<8x2xf16>
// CHECK-NEXT: %[[NT:.*]] = tandem.matmul fprop %[[A]], %[[BT]] transpose_rhs : tensor<8x4xf16>, tensor<2x4xf16> -> tensor<8x2xf16>
// CHECK-NEXT: %[[TT:.*]] = tandem.matmul fprop %[[AT]], %[[BT]] transpose_lhs transpose_rhs : tensor<4x8xf16>, tensor<2x4xf16> -> tensor<8x2xf16>
// CHECK-NEXT: return %[[NN]], %[[TN]], %[[NT]], %[[TT]]
func.func @matmul_transposes(%a: tensor<8x4xf16>, %at: tensor<4x8xf16>,
                             %b: tensor<4x2xf16>, %bt: tensor<2x4xf16>)
    -> (tensor<8x2xf16>, tensor<8x2xf16>, tensor<8x2xf16>, tensor<8x2xf16>) {
  %nn = tandem.matmul fprop %a, %b
      : tensor<8x4xf16>, tensor<4x2xf16> -> tensor<8x2xf16>
  %tn = tandem.matmul fprop %at, %b transpose_lhs
      : tensor<4x8xf16>, tensor<4x2xf16> -> tensor<8x2xf16>
  %nt = tandem.matmul fprop %a, %bt transpose_rhs
      : tensor<8x4xf16>, tensor<2x4xf16> -> tensor<8x2xf16>
  %tt = tandem.matmul fprop %at, %bt transpose_lhs transpose_rhs
      : tensor<4x8xf16>, tensor<2x4xf16> -> tensor<8x2xf16>
  return %nn, %tn, %nt, %tt
      : tensor<8x2xf16>, tensor<8x2xf16>, tensor<8x2xf16>, tensor<8x2xf16>
}

// The last 8 of 32 rows as queries (a causal segment attending to its
// prefix): 8 result rows.
// CHECK-LABEL: func.func @attention_queries(
// CHECK-NEXT: tandem.attention %{{.*}} heads(4, 2) head_dim(16) causal queries(8) : tensor<32x128xbf16> -> tensor<8x64xbf16>
// CHECK-NEXT: tandem.attention %{{.*}} heads(4, 2) head_dim(16) queries(32) : tensor<32x128xbf16> -> tensor<32x64xbf16>
func.func @attention_queries(%gqa: tensor<32x128xbf16>)
    -> (tensor<8x64xbf16>, tensor<32x64xbf16>) {
  %o0 = tandem.attention %gqa heads(4, 2) head_dim(16) causal queries(8)
      : tensor<32x128xbf16> -> tensor<8x64xbf16>
  %o1 = tandem.attention %gqa heads(4, 2) head_dim(16) queries(32)
      : tensor<32x128xbf16> -> tensor<32x64xbf16>
  return %o0, %o1 : tensor<8x64xbf16>, tensor<32x64xbf16>
}

// Multi-head attention: (4 + 2 * 4) * 16 = 192 packed columns; grouped-query
// attention with 2 kv heads: (4 + 2 * 2) * 16 = 128.
// CHECK-LABEL: func.func @attention(
// CHECK-SAME: %[[MHA:.*]]: tensor<32x192xbf16>, %[[GQA:.*]]: tensor<32x128xbf16>)
// CHECK-NEXT: %[[O0:.*]] = tandem.attention %[[MHA]] heads(4, 4) head_dim(16) : tensor<32x192xbf16> -> tensor<32x64xbf16>
// CHECK-NEXT: %[[O1:.*]] = tandem.attention %[[MHA]] heads(4, 4) head_dim(16) causal {layer = "l0.attn"} : tensor<32x192xbf16> -> tensor<32x64xbf16>
// CHECK-NEXT: %[[O2:.*]] = tandem.attention %[[GQA]] heads(4, 2) head_dim(16) causal : tensor<32x128xbf16> -> tensor<32x64xbf16>
// CHECK-NEXT: return %[[O0]], %[[O1]], %[[O2]]
func.func @attention(%mha: tensor<32x192xbf16>, %gqa: tensor<32x128xbf16>)
    -> (tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>) {
  %o0 = tandem.attention %mha heads(4, 4) head_dim(16)
      : tensor<32x192xbf16> -> tensor<32x64xbf16>
  %o1 = tandem.attention %mha heads(4, 4) head_dim(16) causal {layer = "l0.attn"}
      : tensor<32x192xbf16> -> tensor<32x64xbf16>
  %o2 = tandem.attention %gqa heads(4, 2) head_dim(16) causal
      : tensor<32x128xbf16> -> tensor<32x64xbf16>
  return %o0, %o1, %o2
      : tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>
}

// CHECK-LABEL: func.func @attention_grad(
// CHECK-SAME: %[[DO:.*]]: tensor<32x64xbf16>, %[[QKV:.*]]: tensor<32x128xbf16>, %[[O:.*]]: tensor<32x64xbf16>)
// CHECK-NEXT: %[[G0:.*]] = tandem.attention_grad %[[DO]], %[[QKV]], %[[O]] heads(4, 2) head_dim(16) : tensor<32x64xbf16>, tensor<32x128xbf16>, tensor<32x64xbf16> -> tensor<32x128xbf16>
// CHECK-NEXT: %[[G1:.*]] = tandem.attention_grad %[[DO]], %[[QKV]], %[[O]] heads(4, 2) head_dim(16) causal {layer = "l0.attn"} : tensor<32x64xbf16>, tensor<32x128xbf16>, tensor<32x64xbf16> -> tensor<32x128xbf16>
// CHECK-NEXT: return %[[G0]], %[[G1]]
func.func @attention_grad(%do: tensor<32x64xbf16>, %qkv: tensor<32x128xbf16>,
                          %o: tensor<32x64xbf16>)
    -> (tensor<32x128xbf16>, tensor<32x128xbf16>) {
  %g0 = tandem.attention_grad %do, %qkv, %o heads(4, 2) head_dim(16)
      : tensor<32x64xbf16>, tensor<32x128xbf16>, tensor<32x64xbf16>
        -> tensor<32x128xbf16>
  %g1 = tandem.attention_grad %do, %qkv, %o heads(4, 2) head_dim(16) causal
      {layer = "l0.attn"}
      : tensor<32x64xbf16>, tensor<32x128xbf16>, tensor<32x64xbf16>
        -> tensor<32x128xbf16>
  return %g0, %g1 : tensor<32x128xbf16>, tensor<32x128xbf16>
}

// CHECK-LABEL: func.func @norm(
// CHECK-SAME: %[[X:.*]]: tensor<2x16x64xf32>, %[[W:.*]]: tensor<64xf32>, %[[DY:.*]]: tensor<2x16x64xf32>)
// CHECK-NEXT: %[[L:.*]] = tandem.norm layer %[[X]], %[[W]] : tensor<2x16x64xf32>, tensor<64xf32>
// CHECK-NEXT: %[[R:.*]] = tandem.norm rms %[[X]], %[[W]] {layer = "l0.ln1"} : tensor<2x16x64xf32>, tensor<64xf32>
// CHECK-NEXT: %[[LDX:.*]], %[[LDW:.*]] = tandem.norm_grad layer %[[DY]], %[[X]], %[[W]] : tensor<2x16x64xf32>, tensor<64xf32>
// CHECK-NEXT: %[[RDX:.*]], %[[RDW:.*]] = tandem.norm_grad rms %[[DY]], %[[X]], %[[W]] {layer = "l0.ln1"} : tensor<2x16x64xf32>, tensor<64xf32>
// CHECK-NEXT: return %[[L]], %[[R]], %[[LDX]], %[[LDW]], %[[RDX]], %[[RDW]]
func.func @norm(%x: tensor<2x16x64xf32>, %w: tensor<64xf32>,
                %dy: tensor<2x16x64xf32>)
    -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
        tensor<64xf32>, tensor<2x16x64xf32>, tensor<64xf32>) {
  %l = tandem.norm layer %x, %w : tensor<2x16x64xf32>, tensor<64xf32>
  %r = tandem.norm rms %x, %w {layer = "l0.ln1"}
      : tensor<2x16x64xf32>, tensor<64xf32>
  %ldx, %ldw = tandem.norm_grad layer %dy, %x, %w
      : tensor<2x16x64xf32>, tensor<64xf32>
  %rdx, %rdw = tandem.norm_grad rms %dy, %x, %w {layer = "l0.ln1"}
      : tensor<2x16x64xf32>, tensor<64xf32>
  return %l, %r, %ldx, %ldw, %rdx, %rdw
      : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>,
        tensor<64xf32>, tensor<2x16x64xf32>, tensor<64xf32>
}

// The kinds that keep the shape and type: two-operand add, mul, gelu_grad and
// one-operand copy, gelu, silu.
// CHECK-LABEL: func.func @elementwise_same_type(
// CHECK-SAME: %[[A:.*]]: tensor<16x32xbf16>, %[[B:.*]]: tensor<16x32xbf16>)
// CHECK-NEXT: %[[ADD:.*]] = tandem.elementwise add %[[A]], %[[B]] {layer = "l0.res"} : tensor<16x32xbf16>, tensor<16x32xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT: %[[MUL:.*]] = tandem.elementwise mul %[[ADD]], %[[B]] : tensor<16x32xbf16>, tensor<16x32xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT: %[[COPY:.*]] = tandem.elementwise copy %[[MUL]] : tensor<16x32xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT: %[[GELU:.*]] = tandem.elementwise gelu %[[COPY]] : tensor<16x32xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT: %[[GG:.*]] = tandem.elementwise gelu_grad %[[GELU]], %[[COPY]] : tensor<16x32xbf16>, tensor<16x32xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT: %[[SILU:.*]] = tandem.elementwise silu %[[GG]] : tensor<16x32xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT: return %[[SILU]]
func.func @elementwise_same_type(%a: tensor<16x32xbf16>, %b: tensor<16x32xbf16>)
    -> tensor<16x32xbf16> {
  %add = tandem.elementwise add %a, %b {layer = "l0.res"}
      : tensor<16x32xbf16>, tensor<16x32xbf16> -> tensor<16x32xbf16>
  %mul = tandem.elementwise mul %add, %b
      : tensor<16x32xbf16>, tensor<16x32xbf16> -> tensor<16x32xbf16>
  %copy = tandem.elementwise copy %mul : tensor<16x32xbf16> -> tensor<16x32xbf16>
  %gelu = tandem.elementwise gelu %copy : tensor<16x32xbf16> -> tensor<16x32xbf16>
  %gg = tandem.elementwise gelu_grad %gelu, %copy
      : tensor<16x32xbf16>, tensor<16x32xbf16> -> tensor<16x32xbf16>
  %silu = tandem.elementwise silu %gg : tensor<16x32xbf16> -> tensor<16x32xbf16>
  return %silu : tensor<16x32xbf16>
}

// cast changes the element type; swiglu halves the last dimension and
// swiglu_grad (output gradient, swiglu input) restores it.
// CHECK-LABEL: func.func @elementwise_shape_changing(
// CHECK-SAME: %[[H:.*]]: tensor<16x64xbf16>, %[[DY:.*]]: tensor<16x32xbf16>)
// CHECK-NEXT: %[[CAST:.*]] = tandem.elementwise cast %[[H]] : tensor<16x64xbf16> -> tensor<16x64xf32>
// CHECK-NEXT: %[[SW:.*]] = tandem.elementwise swiglu %[[H]] : tensor<16x64xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT: %[[SWG:.*]] = tandem.elementwise swiglu_grad %[[DY]], %[[H]] : tensor<16x32xbf16>, tensor<16x64xbf16> -> tensor<16x64xbf16>
// CHECK-NEXT: return %[[CAST]], %[[SW]], %[[SWG]]
func.func @elementwise_shape_changing(%h: tensor<16x64xbf16>,
                                      %dy: tensor<16x32xbf16>)
    -> (tensor<16x64xf32>, tensor<16x32xbf16>, tensor<16x64xbf16>) {
  %cast = tandem.elementwise cast %h : tensor<16x64xbf16> -> tensor<16x64xf32>
  %sw = tandem.elementwise swiglu %h : tensor<16x64xbf16> -> tensor<16x32xbf16>
  %swg = tandem.elementwise swiglu_grad %dy, %h
      : tensor<16x32xbf16>, tensor<16x64xbf16> -> tensor<16x64xbf16>
  return %cast, %sw, %swg
      : tensor<16x64xf32>, tensor<16x32xbf16>, tensor<16x64xbf16>
}

// CHECK-LABEL: func.func @opaque(
// CHECK-SAME: %[[X:.*]]: tensor<16x32xbf16>, %[[L:.*]]: tensor<16xi32>)
// CHECK-NEXT: %[[INIT:.*]] = tandem.opaque "init"() flops(0.000000e+00) bytes(0) : () -> tensor<16x32xbf16>
// CHECK-NEXT: %[[LOSS:.*]] = tandem.opaque "loss"(%[[X]]) flops(1.500000e+06) bytes(4096) {layer = "head"} : (tensor<16x32xbf16>) -> tensor<1xf32>
// CHECK-NEXT: %[[PAIR:.*]]:2 = tandem.opaque "loss_and_grad"(%[[X]], %[[L]]) flops(1.000000e+09) bytes(8388608) : (tensor<16x32xbf16>, tensor<16xi32>) -> (tensor<1xf32>, tensor<16x32xbf16>)
// CHECK-NEXT: return %[[INIT]], %[[LOSS]], %[[PAIR]]#0, %[[PAIR]]#1
func.func @opaque(%x: tensor<16x32xbf16>, %labels: tensor<16xi32>)
    -> (tensor<16x32xbf16>, tensor<1xf32>, tensor<1xf32>, tensor<16x32xbf16>) {
  %init = tandem.opaque "init"() flops(0.0) bytes(0) : () -> tensor<16x32xbf16>
  %loss = tandem.opaque "loss"(%x) flops(1.5e6) bytes(4096) {layer = "head"}
      : (tensor<16x32xbf16>) -> tensor<1xf32>
  %l, %g = tandem.opaque "loss_and_grad"(%x, %labels) flops(1.0e9)
      bytes(8388608)
      : (tensor<16x32xbf16>, tensor<16xi32>) -> (tensor<1xf32>, tensor<16x32xbf16>)
  return %init, %loss, %l, %g
      : tensor<16x32xbf16>, tensor<1xf32>, tensor<1xf32>, tensor<16x32xbf16>
}

//===----------------------------------------------------------------------===//
// Collectives, blocking.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @gather_scatter_reduce(
// CHECK-SAME: %[[X:.*]]: tensor<16x32xbf16>)
// CHECK-NEXT: %[[AG0:.*]] = tandem.all_gather %[[X]] on @tp dim 0 : tensor<16x32xbf16> -> tensor<128x32xbf16>
// CHECK-NEXT: %[[AG1:.*]] = tandem.all_gather %[[X]] on @mesh dim 1 : tensor<16x32xbf16> -> tensor<16x256xbf16>
// CHECK-NEXT: %[[RS0:.*]] = tandem.reduce_scatter %[[AG0]] on @tp dim 0 : tensor<128x32xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT: %[[RS1:.*]] = tandem.reduce_scatter %[[AG1]] on @mesh dim 1 reduce max : tensor<16x256xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT: %[[AR0:.*]] = tandem.all_reduce %[[RS0]] on @dp : tensor<16x32xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT: %[[AR1:.*]] = tandem.all_reduce %[[RS1]] on @ring reduce avg : tensor<16x32xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT: %[[AR2:.*]] = tandem.all_reduce %[[AR1]] on @ring reduce min {layer = "l0"} : tensor<16x32xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT: return %[[AR0]], %[[AR2]]
func.func @gather_scatter_reduce(%x: tensor<16x32xbf16>)
    -> (tensor<16x32xbf16>, tensor<16x32xbf16>) {
  %ag0 = tandem.all_gather %x on @tp dim 0
      : tensor<16x32xbf16> -> tensor<128x32xbf16>
  %ag1 = tandem.all_gather %x on @mesh dim 1
      : tensor<16x32xbf16> -> tensor<16x256xbf16>
  %rs0 = tandem.reduce_scatter %ag0 on @tp dim 0
      : tensor<128x32xbf16> -> tensor<16x32xbf16>
  %rs1 = tandem.reduce_scatter %ag1 on @mesh dim 1 reduce max
      : tensor<16x256xbf16> -> tensor<16x32xbf16>
  %ar0 = tandem.all_reduce %rs0 on @dp : tensor<16x32xbf16> -> tensor<16x32xbf16>
  %ar1 = tandem.all_reduce %rs1 on @ring reduce avg
      : tensor<16x32xbf16> -> tensor<16x32xbf16>
  %ar2 = tandem.all_reduce %ar1 on @ring reduce min {layer = "l0"}
      : tensor<16x32xbf16> -> tensor<16x32xbf16>
  return %ar0, %ar2 : tensor<16x32xbf16>, tensor<16x32xbf16>
}

// An explicit `reduce sum` is the default and is not printed.
// CHECK-LABEL: func.func @default_reduce(
// CHECK-NEXT: tandem.reduce_scatter %{{.*}} on @tp dim 0 : tensor<128x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: tandem.all_reduce %{{.*}} on @tp : tensor<16x32xf32> -> tensor<16x32xf32>
func.func @default_reduce(%x: tensor<128x32xf32>) -> tensor<16x32xf32> {
  %rs = tandem.reduce_scatter %x on @tp dim 0 reduce sum
      : tensor<128x32xf32> -> tensor<16x32xf32>
  %ar = tandem.all_reduce %rs on @tp reduce sum
      : tensor<16x32xf32> -> tensor<16x32xf32>
  return %ar : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @exchange(
// CHECK-SAME: %[[X:.*]]: tensor<64x8xbf16>)
// CHECK-NEXT: %[[A2A:.*]] = tandem.all_to_all %[[X]] on @tp split 0 concat 1 : tensor<64x8xbf16> -> tensor<8x64xbf16>
// CHECK-NEXT: %[[SAME:.*]] = tandem.all_to_all %[[X]] on @ring split 0 concat 0 : tensor<64x8xbf16> -> tensor<64x8xbf16>
// CHECK-NEXT: %[[FWD:.*]] = tandem.permute %[[SAME]] on @ring shift 1 : tensor<64x8xbf16> -> tensor<64x8xbf16>
// CHECK-NEXT: %[[BWD:.*]] = tandem.permute %[[FWD]] on @ring shift -1 {layer = "cp"} : tensor<64x8xbf16> -> tensor<64x8xbf16>
// CHECK-NEXT: return %[[A2A]], %[[BWD]]
func.func @exchange(%x: tensor<64x8xbf16>)
    -> (tensor<8x64xbf16>, tensor<64x8xbf16>) {
  %a2a = tandem.all_to_all %x on @tp split 0 concat 1
      : tensor<64x8xbf16> -> tensor<8x64xbf16>
  %same = tandem.all_to_all %x on @ring split 0 concat 0
      : tensor<64x8xbf16> -> tensor<64x8xbf16>
  %fwd = tandem.permute %same on @ring shift 1
      : tensor<64x8xbf16> -> tensor<64x8xbf16>
  %bwd = tandem.permute %fwd on @ring shift -1 {layer = "cp"}
      : tensor<64x8xbf16> -> tensor<64x8xbf16>
  return %a2a, %bwd : tensor<8x64xbf16>, tensor<64x8xbf16>
}

//===----------------------------------------------------------------------===//
// Collectives, asynchronous: each _start with its tandem.wait.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @start_gather_scatter_reduce(
// CHECK-SAME: %[[X:.*]]: tensor<16x32xbf16>)
// CHECK-NEXT: %[[F0:.*]] = tandem.all_gather_start %[[X]] on @tp dim 0 : tensor<16x32xbf16> -> !tandem.future<tensor<128x32xbf16>>
// CHECK-NEXT: %[[AG:.*]] = tandem.wait %[[F0]] : !tandem.future<tensor<128x32xbf16>>
// CHECK-NEXT: %[[F1:.*]] = tandem.reduce_scatter_start %[[AG]] on @tp dim 0 reduce avg : tensor<128x32xbf16> -> !tandem.future<tensor<16x32xbf16>>
// CHECK-NEXT: %[[RS:.*]] = tandem.wait %[[F1]] : !tandem.future<tensor<16x32xbf16>>
// CHECK-NEXT: %[[F2:.*]] = tandem.all_reduce_start %[[RS]] on @dp : tensor<16x32xbf16> -> !tandem.future<tensor<16x32xbf16>>
// CHECK-NEXT: %[[AR:.*]] = tandem.wait %[[F2]] : !tandem.future<tensor<16x32xbf16>>
// CHECK-NEXT: %[[F3:.*]] = tandem.all_reduce_start %[[AR]] on @dp reduce max : tensor<16x32xbf16> -> !tandem.future<tensor<16x32xbf16>>
// CHECK-NEXT: %[[ARM:.*]] = tandem.wait %[[F3]] : !tandem.future<tensor<16x32xbf16>>
// CHECK-NEXT: return %[[ARM]]
func.func @start_gather_scatter_reduce(%x: tensor<16x32xbf16>)
    -> tensor<16x32xbf16> {
  %f0 = tandem.all_gather_start %x on @tp dim 0
      : tensor<16x32xbf16> -> !tandem.future<tensor<128x32xbf16>>
  %ag = tandem.wait %f0 : !tandem.future<tensor<128x32xbf16>>
  %f1 = tandem.reduce_scatter_start %ag on @tp dim 0 reduce avg
      : tensor<128x32xbf16> -> !tandem.future<tensor<16x32xbf16>>
  %rs = tandem.wait %f1 : !tandem.future<tensor<16x32xbf16>>
  %f2 = tandem.all_reduce_start %rs on @dp
      : tensor<16x32xbf16> -> !tandem.future<tensor<16x32xbf16>>
  %ar = tandem.wait %f2 : !tandem.future<tensor<16x32xbf16>>
  %f3 = tandem.all_reduce_start %ar on @dp reduce max
      : tensor<16x32xbf16> -> !tandem.future<tensor<16x32xbf16>>
  %arm = tandem.wait %f3 : !tandem.future<tensor<16x32xbf16>>
  return %arm : tensor<16x32xbf16>
}

// Compute may run between a start and its wait.
// CHECK-LABEL: func.func @start_exchange(
// CHECK-SAME: %[[X:.*]]: tensor<64x8xbf16>, %[[W:.*]]: tensor<8x8xbf16>)
// CHECK-NEXT: %[[F0:.*]] = tandem.all_to_all_start %[[X]] on @tp split 0 concat 1 : tensor<64x8xbf16> -> !tandem.future<tensor<8x64xbf16>>
// CHECK-NEXT: %[[F1:.*]] = tandem.permute_start %[[X]] on @tp shift -3 : tensor<64x8xbf16> -> !tandem.future<tensor<64x8xbf16>>
// CHECK-NEXT: %[[Y:.*]] = tandem.matmul fprop %[[X]], %[[W]] : tensor<64x8xbf16>, tensor<8x8xbf16> -> tensor<64x8xbf16>
// CHECK-NEXT: %[[A2A:.*]] = tandem.wait %[[F0]] : !tandem.future<tensor<8x64xbf16>>
// CHECK-NEXT: %[[P:.*]] = tandem.wait %[[F1]] : !tandem.future<tensor<64x8xbf16>>
// CHECK-NEXT: return %[[A2A]], %[[P]], %[[Y]]
func.func @start_exchange(%x: tensor<64x8xbf16>, %w: tensor<8x8xbf16>)
    -> (tensor<8x64xbf16>, tensor<64x8xbf16>, tensor<64x8xbf16>) {
  %f0 = tandem.all_to_all_start %x on @tp split 0 concat 1
      : tensor<64x8xbf16> -> !tandem.future<tensor<8x64xbf16>>
  %f1 = tandem.permute_start %x on @tp shift -3
      : tensor<64x8xbf16> -> !tandem.future<tensor<64x8xbf16>>
  %y = tandem.matmul fprop %x, %w
      : tensor<64x8xbf16>, tensor<8x8xbf16> -> tensor<64x8xbf16>
  %a2a = tandem.wait %f0 : !tandem.future<tensor<8x64xbf16>>
  %p = tandem.wait %f1 : !tandem.future<tensor<64x8xbf16>>
  return %a2a, %p, %y : tensor<8x64xbf16>, tensor<64x8xbf16>, tensor<64x8xbf16>
}

}
