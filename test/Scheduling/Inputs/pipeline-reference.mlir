// The unsplit reference of tandem-verify-schedule-pipeline.mlir.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @good(%x: tensor<8x16xbf16>, %w: tensor<16x4xbf16>) -> tensor<16x4xbf16> {
    %g = tandem.all_gather %x on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    %y = tandem.matmul fprop %g, %w : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    return %y : tensor<16x4xbf16>
  }
  func.func @ring(%x: tensor<8x16xbf16>, %w: tensor<16x4xbf16>) -> tensor<16x4xbf16> {
    %g = tandem.all_gather %x on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    %y = tandem.matmul fprop %g, %w : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    return %y : tensor<16x4xbf16>
  }
  func.func @swapped(%x: tensor<8x16xbf16>, %w: tensor<16x4xbf16>) -> tensor<16x4xbf16> {
    %g = tandem.all_gather %x on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    %y = tandem.matmul fprop %g, %w : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    return %y : tensor<16x4xbf16>
  }
  func.func @rs(%a: tensor<16x16xbf16>, %w: tensor<16x4xbf16>) -> tensor<8x4xbf16> {
    %y = tandem.matmul fprop %a, %w : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %r = tandem.reduce_scatter %y on @tp dim 0 : tensor<16x4xbf16> -> tensor<8x4xbf16>
    return %r : tensor<8x4xbf16>
  }
  func.func @wgrad_split(%a: tensor<16x8xbf16>, %g: tensor<16x4xbf16>) -> tensor<8x4xbf16> {
    %dw = tandem.matmul wgrad %a, %g transpose_lhs : tensor<16x8xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    return %dw : tensor<8x4xbf16>
  }
  func.func @wgrad_split_bad(%a: tensor<16x8xbf16>, %g: tensor<16x4xbf16>) -> tensor<8x4xbf16> {
    %dw = tandem.matmul wgrad %a, %g transpose_lhs : tensor<16x8xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    return %dw : tensor<8x4xbf16>
  }
}
