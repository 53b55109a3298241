// RUN: tandem-opt %s --tandem-export-plan="file=%t.json simulate=false" -o /dev/null 2>/dev/null
// RUN: FileCheck %s < %t.json

// Attention lowers with its heads and mask; queries(N) (the last N rows of
// qkv are the queries, a causal segment over its prefix) becomes the step's
// "queries" field, which a plain attention does not have.
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @segs(%qkv: tensor<32x128xbf16>) -> (tensor<32x64xbf16>, tensor<8x64xbf16>) {
    %o = tandem.attention %qkv heads(4, 2) head_dim(16) causal
        : tensor<32x128xbf16> -> tensor<32x64xbf16>
    %s = tandem.attention %qkv heads(4, 2) head_dim(16) causal queries(8)
        : tensor<32x128xbf16> -> tensor<8x64xbf16>
    return %o, %s : tensor<32x64xbf16>, tensor<8x64xbf16>
  }
}

// CHECK: "kind": "attention"
// CHECK-NOT: "queries"
// CHECK: "kind": "attention"
// CHECK: "queries": 8
