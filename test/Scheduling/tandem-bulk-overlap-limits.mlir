// RUN: tandem-opt %s -split-input-file --tandem-bulk-overlap=max-in-flight=1 -verify-diagnostics | FileCheck %s --check-prefix=LIMIT

// With one collective per group in flight, the first wait stays before the
// second start.
// LIMIT-LABEL: func.func @limit
// LIMIT:      tandem.all_gather_start %arg0
// LIMIT-NEXT: tandem.wait
// LIMIT-NEXT: tandem.all_gather_start %arg1
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @limit(%a: tensor<256x1024xbf16>, %b: tensor<256x1024xbf16>) -> (tensor<2048x1024xbf16>, tensor<2048x1024xbf16>) {
    // expected-remark @+1 {{wait moved below 0 compute op(s), stopped by the in-flight limit (1) at 'tandem.all_gather_start'}}
    %f1 = tandem.all_gather_start %a on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g1 = tandem.wait %f1 : !tandem.future<tensor<2048x1024xbf16>>
    // expected-remark @+1 {{start moved above 0 compute op(s), stopped by the in-flight limit (1) at 'tandem.wait'}}
    %f2 = tandem.all_gather_start %b on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g2 = tandem.wait %f2 : !tandem.future<tensor<2048x1024xbf16>>
    return %g1, %g2 : tensor<2048x1024xbf16>, tensor<2048x1024xbf16>
  }
}
