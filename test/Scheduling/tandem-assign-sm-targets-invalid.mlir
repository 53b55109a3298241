// Each error needs its own options, so each case is a file of its own.
// RUN: split-file %s %t
// RUN: tandem-opt %t/inputs.mlir -split-input-file --tandem-assign-sm-targets -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/zero.mlir --tandem-assign-sm-targets=comm-sms=0 -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/all-sms.mlir --tandem-assign-sm-targets=comm-sms=8,132 -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/twice.mlir --tandem-assign-sm-targets=comm-sms=16,8,16 -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/empty.mlir --tandem-assign-sm-targets=comm-sms= -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/calibration.mlir --tandem-assign-sm-targets="calibration=%t/does-not-exist.json" -verify-diagnostics -o /dev/null

//--- inputs.mlir

// expected-error @+1 {{the module has no 'tandem.target' attribute: add one (e.g. {tandem.target = #tandem.target<"h200">}) or pass a target preset}}
module {
}

// -----

// The default candidates 8, 16, 24, 32 do not all fit a 30-SM target.
// expected-error @+1 {{comm-sms candidate 32 is out of range: a CTA budget must be in [1, 30) on target 'h200'}}
module attributes {tandem.target = #tandem.target<"h200", sm_count = 30, collective_sms = 16>} {
}

// -----

// A compute op in a window must have a price.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>, %a: tensor<64x64xf64>) -> (tensor<2048x1024xbf16>, tensor<64x64xf64>) {
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    // expected-error @+1 {{target 'h200' has no tensor-core peak for f64}}
    %y = tandem.matmul fprop %a, %a : tensor<64x64xf64>, tensor<64x64xf64> -> tensor<64x64xf64>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    return %g, %y : tensor<2048x1024xbf16>, tensor<64x64xf64>
  }
}

//--- zero.mlir

// expected-error @+1 {{comm-sms candidate 0 is out of range: a CTA budget must be in [1, 132) on target 'h200'}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- all-sms.mlir

// A collective holding every SM would leave none to compute on.
// expected-error @+1 {{comm-sms candidate 132 is out of range: a CTA budget must be in [1, 132) on target 'h200'}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- twice.mlir

// expected-error @+1 {{comm-sms lists 16 twice}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- empty.mlir

// expected-error @+1 {{comm-sms lists no CTA budget}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- calibration.mlir

// expected-error @+1 {{cannot read calibration file '}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
