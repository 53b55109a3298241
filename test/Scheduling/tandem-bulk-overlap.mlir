// RUN: tandem-opt %s --tandem-bulk-overlap -verify-diagnostics | FileCheck %s

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

  // The reduce-scatter of the dgrad result is issued right after the dgrad
  // and waited just before its use, so the independent wgrad runs under it.
  // CHECK-LABEL: func.func @wgrad_under_rs
  // CHECK:      %[[D:.*]] = tandem.matmul dgrad
  // CHECK-NEXT: %[[F:.*]] = tandem.reduce_scatter_start %[[D]]
  // CHECK-NEXT: tandem.matmul wgrad
  // CHECK-NEXT: tandem.wait %[[F]]
  // CHECK-NEXT: tandem.elementwise add
  func.func @wgrad_under_rs(%dy: tensor<2048x1024xbf16>, %w: tensor<1024x1024xbf16>, %x: tensor<2048x1024xbf16>, %r: tensor<256x1024xbf16>) -> (tensor<256x1024xbf16>, tensor<1024x1024xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs : tensor<2048x1024xbf16>, tensor<1024x1024xbf16> -> tensor<2048x1024xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs : tensor<2048x1024xbf16>, tensor<2048x1024xbf16> -> tensor<1024x1024xbf16>
    // expected-remark @+1 {{start moved above 1 compute op(s), stopped by its operand 'tandem.matmul'; wait moved below 0 compute op(s), stopped by its first use 'tandem.elementwise'; window: 9.6 us of compute under 28.2 us of communication}}
    %f = tandem.reduce_scatter_start %d on @tp dim 0 : tensor<2048x1024xbf16> -> !tandem.future<tensor<256x1024xbf16>>
    %s = tandem.wait %f : !tandem.future<tensor<256x1024xbf16>>
    %o = tandem.elementwise add %s, %r : tensor<256x1024xbf16>, tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    return %o, %dw : tensor<256x1024xbf16>, tensor<1024x1024xbf16>
  }

  // Two collectives on one group: the second may not be issued before the
  // first (issue order); with max-in-flight=1 the first's wait may not pass
  // the second's start.
  // CHECK-LABEL: func.func @issue_order
  // CHECK:      tandem.all_gather_start %arg0
  // CHECK-NEXT: tandem.all_gather_start %arg1
  // CHECK-NEXT: tandem.elementwise copy
  func.func @issue_order(%a: tensor<256x1024xbf16>, %b: tensor<256x1024xbf16>) -> (tensor<2048x1024xbf16>, tensor<2048x1024xbf16>, tensor<256x1024xbf16>) {
    // expected-remark @+1 {{start moved above 0 compute op(s), stopped by the function entry; wait moved below 1 compute op(s), stopped by the end of the function; window: 4.2 us of compute under 28.2 us of communication}}
    %f1 = tandem.all_gather_start %a on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g1 = tandem.wait %f1 : !tandem.future<tensor<2048x1024xbf16>>
    %c = tandem.elementwise copy %a : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    // expected-remark @+1 {{start moved above 1 compute op(s), stopped by the previous collective on tp 'tandem.all_gather_start' (issue order)}}
    %f2 = tandem.all_gather_start %b on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g2 = tandem.wait %f2 : !tandem.future<tensor<2048x1024xbf16>>
    return %g1, %g2, %c : tensor<2048x1024xbf16>, tensor<2048x1024xbf16>, tensor<256x1024xbf16>
  }
}
