// RUN: tandem-opt %s --tandem-reschedule-wgrad=memory-budget=171966464 -verify-diagnostics | FileCheck %s


// The same step under a budget equal to its own peak (171966464 bytes):
// delaying the wgrad keeps the gathered gradient live into the next window
// and would raise the peak to 188743680 bytes, so it stays.
// CHECK-LABEL: func.func @budget
// CHECK:      tandem.matmul wgrad
// CHECK-NEXT: tandem.elementwise add
// CHECK-NEXT: tandem.all_gather_start
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @budget(%dy: tensor<256x4096xbf16>, %w: tensor<4096x4096xbf16>, %act: tensor<2048x4096xbf16>, %dx2: tensor<256x4096xbf16>, %acc: tensor<4096x4096xbf16>) -> (tensor<2048x4096xbf16>, tensor<4096x4096xbf16>, tensor<2048x4096xbf16>) {
    %f1 = tandem.all_gather_start %dy on @tp dim 0 : tensor<256x4096xbf16> -> !tandem.future<tensor<2048x4096xbf16>>
    %g1 = tandem.wait %f1 : !tandem.future<tensor<2048x4096xbf16>>
    %d1 = tandem.matmul dgrad %g1, %w transpose_rhs : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    // expected-remark @+1 {{wgrad left in place: the memory budget (171966464 bytes) leaves no room in a later window}}
    %dw = tandem.matmul wgrad %act, %g1 transpose_lhs : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %sum = tandem.elementwise add %dw, %acc : tensor<4096x4096xbf16>, tensor<4096x4096xbf16> -> tensor<4096x4096xbf16>
    %f2 = tandem.all_gather_start %dx2 on @tp dim 0 : tensor<256x4096xbf16> -> !tandem.future<tensor<2048x4096xbf16>>
    %g2 = tandem.wait %f2 : !tandem.future<tensor<2048x4096xbf16>>
    %d2 = tandem.matmul dgrad %g2, %w transpose_rhs : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    return %d1, %sum, %d2 : tensor<2048x4096xbf16>, tensor<4096x4096xbf16>, tensor<2048x4096xbf16>
  }
}
