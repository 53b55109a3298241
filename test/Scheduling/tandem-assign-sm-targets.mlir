// RUN: tandem-opt %s --tandem-assign-sm-targets -verify-diagnostics | FileCheck %s
// RUN: tandem-opt %s --tandem-assign-sm-targets=comm-sms=16,24,32 2>/dev/null | FileCheck %s --check-prefix=NO8
// RUN: tandem-opt %s --tandem-assign-sm-targets="calibration=%S/../Inputs/slow-contention.json" 2>/dev/null | FileCheck %s --check-prefix=SLOW
// RUN: tandem-opt %s --tandem-assign-sm-targets=relieve-residency=false 2>/dev/null | FileCheck %s --check-prefix=NORELIEF
// RUN: tandem-opt %s --tandem-simulate=report=- -o /dev/null | FileCheck %s --check-prefix=SIM-IN
// RUN: tandem-opt %s --tandem-assign-sm-targets 2>/dev/null | tandem-opt --tandem-simulate=report=- -o /dev/null | FileCheck %s --check-prefix=SIM-OUT

// h200 preset: 132 SMs, collective_sms 24, bf16 989.4 TFLOP/s x 0.80, tile
// 128x256, launch 4 us. Per SM 989.4e12 * 0.80 / 132 / 1e6 = 5,996,364
// FLOP/us; one wave of 128x256 tiles with K = 4096 takes
// 2 * 128 * 256 * 4096 / 5,996,364 = 44.766 us, so 2 waves + launch =
// 93.533 us and 3 waves + launch = 138.299 us (both GEMMs below are
// compute-bound: their HBM floors are under 20 us).
//
// Contention rows (comm_sms: gemm, memory, comm): 8: 1.00, 1.13, 1.13;
// 16: 1.11, 1.135, 1.135; 24: 1.12, 1.13, 1.13; 32: 1.10, 1.145, 1.145.
//
// All-gather of an 8 MiB result (2048x2048 bf16) on 8 GPUs behind a switch
// with 18 links of 25 GB/s: ring, 4 + 7 * 2 + 7/8 * 8,388,608 / bw, bw =
// min(18, k) * 25,000 * 0.8 B/us: 63.875 us at k = 8, 40.938 us at k = 16,
// 38.389 us at k >= 18.
//
// The window runs as the simulator runs it: the collective and the compute
// start together, each slowed while both run, then the survivor runs alone
// (a GEMM on all SMs again unless it has an SM target).
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

  // Tail wave: 1536x4608 is 12 x 18 = 216 tiles, 2 waves on 132 SMs (the
  // second one a 84-tile tail) and still 2 on 124, 116 or 108 SMs, 3 on 100.
  //  k = 8:  GEMM 93.533 x 1.00 beside the collective, collective 63.875 x
  //          1.13 = 72.179; the GEMM ends at 93.533 (same rate alone).
  //  k = 16: GEMM 93.533 x 1.11 = 103.821, collective 40.938 x 1.135 =
  //          46.464; GEMM done 46.464 / 103.821 = 44.75% by then, the rest
  //          on 132 SMs: 46.464 + 0.5525 * 93.533 = 98.137.
  //  k = 24: 104.757 and 43.380: 43.380 + 0.5859 * 93.533 = 98.181 (the
  //          defaults).
  //  k = 32: 3 waves beside it, 138.299 x 1.10 = 152.129; collective
  //          43.955: 43.955 + 0.7111 * 93.533 = 110.463.
  // k = 8 wins. The target 124 does not change the wave count (2 on 124
  // and 2 on 132), so the window is 93.533 us either way: a tie, and ties
  // keep all SMs.
  // CHECK-LABEL: func.func @tail_wave
  // CHECK:      tandem.all_gather_start %{{.*}} on @tp dim 0 {tandem.comm_sms = 8 : i64}
  // CHECK-NEXT: tandem.matmul fprop %arg{{[0-9]+}}, %arg{{[0-9]+}} : tensor
  // Without 8 CTAs, 16 wins (98.137 against 98.181 for 24).
  // NO8-LABEL: func.func @tail_wave
  // NO8:       tandem.all_gather_start {{.*}} {tandem.comm_sms = 16 : i64}
  // Inputs/slow-contention.json slows every side x2: k = 8 gives 157.41,
  // 16 gives 134.47, 24 gives 131.92, 32 gives 144.35.
  // SLOW-LABEL: func.func @tail_wave
  // SLOW:       tandem.all_gather_start {{.*}} {tandem.comm_sms = 24 : i64}
  func.func @tail_wave(%x: tensor<256x2048xbf16>, %a: tensor<1536x4096xbf16>, %b: tensor<4096x4608xbf16>) -> (tensor<2048x2048xbf16>, tensor<1536x4608xbf16>) {
    // expected-remark @+1 {{CTA budget 8 of {8, 16, 24, 32}: window 93.5 us predicted (compute ends at 93.5 us, collective at 72.2 us); 98.2 us with the defaults (24 CTAs, all SMs)}}
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x2048xbf16> -> !tandem.future<tensor<2048x2048xbf16>>
    // expected-remark @+1 {{keeps all SMs: 2 waves on 132 SMs, 2 waves on the 124 SMs the collective leaves; window 93.5 us, 93.5 us with tandem.sm_target = 124}}
    %y = tandem.matmul fprop %a, %b : tensor<1536x4096xbf16>, tensor<4096x4608xbf16> -> tensor<1536x4608xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<2048x2048xbf16>>
    return %g, %y : tensor<2048x2048xbf16>, tensor<1536x4608xbf16>
  }

  // Extra wave: 1536x5632 is 12 x 22 = 264 = 2 x 132 tiles, 2 waves on 132
  // SMs but 3 on any fewer. The input sizes the GEMM for 124 SMs.
  //  k = 8:  138.299 beside, collective 72.179: 72.179 + 0.4781 * 93.533
  //          = 116.896.
  //  k = 16: 138.299 x 1.11 = 153.512, 46.464: 111.687.
  //  k = 24: 154.895, 43.380: 43.380 + 0.7199 * 93.533 = 110.718.
  //  k = 32: 152.129, 43.955: 43.955 + 0.7111 * 93.533 = 110.463.
  // k = 32 wins. With the target 100 the GEMM stays on 100 SMs (3 waves)
  // after the collective: 43.955 + 0.7111 * 138.299 = 142.294, so all SMs
  // win outright and the input's target is removed.
  // CHECK-LABEL: func.func @extra_wave
  // CHECK:      tandem.all_gather_start {{.*}} {tandem.comm_sms = 32 : i64}
  // CHECK-NEXT: tandem.matmul fprop %arg{{[0-9]+}}, %arg{{[0-9]+}} : tensor
  // NO8-LABEL: func.func @extra_wave
  // NO8:       tandem.all_gather_start {{.*}} {tandem.comm_sms = 32 : i64}
  // Slowed x2, 24 and 32 tie at 144.348 (both 3 waves beside the collective,
  // both 38.389 us of collective): the target's default 24 wins the tie.
  // SLOW-LABEL: func.func @extra_wave
  // SLOW:       tandem.all_gather_start {{.*}} {tandem.comm_sms = 24 : i64}
  func.func @extra_wave(%x: tensor<256x2048xbf16>, %a: tensor<1536x4096xbf16>, %b: tensor<4096x5632xbf16>) -> (tensor<2048x2048xbf16>, tensor<1536x5632xbf16>) {
    // expected-remark @+1 {{CTA budget 32 of {8, 16, 24, 32}: window 110.5 us predicted (compute ends at 110.5 us, collective at 44.0 us); 110.7 us with the defaults (24 CTAs, all SMs)}}
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x2048xbf16> -> !tandem.future<tensor<2048x2048xbf16>>
    // expected-remark @+1 {{keeps all SMs: 2 waves on 132 SMs, 3 waves on the 100 SMs the collective leaves; window 110.5 us, 142.3 us with tandem.sm_target = 100}}
    %y = tandem.matmul fprop %a, %b {tandem.sm_target = 124 : i64} : tensor<1536x4096xbf16>, tensor<4096x5632xbf16> -> tensor<1536x5632xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<2048x2048xbf16>>
    return %g, %y : tensor<2048x2048xbf16>, tensor<1536x5632xbf16>
  }

  // Communication-bound: a 48 MiB all-gather (2048x12288 bf16: 140.334 us
  // at k >= 18, 155.626 at 16, 293.251 at 8) over a layer norm (6.918 us,
  // bandwidth-bound) and a causal attention (25.705 us, compute-bound, so
  // it scales with 132 / (132 - k)).
  //  k = 24: norm 6.918 x 1.13 = 7.818, attention 25.705 x 132/108 x 1.12
  //          = 35.187; compute ends at 43.005, when the collective (140.334
  //          x 1.13 = 158.577) is 27.12% done; it ends at 43.005 + 0.7288 *
  //          140.334 = 145.281.
  //  k = 32: 7.922 + 37.324 = 45.245; collective 160.682: 146.064.
  //  k = 16: 160.421; k = 8: 297.299 (too few CTAs for 18 links).
  // The default 24 stays.
  // CHECK-LABEL: func.func @comm_heavy
  // CHECK:      tandem.all_gather_start {{.*}} {tandem.comm_sms = 24 : i64}
  // NO8-LABEL: func.func @comm_heavy
  // NO8:       tandem.all_gather_start {{.*}} {tandem.comm_sms = 24 : i64}
  // SLOW-LABEL: func.func @comm_heavy
  // SLOW:       tandem.all_gather_start {{.*}} {tandem.comm_sms = 24 : i64}
  func.func @comm_heavy(%x: tensor<256x12288xbf16>, %h: tensor<256x12288xbf16>, %w: tensor<12288xbf16>, %qkv: tensor<2048x4608xbf16>) -> (tensor<2048x12288xbf16>, tensor<256x12288xbf16>, tensor<2048x1536xbf16>) {
    // expected-remark @+1 {{CTA budget 24 of {8, 16, 24, 32}: window 145.3 us predicted (compute ends at 43.0 us, collective at 145.3 us); 145.3 us with the defaults (24 CTAs, all SMs)}}
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x12288xbf16> -> !tandem.future<tensor<2048x12288xbf16>>
    %n = tandem.norm layer %h, %w : tensor<256x12288xbf16>, tensor<12288xbf16>
    %o = tandem.attention %qkv heads(12, 12) head_dim(128) causal : tensor<2048x4608xbf16> -> tensor<2048x1536xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<2048x12288xbf16>>
    return %g, %n, %o : tensor<2048x12288xbf16>, tensor<256x12288xbf16>, tensor<2048x1536xbf16>
  }

  // Nothing to overlap: the collective keeps the budget it has.
  // CHECK-LABEL: func.func @no_compute
  // CHECK:      tandem.all_gather_start {{.*}} {tandem.comm_sms = 16 : i64}
  func.func @no_compute(%x: tensor<256x2048xbf16>) -> tensor<2048x2048xbf16> {
    // expected-remark @+1 {{no compute overlaps this collective; its CTA budget is left unchanged}}
    %f = tandem.all_gather_start %x on @tp dim 0 {tandem.comm_sms = 16 : i64} : tensor<256x2048xbf16> -> !tandem.future<tensor<2048x2048xbf16>>
    %g = tandem.wait %f : !tandem.future<tensor<2048x2048xbf16>>
    return %g : tensor<2048x2048xbf16>
  }

  // Two collectives in flight at once share the fabric and the SMs, which
  // the per-window model does not price: both windows are left alone. (In
  // the simulator the second all-gather, ready when the first ends, finds
  // the GEMM on every SM and waits for it to end: SM residency,
  // tandem-simulate-sm-residency.mlir.)
  // The SM residency relief then sizes the GEMM for 108 SMs, so that the
  // second all-gather gets its SMs when the first ends (2 waves either way).
  // CHECK-LABEL: func.func @two_in_flight
  // CHECK:      tandem.all_gather_start %arg{{[0-9]+}} on @tp dim 0 : tensor
  // CHECK-NEXT: tandem.all_gather_start %arg{{[0-9]+}} on @tp dim 0 : tensor
  // CHECK-NEXT: tandem.matmul fprop {{.*}} {tandem.sm_target = 108 : i64}
  // NORELIEF-LABEL: func.func @two_in_flight
  // NORELIEF-NOT:   tandem.sm_target
  // NORELIEF:       return
  func.func @two_in_flight(%x: tensor<256x2048xbf16>, %z: tensor<256x2048xbf16>, %a: tensor<1536x4096xbf16>, %b: tensor<4096x4608xbf16>) -> (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>, tensor<1536x4608xbf16>) {
    // expected-remark @+1 {{another collective is in flight during this window; its CTA budget and its GEMMs' SM targets are left unchanged (the model prices one collective at a time)}}
    %f1 = tandem.all_gather_start %x on @tp dim 0 : tensor<256x2048xbf16> -> !tandem.future<tensor<2048x2048xbf16>>
    // expected-remark @+1 {{another collective is in flight during this window}}
    %f2 = tandem.all_gather_start %z on @tp dim 0 : tensor<256x2048xbf16> -> !tandem.future<tensor<2048x2048xbf16>>
    // expected-remark @+1 {{tandem.sm_target = 108: collectives issued while it held every SM waited 54.8 us for SMs (SM residency); step 136.6 us -> 102.8 us}}
    %y = tandem.matmul fprop %a, %b : tensor<1536x4096xbf16>, tensor<4096x4608xbf16> -> tensor<1536x4608xbf16>
    %g1 = tandem.wait %f1 : !tandem.future<tensor<2048x2048xbf16>>
    %g2 = tandem.wait %f2 : !tandem.future<tensor<2048x2048xbf16>>
    return %g1, %g2, %y : tensor<2048x2048xbf16>, tensor<2048x2048xbf16>, tensor<1536x4608xbf16>
  }

  // SM residency relief, left alone: the second all-gather waits for the
  // GEMM, but 108 SMs give this GEMM a third wave; tried, the step gets
  // longer.
  // CHECK-LABEL: func.func @residency_no_gain
  // CHECK-NOT:  tandem.sm_target
  // CHECK:      return
  func.func @residency_no_gain(%x: tensor<256x512xbf16>, %z: tensor<256x2048xbf16>, %a: tensor<1536x4096xbf16>, %b: tensor<4096x5632xbf16>) -> (tensor<2048x512xbf16>, tensor<2048x2048xbf16>, tensor<1536x5632xbf16>) {
    // expected-remark @+1 {{another collective is in flight during this window}}
    %f1 = tandem.all_gather_start %x on @tp dim 0 : tensor<256x512xbf16> -> !tandem.future<tensor<2048x512xbf16>>
    // expected-remark @+2 {{another collective is in flight during this window}}
    // expected-remark @+1 {{waits 77.8 us for SMs behind 1 GEMM(s) sized for all SMs (SM residency); left alone: SM targets there do not shorten the step (142.3 us -> 145.7 us)}}
    %f2 = tandem.all_gather_start %z on @tp dim 0 : tensor<256x2048xbf16> -> !tandem.future<tensor<2048x2048xbf16>>
    %y = tandem.matmul fprop %a, %b : tensor<1536x4096xbf16>, tensor<4096x5632xbf16> -> tensor<1536x5632xbf16>
    %g1 = tandem.wait %f1 : !tandem.future<tensor<2048x512xbf16>>
    %g2 = tandem.wait %f2 : !tandem.future<tensor<2048x2048xbf16>>
    return %g1, %g2, %y : tensor<2048x512xbf16>, tensor<2048x2048xbf16>, tensor<1536x5632xbf16>
  }

  // Left alone without trying: the wait is shorter than the 44.8 us the
  // third wave would add.
  // CHECK-LABEL: func.func @residency_not_worth
  // CHECK-NOT:  tandem.sm_target
  // CHECK:      return
  func.func @residency_not_worth(%x: tensor<256x8192xbf16>, %z: tensor<256x2048xbf16>, %a: tensor<1536x4096xbf16>, %b: tensor<4096x5632xbf16>) -> (tensor<2048x8192xbf16>, tensor<2048x2048xbf16>, tensor<1536x5632xbf16>) {
    // expected-remark @+1 {{another collective is in flight during this window}}
    %f1 = tandem.all_gather_start %x on @tp dim 0 : tensor<256x8192xbf16> -> !tandem.future<tensor<2048x8192xbf16>>
    // expected-remark @+2 {{another collective is in flight during this window}}
    // expected-remark @+1 {{waits 25.6 us for SMs behind 1 GEMM(s) sized for all SMs (SM residency); left alone: sizing them for 108 SMs would add 44.8 us to them, more than the wait}}
    %f2 = tandem.all_gather_start %z on @tp dim 0 : tensor<256x2048xbf16> -> !tandem.future<tensor<2048x2048xbf16>>
    %y = tandem.matmul fprop %a, %b : tensor<1536x4096xbf16>, tensor<4096x5632xbf16> -> tensor<1536x5632xbf16>
    %g1 = tandem.wait %f1 : !tandem.future<tensor<2048x8192xbf16>>
    %g2 = tandem.wait %f2 : !tandem.future<tensor<2048x2048xbf16>>
    return %g1, %g2, %y : tensor<2048x8192xbf16>, tensor<2048x2048xbf16>, tensor<1536x5632xbf16>
  }
}

