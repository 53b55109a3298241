// RUN: tandem-opt %s --tandem-copy-engines=memory-budget=1 -verify-diagnostics --mlir-print-op-on-diagnostic=false | FileCheck %s
// RUN: tandem-opt %s --tandem-copy-engines --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=FREE

// A reduce-scatter on the copy engines pulls the 7 peers' blocks (7/8 of
// its 128 MiB input) into staging, live from its start to its wait. Under
// a budget below the input's own peak (so no rewrite may raise it) it
// stays on SMs; without a budget it moves.

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  // CHECK-LABEL: func.func @budget
  // CHECK-NOT: tandem.copy_engine
  // FREE: moved to the copy engines
  // FREE: tandem.reduce_scatter_start %{{.*}} {tandem.copy_engine}
  func.func @budget(%x: tensor<8192x8192xbf16>, %a: tensor<8192x8192xbf16>, %w: tensor<8192x8192xbf16>) -> (tensor<8192x8192xbf16>, tensor<1024x8192xbf16>) {
    // expected-remark @+1 {{copy engines: 1 reduce_scatter of 128.00 MiB on @tp left on SMs (alone 383.6 us on copy engines vs 344.2 us on SMs): the reduce-scatters' staging would raise peak memory to 640.00 MiB, over the limit of 528.00 MiB}}
    %f = tandem.reduce_scatter_start %x on @tp dim 0 : tensor<8192x8192xbf16> -> !tandem.future<tensor<1024x8192xbf16>>
    %y = tandem.matmul fprop %a, %w : tensor<8192x8192xbf16>, tensor<8192x8192xbf16> -> tensor<8192x8192xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<1024x8192xbf16>>
    return %y, %g : tensor<8192x8192xbf16>, tensor<1024x8192xbf16>
  }
}
