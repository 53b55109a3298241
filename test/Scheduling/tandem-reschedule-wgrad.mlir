// RUN: tandem-opt %s -split-input-file --tandem-reschedule-wgrad -verify-diagnostics | FileCheck %s

// AG-WGRAD: the row-parallel wgrad has no consumer but the gradient output,
// so it moves into the window of the next all-gather, whose result the
// following dgrad needs at once (an otherwise exposed collective).
// Window: the 16 MiB ring all-gather takes 4 + 7 * 2 + 7/8 * 16 MiB / 360 GB/s
// = 58.8 us, x1.13 contention = 66.4 us. The 4096x4096x2048 wgrad on the
// 108 SMs the collective leaves: 512 tiles in 5 waves of 22.4 us + 4 us,
// x1.12 contention = 129.8 us. It overfills the window, which is allowed:
// the window was empty, and the excess runs as it would have anyway.
// CHECK-LABEL: func.func @ag_wgrad
// CHECK:      %[[F2:.*]] = tandem.all_gather_start %arg3
// CHECK-NEXT: %[[DW:.*]] = tandem.matmul wgrad
// CHECK-NEXT: %[[ACC:.*]] = tandem.elementwise add %[[DW]], %arg4
// CHECK-NEXT: tandem.wait %[[F2]]
// CHECK-NEXT: tandem.matmul dgrad
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @ag_wgrad(%dy: tensor<256x4096xbf16>, %w: tensor<4096x4096xbf16>, %act: tensor<2048x4096xbf16>, %dx2: tensor<256x4096xbf16>, %acc: tensor<4096x4096xbf16>) -> (tensor<2048x4096xbf16>, tensor<4096x4096xbf16>, tensor<2048x4096xbf16>) {
    %f1 = tandem.all_gather_start %dy on @tp dim 0 : tensor<256x4096xbf16> -> !tandem.future<tensor<2048x4096xbf16>>
    %g1 = tandem.wait %f1 : !tandem.future<tensor<2048x4096xbf16>>
    %d1 = tandem.matmul dgrad %g1, %w transpose_rhs : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    // expected-remark @+1 {{wgrad moved into the window of 'tandem.all_gather_start' (all_gather on @tp): 129.8 us of GEMM under contention, window now 129.8 us of 66.4 us}}
    %dw = tandem.matmul wgrad %act, %g1 transpose_lhs : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %sum = tandem.elementwise add %dw, %acc : tensor<4096x4096xbf16>, tensor<4096x4096xbf16> -> tensor<4096x4096xbf16>
    %f2 = tandem.all_gather_start %dx2 on @tp dim 0 : tensor<256x4096xbf16> -> !tandem.future<tensor<2048x4096xbf16>>
    %g2 = tandem.wait %f2 : !tandem.future<tensor<2048x4096xbf16>>
    %d2 = tandem.matmul dgrad %g2, %w transpose_rhs : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    return %d1, %sum, %d2 : tensor<2048x4096xbf16>, tensor<4096x4096xbf16>, tensor<2048x4096xbf16>
  }
}

// -----

// A wgrad whose result feeds further compute is not a leaf; one with no
// collective after it has no window to move to.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @kept(%a: tensor<2048x1024xbf16>, %b: tensor<2048x1024xbf16>, %dx: tensor<256x1024xbf16>) -> (tensor<1024x1024xbf16>, tensor<2048x1024xbf16>, tensor<1024x1024xbf16>) {
    // expected-remark @+1 {{wgrad left in place: its result feeds 'tandem.matmul', which is neither gradient accumulation nor a gradient output}}
    %dw = tandem.matmul wgrad %a, %b transpose_lhs : tensor<2048x1024xbf16>, tensor<2048x1024xbf16> -> tensor<1024x1024xbf16>
    %u = tandem.matmul fprop %a, %dw : tensor<2048x1024xbf16>, tensor<1024x1024xbf16> -> tensor<2048x1024xbf16>
    %f = tandem.all_gather_start %dx on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    // expected-remark @+1 {{wgrad left in place: no collective window follows it}}
    %dw2 = tandem.matmul wgrad %a, %g transpose_lhs : tensor<2048x1024xbf16>, tensor<2048x1024xbf16> -> tensor<1024x1024xbf16>
    return %dw, %u, %dw2 : tensor<1024x1024xbf16>, tensor<2048x1024xbf16>, tensor<1024x1024xbf16>
  }
}
