// RUN: tandem-opt %s --tandem-bulk-overlap="memory-budget=21495808" -verify-diagnostics | FileCheck %s
// RUN: tandem-opt %s --tandem-bulk-overlap 2>/dev/null | FileCheck %s --check-prefix=FREE

// Program-order peak of the input: 21495808 bytes at %c (arguments 8.5 MiB,
// the future 4 MiB, %c 8 MiB). Sinking the wait below %c would keep the
// all-gather's input %n (512 KiB) live there too: over a budget equal to
// the input's peak, so the wait stays.
// CHECK-LABEL: func.func @budget
// CHECK:      tandem.wait
// CHECK-NEXT: tandem.elementwise copy %arg1
// FREE-LABEL: func.func @budget
// FREE:       tandem.elementwise copy %arg1
// FREE-NEXT:  tandem.wait
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @budget(%a: tensor<256x1024xbf16>, %big: tensor<2048x2048xbf16>) -> (tensor<2048x1024xbf16>, tensor<2048x2048xbf16>) {
    %n = tandem.elementwise copy %a : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    // expected-remark @+1 {{wait moved below 0 compute op(s), stopped by the memory budget; window: 0.0 us of compute under 28.2 us of communication (moves limited by the memory budget of 21495808 bytes)}}
    %f = tandem.all_gather_start %n on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    %c = tandem.elementwise copy %big : tensor<2048x2048xbf16> -> tensor<2048x2048xbf16>
    return %g, %c : tensor<2048x1024xbf16>, tensor<2048x2048xbf16>
  }
}
