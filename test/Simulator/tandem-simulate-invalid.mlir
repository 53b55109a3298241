// RUN: tandem-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect --tandem-simulate -o /dev/null

// expected-error @+1 {{the module has no 'tandem.target' attribute: add one (e.g. {tandem.target = #tandem.target<"h200">}) or pass a target preset}}
module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    return %x : tensor<8xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @f() -> tensor<8xbf16> {
    // expected-error @+1 {{'test.make' has no cost model: tandem-simulate knows tandem compute ops, collectives and waits}}
    %x = "test.make"() : () -> tensor<8xbf16>
    return %x : tensor<8xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  // expected-error @+1 {{tandem-simulate needs a single-block function; '@f' has 2 blocks}}
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    "test.br"()[^bb1] : () -> ()
  ^bb1:
    return %x : tensor<8xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @f(%a: tensor<256x256xbf16>) -> tensor<256x256xbf16> {
    // expected-error @+1 {{'tandem.sm_target' must be in [1, 132], got 140}}
    %y = tandem.matmul fprop %a, %a {tandem.sm_target = 140 : i64} : tensor<256x256xbf16>, tensor<256x256xbf16> -> tensor<256x256xbf16>
    return %y : tensor<256x256xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.comm_sms' must be in [1, 132), got 0}}
    %y = tandem.all_reduce %x on @tp {tandem.comm_sms = 0 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @f(%a: tensor<64x64xf64>) -> tensor<64x64xf64> {
    // expected-error @+1 {{target 'h200' has no tensor-core peak for f64}}
    %y = tandem.matmul fprop %a, %a : tensor<64x64xf64>, tensor<64x64xf64> -> tensor<64x64xf64>
    return %y : tensor<64x64xf64>
  }
}
