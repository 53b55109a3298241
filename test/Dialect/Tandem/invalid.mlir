// RUN: tandem-opt %s -split-input-file -verify-diagnostics
//
// One case per user-facing error of the tandem dialect: op verifiers
// (TandemOps.cpp), the #tandem.target parser and verifier
// (TandemAttributes.cpp), the `tandem.target` module attribute
// (TandemDialect.cpp) and the ODS constraints users hit most.

//===----------------------------------------------------------------------===//
// tandem.group
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'tandem.group' op attribute 'size' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
tandem.group @g size(0) switch links(18 x 25.0 GBps, 2.0 us)

// -----

// expected-error @+1 {{'tandem.group' op attribute 'links_per_gpu' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
tandem.group @g size(8) switch links(0 x 25.0 GBps, 2.0 us)

// -----

func.func @group_in_function() {
  // expected-error @+1 {{'tandem.group' op expects parent op 'builtin.module'}}
  tandem.group @g size(8) switch links(18 x 25.0 GBps, 2.0 us)
  return
}

// -----

// expected-error @+1 {{'tandem.group' op link bandwidth must be in [1.000000e-03, 1.000000e+07] GB/s, got 0.000000e+00}}
tandem.group @g size(8) switch links(18 x 0.0 GBps, 2.0 us)

// -----

// expected-error @+1 {{'tandem.group' op link latency must be in [0, 1.000000e+06] us, got -1.000000e+00}}
tandem.group @g size(8) ring links(2 x 25.0 GBps, -1.0 us)

// -----

// expected-error @+1 {{'tandem.group' op a hierarchical group needs gpus_per_node, inter_node_bandwidth_gbps and inter_node_latency_us}}
tandem.group @g size(32) hierarchical links(18 x 25.0 GBps, 2.0 us)
    {gpus_per_node = 8 : i64, inter_node_bandwidth_gbps = 50.0 : f64}

// -----

// expected-error @+1 {{'tandem.group' op group size 12 is not a multiple of gpus_per_node 8}}
tandem.group @g size(12) hierarchical links(18 x 25.0 GBps, 2.0 us)
    {gpus_per_node = 8 : i64, inter_node_bandwidth_gbps = 50.0 : f64,
     inter_node_latency_us = 5.0 : f64}

// -----

// expected-error @+1 {{'tandem.group' op inter-node bandwidth must be in [1.000000e-03, 1.000000e+07] GB/s, got 0.000000e+00}}
tandem.group @g size(32) hierarchical links(18 x 25.0 GBps, 2.0 us)
    {gpus_per_node = 8 : i64, inter_node_bandwidth_gbps = 0.0 : f64,
     inter_node_latency_us = 5.0 : f64}

// -----

// expected-error @+1 {{'tandem.group' op inter-node latency must be in [0, 1.000000e+06] us, got -5.000000e+00}}
tandem.group @g size(32) hierarchical links(18 x 25.0 GBps, 2.0 us)
    {gpus_per_node = 8 : i64, inter_node_bandwidth_gbps = 50.0 : f64,
     inter_node_latency_us = -5.0 : f64}

// -----

// expected-error @+1 {{'tandem.group' op a full mesh of 8 GPUs needs at least 7 links per GPU, got 6}}
tandem.group @g size(8) full_mesh links(6 x 64.0 GBps, 2.0 us)

// -----

// expected-error @+1 {{'tandem.group' op gpus_per_node and inter-node link fields are only meaningful for a hierarchical group}}
tandem.group @g size(8) switch links(18 x 25.0 GBps, 2.0 us)
    {gpus_per_node = 8 : i64}

// -----

// expected-error @+1 {{'tandem.group' op gpus_per_node and inter-node link fields are only meaningful for a hierarchical group}}
tandem.group @g size(8) full_mesh links(7 x 64.0 GBps, 2.0 us)
    {inter_node_latency_us = 5.0 : f64}

//===----------------------------------------------------------------------===//
// Tensor types (ODS constraints shared by every op)
//===----------------------------------------------------------------------===//

// -----

func.func @dynamic_shape(%x: tensor<?x32xbf16>) -> tensor<?x32xbf16> {
  // expected-error @+1 {{'tandem.elementwise' op operand #0 must be variadic of statically shaped tensor of at most 2^48 bytes of floating-point or integer values, but got 'tensor<?x32xbf16>'}}
  %y = tandem.elementwise copy %x : tensor<?x32xbf16> -> tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}

// -----

