// Issue 13 row 1: chunks x interleave wrapped to 0 (SIGFPE in SliceOp::verify).
func.func @f(%x: tensor<8x4xbf16>) -> tensor<8x4xbf16> {
  %s = tandem.slice %x dim 0 chunk 0 of 4294967296 interleave 4294967296 : tensor<8x4xbf16> -> tensor<8x4xbf16>
  return %s : tensor<8x4xbf16>
}
