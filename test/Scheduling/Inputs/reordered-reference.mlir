// The reference of tandem-verify-schedule-reordered.mlir.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @swapped(%a: tensor<8x16xbf16>, %b: tensor<8x16xbf16>) -> (tensor<16x16xbf16>, tensor<16x16xbf16>) {
    %x = tandem.all_gather %a on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    %y = tandem.all_gather %b on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    return %x, %y : tensor<16x16xbf16>, tensor<16x16xbf16>
  }
  func.func @other(%a: tensor<8x16xbf16>, %b: tensor<8x16xbf16>) -> tensor<16x16xbf16> {
    %x = tandem.all_gather %a on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    %w = tandem.all_gather %b on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    return %x : tensor<16x16xbf16>
  }
}
