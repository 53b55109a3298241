// RUN: tandem-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect --tandem-assign-streams -o /dev/null
//
// Types and ranges of the schedule attributes are the dialect's errors
// (test/Dialect/Tandem/schedule-attributes-invalid.mlir).

module {
  func.func @f() -> tensor<8xbf16> {
    // expected-error @+1 {{'test.make' has no stream: only tandem compute ops, collectives and waits run on streams}}
    %x = "test.make"() : () -> tensor<8xbf16>
    return %x : tensor<8xbf16>
  }
}

// -----

module {
  // expected-error @+1 {{streams need a single-block function; '@f' has 2 blocks}}
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    "test.br"()[^bb1] : () -> ()
  ^bb1:
    return %x : tensor<8xbf16>
  }
}

// -----

// A failing function does not stop the others: @g is assigned (remark).
module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'test.make' has no stream: only tandem compute ops, collectives and waits run on streams}}
    %y = "test.make"() : () -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
  // expected-remark @+1 {{'@g': 1 stream(s) (0: compute), 0 event(s)}}
  func.func @g(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    %y = tandem.elementwise copy %x : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}
