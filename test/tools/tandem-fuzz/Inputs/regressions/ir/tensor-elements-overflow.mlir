// A tensor whose element count overflows int64 (ShapedType::getNumElements).
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @f(%a: tensor<4294967296x4294967296xbf16>) -> tensor<4294967296x4294967296xbf16> {
    %r = tandem.elementwise copy %a : tensor<4294967296x4294967296xbf16> -> tensor<4294967296x4294967296xbf16>
    return %r : tensor<4294967296x4294967296xbf16>
  }
}
