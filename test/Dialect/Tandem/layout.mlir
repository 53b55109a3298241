// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s

// Round trip of the layout ops the chunk pipelines use.
tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)

// CHECK-LABEL: func.func @layout
// CHECK-NEXT: %[[S:.*]] = tandem.slice %arg0 dim 0 chunk 1 of 2 interleave 2 : tensor<8x4xbf16> -> tensor<4x4xbf16>
// CHECK-NEXT: %[[T:.*]] = tandem.slice %arg0 dim 1 chunk 0 of 4 : tensor<8x4xbf16> -> tensor<8x1xbf16>
// CHECK-NEXT: %[[C:.*]] = tandem.concat %[[S]], %[[S]] dim 0 interleave 2 : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<8x4xbf16>
// CHECK-NEXT: %[[R:.*]] = tandem.ring_concat %[[S]], %[[S]] on @tp dim 0 : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<8x4xbf16>
func.func @layout(%x: tensor<8x4xbf16>) -> (tensor<8x4xbf16>, tensor<8x1xbf16>, tensor<8x4xbf16>) {
  %s = tandem.slice %x dim 0 chunk 1 of 2 interleave 2 : tensor<8x4xbf16> -> tensor<4x4xbf16>
  %t = tandem.slice %x dim 1 chunk 0 of 4 interleave 1 : tensor<8x4xbf16> -> tensor<8x1xbf16>
  %c = tandem.concat %s, %s dim 0 interleave 2 : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<8x4xbf16>
  %r = tandem.ring_concat %s, %s on @tp dim 0 : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<8x4xbf16>
  return %c, %t, %r : tensor<8x4xbf16>, tensor<8x1xbf16>, tensor<8x4xbf16>
}

// Uneven blocks: a slice with weights and the concat of its parts.
// CHECK-LABEL: func.func @uneven
// CHECK-NEXT: %[[A:.*]] = tandem.slice %arg0 dim 0 chunk 0 of 2 weights [1, 3] interleave 2 : tensor<16x4xbf16> -> tensor<4x4xbf16>
// CHECK-NEXT: %[[B:.*]] = tandem.slice %arg0 dim 0 chunk 1 of 2 weights [1, 3] interleave 2 : tensor<16x4xbf16> -> tensor<12x4xbf16>
// CHECK-NEXT: tandem.concat %[[A]], %[[B]] dim 0 interleave 2 : tensor<4x4xbf16>, tensor<12x4xbf16> -> tensor<16x4xbf16>
func.func @uneven(%x: tensor<16x4xbf16>) -> tensor<16x4xbf16> {
  %a = tandem.slice %x dim 0 chunk 0 of 2 weights [1, 3] interleave 2 : tensor<16x4xbf16> -> tensor<4x4xbf16>
  %b = tandem.slice %x dim 0 chunk 1 of 2 weights [1, 3] interleave 2 : tensor<16x4xbf16> -> tensor<12x4xbf16>
  %c = tandem.concat %a, %b dim 0 interleave 2 : tensor<4x4xbf16>, tensor<12x4xbf16> -> tensor<16x4xbf16>
  return %c : tensor<16x4xbf16>
}
