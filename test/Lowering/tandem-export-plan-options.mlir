// RUN: not tandem-opt %s --tandem-export-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not tandem-opt %s --tandem-export-plan="file=%t.json function=missing" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not tandem-opt %s --tandem-export-plan="file=%t.nodir/sub/plan.json function=second" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NODIR
// RUN: tandem-opt %s --tandem-export-plan="file=%t.json function=second" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SECOND
// RUN: FileCheck %s --check-prefix=PLAN < %t.json

// NOFILE: error: tandem-export-plan needs 'file=<path>'
// MISSING: error: no function '@missing' with a body to export
// NODIR: error: cannot write plan file '{{.*}}.nodir/sub/plan.json'
// SECOND: remark: plan: 1 steps on 1 stream(s), 0 event(s), 2 buffers (1 in the arena)
// PLAN: "function": "second",

module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @first(%x: tensor<8x8xbf16>) -> tensor<8x8xbf16> {
    return %x : tensor<8x8xbf16>
  }
  func.func @second(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %y = tandem.elementwise gelu %x : tensor<8x8xf32> -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}
