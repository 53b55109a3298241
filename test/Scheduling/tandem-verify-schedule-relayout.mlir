// RUN: tandem-opt %s -split-input-file -verify-diagnostics=only-expected \
// RUN:   --tandem-verify-schedule="reference=%S/Inputs/relayout-reference.mlir allow-reordered-collectives=true" -o /dev/null

// The reference's relayout (the token-order value's two blocks joined with
// interleave 2) is read part by part without the concat: part p of the
// relayout, cut with interleave 2, is block p of the token-order value.
module attributes {tandem.target = #tandem.target<"h200">} {
  // expected-remark @+2 {{op(s) recognised as parts of a batch split; returned values match the reference}}
  // expected-remark @+1 {{values match the reference}}
  func.func @relayout(%x: tensor<16x16xbf16>, %w: tensor<16x16xbf16>) -> tensor<16x16xbf16> {
    %g = tandem.elementwise gelu %x : tensor<16x16xbf16> -> tensor<16x16xbf16>
    %s0 = tandem.slice %g dim 0 chunk 0 of 2 : tensor<16x16xbf16> -> tensor<8x16xbf16>
    %y0 = tandem.matmul fprop %s0, %w : tensor<8x16xbf16>, tensor<16x16xbf16> -> tensor<8x16xbf16>
    %s1 = tandem.slice %g dim 0 chunk 1 of 2 : tensor<16x16xbf16> -> tensor<8x16xbf16>
    %y1 = tandem.matmul fprop %s1, %w : tensor<8x16xbf16>, tensor<16x16xbf16> -> tensor<8x16xbf16>
    %y = tandem.concat %y0, %y1 dim 0 interleave 2 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    return %y : tensor<16x16xbf16>
  }
}

// -----

// The parts joined without the relayout's interleave: token order, not the
// reference's layout.
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @relayout(%x: tensor<16x16xbf16>, %w: tensor<16x16xbf16>) -> tensor<16x16xbf16> {
    %g = tandem.elementwise gelu %x : tensor<16x16xbf16> -> tensor<16x16xbf16>
    %s0 = tandem.slice %g dim 0 chunk 0 of 2 : tensor<16x16xbf16> -> tensor<8x16xbf16>
    %y0 = tandem.matmul fprop %s0, %w : tensor<8x16xbf16>, tensor<16x16xbf16> -> tensor<8x16xbf16>
    %s1 = tandem.slice %g dim 0 chunk 1 of 2 : tensor<16x16xbf16> -> tensor<8x16xbf16>
    %y1 = tandem.matmul fprop %s1, %w : tensor<8x16xbf16>, tensor<16x16xbf16> -> tensor<8x16xbf16>
    %y = tandem.concat %y0, %y1 dim 0 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %y : tensor<16x16xbf16>
  }
}

// -----

// The blocks swapped: part 0 of the relayout is block 0, not block 1.
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @relayout(%x: tensor<16x16xbf16>, %w: tensor<16x16xbf16>) -> tensor<16x16xbf16> {
    %g = tandem.elementwise gelu %x : tensor<16x16xbf16> -> tensor<16x16xbf16>
    %s0 = tandem.slice %g dim 0 chunk 0 of 2 : tensor<16x16xbf16> -> tensor<8x16xbf16>
    %y0 = tandem.matmul fprop %s0, %w : tensor<8x16xbf16>, tensor<16x16xbf16> -> tensor<8x16xbf16>
    %s1 = tandem.slice %g dim 0 chunk 1 of 2 : tensor<16x16xbf16> -> tensor<8x16xbf16>
    %y1 = tandem.matmul fprop %s1, %w : tensor<8x16xbf16>, tensor<16x16xbf16> -> tensor<8x16xbf16>
    %y = tandem.concat %y1, %y0 dim 0 interleave 2 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %y : tensor<16x16xbf16>
  }
}