func.func @dynamic_result(%x: tensor<16x32xbf16>, %w: tensor<32x8xbf16>) {
  // expected-error @+1 {{'tandem.matmul' op result #0 must be statically shaped tensor of at most 2^48 bytes of floating-point or integer values, but got 'tensor<16x?xbf16>'}}
  %y = tandem.matmul fprop %x, %w
      : tensor<16x32xbf16>, tensor<32x8xbf16> -> tensor<16x?xbf16>
  return
}

// -----

func.func @index_elements(%x: tensor<16xindex>) {
  // expected-error @+1 {{'tandem.elementwise' op operand #0 must be variadic of statically shaped tensor of at most 2^48 bytes of floating-point or integer values, but got 'tensor<16xindex>'}}
  %y = tandem.elementwise copy %x : tensor<16xindex> -> tensor<16xindex>
  return
}

//===----------------------------------------------------------------------===//
// tandem.matmul
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_rank(%x: tensor<2x16x32xbf16>, %w: tensor<32x8xbf16>) {
  // expected-error @+1 {{'tandem.matmul' op operands and result must be 2-D, got ranks 3, 2 -> 2}}
  %y = tandem.matmul fprop %x, %w
      : tensor<2x16x32xbf16>, tensor<32x8xbf16> -> tensor<16x8xbf16>
  return
}

// -----

func.func @matmul_element_types(%x: tensor<16x32xbf16>, %w: tensor<32x8xf16>) {
  // expected-error @+1 {{'tandem.matmul' op operand element types differ: 'bf16' vs 'f16'}}
  %y = tandem.matmul fprop %x, %w
      : tensor<16x32xbf16>, tensor<32x8xf16> -> tensor<16x8xbf16>
  return
}

// -----

func.func @matmul_contraction(%x: tensor<16x32xbf16>, %w: tensor<32x8xbf16>) {
  // expected-error @+1 {{'tandem.matmul' op contraction sizes differ: lhs gives K = 16, rhs gives K = 32}}
  %y = tandem.matmul wgrad %x, %w transpose_lhs
      : tensor<16x32xbf16>, tensor<32x8xbf16> -> tensor<32x8xbf16>
  return
}

// -----

func.func @matmul_result(%x: tensor<16x32xbf16>, %w: tensor<8x32xbf16>) {
  // expected-error @+1 {{'tandem.matmul' op result shape must be 16x8, got 16x32}}
  %y = tandem.matmul dgrad %x, %w transpose_rhs
      : tensor<16x32xbf16>, tensor<8x32xbf16> -> tensor<16x32xbf16>
  return
}

//===----------------------------------------------------------------------===//
// tandem.attention / tandem.attention_grad
//===----------------------------------------------------------------------===//

// -----

func.func @attention_heads(%qkv: tensor<32x192xbf16>) {
  // expected-error @+1 {{'tandem.attention' op attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %o = tandem.attention %qkv heads(0, 4) head_dim(16)
      : tensor<32x192xbf16> -> tensor<32x64xbf16>
  return
}

// -----

func.func @attention_rank(%qkv: tensor<2x32x192xbf16>) {
  // expected-error @+1 {{'tandem.attention' op q/k/v and output must be 2-D [tokens, features]}}
  %o = tandem.attention %qkv heads(4, 4) head_dim(16)
      : tensor<2x32x192xbf16> -> tensor<2x32x64xbf16>
  return
}

// -----

func.func @attention_gqa(%qkv: tensor<32x160xbf16>) {
  // expected-error @+1 {{'tandem.attention' op num_heads (4) must be a multiple of num_kv_heads (3)}}
  %o = tandem.attention %qkv heads(4, 3) head_dim(16)
      : tensor<32x160xbf16> -> tensor<32x64xbf16>
  return
}

// -----

func.func @attention_packed(%qkv: tensor<32x192xbf16>) {
  // expected-error @+1 {{'tandem.attention' op packed q/k/v needs 128 columns ((4 + 2 * 2) * 16), got 192}}
  %o = tandem.attention %qkv heads(4, 2) head_dim(16)
      : tensor<32x192xbf16> -> tensor<32x64xbf16>
  return
}

// -----

func.func @attention_output(%qkv: tensor<32x192xbf16>) {
  // expected-error @+1 {{'tandem.attention' op output must be 32x64, got 32x192}}
  %o = tandem.attention %qkv heads(4, 4) head_dim(16)
      : tensor<32x192xbf16> -> tensor<32x192xbf16>
  return
}

// -----

func.func @attention_element_types(%qkv: tensor<32x192xbf16>) {
  // expected-error @+1 {{'tandem.attention' op q/k/v and output element types differ}}
  %o = tandem.attention %qkv heads(4, 4) head_dim(16) causal
      : tensor<32x192xbf16> -> tensor<32x64xf32>
  return
}

