// RUN: tandem-opt %s -split-input-file -verify-diagnostics

func.func @chunk_out_of_range(%x: tensor<8x4xbf16>) -> tensor<4x4xbf16> {
  // expected-error @+1 {{'tandem.slice' op chunk 2 is out of range for 2 chunks}}
  %s = tandem.slice %x dim 0 chunk 2 of 2 : tensor<8x4xbf16> -> tensor<4x4xbf16>
  return %s : tensor<4x4xbf16>
}

// -----

func.func @not_divisible(%x: tensor<6x4xbf16>) -> tensor<3x4xbf16> {
  // expected-error @+1 {{'tandem.slice' op dimension 0 (6) is not divisible by 4 group(s) x 2 chunks}}
  %s = tandem.slice %x dim 0 chunk 0 of 2 interleave 4 : tensor<6x4xbf16> -> tensor<3x4xbf16>
  return %s : tensor<3x4xbf16>
}

// -----

func.func @slice_result(%x: tensor<8x4xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{'tandem.slice' op result dimension 0 must be 4, got 2}}
  %s = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x4xbf16> -> tensor<2x4xbf16>
  return %s : tensor<2x4xbf16>
}

// -----

func.func @slice_other_dim(%x: tensor<8x4xbf16>) -> tensor<4x2xbf16> {
  // expected-error @+1 {{'tandem.slice' op input and result differ in dimension 1; only dimension 0 may differ}}
  %s = tandem.slice %x dim 0 chunk 0 of 2 : tensor<8x4xbf16> -> tensor<4x2xbf16>
  return %s : tensor<4x2xbf16>
}

// -----

func.func @concat_types(%a: tensor<4x4xbf16>, %b: tensor<2x2xbf16>) -> tensor<6x4xbf16> {
  // expected-error @+1 {{'tandem.concat' op inputs and result differ in dimension 1; only dimension 0 may differ}}
  %c = tandem.concat %a, %b dim 0 : tensor<4x4xbf16>, tensor<2x2xbf16> -> tensor<6x4xbf16>
  return %c : tensor<6x4xbf16>
}

// -----

func.func @concat_result(%a: tensor<4x4xbf16>) -> tensor<6x4xbf16> {
  // expected-error @+1 {{'tandem.concat' op result dimension 0 must be 8, got 6}}
  %c = tandem.concat %a, %a dim 0 : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<6x4xbf16>
  return %c : tensor<6x4xbf16>
}

// -----

func.func @concat_groups(%a: tensor<3x4xbf16>) -> tensor<6x4xbf16> {
  // expected-error @+1 {{'tandem.concat' op input dimension 0 (3) is not divisible by 2 group(s)}}
  %c = tandem.concat %a, %a dim 0 interleave 2 : tensor<3x4xbf16>, tensor<3x4xbf16> -> tensor<6x4xbf16>
  return %c : tensor<6x4xbf16>
}

// -----

tandem.group @tp size(4) switch links(18 x 25.0 GBps, 2.0 us)
func.func @ring_inputs(%a: tensor<4x4xbf16>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'tandem.ring_concat' op needs one input per rank of @tp (4), got 2}}
  %r = tandem.ring_concat %a, %a on @tp dim 0 : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<8x4xbf16>
  return %r : tensor<8x4xbf16>
}

// -----

tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
func.func @ring_result(%a: tensor<4x4xbf16>) -> tensor<6x4xbf16> {
  // expected-error @+1 {{'tandem.ring_concat' op result dimension 0 must be 8, got 6}}
  %r = tandem.ring_concat %a, %a on @tp dim 0 : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<6x4xbf16>
  return %r : tensor<6x4xbf16>
}

// -----

func.func @weights_count(%x: tensor<8x4xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{'tandem.slice' op has 3 weight(s) for 2 chunks}}
  %s = tandem.slice %x dim 0 chunk 0 of 2 weights [1, 2, 1] : tensor<8x4xbf16> -> tensor<2x4xbf16>
  return %s : tensor<2x4xbf16>
}

// -----

func.func @weight_zero(%x: tensor<8x4xbf16>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'tandem.slice' op weight 0 (0) is outside [1, 1024]}}
  %s = tandem.slice %x dim 0 chunk 1 of 2 weights [0, 4] : tensor<8x4xbf16> -> tensor<8x4xbf16>
  return %s : tensor<8x4xbf16>
}

// -----

func.func @weights_not_divisible(%x: tensor<8x4xbf16>) -> tensor<4x4xbf16> {
  // expected-error @+1 {{'tandem.slice' op dimension 0 (8) is not divisible by 2 group(s) x 3 weight units}}
  %s = tandem.slice %x dim 0 chunk 1 of 2 weights [1, 2] interleave 2 : tensor<8x4xbf16> -> tensor<4x4xbf16>
  return %s : tensor<4x4xbf16>
}

// -----

func.func @weights_result(%x: tensor<8x4xbf16>) -> tensor<4x4xbf16> {
  // expected-error @+1 {{'tandem.slice' op result dimension 0 must be 6, got 4}}
  %s = tandem.slice %x dim 0 chunk 1 of 2 weights [1, 3] : tensor<8x4xbf16> -> tensor<4x4xbf16>
  return %s : tensor<4x4xbf16>
}

// -----

func.func @uneven_concat_groups(%a: tensor<4x4xbf16>, %b: tensor<6x4xbf16>) -> tensor<10x4xbf16> {
  // expected-error @+1 {{'tandem.concat' op input dimension 0 (6) is not divisible by 4 group(s)}}
  %c = tandem.concat %a, %b dim 0 interleave 4 : tensor<4x4xbf16>, tensor<6x4xbf16> -> tensor<10x4xbf16>
  return %c : tensor<10x4xbf16>
}

// -----

tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
func.func @ring_unequal(%a: tensor<4x4xbf16>, %b: tensor<2x4xbf16>) -> tensor<6x4xbf16> {
  // expected-error @+1 {{'tandem.ring_concat' op inputs must all have type 'tensor<4x4xbf16>', got 'tensor<2x4xbf16>'}}
  %r = tandem.ring_concat %a, %b on @tp dim 0 : tensor<4x4xbf16>, tensor<2x4xbf16> -> tensor<6x4xbf16>
  return %r : tensor<6x4xbf16>
}
