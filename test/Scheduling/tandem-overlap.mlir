// RUN: tandem-opt %s --tandem-overlap=strategy=none | FileCheck %s --check-prefix=NONE
// RUN: tandem-opt %s --tandem-overlap=strategy=bulk | FileCheck %s --check-prefix=BULK
// RUN: tandem-opt %s --tandem-overlap=strategy=reschedule | FileCheck %s --check-prefix=RESCHED
// RUN: tandem-opt %s --tandem-overlap -verify-diagnostics | FileCheck %s --check-prefix=RESCHED
// RUN: tandem-opt %s --tandem-overlap=strategy=reschedule --tandem-simulate=report=- -o /dev/null | FileCheck %s --check-prefix=SIM

// A backward step in miniature: a gathered output gradient feeds a dgrad and
// a (row-parallel) wgrad; then a second all-gather whose result the next
// dgrad needs at once.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-remark @+1 {{strategy reschedule chosen; predicted spans: none 403.125 us bulk 403.125 us reschedule 362.915 us pipeline 403.125 us pipeline+reschedule 362.915 us te-preset 403.125 us}}
  func.func @step(%dy: tensor<256x4096xbf16>, %w: tensor<4096x4096xbf16>, %act: tensor<2048x4096xbf16>) -> (tensor<2048x4096xbf16>, tensor<4096x4096xbf16>, tensor<2048x4096xbf16>) {
    %g1 = tandem.all_gather %dy on @tp dim 0 : tensor<256x4096xbf16> -> tensor<2048x4096xbf16>
    %d1 = tandem.matmul dgrad %g1, %w transpose_rhs : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %act, %g1 transpose_lhs : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %dx2 = tandem.opaque "next_layer_grad"(%d1) flops(0.0) bytes(4194304) : (tensor<2048x4096xbf16>) -> tensor<256x4096xbf16>
    %g2 = tandem.all_gather %dx2 on @tp dim 0 : tensor<256x4096xbf16> -> tensor<2048x4096xbf16>
    %d2 = tandem.matmul dgrad %g2, %w transpose_rhs : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    return %d1, %dw, %d2 : tensor<2048x4096xbf16>, tensor<4096x4096xbf16>, tensor<2048x4096xbf16>
  }
}

// NONE-LABEL: func.func @step
// NONE-NEXT:    tandem.all_gather %arg0
// NONE-NEXT:    tandem.matmul dgrad

// Bulk: the second all-gather depends on the dgrad, so it cannot start
// earlier; its window is empty and the dgrad after it waits for it.
// BULK-LABEL: func.func @step
// BULK-NEXT:    %[[F1:.*]] = tandem.all_gather_start %arg0
// BULK-NEXT:    tandem.wait %[[F1]]
// BULK-NEXT:    tandem.matmul dgrad
// BULK-NEXT:    tandem.matmul wgrad
// BULK-NEXT:    tandem.opaque
// BULK-NEXT:    %[[F2:.*]] = tandem.all_gather_start
// BULK-NEXT:    tandem.wait %[[F2]]

// Reschedule: the wgrad moves into the second all-gather's window.
// RESCHED-LABEL: func.func @step
// RESCHED:       tandem.matmul dgrad
// RESCHED-NEXT:  tandem.opaque
// RESCHED-NEXT:  %[[F2:.*]] = tandem.all_gather_start
// RESCHED-NEXT:  tandem.matmul wgrad
// RESCHED-NEXT:  tandem.wait %[[F2]]

// SIM: "exposed_comm_us"
