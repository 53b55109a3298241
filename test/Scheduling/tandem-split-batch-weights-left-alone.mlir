// RUN: tandem-opt %s --tandem-split-batch="weights=1,2" -verify-diagnostics -o /dev/null

// Forced uneven parts whose units (3) divide no row-local op's rows: the
// function is left alone, with the reason.
module attributes {tandem.target = #tandem.target<"h200">} {
  // expected-remark @+1 {{batch split: '@eight_rows' left alone: no row-local op has rows that divide into parts of weights [1, 2]}}
  func.func @eight_rows(%x: tensor<8x256xbf16>, %w: tensor<256x256xbf16>) -> tensor<8x256xbf16> {
    %y = tandem.matmul fprop %x, %w : tensor<8x256xbf16>, tensor<256x256xbf16> -> tensor<8x256xbf16>
    return %y : tensor<8x256xbf16>
  }
}
