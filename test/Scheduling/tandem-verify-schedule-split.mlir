// RUN: tandem-opt %s --tandem-verify-schedule=reference=%S/Inputs/split-reference.mlir -verify-diagnostics=only-expected -o /dev/null

// Batch splits (tandem-split-batch) are proven equal to the unsplit
// reference by the part algebra of RowSplit.h: a slice is part j of k of its
// input; a row-local op on parts j of the same cut is part j of the unsplit
// op; a dim-0 all-gather multiplies the interleave by the group size; the
// parts concatenated with their interleave are the whole value, with
// interleave 1 its rows permuted, which a wgrad whose both operands are so
// permuted does not see; a norm's weight-gradient parts add up to it.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-remark @+2 {{op(s) recognised as parts of a batch split; returned values match the reference}}
  // expected-remark @+1 {{values match the reference}}
  func.func @good(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %s0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %n0 = tandem.norm rms %s0, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %s1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %n1 = tandem.norm rms %s1, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %d0 = tandem.slice %dy dim 0 chunk 0 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %dx0, %dg0 = tandem.norm_grad rms %d0, %s0, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %y0 = tandem.matmul fprop %a0, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %y1 = tandem.matmul fprop %a1, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %yp = tandem.concat %y0, %y1 dim 0 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    %ap = tandem.concat %a0, %a1 dim 0 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    %d1 = tandem.slice %dy dim 0 chunk 1 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %dx1, %dg1 = tandem.norm_grad rms %d1, %s1, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %dg = tandem.elementwise add %dg0, %dg1 : tensor<16xbf16>, tensor<16xbf16> -> tensor<16xbf16>
    %y = tandem.concat %y0, %y1 dim 0 interleave 2 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    %dw = tandem.matmul wgrad %ap, %yp transpose_lhs : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    return %y, %dw, %dg : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
  // AG-WGRAD's halves of a split's wgrad (dim-1 slices of the permuted lhs,
  // output rows concatenated) are the unsplit wgrad.
  // expected-remark @+2 {{chunk pipeline(s) recognised; returned values match the reference}}
  // expected-remark @+1 {{values match the reference}}
  func.func @halved(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %s0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %n0 = tandem.norm rms %s0, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %s1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %n1 = tandem.norm rms %s1, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %d0 = tandem.slice %dy dim 0 chunk 0 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %dx0, %dg0 = tandem.norm_grad rms %d0, %s0, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %y0 = tandem.matmul fprop %a0, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %y1 = tandem.matmul fprop %a1, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %yp = tandem.concat %y0, %y1 dim 0 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    %ap = tandem.concat %a0, %a1 dim 0 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    %d1 = tandem.slice %dy dim 0 chunk 1 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %dx1, %dg1 = tandem.norm_grad rms %d1, %s1, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %dg = tandem.elementwise add %dg0, %dg1 : tensor<16xbf16>, tensor<16xbf16> -> tensor<16xbf16>
    %y = tandem.concat %y0, %y1 dim 0 interleave 2 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    %h0 = tandem.slice %ap dim 1 chunk 0 of 2 : tensor<16x16xbf16> -> tensor<16x8xbf16>
    %w0 = tandem.matmul wgrad %h0, %yp transpose_lhs : tensor<16x8xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %h1 = tandem.slice %ap dim 1 chunk 1 of 2 : tensor<16x16xbf16> -> tensor<16x8xbf16>
    %w1 = tandem.matmul wgrad %h1, %yp transpose_lhs : tensor<16x8xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %dw = tandem.concat %w0, %w1 dim 0 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    return %y, %dw, %dg : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
  // Parts assembled in the wrong order are another tensor.
  func.func @swapped(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %s0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %n0 = tandem.norm rms %s0, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %s1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %n1 = tandem.norm rms %s1, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %d0 = tandem.slice %dy dim 0 chunk 0 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %dx0, %dg0 = tandem.norm_grad rms %d0, %s0, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %y0 = tandem.matmul fprop %a0, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %y1 = tandem.matmul fprop %a1, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %yp = tandem.concat %y0, %y1 dim 0 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    %ap = tandem.concat %a0, %a1 dim 0 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    %d1 = tandem.slice %dy dim 0 chunk 1 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %dx1, %dg1 = tandem.norm_grad rms %d1, %s1, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %dg = tandem.elementwise add %dg0, %dg1 : tensor<16xbf16>, tensor<16xbf16> -> tensor<16xbf16>
    %y = tandem.concat %y1, %y0 dim 0 interleave 2 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    %dw = tandem.matmul wgrad %ap, %yp transpose_lhs : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %y, %dw, %dg : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
  // One part of a weight gradient is not the gradient.
  func.func @half_sum(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %s0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %n0 = tandem.norm rms %s0, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %s1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %n1 = tandem.norm rms %s1, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %d0 = tandem.slice %dy dim 0 chunk 0 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %dx0, %dg0 = tandem.norm_grad rms %d0, %s0, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %y0 = tandem.matmul fprop %a0, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %y1 = tandem.matmul fprop %a1, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %yp = tandem.concat %y0, %y1 dim 0 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    %ap = tandem.concat %a0, %a1 dim 0 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    %d1 = tandem.slice %dy dim 0 chunk 1 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %dx1, %dg1 = tandem.norm_grad rms %d1, %s1, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %dg = tandem.elementwise add %dg0, %dg1 : tensor<16xbf16>, tensor<16xbf16> -> tensor<16xbf16>
    %y = tandem.concat %y0, %y1 dim 0 interleave 2 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    %dw = tandem.matmul wgrad %ap, %yp transpose_lhs : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    // expected-error @+1 {{returned value #2 differs from the reference}}
    return %y, %dw, %dg0 : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
  // A wgrad whose operands have their rows in different orders contracts
  // mismatched rows.
  func.func @mixed_order(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %w: tensor<16x4xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) {
    %s0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %n0 = tandem.norm rms %s0, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %s1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %n1 = tandem.norm rms %s1, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x16xbf16> -> tensor<8x16xbf16>
    %d0 = tandem.slice %dy dim 0 chunk 0 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %dx0, %dg0 = tandem.norm_grad rms %d0, %s0, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %y0 = tandem.matmul fprop %a0, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %y1 = tandem.matmul fprop %a1, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
    %yp = tandem.concat %y0, %y1 dim 0 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    %ap = tandem.concat %a0, %a1 dim 0 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    %d1 = tandem.slice %dy dim 0 chunk 1 of 2 : tensor<8x16xbf16> -> tensor<4x16xbf16>
    %dx1, %dg1 = tandem.norm_grad rms %d1, %s1, %g : tensor<4x16xbf16>, tensor<16xbf16>
    %dg = tandem.elementwise add %dg0, %dg1 : tensor<16xbf16>, tensor<16xbf16> -> tensor<16xbf16>
    %y = tandem.concat %y0, %y1 dim 0 interleave 2 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
    %dw = tandem.matmul wgrad %ap, %y transpose_lhs : tensor<16x16xbf16>, tensor<16x4xbf16> -> tensor<16x4xbf16>
    // expected-error @+1 {{returned value #1 differs from the reference}}
    return %y, %dw, %dg : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>
  }
}
