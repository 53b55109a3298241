// RUN: tandem-opt %s --tandem-simulate="report=-" -o /dev/null | FileCheck %s --check-prefix=BUILTIN
// RUN: tandem-opt %s --tandem-simulate="report=- calibration=%S/../Inputs/slow-contention.json" -o /dev/null | FileCheck %s --check-prefix=LOADED
// RUN: tandem-opt %s --tandem-simulate="calibration=%S/../Inputs/does-not-exist.json" -verify-diagnostics -o /dev/null

// A copy under an all-gather: both slow down by the contention table's
// factors. The built-in table (H200 probe) slows each x1.13 at 24 SMs;
// Inputs/slow-contention.json slows each x2.
// expected-error @+1 {{cannot read calibration file '}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> (tensor<2048x1024xbf16>, tensor<256x1024xbf16>) {
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %c = tandem.elementwise copy %x : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    return %g, %c : tensor<2048x1024xbf16>, tensor<256x1024xbf16>
  }
}

// The all-gather alone takes 28.194 us, the copy 4.243 us.
// Built-in: copy ends at 4.794; AG at 4.794 + (1 - 4.794/31.860) * 28.194.
// BUILTIN: "span_us": 28.74{{[0-9]*}},
// Loaded: copy ends at 8.485; AG at 8.485 + (1 - 8.485/56.389) * 28.194.
// LOADED: "span_us": 32.43{{[0-9]*}},
