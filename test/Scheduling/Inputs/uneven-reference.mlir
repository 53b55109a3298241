// The unsplit reference of tandem-verify-schedule-uneven.mlir: one function
// per case, all the same step (norm, all-gather, GEMM, its wgrad, the
// norm's backward), and for the last two four sequences' attention, one
// attention per sequence.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @uneven(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %n = tandem.norm rms %x, %g : tensor<8x16xbf16>, tensor<16xbf16>
    %a = tandem.all_gather %n on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    %y = tandem.matmul fprop %a, %w : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %dw = tandem.matmul wgrad %a, %y transpose_lhs : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %dx, %dg = tandem.norm_grad rms %dy, %x, %g : tensor<8x16xbf16>, tensor<16xbf16>
    return %y, %dw, %dg : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
  func.func @regrouped(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %n = tandem.norm rms %x, %g : tensor<8x16xbf16>, tensor<16xbf16>
    %a = tandem.all_gather %n on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    %y = tandem.matmul fprop %a, %w : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %dw = tandem.matmul wgrad %a, %y transpose_lhs : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %dx, %dg = tandem.norm_grad rms %dy, %x, %g : tensor<8x16xbf16>, tensor<16xbf16>
    return %y, %dw, %dg : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
  func.func @wrong_sizes(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %n = tandem.norm rms %x, %g : tensor<8x16xbf16>, tensor<16xbf16>
    %a = tandem.all_gather %n on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    %y = tandem.matmul fprop %a, %w : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %dw = tandem.matmul wgrad %a, %y transpose_lhs : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %dx, %dg = tandem.norm_grad rms %dy, %x, %g : tensor<8x16xbf16>, tensor<16xbf16>
    return %y, %dw, %dg : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
  func.func @mixed_cuts(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %n = tandem.norm rms %x, %g : tensor<8x16xbf16>, tensor<16xbf16>
    %a = tandem.all_gather %n on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    %y = tandem.matmul fprop %a, %w : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %dw = tandem.matmul wgrad %a, %y transpose_lhs : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %dx, %dg = tandem.norm_grad rms %dy, %x, %g : tensor<8x16xbf16>, tensor<16xbf16>
    return %y, %dw, %dg : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
  func.func @per_sequence(%qkv: tensor<8x12xbf16>) -> tensor<8x4xbf16> {
    %q0 = tandem.slice %qkv dim 0 chunk 0 of 4 : tensor<8x12xbf16> -> tensor<2x12xbf16>
    %q1 = tandem.slice %qkv dim 0 chunk 1 of 4 : tensor<8x12xbf16> -> tensor<2x12xbf16>
    %q2 = tandem.slice %qkv dim 0 chunk 2 of 4 : tensor<8x12xbf16> -> tensor<2x12xbf16>
    %q3 = tandem.slice %qkv dim 0 chunk 3 of 4 : tensor<8x12xbf16> -> tensor<2x12xbf16>
    %o0 = tandem.attention %q0 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o1 = tandem.attention %q1 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o2 = tandem.attention %q2 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o3 = tandem.attention %q3 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o = tandem.concat %o0, %o1, %o2, %o3 dim 0 : tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16> -> tensor<8x4xbf16>
    return %o : tensor<8x4xbf16>
  }
  func.func @whole_part(%qkv: tensor<8x12xbf16>) -> tensor<8x4xbf16> {
    %q0 = tandem.slice %qkv dim 0 chunk 0 of 4 : tensor<8x12xbf16> -> tensor<2x12xbf16>
    %q1 = tandem.slice %qkv dim 0 chunk 1 of 4 : tensor<8x12xbf16> -> tensor<2x12xbf16>
    %q2 = tandem.slice %qkv dim 0 chunk 2 of 4 : tensor<8x12xbf16> -> tensor<2x12xbf16>
    %q3 = tandem.slice %qkv dim 0 chunk 3 of 4 : tensor<8x12xbf16> -> tensor<2x12xbf16>
    %o0 = tandem.attention %q0 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o1 = tandem.attention %q1 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o2 = tandem.attention %q2 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o3 = tandem.attention %q3 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o = tandem.concat %o0, %o1, %o2, %o3 dim 0 : tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16> -> tensor<8x4xbf16>
    return %o : tensor<8x4xbf16>
  }
}
