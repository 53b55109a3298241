// RUN: tandem-opt %s -split-input-file --tandem-reschedule-wgrad -verify-diagnostics | FileCheck %s
// RUN: tandem-opt %s -split-input-file --tandem-reschedule-wgrad=split-wgrads=false 2>/dev/null | FileCheck %s --check-prefix=NOSPLIT

// Split to fill: the 8192x8192x2048 wgrad runs under the reduce-scatter and
// its window needs it (kept), but half of it (~240 us contended) still covers
// that 66.4 us window. The all-gather after it has nothing under it: the
// wgrad's output rows are split in two (each half reads half of the
// transposed lhs, a copy), the second half and the concat move before the
// all-gather's wait. Saved: the half's 66.4 us of room at contention 1.12
// (47.7 us of work done while the stream would idle); cost: two 16 MiB
// slice copies and the halves' extra launch (27.5 us).
// CHECK-LABEL: func.func @split
// CHECK:      tandem.reduce_scatter_start
// CHECK-NEXT: %[[L0:.*]] = tandem.slice %arg1 dim 1 chunk 0 of 2
// CHECK-NEXT: %[[H0:.*]] = tandem.matmul wgrad %[[L0]], %arg2 transpose_lhs {{.*}} -> tensor<4096x8192xbf16>
// CHECK-NEXT: %[[L1:.*]] = tandem.slice %arg1 dim 1 chunk 1 of 2
// CHECK-NEXT: tandem.wait
// CHECK-NEXT: %[[F2:.*]] = tandem.all_gather_start
// CHECK-NEXT: %[[H1:.*]] = tandem.matmul wgrad %[[L1]], %arg2 transpose_lhs
// CHECK-NEXT: %[[DW:.*]] = tandem.concat %[[H0]], %[[H1]] dim 0
// CHECK-NEXT: tandem.wait %[[F2]]
// CHECK:      return {{.*}}, %[[DW]],
// NOSPLIT-LABEL: func.func @split
// NOSPLIT-NOT: tandem.slice
// NOSPLIT-NOT: tandem.concat
// (tandem-verify-schedule-pipeline.mlir: the verifier proves the halves and
// their concat equal to the unsplit GEMM.)

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @split(%x: tensor<2048x4096xbf16>, %act: tensor<2048x8192xbf16>, %g: tensor<2048x8192xbf16>, %dy2: tensor<256x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<8192x8192xbf16>, tensor<2048x4096xbf16>) {
    %f1 = tandem.reduce_scatter_start %x on @tp dim 0 : tensor<2048x4096xbf16> -> !tandem.future<tensor<256x4096xbf16>>
    // expected-remark @+2 {{wgrad left in place: it already runs under 'tandem.reduce_scatter_start' (480.8 us of compute for 66.4 us)}}
    // expected-remark @+1 {{wgrad split in two along its output rows: one half stays under 'tandem.reduce_scatter_start', the other fills the 66.4 us left in the window of 'tandem.all_gather_start' (255.2 us of GEMM under contention; saves 47.7 us of compute-stream time, the split costs 27.5 us)}}
    %dw = tandem.matmul wgrad %act, %g transpose_lhs : tensor<2048x8192xbf16>, tensor<2048x8192xbf16> -> tensor<8192x8192xbf16>
    %r1 = tandem.wait %f1 : !tandem.future<tensor<256x4096xbf16>>
    %f2 = tandem.all_gather_start %dy2 on @tp dim 0 : tensor<256x4096xbf16> -> !tandem.future<tensor<2048x4096xbf16>>
    %g2 = tandem.wait %f2 : !tandem.future<tensor<2048x4096xbf16>>
    %d2 = tandem.matmul dgrad %g2, %w transpose_rhs : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    return %r1, %dw, %d2 : tensor<256x4096xbf16>, tensor<8192x8192xbf16>, tensor<2048x4096xbf16>
  }
}

// -----

// Not worth it: the 2 MiB all-gather leaves 26.1 us of room; a half would
// save 18.7 us there, less than the split's 27.5 us. The wgrad stays whole
// and the window keeps its exposed time, with a remark saying why.
// CHECK-LABEL: func.func @not_worth
// CHECK-NOT: tandem.slice

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @not_worth(%x: tensor<2048x4096xbf16>, %act: tensor<2048x8192xbf16>, %g: tensor<2048x8192xbf16>, %dy2: tensor<256x512xbf16>, %w: tensor<4096x512xbf16>) -> (tensor<256x4096xbf16>, tensor<8192x8192xbf16>, tensor<2048x4096xbf16>) {
    %f1 = tandem.reduce_scatter_start %x on @tp dim 0 : tensor<2048x4096xbf16> -> !tandem.future<tensor<256x4096xbf16>>
    // expected-remark @+1 {{wgrad left in place: it already runs under 'tandem.reduce_scatter_start' (480.8 us of compute for 66.4 us)}}
    %dw = tandem.matmul wgrad %act, %g transpose_lhs : tensor<2048x8192xbf16>, tensor<2048x8192xbf16> -> tensor<8192x8192xbf16>
    %r1 = tandem.wait %f1 : !tandem.future<tensor<256x4096xbf16>>
    // expected-remark @+1 {{26.1 us of this window stays exposed: splitting 'tandem.matmul' would save 18.7 us of compute-stream time and cost 27.5 us}}
    %f2 = tandem.all_gather_start %dy2 on @tp dim 0 : tensor<256x512xbf16> -> !tandem.future<tensor<2048x512xbf16>>
    %g2 = tandem.wait %f2 : !tandem.future<tensor<2048x512xbf16>>
    %d2 = tandem.matmul dgrad %g2, %w transpose_rhs : tensor<2048x512xbf16>, tensor<4096x512xbf16> -> tensor<2048x4096xbf16>
    return %r1, %dw, %d2 : tensor<256x4096xbf16>, tensor<8192x8192xbf16>, tensor<2048x4096xbf16>
  }
}
