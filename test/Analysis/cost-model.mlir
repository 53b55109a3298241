// RUN: tandem-opt %s --tandem-test-cost-model -verify-diagnostics -o /dev/null

// Estimates on the h200 preset; docs/cost-model.md derives each one.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  tandem.group @mesh size(8) full_mesh links(7 x 64.0 GBps, 2.0 us)
  func.func @ops(%x: tensor<8192x8192xbf16>, %s: tensor<2048x1536xbf16>, %qkv: tensor<2048x4608xbf16>, %w: tensor<8192xbf16>, %a: tensor<2048x8192xbf16>) {
    // 2048 tiles of 128x256 in 16 waves of 89.5 us, plus 4 us launch.
    // expected-remark @+1 {{1436.52 us on 132 SMs, 2048 tiles in 16 waves, compute-bound}}
    %0 = tandem.matmul fprop %x, %x : tensor<8192x8192xbf16>, tensor<8192x8192xbf16> -> tensor<8192x8192xbf16>
    // 2 * 2048^2 * 128 * 12 causal FLOPs at 60% of 989.4 TFLOP/s.
    // expected-remark @+1 {{25.70 us on 132 SMs, compute-bound}}
    %1 = tandem.attention %qkv heads(12, 12) head_dim(128) causal : tensor<2048x4608xbf16> -> tensor<2048x1536xbf16>
    // The last 1024 queries against 2048 keys: 1024 x 1024 pairs before
    // their block and half of their own 1024 x 1024, 3/4 of the pairs above:
    // 3/4 of 21.70 us, plus 4 us launch.
    // expected-remark @+1 {{20.28 us on 132 SMs, compute-bound}}
    %q = tandem.attention %qkv heads(12, 12) head_dim(128) causal queries(1024) : tensor<2048x4608xbf16> -> tensor<1024x1536xbf16>
    // 64 MiB + 16 KiB moved at 4.32 TB/s.
    // expected-remark @+1 {{19.54 us on 132 SMs, memory-bound}}
    %2 = tandem.norm rms %a, %w : tensor<2048x8192xbf16>, tensor<8192xbf16>
    // Switch: ring over 18 links x 25 GB/s x 0.8.
    // expected-remark @+1 {{140.33 us, ring, 7 steps at 360.00 GB/s}}
    %3 = tandem.all_gather %s on @tp dim 0 : tensor<2048x1536xbf16> -> tensor<16384x1536xbf16>
    // Full mesh: one direct step over all 7 links.
    // expected-remark @+1 {{128.88 us, direct, 1 steps at 358.40 GB/s}}
    %4 = tandem.all_gather %s on @mesh dim 0 : tensor<2048x1536xbf16> -> tensor<16384x1536xbf16>
    // Full mesh: a peer-to-peer step has one link; 1/8 of the bytes of the
    // all-gather above take as long.
    // expected-remark @+1 {{128.88 us, p2p, 1 steps at 51.20 GB/s}}
    %5 = tandem.permute %s on @mesh shift 1 : tensor<2048x1536xbf16> -> tensor<2048x1536xbf16>
    return
  }
}
