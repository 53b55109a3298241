// RUN: tandem-opt %s --tandem-pipeline-collective-matmul=copy-engines=true -verify-diagnostics --mlir-print-op-on-diagnostic=false | FileCheck %s
// RUN: tandem-opt %s --tandem-pipeline-collective-matmul 2>/dev/null | FileCheck %s --check-prefix=SMS

// With copy-engines=true every chunked or ring candidate also comes with its
// pieces on the copy engines ("+ce"): there the GEMM chunks keep every SM
// and are not slowed, which outweighs the copies' per-peer cost at these
// sizes, so both pairs choose a copy-engine pipeline and its collectives
// carry tandem.copy_engine. Without the option the same pairs stay on SMs
// (2 and 4 chunks).

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

  // CHECK-LABEL: func.func @ag_mm
  // CHECK-COUNT-2: tandem.all_gather {{.*}} {tandem.copy_engine}
  // CHECK-NOT: tandem.all_gather
  // SMS-LABEL: func.func @ag_mm
  // SMS-NOT: tandem.copy_engine
  // SMS: return
  func.func @ag_mm(%x: tensor<1024x8192xbf16>, %w: tensor<8192x7168xbf16>) -> tensor<8192x7168xbf16> {
    // expected-remark @+1 {{all-gather -> matmul pipelined as 2 chunked native all-gathers on the copy engines; predicted: unsplit 1601.7 us chunkedx2 1563.3 us chunkedx4 1702.3 us chunkedx8 1767.8 us p2p 1689.5 us chunkedx2+ce 1509.2 us chunkedx4+ce 1618.6 us chunkedx8+ce 1595.7 us p2p+ce 1522.9 us}}
    %g = tandem.all_gather %x on @tp dim 0 : tensor<1024x8192xbf16> -> tensor<8192x8192xbf16>
    %y = tandem.matmul fprop %g, %w : tensor<8192x8192xbf16>, tensor<8192x7168xbf16> -> tensor<8192x7168xbf16>
    return %y : tensor<8192x7168xbf16>
  }

  // CHECK-LABEL: func.func @mm_rs
  // CHECK-COUNT-8: tandem.reduce_scatter {{.*}} {tandem.copy_engine}
  // SMS-LABEL: func.func @mm_rs
  // SMS-NOT: tandem.copy_engine
  // SMS: return
  func.func @mm_rs(%x: tensor<8192x7168xbf16>, %w: tensor<7168x8192xbf16>) -> tensor<1024x8192xbf16> {
    %y = tandem.matmul fprop %x, %w : tensor<8192x7168xbf16>, tensor<7168x8192xbf16> -> tensor<8192x8192xbf16>
    // expected-remark @+1 {{matmul -> reduce-scatter pipelined as 8 chunked native reduce-scatters on the copy engines; predicted: unsplit 1601.7 us chunkedx2 1563.2 us chunkedx4 1535.2 us chunkedx8 1616.5 us chunkedx2+ce 1534.6 us chunkedx4+ce 1464.2 us chunkedx8+ce 1453.0 us}}
    %r = tandem.reduce_scatter %y on @tp dim 0 : tensor<8192x8192xbf16> -> tensor<1024x8192xbf16>
    return %r : tensor<1024x8192xbf16>
  }
}
