// RUN: tandem-opt %s --tandem-copy-engines -verify-diagnostics --mlir-print-op-on-diagnostic=false | FileCheck %s
// RUN: tandem-opt %s --tandem-copy-engines=mode=all --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=ALL

// The cost model decides per class (kind, bytes, group): an all-gather
// under a long GEMM moves (the GEMM keeps every SM and is not slowed; the
// copies are about as fast as NCCL's kernel at 128 MiB), a small exposed
// one stays (the copies' per-peer latency makes it slower and nothing runs
// beside it), and a ring group cannot use the copy engines at all.

// mode=all moves every eligible class, whatever it costs; the ring group's
// collective still cannot move.
// ALL: remark: copy engines: 1 all_gather of 128.00 MiB on @tp moved to the copy engines (alone 344.7 us on copy engines vs 344.2 us on SMs)
// ALL: remark: copy engines: 1 all_gather of 0.50 MiB on @tp moved to the copy engines (alone 35.2 us on copy engines vs 19.3 us on SMs)
// ALL: remark: copy engines: 1 collective(s) like this one stay on SMs: group @ring is a ring group

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  tandem.group @ring size(8) ring links(2 x 25.0 GBps, 2.0 us)

  // CHECK-LABEL: func.func @under_gemm
  // CHECK: tandem.all_gather_start %{{.*}} on @tp dim 0 {tandem.copy_engine}
  // ALL-LABEL: func.func @under_gemm
  // ALL: tandem.all_gather_start %{{.*}} {tandem.copy_engine}
  func.func @under_gemm(%x: tensor<1024x8192xbf16>, %a: tensor<8192x8192xbf16>, %w: tensor<8192x8192xbf16>) -> (tensor<8192x8192xbf16>, tensor<8192x8192xbf16>) {
    // expected-remark @+1 {{copy engines: 1 all_gather of 128.00 MiB on @tp moved to the copy engines (alone 344.7 us on copy engines vs 344.2 us on SMs; predicted step 1532.9 us -> 1436.5 us with them moved)}}
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<1024x8192xbf16> -> !tandem.future<tensor<8192x8192xbf16>>
    %y = tandem.matmul fprop %a, %w : tensor<8192x8192xbf16>, tensor<8192x8192xbf16> -> tensor<8192x8192xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<8192x8192xbf16>>
    return %y, %g : tensor<8192x8192xbf16>, tensor<8192x8192xbf16>
  }

  // CHECK-LABEL: func.func @exposed
  // CHECK-NOT: tandem.copy_engine
  // CHECK: return
  // ALL-LABEL: func.func @exposed
  // ALL: tandem.all_gather %{{.*}} {tandem.copy_engine}
  func.func @exposed(%x: tensor<32x1024xbf16>, %w: tensor<1024x1024xbf16>) -> tensor<256x1024xbf16> {
    // expected-remark @+1 {{copy engines: 1 all_gather of 0.50 MiB on @tp left on SMs (alone 35.2 us on copy engines vs 19.3 us on SMs; predicted step 24.7 us -> 40.6 us with them moved): the step is not shorter, the SMs they free do not pay for the slower copies}}
    %g = tandem.all_gather %x on @tp dim 0 : tensor<32x1024xbf16> -> tensor<256x1024xbf16>
    %y = tandem.matmul fprop %g, %w : tensor<256x1024xbf16>, tensor<1024x1024xbf16> -> tensor<256x1024xbf16>
    return %y : tensor<256x1024xbf16>
  }

  // CHECK-LABEL: func.func @on_ring
  // CHECK-NOT: tandem.copy_engine
  // ALL-LABEL: func.func @on_ring
  // ALL-NOT: tandem.copy_engine
  func.func @on_ring(%x: tensor<1024x8192xbf16>) -> tensor<8192x8192xbf16> {
    // expected-remark @+1 {{copy engines: 1 collective(s) like this one stay on SMs: group @ring is a ring group: the copy engines need every peer's memory within one link (a switch or a full mesh inside one node)}}
    %g = tandem.all_gather %x on @ring dim 0 : tensor<1024x8192xbf16> -> tensor<8192x8192xbf16>
    return %g : tensor<8192x8192xbf16>
  }
}
