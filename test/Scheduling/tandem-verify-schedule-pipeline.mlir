// RUN: tandem-opt %s --tandem-verify-schedule=reference=%S/Inputs/pipeline-reference.mlir -verify-diagnostics=only-expected -o /dev/null

// Pipelined forms are proven equal to the unsplit pairs of the reference by
// their structure: chunk j of a shard gathered, every chunk multiplied by
// the same operand, the products interleaved back by rank (or a permute ring
// assembled in rank order); chunk j of every rank's rows reduce-scattered
// and the pieces concatenated.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @good(%x: tensor<8x16xbf16>, %w: tensor<16x4xbf16>) -> tensor<16x4xbf16> {
    %s0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %s1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %g0 = tandem.all_gather %s0 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %y0 = tandem.matmul fprop %g0, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %g1 = tandem.all_gather %s1 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %y1 = tandem.matmul fprop %g1, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %y = tandem.concat %y0, %y1 dim 0 interleave 2 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    return %y : tensor<16x4xbf16>
  }
  func.func @ring(%x: tensor<8x16xbf16>, %w: tensor<16x4xbf16>) -> tensor<16x4xbf16> {
    %y0 = tandem.matmul fprop %x, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %p1 = tandem.permute %x on @tp shift 1 : tensor<8x16xbf16> -> tensor<8x16xbf16>
    %y1 = tandem.matmul fprop %p1, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %y = tandem.ring_concat %y0, %y1 on @tp dim 0 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    return %y : tensor<16x4xbf16>
  }
  // Chunks assembled in the wrong order compute something else.
  func.func @swapped(%x: tensor<8x16xbf16>, %w: tensor<16x4xbf16>) -> tensor<16x4xbf16> {
    %s0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %s1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %g0 = tandem.all_gather %s0 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %y0 = tandem.matmul fprop %g0, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %g1 = tandem.all_gather %s1 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %y1 = tandem.matmul fprop %g1, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %y = tandem.concat %y1, %y0 dim 0 interleave 2 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %y : tensor<16x4xbf16>
  }
  func.func @rs(%a: tensor<16x16xbf16>, %w: tensor<16x4xbf16>) -> tensor<8x4xbf16> {
    %a0 = tandem.slice %a dim 0 chunk 0 of 2 interleave 2 : tensor<16x16xbf16> -> tensor<8x16xbf16>
    %a1 = tandem.slice %a dim 0 chunk 1 of 2 interleave 2 : tensor<16x16xbf16> -> tensor<8x16xbf16>
    %m0 = tandem.matmul fprop %a0, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %r0 = tandem.reduce_scatter %m0 on @tp dim 0 : tensor<8x4xbf16> -> tensor<4x4xbf16>
    %m1 = tandem.matmul fprop %a1, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %r1 = tandem.reduce_scatter %m1 on @tp dim 0 : tensor<8x4xbf16> -> tensor<4x4xbf16>
    %r = tandem.concat %r0, %r1 dim 0 : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<8x4xbf16>
    return %r : tensor<8x4xbf16>
  }
  // A wgrad split along its output rows by tandem-reschedule-wgrad: half j
  // reads chunk j of the transposed lhs, the halves concatenated along
  // dimension 0 are the unsplit GEMM.
  func.func @wgrad_split(%a: tensor<16x8xbf16>, %g: tensor<16x4xbf16>) -> tensor<8x4xbf16> {
    %s0 = tandem.slice %a dim 1 chunk 0 of 2 : tensor<16x8xbf16> -> tensor<16x4xbf16>
    %h0 = tandem.matmul wgrad %s0, %g transpose_lhs : tensor<16x4xbf16>, tensor<16x4xbf16> -> tensor<4x4xbf16>
    %s1 = tandem.slice %a dim 1 chunk 1 of 2 : tensor<16x8xbf16> -> tensor<16x4xbf16>
    %h1 = tandem.matmul wgrad %s1, %g transpose_lhs : tensor<16x4xbf16>, tensor<16x4xbf16> -> tensor<4x4xbf16>
    %dw = tandem.concat %h0, %h1 dim 0 : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<8x4xbf16>
    return %dw : tensor<8x4xbf16>
  }
  // The same chunk twice is not the unsplit GEMM.
  func.func @wgrad_split_bad(%a: tensor<16x8xbf16>, %g: tensor<16x4xbf16>) -> tensor<8x4xbf16> {
    %s0 = tandem.slice %a dim 1 chunk 0 of 2 : tensor<16x8xbf16> -> tensor<16x4xbf16>
    %h0 = tandem.matmul wgrad %s0, %g transpose_lhs : tensor<16x4xbf16>, tensor<16x4xbf16> -> tensor<4x4xbf16>
    %h1 = tandem.matmul wgrad %s0, %g transpose_lhs : tensor<16x4xbf16>, tensor<16x4xbf16> -> tensor<4x4xbf16>
    %dw = tandem.concat %h0, %h1 dim 0 : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<8x4xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %dw : tensor<8x4xbf16>
  }
}
