// RUN: tandem-opt %s --tandem-verify-schedule="reference=%S/Inputs/reordered-reference.mlir allow-reordered-collectives=true" -verify-diagnostics=only-expected -o /dev/null

// allow-reordered-collectives: a group's collectives are compared with the
// reference's in any order; the same collectives in another order pass
// (with a remark), other collectives do not.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-remark @+2 {{the collectives on @tp are the reference's, issued in another order (allowed)}}
  // expected-remark @+1 {{values match the reference}}
  func.func @swapped(%a: tensor<8x16xbf16>, %b: tensor<8x16xbf16>) -> (tensor<16x16xbf16>, tensor<16x16xbf16>) {
    %y = tandem.all_gather %b on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    %x = tandem.all_gather %a on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    return %x, %y : tensor<16x16xbf16>, tensor<16x16xbf16>
  }
  // A gather of %a instead of the reference's (unused) gather of %b: the
  // returned value matches, the collectives do not.
  // expected-error @+1 {{'@other' issues other collectives on @tp than its reference (compared in any order)}}
  func.func @other(%a: tensor<8x16xbf16>, %b: tensor<8x16xbf16>) -> tensor<16x16xbf16> {
    %w = tandem.all_gather %a on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    %x = tandem.all_gather %a on @tp dim 0 : tensor<8x16xbf16> -> tensor<16x16xbf16>
    return %x : tensor<16x16xbf16>
  }
}
