// RUN: tandem-opt %s --tandem-verify-schedule=reference=%S/Inputs/uneven-reference.mlir -verify-diagnostics=only-expected -o /dev/null

// Uneven parts (tandem.slice ... weights): part j of weights [1, 3] is
// units [s, s+w) of 4 of every group; the verifier's part algebra keeps
// ranges in lowest terms, so parts cut differently but covering the same
// rows are the same part, consecutive parts concatenate to the range they
// span, and a wgrad's operands must be permuted by the same cut.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-remark @+2 {{op(s) recognised as parts of a batch split; returned values match the reference}}
  // expected-remark @+1 {{values match the reference}}
  func.func @uneven(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %s0 = tandem.slice %x dim 0 chunk 0 of 2 weights [1, 3] : tensor<8x16xbf16> -> tensor<2x16xbf16>
    %n0 = tandem.norm rms %s0, %g : tensor<2x16xbf16>, tensor<16xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<2x16xbf16> -> tensor<4x16xbf16>
    %s1 = tandem.slice %x dim 0 chunk 1 of 2 weights [1, 3] : tensor<8x16xbf16> -> tensor<6x16xbf16>
    %n1 = tandem.norm rms %s1, %g : tensor<6x16xbf16>, tensor<16xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<6x16xbf16> -> tensor<12x16xbf16>
    %y0 = tandem.matmul fprop %a0, %w : tensor<4x16xbf16>, tensor<16x4xbf16> -> tensor<4x4xbf16>
    %y1 = tandem.matmul fprop %a1, %w : tensor<12x16xbf16>, tensor<16x4xbf16> -> tensor<12x4xbf16>
    %yp = tandem.concat %y0, %y1 dim 0 : tensor<4x4xbf16>, tensor<12x4xbf16> -> tensor<16x4xbf16>
    %ap = tandem.concat %a0, %a1 dim 0 : tensor<4x16xbf16>, tensor<12x16xbf16> -> tensor<16x16xbf16>
    %d0 = tandem.slice %dy dim 0 chunk 0 of 2 weights [1, 3] : tensor<8x16xbf16> -> tensor<2x16xbf16>
    %dx0, %dg0 = tandem.norm_grad rms %d0, %s0, %g : tensor<2x16xbf16>, tensor<16xbf16>
    %d1 = tandem.slice %dy dim 0 chunk 1 of 2 weights [1, 3] : tensor<8x16xbf16> -> tensor<6x16xbf16>
    %dx1, %dg1 = tandem.norm_grad rms %d1, %s1, %g : tensor<6x16xbf16>, tensor<16xbf16>
    %dg = tandem.elementwise add %dg0, %dg1 : tensor<16xbf16>, tensor<16xbf16> -> tensor<16xbf16>
    %y = tandem.concat %y0, %y1 dim 0 interleave 2 : tensor<4x4xbf16>, tensor<12x4xbf16> -> tensor<16x4xbf16>
    %dw = tandem.matmul wgrad %ap, %yp transpose_lhs : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    return %y, %dw, %dg : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
  // Three parts [1, 1, 2] for the norm, and the first two joined into one
  // (the range [0, 2) of 4, i.e. half 0 of 2) before the gather; the
  // gradient parts [1, 1, 2] add up whole in any order.
  // expected-remark @+2 {{op(s) recognised as parts of a batch split; returned values match the reference}}
  // expected-remark @+1 {{values match the reference}}
  func.func @regrouped(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %s0 = tandem.slice %x dim 0 chunk 0 of 3 weights [1, 1, 2] : tensor<8x16xbf16> -> tensor<2x16xbf16>
    %s1 = tandem.slice %x dim 0 chunk 1 of 3 weights [1, 1, 2] : tensor<8x16xbf16> -> tensor<2x16xbf16>
    %s2 = tandem.slice %x dim 0 chunk 2 of 3 weights [1, 1, 2] : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %n0 = tandem.norm rms %s0, %g : tensor<2x16xbf16>, tensor<16xbf16>
    %n1 = tandem.norm rms %s1, %g : tensor<2x16xbf16>, tensor<16xbf16>
    %n2 = tandem.norm rms %s2, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %h0 = tandem.concat %n0, %n1 dim 0 : tensor<2x16xbf16>, tensor<2x16xbf16> -> tensor<4x16xbf16>
    %a0 = tandem.all_gather %h0 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %a1 = tandem.all_gather %n2 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %a = tandem.concat %a0, %a1 dim 0 interleave 2 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    %y = tandem.matmul fprop %a, %w : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %dw = tandem.matmul wgrad %a, %y transpose_lhs : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %d0 = tandem.slice %dy dim 0 chunk 0 of 3 weights [1, 1, 2] : tensor<8x16xbf16> -> tensor<2x16xbf16>
    %d1 = tandem.slice %dy dim 0 chunk 1 of 3 weights [1, 1, 2] : tensor<8x16xbf16> -> tensor<2x16xbf16>
    %d2 = tandem.slice %dy dim 0 chunk 2 of 3 weights [1, 1, 2] : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %dx0, %dg0 = tandem.norm_grad rms %d0, %s0, %g : tensor<2x16xbf16>, tensor<16xbf16>
    %dx1, %dg1 = tandem.norm_grad rms %d1, %s1, %g : tensor<2x16xbf16>, tensor<16xbf16>
    %dx2, %dg2 = tandem.norm_grad rms %d2, %s2, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %p = tandem.elementwise add %dg2, %dg0 : tensor<16xbf16>, tensor<16xbf16> -> tensor<16xbf16>
    %dg = tandem.elementwise add %p, %dg1 : tensor<16xbf16>, tensor<16xbf16> -> tensor<16xbf16>
    return %y, %dw, %dg : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
  // Part 1 of [1, 3] (units [1, 4) of 4) followed by part 1 of [3, 1]
  // (units [3, 4)): the second does not start where the first ends, and
  // the rows of units [0, 1) are missing.
  func.func @wrong_sizes(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %s0 = tandem.slice %x dim 0 chunk 0 of 2 weights [1, 3] : tensor<8x16xbf16> -> tensor<2x16xbf16>
    %s1 = tandem.slice %x dim 0 chunk 1 of 2 weights [3, 1] : tensor<8x16xbf16> -> tensor<2x16xbf16>
    %n0 = tandem.norm rms %s0, %g : tensor<2x16xbf16>, tensor<16xbf16>
    %n1 = tandem.norm rms %s1, %g : tensor<2x16xbf16>, tensor<16xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<2x16xbf16> -> tensor<4x16xbf16>
    %b1 = tandem.slice %x dim 0 chunk 1 of 2 weights [1, 3] : tensor<8x16xbf16> -> tensor<6x16xbf16>
    %m1 = tandem.norm rms %b1, %g : tensor<6x16xbf16>, tensor<16xbf16>
    %a1 = tandem.all_gather %m1 on @tp dim 0 : tensor<6x16xbf16> -> tensor<12x16xbf16>
    %a = tandem.concat %a1, %a0 dim 0 interleave 2 : tensor<12x16xbf16>, tensor<4x16xbf16> -> tensor<16x16xbf16>
    %y = tandem.matmul fprop %a, %w : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %dw = tandem.matmul wgrad %a, %y transpose_lhs : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %dx, %dg = tandem.norm_grad rms %dy, %x, %g : tensor<8x16xbf16>, tensor<16xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %y, %dw, %dg : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
  // The wgrad's operands permuted by two different cuts ([1, 3] and
  // equal halves): another contraction.
  func.func @mixed_cuts(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %s0 = tandem.slice %x dim 0 chunk 0 of 2 weights [1, 3] : tensor<8x16xbf16> -> tensor<2x16xbf16>
    %n0 = tandem.norm rms %s0, %g : tensor<2x16xbf16>, tensor<16xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<2x16xbf16> -> tensor<4x16xbf16>
    %s1 = tandem.slice %x dim 0 chunk 1 of 2 weights [1, 3] : tensor<8x16xbf16> -> tensor<6x16xbf16>
    %n1 = tandem.norm rms %s1, %g : tensor<6x16xbf16>, tensor<16xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<6x16xbf16> -> tensor<12x16xbf16>
    %a = tandem.concat %a0, %a1 dim 0 interleave 2 : tensor<4x16xbf16>, tensor<12x16xbf16> -> tensor<16x16xbf16>
    %ap = tandem.concat %a0, %a1 dim 0 : tensor<4x16xbf16>, tensor<12x16xbf16> -> tensor<16x16xbf16>
    %y = tandem.matmul fprop %a, %w : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %e0 = tandem.slice %y dim 0 chunk 0 of 2 interleave 2 : tensor<16x4xbf16> -> tensor<8x4xbf16>
    %e1 = tandem.slice %y dim 0 chunk 1 of 2 interleave 2 : tensor<16x4xbf16> -> tensor<8x4xbf16>
    %yp = tandem.concat %e0, %e1 dim 0 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    %dw = tandem.matmul wgrad %ap, %yp transpose_lhs : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    %dx, %dg = tandem.norm_grad rms %dy, %x, %g : tensor<8x16xbf16>, tensor<16xbf16>
    // expected-error @+1 {{returned value #1 differs from the reference}}
    return %y, %dw, %dg : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
  // Four sequences cut [1, 3]: each sequence's attention on its own slice
  // of the parts (part 1 cut again into its 3 sequences) is the
  // reference's attention per sequence.
  // expected-remark @+2 {{op(s) recognised as parts of a batch split; returned values match the reference}}
  // expected-remark @+1 {{values match the reference}}
  func.func @per_sequence(%qkv: tensor<8x12xbf16>) -> tensor<8x4xbf16> {
    %p0 = tandem.slice %qkv dim 0 chunk 0 of 2 weights [1, 3] : tensor<8x12xbf16> -> tensor<2x12xbf16>
    %p1 = tandem.slice %qkv dim 0 chunk 1 of 2 weights [1, 3] : tensor<8x12xbf16> -> tensor<6x12xbf16>
    %s1 = tandem.slice %p1 dim 0 chunk 0 of 3 : tensor<6x12xbf16> -> tensor<2x12xbf16>
    %s2 = tandem.slice %p1 dim 0 chunk 1 of 3 : tensor<6x12xbf16> -> tensor<2x12xbf16>
    %s3 = tandem.slice %p1 dim 0 chunk 2 of 3 : tensor<6x12xbf16> -> tensor<2x12xbf16>
    %o0 = tandem.attention %p0 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o1 = tandem.attention %s1 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o2 = tandem.attention %s2 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o3 = tandem.attention %s3 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o = tandem.concat %o0, %o1, %o2, %o3 dim 0 : tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16> -> tensor<8x4xbf16>
    return %o : tensor<8x4xbf16>
  }
  // One attention over part 1's three sequences at once attends across
  // them: not the reference's attention per sequence.
  func.func @whole_part(%qkv: tensor<8x12xbf16>) -> tensor<8x4xbf16> {
    %p0 = tandem.slice %qkv dim 0 chunk 0 of 2 weights [1, 3] : tensor<8x12xbf16> -> tensor<2x12xbf16>
    %p1 = tandem.slice %qkv dim 0 chunk 1 of 2 weights [1, 3] : tensor<8x12xbf16> -> tensor<6x12xbf16>
    %o0 = tandem.attention %p0 heads(1, 1) head_dim(4) causal : tensor<2x12xbf16> -> tensor<2x4xbf16>
    %o1 = tandem.attention %p1 heads(1, 1) head_dim(4) causal : tensor<6x12xbf16> -> tensor<6x4xbf16>
    %o = tandem.concat %o0, %o1 dim 0 : tensor<2x4xbf16>, tensor<6x4xbf16> -> tensor<8x4xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %o : tensor<8x4xbf16>
  }
}
