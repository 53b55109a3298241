// The SM residency relief inside --tandem-overlap: after bulk overlap both
// all-gathers are in flight; the second, issued when the first ends, would
// wait for the GEMM (sized for all SMs) to end. The relief sizes the GEMM
// for 108 SMs (2 waves either way) and the step gets shorter.
// RUN: tandem-opt %s --tandem-overlap="strategy=bulk remarks=true" 2>&1 | FileCheck %s --check-prefix=BULK
// RUN: tandem-opt %s --tandem-overlap="strategy=bulk relieve-residency=false" 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: tandem-opt %s --tandem-overlap=strategy=auto 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: tandem-opt %s --tandem-overlap="strategy=auto relieve-residency=false" 2>&1 | FileCheck %s --check-prefix=AUTO-OFF

// BULK: remark: tandem.sm_target = 108: collectives issued while it held every SM waited 54.8 us for SMs (SM residency); step 136.6 us -> 102.8 us
// BULK: tandem.matmul fprop %arg2, %arg3 {tandem.sm_target = 108 : i64, tandem.stream = 0 : i64}
// OFF-NOT: sm_target
// `auto` relieves its two fastest candidates (bulk and reschedule, tied)
// and then every other candidate whose waits for SMs could make up what it
// is behind (here all of them: each waited 54.8 us, 33.8 us behind), so
// that no named strategy, relieved, beats it.
// AUTO: strategy bulk chosen; predicted spans: none 170.311 us bulk 102.828 us reschedule 102.828 us pipeline 102.828 us pipeline+reschedule 102.828 us te-preset 102.828 us te-preset+reschedule 102.828 us split 102.828 us split+reschedule 102.828 us
// AUTO: tandem.matmul fprop %arg2, %arg3 {tandem.sm_target = 108 : i64, tandem.stream = 0 : i64}
// AUTO-OFF: strategy bulk chosen; predicted spans: none 170.311 us bulk 136.570 us
// AUTO-OFF-NOT: sm_target
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
  func.func @two_gathers(%x: tensor<256x2048xbf16>, %z: tensor<256x2048xbf16>, %a: tensor<1536x4096xbf16>, %b: tensor<4096x4608xbf16>) -> (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>, tensor<1536x4608xbf16>) {
    %g1 = tandem.all_gather %x on @tp dim 0 : tensor<256x2048xbf16> -> tensor<2048x2048xbf16>
    %g2 = tandem.all_gather %z on @tp dim 0 : tensor<256x2048xbf16> -> tensor<2048x2048xbf16>
    %y = tandem.matmul fprop %a, %b : tensor<1536x4096xbf16>, tensor<4096x4608xbf16> -> tensor<1536x4608xbf16>
    return %g1, %g2, %y : tensor<2048x2048xbf16>, tensor<2048x2048xbf16>, tensor<1536x4608xbf16>
  }
}
