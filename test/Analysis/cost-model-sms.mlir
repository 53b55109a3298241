// RUN: tandem-opt %s --tandem-test-cost-model="sms=108 ctas=8" -verify-diagnostics -o /dev/null

// With 24 SMs taken by a collective, the same GEMM needs 19 waves; a
// collective limited to 8 CTAs drives only 8 of the 18 links.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @ops(%x: tensor<8192x8192xbf16>, %s: tensor<2048x1536xbf16>) {
    // expected-remark @+1 {{1705.12 us on 108 SMs, 2048 tiles in 19 waves, compute-bound}}
    %0 = tandem.matmul fprop %x, %x : tensor<8192x8192xbf16>, tensor<8192x8192xbf16> -> tensor<8192x8192xbf16>
    // expected-remark @+1 {{ring, 7 steps at 160.00 GB/s}}
    %1 = tandem.all_gather %s on @tp dim 0 : tensor<2048x1536xbf16> -> tensor<16384x1536xbf16>
    return
  }
}