// -----

func.func @attention_queries_rows(%qkv: tensor<32x192xbf16>) {
  // expected-error @+1 {{'tandem.attention' op queries(64) must not exceed the 32 rows of q/k/v}}
  %o = tandem.attention %qkv heads(4, 4) head_dim(16) causal queries(64)
      : tensor<32x192xbf16> -> tensor<64x64xbf16>
  return
}

// -----

func.func @attention_queries_output(%qkv: tensor<32x192xbf16>) {
  // expected-error @+1 {{'tandem.attention' op output must be 8x64, got 32x64}}
  %o = tandem.attention %qkv heads(4, 4) head_dim(16) causal queries(8)
      : tensor<32x192xbf16> -> tensor<32x64xbf16>
  return
}

// -----

func.func @attention_queries_zero(%qkv: tensor<32x192xbf16>) {
  // expected-error @+1 {{'tandem.attention' op attribute 'queries' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %o = tandem.attention %qkv heads(4, 4) head_dim(16) causal queries(0)
      : tensor<32x192xbf16> -> tensor<0x64xbf16>
  return
}

// -----

// attention_grad shares the shape checks of attention.
func.func @attention_grad_shapes(%do: tensor<32x64xbf16>,
                                 %qkv: tensor<32x192xbf16>,
                                 %o: tensor<32x64xbf16>) {
  // expected-error @+1 {{'tandem.attention_grad' op packed q/k/v needs 128 columns ((4 + 2 * 2) * 16), got 192}}
  %g = tandem.attention_grad %do, %qkv, %o heads(4, 2) head_dim(16)
      : tensor<32x64xbf16>, tensor<32x192xbf16>, tensor<32x64xbf16>
        -> tensor<32x192xbf16>
  return
}

// -----

func.func @attention_grad_output_grad(%do: tensor<16x64xbf16>,
                                      %qkv: tensor<32x192xbf16>,
                                      %o: tensor<32x64xbf16>) {
  // expected-error @+1 {{'tandem.attention_grad' op output gradient must have the output's type}}
  %g = tandem.attention_grad %do, %qkv, %o heads(4, 4) head_dim(16)
      : tensor<16x64xbf16>, tensor<32x192xbf16>, tensor<32x64xbf16>
        -> tensor<32x192xbf16>
  return
}

// -----

func.func @attention_grad_qkv_grad(%do: tensor<32x64xbf16>,
                                   %qkv: tensor<32x192xbf16>,
                                   %o: tensor<32x64xbf16>) {
  // expected-error @+1 {{'tandem.attention_grad' op q/k/v gradient must have the q/k/v type}}
  %g = tandem.attention_grad %do, %qkv, %o heads(4, 4) head_dim(16) causal
      : tensor<32x64xbf16>, tensor<32x192xbf16>, tensor<32x64xbf16>
        -> tensor<32x192xf32>
  return
}

//===----------------------------------------------------------------------===//
// tandem.norm / tandem.norm_grad
//===----------------------------------------------------------------------===//

// -----

func.func @norm_scalar(%x: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error @+1 {{'tandem.norm' op input must have at least one dimension}}
  %y = tandem.norm rms %x, %w : tensor<f32>, tensor<1xf32>
  return
}

// -----

func.func @norm_weight_shape(%x: tensor<16x64xf32>, %w: tensor<32xf32>) {
  // expected-error @+1 {{'tandem.norm' op weight must be 1-D of the input's last dimension (64), got 32}}
  %y = tandem.norm layer %x, %w : tensor<16x64xf32>, tensor<32xf32>
  return
}

// -----

func.func @norm_weight_rank(%x: tensor<16x64xf32>, %w: tensor<1x64xf32>) {
  // expected-error @+1 {{'tandem.norm' op weight must be 1-D of the input's last dimension (64), got 1x64}}
  %y = tandem.norm layer %x, %w : tensor<16x64xf32>, tensor<1x64xf32>
  return
}

// -----

func.func @norm_weight_element_type(%x: tensor<16x64xbf16>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'tandem.norm' op weight and input element types differ}}
  %y = tandem.norm rms %x, %w : tensor<16x64xbf16>, tensor<64xf32>
  return
}

// -----

func.func @norm_grad_weight(%dy: tensor<16x64xf32>, %x: tensor<16x64xf32>,
                            %w: tensor<16xf32>) {
  // expected-error @+1 {{'tandem.norm_grad' op weight must be 1-D of the input's last dimension (64), got 16}}
  %dx, %dw = tandem.norm_grad rms %dy, %x, %w : tensor<16x64xf32>, tensor<16xf32>
  return
}

