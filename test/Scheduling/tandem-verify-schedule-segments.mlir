// RUN: tandem-opt %s -split-input-file -verify-diagnostics=only-expected \
// RUN:   --tandem-verify-schedule="reference=%S/Inputs/split-segments-reference.mlir allow-reordered-collectives=true" -o /dev/null

// A batch split of one sequence along its causal segments (tandem-split-batch
// on a tandem-gen --segments step): part g of the local rows, gathered, is
// segment g. Attention with queries(N) over the concat of parts 0 .. g of one
// cut (or part 0 alone), N the rows of a part, is part g of the causal
// attention over the parts in order; its parts joined with the cut's
// interleave are the reference's join.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-remark @+2 {{op(s) recognised as parts of a batch split; returned values match the reference}}
  // expected-remark @+1 {{values match the reference}}
  func.func @segs(%x: tensor<8x48xbf16>, %g: tensor<48xbf16>) -> tensor<16x16xbf16> {
    %x0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n0 = tandem.norm rms %x0, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %o0 = tandem.attention %a0 heads(1, 1) head_dim(16) causal queries(8) : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %x1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n1 = tandem.norm rms %x1, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %k1 = tandem.concat %a0, %a1 dim 0 : tensor<8x48xbf16>, tensor<8x48xbf16> -> tensor<16x48xbf16>
    %o1 = tandem.attention %k1 heads(1, 1) head_dim(16) causal queries(8) : tensor<16x48xbf16> -> tensor<8x16xbf16>
    %y = tandem.concat %o0, %o1 dim 0 interleave 2 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    return %y : tensor<16x16xbf16>
  }
}

// -----

// Segment 1 attends to its own keys only (per-sequence attention, no
// queries): not the reference's causal prefix.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @segs(%x: tensor<8x48xbf16>, %g: tensor<48xbf16>) -> tensor<16x16xbf16> {
    %x0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n0 = tandem.norm rms %x0, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %o0 = tandem.attention %a0 heads(1, 1) head_dim(16) causal queries(8) : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %x1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n1 = tandem.norm rms %x1, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %o1 = tandem.attention %a1 heads(1, 1) head_dim(16) causal : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %y = tandem.concat %o0, %o1 dim 0 interleave 2 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %y : tensor<16x16xbf16>
  }
}

// -----

// Segment 0 without queries: the same numbers, but the IR says per-sequence
// attention, and the verifier does not take one for the other.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @segs(%x: tensor<8x48xbf16>, %g: tensor<48xbf16>) -> tensor<16x16xbf16> {
    %x0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n0 = tandem.norm rms %x0, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %o0 = tandem.attention %a0 heads(1, 1) head_dim(16) causal : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %x1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n1 = tandem.norm rms %x1, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %k1 = tandem.concat %a0, %a1 dim 0 : tensor<8x48xbf16>, tensor<8x48xbf16> -> tensor<16x48xbf16>
    %o1 = tandem.attention %k1 heads(1, 1) head_dim(16) causal queries(8) : tensor<16x48xbf16> -> tensor<8x16xbf16>
    %y = tandem.concat %o0, %o1 dim 0 interleave 2 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %y : tensor<16x16xbf16>
  }
}

// -----

// The prefix in the wrong order (segment 1's keys before segment 0's).
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @segs(%x: tensor<8x48xbf16>, %g: tensor<48xbf16>) -> tensor<16x16xbf16> {
    %x0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n0 = tandem.norm rms %x0, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %o0 = tandem.attention %a0 heads(1, 1) head_dim(16) causal queries(8) : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %x1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n1 = tandem.norm rms %x1, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %k1 = tandem.concat %a1, %a0 dim 0 : tensor<8x48xbf16>, tensor<8x48xbf16> -> tensor<16x48xbf16>
    %o1 = tandem.attention %k1 heads(1, 1) head_dim(16) causal queries(8) : tensor<16x48xbf16> -> tensor<8x16xbf16>
    %y = tandem.concat %o0, %o1 dim 0 interleave 2 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %y : tensor<16x16xbf16>
  }
}
