// RUN: tandem-opt %s -split-input-file -allow-unregistered-dialect --tandem-export-plan="file=%t.json" -verify-diagnostics -o /dev/null

// What the runtime cannot execute is an error at the op, before any file is
// written.

module attributes {tandem.target = #tandem.target<"h200">} {
  // expected-error @+1 {{element type 'f8E4M3FN' is not supported by the runtime (bf16, f16 and f32 are)}}
  func.func @fp8(%x: tensor<64x32xf8E4M3FN>) -> tensor<64x32xf8E4M3FN> {
    return %x : tensor<64x32xf8E4M3FN>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @cast_to_int(%x: tensor<64x32xbf16>) -> tensor<64x32xi8> {
    // expected-error @+1 {{element type 'i8' is not supported by the runtime (bf16, f16 and f32 are)}}
    %y = tandem.elementwise cast %x : tensor<64x32xbf16> -> tensor<64x32xi8>
    return %y : tensor<64x32xi8>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(4) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
  func.func @gather_dim1(%x: tensor<64x32xbf16>) -> tensor<64x128xbf16> {
    // expected-error @+1 {{the runtime supports collectives along dimension 0 only, this one is along 1}}
    %y = tandem.all_gather %x on @tp dim 1 : tensor<64x32xbf16> -> tensor<64x128xbf16>
    return %y : tensor<64x128xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @ep size(4) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
  func.func @a2a(%x: tensor<64x32xbf16>) -> tensor<16x128xbf16> {
    // expected-error @+1 {{the runtime supports all_to_all only with split 0 and concat 0}}
    %y = tandem.all_to_all %x on @ep split 0 concat 1 : tensor<64x32xbf16> -> tensor<16x128xbf16>
    return %y : tensor<16x128xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @one(%x: tensor<8x8xbf16>) -> tensor<8x8xbf16> {
    return %x : tensor<8x8xbf16>
  }
  // expected-error @+1 {{several functions have a body; name the one to export with 'function=<name>'}}
  func.func @two(%x: tensor<8x8xbf16>) -> tensor<8x8xbf16> {
    return %x : tensor<8x8xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @f(%x: tensor<8x8xbf16>) -> tensor<8x8xbf16> {
    // expected-error-re @+1 {{{{.*}}only tandem compute ops, collectives and {{.*}}}}
    "other.op"() : () -> ()
    return %x : tensor<8x8xbf16>
  }
}

// -----

// expected-error @+1 {{no function with a body to export}}
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func private @decl(%x: tensor<8x8xbf16>) -> tensor<8x8xbf16>
}

// -----

// A hand-scheduled function whose second stream reads a value without an
// event ordering it after its producer: the plan would race.
module attributes {tandem.target = #tandem.target<"h200">} {
  // expected-error-re @+1 {{the lowered plan is invalid: step 1 (tandem.elementwise at {{.*}}) reads buffer 1 ('gelu#1') written by step 0 on another stream with no event ordering the two}}
  func.func @race(%x: tensor<8x8xbf16>) -> tensor<8x8xbf16> attributes {tandem.num_streams = 2 : i64} {
    %y = tandem.elementwise gelu %x {tandem.stream = 0 : i64} : tensor<8x8xbf16> -> tensor<8x8xbf16>
    %z = tandem.elementwise gelu %y {tandem.stream = 1 : i64} : tensor<8x8xbf16> -> tensor<8x8xbf16>
    return %z : tensor<8x8xbf16>
  }
}