//===----------------------------------------------------------------------===//
// tandem.elementwise
//===----------------------------------------------------------------------===//

// -----

func.func @elementwise_arity(%a: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.elementwise' op 'add' takes 2 operand(s), got 1}}
  %y = tandem.elementwise add %a : tensor<16x32xbf16> -> tensor<16x32xbf16>
  return
}

// -----

func.func @elementwise_unary_arity(%a: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.elementwise' op 'gelu' takes 1 operand(s), got 2}}
  %y = tandem.elementwise gelu %a, %a
      : tensor<16x32xbf16>, tensor<16x32xbf16> -> tensor<16x32xbf16>
  return
}

// -----

func.func @elementwise_operand_type(%a: tensor<16x32xbf16>, %b: tensor<16x32xf32>) {
  // expected-error @+1 {{'tandem.elementwise' op 'mul' operand #1 has type 'tensor<16x32xf32>', expected the result type 'tensor<16x32xbf16>'}}
  %y = tandem.elementwise mul %a, %b
      : tensor<16x32xbf16>, tensor<16x32xf32> -> tensor<16x32xbf16>
  return
}

// -----

func.func @elementwise_copy_type(%a: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.elementwise' op 'copy' operand #0 has type 'tensor<16x32xbf16>', expected the result type 'tensor<16x32xf32>'}}
  %y = tandem.elementwise copy %a : tensor<16x32xbf16> -> tensor<16x32xf32>
  return
}

// -----

func.func @elementwise_cast_shape(%a: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.elementwise' op 'cast' keeps the shape: 16x32 vs 32x16}}
  %y = tandem.elementwise cast %a : tensor<16x32xbf16> -> tensor<32x16xf32>
  return
}

// -----

func.func @elementwise_swiglu(%h: tensor<16x64xbf16>) {
  // expected-error @+1 {{'tandem.elementwise' op 'swiglu' operand must be the result with its last dimension doubled, got 'tensor<16x64xbf16>' -> 'tensor<16x64xbf16>'}}
  %y = tandem.elementwise swiglu %h : tensor<16x64xbf16> -> tensor<16x64xbf16>
  return
}

// -----

func.func @elementwise_swiglu_grad(%dy: tensor<16x32xbf16>, %h: tensor<16x64xbf16>) {
  // expected-error @+1 {{'tandem.elementwise' op 'swiglu_grad' takes the output gradient and the swiglu input, and yields the input's type}}
  %dh = tandem.elementwise swiglu_grad %h, %dy
      : tensor<16x64xbf16>, tensor<16x32xbf16> -> tensor<16x64xbf16>
  return
}

//===----------------------------------------------------------------------===//
// tandem.opaque
//===----------------------------------------------------------------------===//

// -----

func.func @opaque_kernel_name() {
  // expected-error @+1 {{'tandem.opaque' op kernel name must not be empty}}
  %y = tandem.opaque ""() flops(0.0) bytes(0) : () -> tensor<4xf32>
  return
}

// -----

func.func @opaque_negative_flops() {
  // expected-error @+1 {{'tandem.opaque' op flops must be in [0, 1.000000e+24], got -1.000000e+00}}
  %y = tandem.opaque "k"() flops(-1.0) bytes(0) : () -> tensor<4xf32>
  return
}

// -----

func.func @opaque_infinite_flops() {
  // expected-error @+1 {{'tandem.opaque' op flops must be in [0, 1.000000e+24], got INF}}
  %y = tandem.opaque "k"() flops(0x7FF0000000000000) bytes(0) : () -> tensor<4xf32>
  return
}

// -----

func.func @opaque_negative_bytes() {
  // expected-error @+1 {{'tandem.opaque' op attribute 'declared_bytes' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %y = tandem.opaque "k"() flops(0.0) bytes(-1) : () -> tensor<4xf32>
  return
}

// -----

func.func @opaque_no_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tandem.opaque' op must have at least one result: an opaque op without results would be dead code}}
  tandem.opaque "k"(%x) flops(1.0) bytes(16) : (tensor<4xf32>) -> ()
  return
}

