// RUN: tandem-opt %s --tandem-export-plan="file=%t.json function=halves simulate=false" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=HALVES < %t.json
// RUN: tandem-opt %s --tandem-export-plan="file=%t.shared.json function=shared simulate=false" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=SHARED < %t.shared.json
// RUN: tandem-opt %s --tandem-export-plan="file=%t.reread.json function=reread simulate=false" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=REREAD < %t.reread.json
// RUN: tandem-opt %s --tandem-export-plan="file=%t.two.json function=two_concats simulate=false" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=TWO < %t.two.json
// RUN: tandem-opt %s --tandem-simulate="trace=-" -o /dev/null | FileCheck %s --check-prefix=COST

// A contiguous concat of two fresh GEMM results that only it uses writes in
// place: each GEMM's output is a view of the concat's buffer (the second at
// the first's 64 x 64 bf16 = 8192 bytes), and the concat launches nothing.
// HALVES:      "buffers": [
// HALVES:      "name": "concat#[[ROOT:[0-9]+]]",
// HALVES-NEXT: "role": "temp",
// HALVES-NEXT: "shape": [
// HALVES-NEXT:   128,
// HALVES:      "role": "view",
// HALVES:      "view_of": [[ROOT]],
// HALVES-NEXT: "view_offset": 0
// HALVES:      "role": "view",
// HALVES:      "view_of": [[ROOT]],
// HALVES-NEXT: "view_offset": 8192
// HALVES-NOT:  "kind": "concat"

// When one block is also returned, the concat stays a copy.
// SHARED:      "kind": "concat",

// A block another op also reads is still written in place: the matmul reads
// it from the concat's buffer (a view at offset 0).
// REREAD:      "name": "concat#[[ROOT:[0-9]+]]",
// REREAD:      "role": "view",
// REREAD:      "view_of": [[ROOT]],
// REREAD-NEXT: "view_offset": 0
// REREAD-NOT:  "kind": "concat"

// A block two concats use stays a buffer of its own: both concats copy.
// TWO:         "kind": "concat",
// TWO:         "kind": "concat",

// The cost model agrees: the in-place concat takes no time (function 0),
// the shared one is a copy of its 16 KiB result plus the launch (function 1).
// COST: "dur":0,"name":"tandem.concat#3","ph":"X","pid":0
// COST: "dur":4.00{{[0-9]*}},"name":"tandem.concat#3","ph":"X","pid":1
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @halves(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<128x64xbf16> {
    %y0 = tandem.matmul fprop %a, %w : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
    %y1 = tandem.matmul fprop %b, %w : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
    %y = tandem.concat %y0, %y1 dim 0 : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<128x64xbf16>
    return %y : tensor<128x64xbf16>
  }
  func.func @shared(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) -> (tensor<128x64xbf16>, tensor<64x64xbf16>) {
    %y0 = tandem.matmul fprop %a, %w : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
    %y1 = tandem.matmul fprop %b, %w : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
    %y = tandem.concat %y0, %y1 dim 0 : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<128x64xbf16>
    return %y, %y0 : tensor<128x64xbf16>, tensor<64x64xbf16>
  }
  func.func @reread(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) -> (tensor<128x64xbf16>, tensor<64x64xbf16>) {
    %y0 = tandem.matmul fprop %a, %w : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
    %y1 = tandem.matmul fprop %b, %w : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
    %y = tandem.concat %y0, %y1 dim 0 : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<128x64xbf16>
    %z = tandem.matmul fprop %y0, %w : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
    return %y, %z : tensor<128x64xbf16>, tensor<64x64xbf16>
  }
  func.func @two_concats(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) -> (tensor<128x64xbf16>, tensor<128x64xbf16>) {
    %y0 = tandem.matmul fprop %a, %w : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
    %y1 = tandem.matmul fprop %b, %w : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
    %y = tandem.concat %y0, %y1 dim 0 : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<128x64xbf16>
    %x = tandem.concat %y1, %y0 dim 0 : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<128x64xbf16>
    return %y, %x : tensor<128x64xbf16>, tensor<128x64xbf16>
  }
}
