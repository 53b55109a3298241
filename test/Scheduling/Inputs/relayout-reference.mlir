// Reference for tandem-verify-schedule-relayout.mlir: a value in token order
// (two blocks of 8 rows) put back into a layout interleaved by 2 (a causal
// sequence's gradient back into the gathered layout), then a GEMM on it.
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @relayout(%x: tensor<16x16xbf16>, %w: tensor<16x16xbf16>) -> tensor<16x16xbf16> {
    %g = tandem.elementwise gelu %x : tensor<16x16xbf16> -> tensor<16x16xbf16>
    %s0 = tandem.slice %g dim 0 chunk 0 of 2 : tensor<16x16xbf16> -> tensor<8x16xbf16>
    %s1 = tandem.slice %g dim 0 chunk 1 of 2 : tensor<16x16xbf16> -> tensor<8x16xbf16>
    %r = tandem.concat %s0, %s1 dim 0 interleave 2 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    %y = tandem.matmul fprop %r, %w : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xbf16>
    return %y : tensor<16x16xbf16>
  }
}