//===----------------------------------------------------------------------===//
// Collectives: checks shared by all of them
//===----------------------------------------------------------------------===//

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @collective_element_types(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_gather' op input and result element types differ: 'bf16' vs 'f32'}}
  %y = tandem.all_gather %x on @tp dim 0 : tensor<16x32xbf16> -> tensor<128x32xf32>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @collective_negative_dim(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_gather' op attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %y = tandem.all_gather %x on @tp dim -1 : tensor<16x32xbf16> -> tensor<16x256xbf16>
  return
}

// -----

func.func @collective_unknown_group(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_reduce' op @tp does not name a tandem.group}}
  %y = tandem.all_reduce %x on @tp : tensor<16x32xbf16> -> tensor<16x32xbf16>
  return
}

// -----

func.func @not_a_group() {
  return
}

func.func @collective_group_is_a_function(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_gather' op @not_a_group does not name a tandem.group}}
  %y = tandem.all_gather %x on @not_a_group dim 0
      : tensor<16x32xbf16> -> tensor<128x32xbf16>
  return
}

//===----------------------------------------------------------------------===//
// Collectives: futures and tandem.wait
//===----------------------------------------------------------------------===//

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @future_not_waited(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_reduce_start' op future must be waited on exactly once, found 0 tandem.wait}}
  %f = tandem.all_reduce_start %x on @tp
      : tensor<16x32xbf16> -> !tandem.future<tensor<16x32xbf16>>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @future_waited_twice(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.permute_start' op future must be waited on exactly once, found 2 tandem.wait}}
  %f = tandem.permute_start %x on @tp shift 1
      : tensor<16x32xbf16> -> !tandem.future<tensor<16x32xbf16>>
  %a = tandem.wait %f : !tandem.future<tensor<16x32xbf16>>
  %b = tandem.wait %f : !tandem.future<tensor<16x32xbf16>>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @future_returned(%x: tensor<16x32xbf16>)
    -> !tandem.future<tensor<128x32xbf16>> {
  // expected-error @+1 {{'tandem.all_gather_start' op future may only be consumed by tandem.wait, not by 'func.return'}}
  %f = tandem.all_gather_start %x on @tp dim 0
      : tensor<16x32xbf16> -> !tandem.future<tensor<128x32xbf16>>
  return %f : !tandem.future<tensor<128x32xbf16>>
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @future_into_opaque(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.reduce_scatter_start' op future may only be consumed by tandem.wait, not by 'tandem.opaque'}}
  %f = tandem.reduce_scatter_start %x on @tp dim 0
      : tensor<16x32xbf16> -> !tandem.future<tensor<2x32xbf16>>
  %y = tandem.opaque "peek"(%f) flops(0.0) bytes(0)
      : (!tandem.future<tensor<2x32xbf16>>) -> tensor<2x32xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

// The wait sits in a second (unreachable) block of the function.
func.func @future_other_block(%x: tensor<16x32xbf16>) -> tensor<16x32xbf16> {
  // expected-error @+1 {{'tandem.all_reduce_start' op future must be waited on in the block that issues it}}
  %f = tandem.all_reduce_start %x on @tp
      : tensor<16x32xbf16> -> !tandem.future<tensor<16x32xbf16>>
  return %x : tensor<16x32xbf16>
^bb1:
  %y = tandem.wait %f : !tandem.future<tensor<16x32xbf16>>
  return %y : tensor<16x32xbf16>
}

// -----

func.func @wait_on_argument(%f: !tandem.future<tensor<16x32xbf16>>)
    -> tensor<16x32xbf16> {
  // expected-error @+1 {{'tandem.wait' op future must come from the _start form of a collective in this function}}
  %y = tandem.wait %f : !tandem.future<tensor<16x32xbf16>>
  return %y : tensor<16x32xbf16>
}

// -----

func.func @wait_result_type(%f: !tandem.future<tensor<16x32xbf16>>) {
  // expected-error @+1 {{'tandem.wait' op failed to verify that result is the tensor inside the future}}
  %y = "tandem.wait"(%f) : (!tandem.future<tensor<16x32xbf16>>) -> tensor<16x32xf32>
  return
}

//===----------------------------------------------------------------------===//
// tandem.all_gather / tandem.reduce_scatter
//===----------------------------------------------------------------------===//

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_gather_rank(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_gather' op input and result ranks differ}}
  %y = tandem.all_gather %x on @tp dim 0 : tensor<16x32xbf16> -> tensor<4096xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_gather_dim_range(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_gather' op dim 2 is out of range for rank 2}}
  %y = tandem.all_gather %x on @tp dim 2 : tensor<16x32xbf16> -> tensor<16x32xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_gather_other_dim(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_gather' op input and result differ in dimension 1; only dimension 0 may differ}}
  %y = tandem.all_gather %x on @tp dim 0 : tensor<16x32xbf16> -> tensor<128x64xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_gather_group_size(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_gather' op all-gather result: dimension 0 must be 8 (group size) x 16 = 128, got 64}}
  %y = tandem.all_gather %x on @tp dim 0 : tensor<16x32xbf16> -> tensor<64x32xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_gather_start_group_size(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_gather_start' op all-gather result: dimension 1 must be 8 (group size) x 32 = 256, got 32}}
  %f = tandem.all_gather_start %x on @tp dim 1
      : tensor<16x32xbf16> -> !tandem.future<tensor<16x32xbf16>>
  %y = tandem.wait %f : !tandem.future<tensor<16x32xbf16>>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @reduce_scatter_rank(%x: tensor<128x32xbf16>) {
  // expected-error @+1 {{'tandem.reduce_scatter' op result and input ranks differ}}
  %y = tandem.reduce_scatter %x on @tp dim 0 : tensor<128x32xbf16> -> tensor<16x32x1xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @reduce_scatter_dim_range(%x: tensor<128x32xbf16>) {
  // expected-error @+1 {{'tandem.reduce_scatter' op dim 3 is out of range for rank 2}}
  %y = tandem.reduce_scatter %x on @tp dim 3 : tensor<128x32xbf16> -> tensor<16x32xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @reduce_scatter_other_dim(%x: tensor<128x32xbf16>) {
  // expected-error @+1 {{'tandem.reduce_scatter' op result and input differ in dimension 1; only dimension 0 may differ}}
  %y = tandem.reduce_scatter %x on @tp dim 0 : tensor<128x32xbf16> -> tensor<16x16xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @reduce_scatter_group_size(%x: tensor<128x32xbf16>) {
  // expected-error @+1 {{'tandem.reduce_scatter' op reduce-scatter input: dimension 0 must be 8 (group size) x 32 = 256, got 128}}
  %y = tandem.reduce_scatter %x on @tp dim 0 reduce max
      : tensor<128x32xbf16> -> tensor<32x32xbf16>
  return
}

//===----------------------------------------------------------------------===//
// tandem.all_reduce
//===----------------------------------------------------------------------===//

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_reduce_shape(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_reduce' op result type must equal the input type}}
  %y = tandem.all_reduce %x on @tp : tensor<16x32xbf16> -> tensor<32x16xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_reduce_start_shape(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_reduce_start' op result type must equal the input type}}
  %f = tandem.all_reduce_start %x on @tp reduce avg
      : tensor<16x32xbf16> -> !tandem.future<tensor<16x16xbf16>>
  %y = tandem.wait %f : !tandem.future<tensor<16x16xbf16>>
  return
}

// -----

func.func @all_reduce_start_unknown_group(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.all_reduce_start' op @dp does not name a tandem.group}}
  %f = tandem.all_reduce_start %x on @dp
      : tensor<16x32xbf16> -> !tandem.future<tensor<16x32xbf16>>
  %y = tandem.wait %f : !tandem.future<tensor<16x32xbf16>>
  return
}

//===----------------------------------------------------------------------===//
// tandem.all_to_all
//===----------------------------------------------------------------------===//

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_to_all_rank(%x: tensor<64x8xbf16>) {
  // expected-error @+1 {{'tandem.all_to_all' op input and result ranks differ}}
  %y = tandem.all_to_all %x on @tp split 0 concat 1 : tensor<64x8xbf16> -> tensor<512xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_to_all_split_range(%x: tensor<64x8xbf16>) {
  // expected-error @+1 {{'tandem.all_to_all' op split dim 2 is out of range for rank 2}}
  %y = tandem.all_to_all %x on @tp split 2 concat 1 : tensor<64x8xbf16> -> tensor<8x64xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_to_all_concat_range(%x: tensor<64x8xbf16>) {
  // expected-error @+1 {{'tandem.all_to_all' op concat dim 5 is out of range for rank 2}}
  %y = tandem.all_to_all %x on @tp split 0 concat 5 : tensor<64x8xbf16> -> tensor<8x64xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_to_all_elements(%x: tensor<64x8xbf16>) {
  // expected-error @+1 {{'tandem.all_to_all' op all-to-all keeps the element count: 512 vs 256}}
  %y = tandem.all_to_all %x on @tp split 0 concat 1 : tensor<64x8xbf16> -> tensor<8x32xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_to_all_divisible(%x: tensor<12x8xbf16>) {
  // expected-error @+1 {{'tandem.all_to_all' op split dimension 0 (12) is not divisible by the group size 8}}
  %y = tandem.all_to_all %x on @tp split 0 concat 1 : tensor<12x8xbf16> -> tensor<12x8xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_to_all_result_shape(%x: tensor<64x8xbf16>) {
  // expected-error @+1 {{'tandem.all_to_all' op result shape must be 8x64, got 64x8}}
  %y = tandem.all_to_all %x on @tp split 0 concat 1 : tensor<64x8xbf16> -> tensor<64x8xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_to_all_start_result_shape(%x: tensor<64x8xbf16>) {
  // expected-error @+1 {{'tandem.all_to_all_start' op result shape must be 512x1, got 8x64}}
  %f = tandem.all_to_all_start %x on @tp split 1 concat 0
      : tensor<64x8xbf16> -> !tandem.future<tensor<8x64xbf16>>
  %y = tandem.wait %f : !tandem.future<tensor<8x64xbf16>>
  return
}

//===----------------------------------------------------------------------===//
// tandem.permute
//===----------------------------------------------------------------------===//

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @permute_type(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.permute' op result type must equal the input type}}
  %y = tandem.permute %x on @tp shift 1 : tensor<16x32xbf16> -> tensor<32x16xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @permute_zero_shift(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.permute' op shift 0 is a multiple of the group size 8: every rank would send to itself}}
  %y = tandem.permute %x on @tp shift 0 : tensor<16x32xbf16> -> tensor<16x32xbf16>
  return
}

// -----

tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

func.func @permute_start_full_turn(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.permute_start' op shift 16 is a multiple of the group size 8: every rank would send to itself}}
  %f = tandem.permute_start %x on @tp shift 16
      : tensor<16x32xbf16> -> !tandem.future<tensor<16x32xbf16>>
  %y = tandem.wait %f : !tandem.future<tensor<16x32xbf16>>
  return
}

// -----

func.func @permute_unknown_group(%x: tensor<16x32xbf16>) {
  // expected-error @+1 {{'tandem.permute' op @ring does not name a tandem.group}}
  %y = tandem.permute %x on @ring shift 1 : tensor<16x32xbf16> -> tensor<16x32xbf16>
  return
}

// -----

func.func @all_to_all_unknown_group(%x: tensor<64x8xbf16>) {
  // expected-error @+1 {{'tandem.all_to_all' op @ep does not name a tandem.group}}
  %y = tandem.all_to_all %x on @ep split 0 concat 1 : tensor<64x8xbf16> -> tensor<8x64xbf16>
  return
}

//===----------------------------------------------------------------------===//
// #tandem.target: parse errors
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{unknown target field 'sms'; expected one of sm_count, bf16_tflops, f16_tflops, fp8_tflops, f32_tflops, hbm_gbps, hbm_bytes, gemm_efficiency, hbm_efficiency, collective_sms, gemm_tile_m, gemm_tile_n, launch_overhead_us}}
module attributes {tandem.target = #tandem.target<"h200", sms = 100>} {}

// -----

// expected-error @+1 {{target field 'collective_sms' given twice}}
module attributes {tandem.target = #tandem.target<"h200", collective_sms = 16, collective_sms = 8>} {}

// -----

// expected-error @+1 {{target 'my-gpu' is not a preset (h100, h200, mi300x) and lacks fields: fp8_tflops, gemm_tile_n}}
module attributes {tandem.target = #tandem.target<"my-gpu",
    sm_count = 100, bf16_tflops = 500.0, f16_tflops = 500.0, f32_tflops = 60.0,
    hbm_gbps = 3000.0, hbm_bytes = 68719476736, gemm_efficiency = 0.8,
    hbm_efficiency = 0.9, collective_sms = 16, gemm_tile_m = 128,
    launch_overhead_us = 4.0>} {}

// -----

// expected-error @+1 {{target 'H200' is not a preset (h100, h200, mi300x) and lacks fields: sm_count, bf16_tflops, f16_tflops, fp8_tflops, f32_tflops, hbm_gbps, hbm_bytes, gemm_efficiency, hbm_efficiency, collective_sms, gemm_tile_m, gemm_tile_n, launch_overhead_us}}
module attributes {tandem.target = #tandem.target<"H200">} {}

//===----------------------------------------------------------------------===//
// #tandem.target: field checks
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{target name must not be empty}}
module attributes {tandem.target = #tandem.target<"",
    sm_count = 100, bf16_tflops = 500.0, f16_tflops = 500.0,
    fp8_tflops = 1000.0, f32_tflops = 60.0, hbm_gbps = 3000.0,
    hbm_bytes = 68719476736, gemm_efficiency = 0.8, hbm_efficiency = 0.9,
    collective_sms = 16, gemm_tile_m = 128, gemm_tile_n = 256,
    launch_overhead_us = 4.0>} {}

// -----

// expected-error @+1 {{target 'h200': sm_count must be in [1, 4096], got 0}}
module attributes {tandem.target = #tandem.target<"h200", sm_count = 0>} {}

// -----

// expected-error @+1 {{target 'h200': bf16_tflops must be in [1.000000e-03, 1.000000e+07], got 0.000000e+00}}
module attributes {tandem.target = #tandem.target<"h200", bf16_tflops = 0.0>} {}

// -----

// expected-error @+1 {{target 'h100': f16_tflops must be in [1.000000e-03, 1.000000e+07], got -1.000000e+00}}
module attributes {tandem.target = #tandem.target<"h100", f16_tflops = -1.0>} {}

// -----

// expected-error @+1 {{target 'mi300x': fp8_tflops must be in [1.000000e-03, 1.000000e+07], got 0.000000e+00}}
module attributes {tandem.target = #tandem.target<"mi300x", fp8_tflops = 0.0>} {}

// -----

// expected-error @+1 {{target 'h200': f32_tflops must be in [1.000000e-03, 1.000000e+07], got -4.947000e+02}}
module attributes {tandem.target = #tandem.target<"h200", f32_tflops = -494.7>} {}

// -----

// expected-error @+1 {{target 'h200': hbm_gbps must be in [1.000000e-03, 1.000000e+07], got 0.000000e+00}}
module attributes {tandem.target = #tandem.target<"h200", hbm_gbps = 0.0>} {}

// -----

// expected-error @+1 {{target 'h200': hbm_bytes must be positive}}
module attributes {tandem.target = #tandem.target<"h200", hbm_bytes = 0>} {}

// -----

// expected-error @+1 {{target 'h200': gemm_efficiency must be in [1.000000e-03, 1], got 1.500000e+00}}
module attributes {tandem.target = #tandem.target<"h200", gemm_efficiency = 1.5>} {}

// -----

// expected-error @+1 {{target 'h200': hbm_efficiency must be in [1.000000e-03, 1], got 0.000000e+00}}
module attributes {tandem.target = #tandem.target<"h200", hbm_efficiency = 0.0>} {}

// -----

// expected-error @+1 {{target 'h200': collective_sms must be in [1, sm_count), got 0}}
module attributes {tandem.target = #tandem.target<"h200", collective_sms = 0>} {}

// -----

// An override of sm_count below the preset's collective_sms (24).
// expected-error @+1 {{target 'h200': collective_sms must be in [1, sm_count), got 24}}
module attributes {tandem.target = #tandem.target<"h200", sm_count = 24>} {}

// -----

// expected-error @+1 {{target 'h200': gemm tile sizes must be in [1, 4096], got 0x256}}
module attributes {tandem.target = #tandem.target<"h200", gemm_tile_m = 0>} {}

// -----

// expected-error @+1 {{target 'h200': gemm tile sizes must be in [1, 4096], got 128x-128}}
module attributes {tandem.target = #tandem.target<"h200", gemm_tile_n = -128>} {}

// -----

// expected-error @+1 {{target 'h200': launch_overhead_us must be in [0, 1.000000e+06], got -1.000000e+00}}
module attributes {tandem.target = #tandem.target<"h200", launch_overhead_us = -1.0>} {}

//===----------------------------------------------------------------------===//
// The tandem.target module attribute
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'tandem.target' belongs on the module, not on 'func.func'}}
func.func @target_on_function() attributes {tandem.target = #tandem.target<"h200">} {
  return
}

// -----

// expected-error @+1 {{'tandem.target' must be a #tandem.target attribute, got "h200"}}
module attributes {tandem.target = "h200"} {}

// -----

// A negative shift is taken modulo the group size in signed arithmetic.
tandem.group @g6 size(6) ring links(2 x 25.0 GBps, 2.0 us)
func.func @permute_negative_multiple(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  // expected-error @+1 {{'tandem.permute' op shift -6 is a multiple of the group size 6: every rank would send to itself}}
  %y = tandem.permute %x on @g6 shift -6 : tensor<8xbf16> -> tensor<8xbf16>
  return %y : tensor<8xbf16>
}

// -----

// expected-error @+1 {{'tandem.group' op gpus_per_node must be in [1, size = 16], got 0}}
tandem.group @h size(16) hierarchical links(18 x 25.0 GBps, 2.0 us) {gpus_per_node = 0 : i64, inter_node_bandwidth_gbps = 50.0 : f64, inter_node_latency_us = 5.0 : f64}

// -----

// expected-error @+1 {{'tandem.group' op link bandwidth must be in [1.000000e-03, 1.000000e+07] GB/s, got INF}}
tandem.group @inf size(8) switch links(18 x 0x7FF0000000000000 GBps, 2.0 us)

// -----

// expected-error @+1 {{'tandem.group' op link latency must be in [0, 1.000000e+06] us, got nan}}
tandem.group @nan size(8) switch links(18 x 25.0 GBps, 0x7FF8000000000000 us)
