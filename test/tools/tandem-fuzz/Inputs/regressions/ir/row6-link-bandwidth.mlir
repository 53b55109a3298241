// Issue 13 row 6: a link of 1e-310 GB/s or 1e308 us passed "positive and
// finite" and the simulator never finished.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 1.0e-310 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    %y = tandem.all_gather %x on @tp dim 0 : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    return %y : tensor<2048x1024xbf16>
  }
}
