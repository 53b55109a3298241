// RUN: tandem-opt %s --tandem-export-plan="file=%t.json function=uneven simulate=false" -o /dev/null 2>/dev/null
// RUN: FileCheck %s < %t.json

// Uneven parts (tandem.slice ... weights, concats of unequal inputs) in a
// plan. A contiguous slice with weights [1, 3] of 64 rows is a view whose
// second block starts 16 rows (16 x 64 bf16 = 2048 bytes) in; the concat of
// two fresh GEMM results of 16 and 48 rows writes in place, the second at
// the first's 2048 bytes; an interleaved slice with weights is a copy step
// that carries them.
// CHECK:      "buffers": [
// CHECK:      "name": "slice#3",
// CHECK-NEXT: "role": "view",
// CHECK-NEXT: "shape": [
// CHECK-NEXT:   48,
// CHECK:      "view_of": 0,
// CHECK-NEXT: "view_offset": 2048
// CHECK:      "name": "concat#[[ROOT:[0-9]+]]",
// CHECK:      "role": "view",
// CHECK:      "view_of": [[ROOT]],
// CHECK-NEXT: "view_offset": 0
// CHECK:      "role": "view",
// CHECK:      "view_of": [[ROOT]],
// CHECK-NEXT: "view_offset": 2048
// CHECK:      "kind": "slice"
// CHECK:      "weights": [
// CHECK-NEXT:   1,
// CHECK-NEXT:   3
// CHECK-NEXT: ]
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @uneven(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) -> (tensor<64x64xbf16>, tensor<48x64xbf16>) {
    %a = tandem.slice %x dim 0 chunk 0 of 2 weights [1, 3] : tensor<64x64xbf16> -> tensor<16x64xbf16>
    %b = tandem.slice %x dim 0 chunk 1 of 2 weights [1, 3] : tensor<64x64xbf16> -> tensor<48x64xbf16>
    %ya = tandem.matmul fprop %a, %w : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xbf16>
    %yb = tandem.matmul fprop %b, %w : tensor<48x64xbf16>, tensor<64x64xbf16> -> tensor<48x64xbf16>
    %y = tandem.concat %ya, %yb dim 0 : tensor<16x64xbf16>, tensor<48x64xbf16> -> tensor<64x64xbf16>
    %c = tandem.slice %x dim 0 chunk 1 of 2 weights [1, 3] interleave 2 : tensor<64x64xbf16> -> tensor<48x64xbf16>
    return %y, %c : tensor<64x64xbf16>, tensor<48x64xbf16>
  }
}
