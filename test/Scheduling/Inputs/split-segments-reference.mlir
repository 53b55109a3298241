// Reference for tandem-verify-schedule-segments.mlir: one sequence in two
// causal segments on TP=2 as tandem-gen --segments 2 writes it. Each rank
// holds 4 tokens of each segment; segment g is chunk g of 2 within each
// rank's block of the gathered rows (interleave 2). Segment 1's queries
// attend to the keys of segments 0 and 1 (their concat in token order).
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @segs(%x: tensor<8x48xbf16>, %g: tensor<48xbf16>) -> tensor<16x16xbf16> {
    %n = tandem.norm rms %x, %g : tensor<8x48xbf16>, tensor<48xbf16>
    %a = tandem.all_gather %n on @tp dim 0 : tensor<8x48xbf16> -> tensor<16x48xbf16>
    %q0 = tandem.slice %a dim 0 chunk 0 of 2 interleave 2 : tensor<16x48xbf16> -> tensor<8x48xbf16>
    %o0 = tandem.attention %q0 heads(1, 1) head_dim(16) causal queries(8) : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %q1 = tandem.slice %a dim 0 chunk 1 of 2 interleave 2 : tensor<16x48xbf16> -> tensor<8x48xbf16>
    %k1 = tandem.concat %q0, %q1 dim 0 : tensor<8x48xbf16>, tensor<8x48xbf16> -> tensor<16x48xbf16>
    %o1 = tandem.attention %k1 heads(1, 1) head_dim(16) causal queries(8) : tensor<16x48xbf16> -> tensor<8x16xbf16>
    %y = tandem.concat %o0, %o1 dim 0 interleave 2 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    return %y : tensor<16x16xbf16>
  }
}
