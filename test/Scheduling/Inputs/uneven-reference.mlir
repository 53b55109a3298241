// The unsplit reference of tandem-verify-schedule-uneven.mlir: one function
// per case, all the same step (norm, all-gather, GEMM, its wgrad, the
// norm's backward).
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
}
