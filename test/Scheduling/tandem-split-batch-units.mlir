// RUN: tandem-opt %s --tandem-split-batch --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s

// Row slices into 1024, 1023 and 1021 chunks have no common unit count up
// to 2^20 (their least common multiple is about 2^30): the pass tries no
// uneven parts and says why, instead of overflowing.
// CHECK: batch split: '@many_units' {{.*}}; no uneven 2 parts: the program's row slices have no common unit count up to 1048576; no uneven 4 parts: the program's row slices have no common unit count up to 1048576
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @many_units(%x: tensor<1069550592x1xbf16>) -> (tensor<1069550592x1xbf16>, tensor<1044483x1xbf16>, tensor<1045504x1xbf16>, tensor<1047552x1xbf16>) {
    %y = tandem.elementwise add %x, %x : tensor<1069550592x1xbf16>, tensor<1069550592x1xbf16> -> tensor<1069550592x1xbf16>
    %a = tandem.slice %y dim 0 chunk 0 of 1024 : tensor<1069550592x1xbf16> -> tensor<1044483x1xbf16>
    %b = tandem.slice %y dim 0 chunk 0 of 1023 : tensor<1069550592x1xbf16> -> tensor<1045504x1xbf16>
    %c = tandem.slice %y dim 0 chunk 0 of 1021 : tensor<1069550592x1xbf16> -> tensor<1047552x1xbf16>
    return %y, %a, %b, %c : tensor<1069550592x1xbf16>, tensor<1044483x1xbf16>, tensor<1045504x1xbf16>, tensor<1047552x1xbf16>
  }
}
