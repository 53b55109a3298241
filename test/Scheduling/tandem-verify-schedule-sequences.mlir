// RUN: tandem-opt %s -split-input-file -verify-diagnostics=only-expected \
// RUN:   --tandem-verify-schedule="reference=%S/Inputs/split-sequences-reference.mlir allow-reordered-collectives=true" -o /dev/null

// A batch split along whole sequences (tandem-split-batch on a tandem-gen
// --sequences step) runs each sequence's attention directly on its part:
// part j of the local rows, gathered, is sequence j's gathered rows (part j
// of 2 with interleave 2), which the reference takes with a slice. An op
// that is not row-local (attention) whose operands are all part j of one
// cut is part j of that op run per part; the parts joined with interleave 2
// are the reference's join.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-remark @+2 {{op(s) recognised as parts of a batch split; returned values match the reference}}
  // expected-remark @+1 {{values match the reference}}
  func.func @seqs(%x: tensor<8x48xbf16>, %g: tensor<48xbf16>) -> tensor<16x16xbf16> {
    %x0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n0 = tandem.norm rms %x0, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %x1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n1 = tandem.norm rms %x1, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %o0 = tandem.attention %a0 heads(1, 1) head_dim(16) causal : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %o1 = tandem.attention %a1 heads(1, 1) head_dim(16) causal : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %y = tandem.concat %o0, %o1 dim 0 interleave 2 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    return %y : tensor<16x16xbf16>
  }
}

// -----

// The sequences joined in the wrong order.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @seqs(%x: tensor<8x48xbf16>, %g: tensor<48xbf16>) -> tensor<16x16xbf16> {
    %x0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n0 = tandem.norm rms %x0, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %x1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n1 = tandem.norm rms %x1, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %o0 = tandem.attention %a0 heads(1, 1) head_dim(16) causal : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %o1 = tandem.attention %a1 heads(1, 1) head_dim(16) causal : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %y = tandem.concat %o1, %o0 dim 0 interleave 2 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %y : tensor<16x16xbf16>
  }
}

// -----

// Joined without the interleave: the rows of the two sequences are not
// where the reference puts them.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @seqs(%x: tensor<8x48xbf16>, %g: tensor<48xbf16>) -> tensor<16x16xbf16> {
    %x0 = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n0 = tandem.norm rms %x0, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %x1 = tandem.slice %x dim 0 chunk 1 of 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n1 = tandem.norm rms %x1, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %o0 = tandem.attention %a0 heads(1, 1) head_dim(16) causal : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %o1 = tandem.attention %a1 heads(1, 1) head_dim(16) causal : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %y = tandem.concat %o0, %o1 dim 0 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %y : tensor<16x16xbf16>
  }
}

// -----

// Parts cut with an interleave: part 0 holds the first two local tokens of
// each sequence, not sequence 0, so attention on it is not the reference's
// attention of sequence 0.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @seqs(%x: tensor<8x48xbf16>, %g: tensor<48xbf16>) -> tensor<16x16xbf16> {
    %x0 = tandem.slice %x dim 0 chunk 0 of 2 interleave 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n0 = tandem.norm rms %x0, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a0 = tandem.all_gather %n0 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %x1 = tandem.slice %x dim 0 chunk 1 of 2 interleave 2 : tensor<8x48xbf16> -> tensor<4x48xbf16>
    %n1 = tandem.norm rms %x1, %g : tensor<4x48xbf16>, tensor<48xbf16>
    %a1 = tandem.all_gather %n1 on @tp dim 0 : tensor<4x48xbf16> -> tensor<8x48xbf16>
    %o0 = tandem.attention %a0 heads(1, 1) head_dim(16) causal : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %o1 = tandem.attention %a1 heads(1, 1) head_dim(16) causal : tensor<8x48xbf16> -> tensor<8x16xbf16>
    %y = tandem.concat %o0, %o1 dim 0 interleave 2 : tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<16x16xbf16>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %y : tensor<16x16xbf16>
  }
}
