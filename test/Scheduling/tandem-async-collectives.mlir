// RUN: tandem-opt %s --tandem-async-collectives | FileCheck %s

tandem.group @tp size(4) switch links(18 x 25.0 GBps, 2.0 us)
tandem.group @dp size(2) switch links(18 x 25.0 GBps, 2.0 us)

// Each blocking collective becomes a start and an immediate wait; the
// attributes and group survive; tandem.seq counts per group in order;
// existing starts are only stamped.
// CHECK-LABEL: func.func @convert
// CHECK-NEXT: %[[F0:.*]] = tandem.all_gather_start %arg0 on @tp dim 0 {tandem.seq = 0 : i64} : tensor<8x16xbf16> -> !tandem.future<tensor<32x16xbf16>>
// CHECK-NEXT: %[[G:.*]] = tandem.wait %[[F0]]
// CHECK-NEXT: %[[F1:.*]] = tandem.all_reduce_start %arg1 on @dp reduce max {tandem.seq = 0 : i64}
// CHECK-NEXT: %[[R:.*]] = tandem.wait %[[F1]]
// CHECK-NEXT: %[[F2:.*]] = tandem.reduce_scatter_start %[[G]] on @tp dim 0 {tandem.seq = 1 : i64}
// CHECK-NEXT: %[[S:.*]] = tandem.wait %[[F2]]
// CHECK-NEXT: return %[[S]], %[[R]]
func.func @convert(%x: tensor<8x16xbf16>, %y: tensor<4xf32>) -> (tensor<8x16xbf16>, tensor<4xf32>) {
  %g = tandem.all_gather %x on @tp dim 0 : tensor<8x16xbf16> -> tensor<32x16xbf16>
  %r = tandem.all_reduce %y on @dp reduce max : tensor<4xf32> -> tensor<4xf32>
  %s = tandem.reduce_scatter %g on @tp dim 0 : tensor<32x16xbf16> -> tensor<8x16xbf16>
  return %s, %r : tensor<8x16xbf16>, tensor<4xf32>
}

// CHECK-LABEL: func.func @stamp_only
// CHECK-NEXT: tandem.permute_start %arg0 on @tp shift 1 {tandem.seq = 0 : i64}
func.func @stamp_only(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  %f = tandem.permute_start %x on @tp shift 1 : tensor<8xbf16> -> !tandem.future<tensor<8xbf16>>
  %y = tandem.wait %f : !tandem.future<tensor<8xbf16>>
  return %y : tensor<8xbf16>
}