// The simulator agrees with the predictions, and no function gets slower:
// tail_wave 98.18 -> 93.53 us, extra_wave 142.95 (24 CTAs, GEMM capped at
// 124 SMs: 3 waves after the collective too) -> 110.46 us; the others are
// unchanged.
// SIM-IN:       "function": "tail_wave",
// SIM-IN:       "span_us": 98.180{{[0-9]*}},
// SIM-IN:       "function": "extra_wave",
// SIM-IN:       "span_us": 142.94{{[0-9]*}},
// SIM-IN:       "function": "comm_heavy",
// SIM-IN:       "span_us": 145.28{{[0-9]*}},
// SIM-IN:       "function": "no_compute",
// SIM-IN:       "span_us": 40.93{{[0-9]*}},
// SIM-IN:       "function": "two_in_flight",
// SIM-IN:       "span_us": 136.56{{[0-9]*}},
// SIM-OUT:      "function": "tail_wave",
// SIM-OUT:      "span_us": 93.532{{[0-9]*}},
// SIM-OUT:      "function": "extra_wave",
// SIM-OUT:      "span_us": 110.46{{[0-9]*}},
// SIM-OUT:      "function": "comm_heavy",
// SIM-OUT:      "span_us": 145.28{{[0-9]*}},
// SIM-OUT:      "function": "no_compute",
// SIM-OUT:      "span_us": 40.93{{[0-9]*}},
// SIM-OUT:      "function": "two_in_flight",
// SIM-OUT:      "span_us": 102.8{{[0-9]*}},
