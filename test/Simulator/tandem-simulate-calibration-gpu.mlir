// The calibration file's optional "gpu" section: the target fields it
// replaces, and every error it can give. Each error needs its own file, so
// each case is a file of its own.
// RUN: split-file %s %t
// RUN: tandem-opt %t/model.mlir --tandem-simulate="report=-" -o /dev/null | FileCheck %t/model.mlir --check-prefix=BUILTIN
// RUN: tandem-opt %t/model.mlir --tandem-simulate="report=- calibration=%t/calibrated.json" -o /dev/null | FileCheck %t/model.mlir --check-prefix=CALIBRATED
// A version-1 file without "gpu" keeps the target's fields.
// RUN: tandem-opt %t/model.mlir --tandem-simulate="report=- calibration=%S/../Inputs/slow-contention.json" -o /dev/null | FileCheck %t/model.mlir --check-prefix=BUILTIN
// RUN: tandem-opt %t/not-object.mlir --tandem-simulate="calibration=%t/not-object.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/unknown.mlir --tandem-simulate="calibration=%t/unknown.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/device.mlir --tandem-simulate="calibration=%t/device.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/sm-count.mlir --tandem-simulate="calibration=%t/sm-count.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/gemm-efficiency.mlir --tandem-simulate="calibration=%t/gemm-efficiency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/hbm-efficiency.mlir --tandem-simulate="calibration=%t/hbm-efficiency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/launch.mlir --tandem-simulate="calibration=%t/launch.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/tile-m.mlir --tandem-simulate="calibration=%t/tile-m.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/tile-n.mlir --tandem-simulate="calibration=%t/tile-n.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/wave-overhead.mlir --tandem-simulate="calibration=%t/wave-overhead.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/hold-sms.mlir --tandem-simulate="calibration=%t/hold-sms.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/other-gpu.mlir --tandem-simulate="calibration=%t/other-gpu.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/event-latency.mlir --tandem-simulate="calibration=%t/event-latency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/attention-latency.mlir --tandem-simulate="calibration=%t/attention-latency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/attention-grad-latency.mlir --tandem-simulate="calibration=%t/attention-grad-latency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/model.mlir --tandem-simulate="report=- calibration=%t/attention-fixed.json" -o /dev/null | FileCheck %t/model.mlir --check-prefix=ATTENTION-FIXED
// RUN: tandem-opt %t/gated.mlir --tandem-simulate="report=-" -o /dev/null | FileCheck %t/gated.mlir --check-prefix=NO-LATENCY
// RUN: tandem-opt %t/gated.mlir --tandem-simulate="report=- calibration=%t/latency.json" -o /dev/null | FileCheck %t/gated.mlir --check-prefix=LATENCY

//--- model.mlir

// An 8192^3 bf16 GEMM and a 4 MiB copy, alone.
// Built-in h200: 16 waves of 89.53 us + 4 us launch; 4 MiB at 4320 GB/s + 4.
// BUILTIN: "function": "gemm"
// BUILTIN: "span_us": 1436.52{{[0-9]*}},
// BUILTIN: "function": "copy"
// BUILTIN: "span_us": 4.9709{{[0-9]*}},
// Calibrated: efficiency 0.5 and tile 128x128 give 4096 tiles, 32 waves of
// 2 * 128 * 128 * 8192 / (989.4e12 * 0.5 / 132 / 1e6) = 71.627 us, plus the
// 2 us wave overhead; launch 1 us: 32 * 73.627 + 1 = 2357.04 us.
// CALIBRATED: "function": "gemm"
// CALIBRATED: "span_us": 2357.03{{[0-9]*}},
// hbm_efficiency 0.5: 4,194,304 B / 2,400,000 B/us + 1 = 2.7476 us.
// CALIBRATED: "function": "copy"
// CALIBRATED: "span_us": 2.7476{{[0-9]*}},
// Causal attention, 12 heads of 128 over 2048 rows: 4 * 2048^2 * 128 * 12 / 2
// = 1.28849e10 FLOP. Built in (0.60 of 989.4 TF/s, both directions):
// forward 21.705 us + 4 us; backward 2.5x the FLOPs, 54.262 us + 4 us.
// A backward whose output no forward attention over the same qkv computed
// (here an argument) also recomputes the forward's softmax statistics, a
// forward pass (the runtime does): 54.262 + 21.705 + 4 us; after its
// forward it does not: 25.705 + 58.262 us.
// BUILTIN: "function": "attention"
// BUILTIN: "span_us": 25.70{{[0-9]*}},
// BUILTIN: "function": "attention_grad"
// BUILTIN: "span_us": 79.96{{[0-9]*}},
// BUILTIN: "function": "attention_pair"
// BUILTIN: "span_us": 83.96{{[0-9]*}},
// Calibrated, each direction on its own: forward at 0.30, 43.41 us + 1 us;
// backward at 0.15, 217.05 us + 1 us (+ 43.41 us recomputing the forward
// when no forward kept its statistics).
// CALIBRATED: "function": "attention"
// CALIBRATED: "span_us": 44.409{{[0-9]*}},
// CALIBRATED: "function": "attention_grad"
// CALIBRATED: "span_us": 261.4{{[0-9]*}},
// CALIBRATED: "function": "attention_pair"
// CALIBRATED: "span_us": 262.4{{[0-9]*}},
// With the fixed times of attention_latency_us 10 and
// attention_grad_latency_us 20 on top (calibrated as above otherwise):
// forward 43.41 + 10 + 1 us, backward 217.05 + 20 + 1 us (+ 43.41 + 10 us
// recomputing the forward).
// ATTENTION-FIXED: "function": "attention"
// ATTENTION-FIXED: "span_us": 54.409{{[0-9]*}},
// ATTENTION-FIXED: "function": "attention_grad"
// ATTENTION-FIXED: "span_us": 291.4{{[0-9]*}},
// ATTENTION-FIXED: "function": "attention_pair"
// ATTENTION-FIXED: "span_us": 292.4{{[0-9]*}},
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @gemm(%a: tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16> {
    %y = tandem.matmul fprop %a, %a : tensor<8192x8192xbf16>, tensor<8192x8192xbf16> -> tensor<8192x8192xbf16>
    return %y : tensor<8192x8192xbf16>
  }
  func.func @copy(%x: tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16> {
    %c = tandem.elementwise copy %x : tensor<1024x1024xbf16> -> tensor<1024x1024xbf16>
    return %c : tensor<1024x1024xbf16>
  }
  func.func @attention(%qkv: tensor<2048x4608xbf16>) -> tensor<2048x1536xbf16> {
    %o = tandem.attention %qkv heads(12, 12) head_dim(128) causal : tensor<2048x4608xbf16> -> tensor<2048x1536xbf16>
    return %o : tensor<2048x1536xbf16>
  }
  func.func @attention_grad(%dy: tensor<2048x1536xbf16>, %qkv: tensor<2048x4608xbf16>, %o: tensor<2048x1536xbf16>) -> tensor<2048x4608xbf16> {
    %g = tandem.attention_grad %dy, %qkv, %o heads(12, 12) head_dim(128) causal : tensor<2048x1536xbf16>, tensor<2048x4608xbf16>, tensor<2048x1536xbf16> -> tensor<2048x4608xbf16>
    return %g : tensor<2048x4608xbf16>
  }
  func.func @attention_pair(%dy: tensor<2048x1536xbf16>, %qkv: tensor<2048x4608xbf16>) -> tensor<2048x4608xbf16> {
    %o = tandem.attention %qkv heads(12, 12) head_dim(128) causal : tensor<2048x4608xbf16> -> tensor<2048x1536xbf16>
    %g = tandem.attention_grad %dy, %qkv, %o heads(12, 12) head_dim(128) causal : tensor<2048x1536xbf16>, tensor<2048x4608xbf16>, tensor<2048x1536xbf16> -> tensor<2048x4608xbf16>
    return %g : tensor<2048x4608xbf16>
  }
}

//--- calibrated.json
{
  "version": 1,
  "source": "hand-written",
  "gpu": {"device": "test", "sm_count": 132, "gemm_efficiency": 0.5,
          "gemm_tile_m": 128, "gemm_tile_n": 128,
          "gemm_wave_overhead_us": 2.0, "hbm_efficiency": 0.5,
          "launch_overhead_us": 1.0, "attention_efficiency": 0.3,
          "attention_grad_efficiency": 0.15},
  "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]
}

//--- not-object.mlir
// expected-error @+1 {{gpu must be an object}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- not-object.json
{"version": 1, "gpu": [1], "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- unknown.mlir
// expected-error @+1 {{gpu: unknown field "gemm_eficiency" (known: device, sm_count, gemm_efficiency, hbm_efficiency, launch_overhead_us, gemm_tile_m, gemm_tile_n, gemm_wave_overhead_us, gemms_hold_sms, attention_efficiency, attention_grad_efficiency, attention_latency_us, attention_grad_latency_us, event_latency_us, copy_engine_latency_us, norm_latency_us, norm_hbm_efficiency, norm_grad_latency_us, norm_grad_hbm_efficiency, layout_copy_latency_us, layout_copy_hbm_efficiency)}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- unknown.json
{"version": 1, "gpu": {"gemm_eficiency": 0.9}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- device.mlir
// expected-error @+1 {{gpu: "device" must be a string}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- device.json
{"version": 1, "gpu": {"device": 200}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- sm-count.mlir
// expected-error @+1 {{gpu: "sm_count" must be an integer in [1, 4096]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- sm-count.json
{"version": 1, "gpu": {"sm_count": 0}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- gemm-efficiency.mlir
// expected-error @+1 {{gpu: "gemm_efficiency" must be a number in [0.001, 1]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- gemm-efficiency.json
{"version": 1, "gpu": {"gemm_efficiency": 1.2}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- hbm-efficiency.mlir
// expected-error @+1 {{gpu: "hbm_efficiency" must be a number in [0.001, 1]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- hbm-efficiency.json
{"version": 1, "gpu": {"hbm_efficiency": 0}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- launch.mlir
// expected-error @+1 {{gpu: "launch_overhead_us" must be a number in [0, 1e+06]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- launch.json
{"version": 1, "gpu": {"launch_overhead_us": -1.5}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- tile-m.mlir
// expected-error @+1 {{gpu: "gemm_tile_m" must be an integer in [1, 4096]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- tile-m.json
{"version": 1, "gpu": {"gemm_tile_m": 128.5}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- tile-n.mlir
// expected-error @+1 {{gpu: "gemm_tile_n" must be an integer in [1, 4096]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- tile-n.json
{"version": 1, "gpu": {"gemm_tile_n": -64}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- wave-overhead.mlir
// expected-error @+1 {{gpu: "gemm_wave_overhead_us" must be a number in [0, 1e+06]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- wave-overhead.json
{"version": 1, "gpu": {"gemm_wave_overhead_us": "2"}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- hold-sms.mlir
// expected-error @+1 {{gpu: "gemms_hold_sms" must be true or false}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- hold-sms.json
{"version": 1, "gpu": {"gemms_hold_sms": 1}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- other-gpu.mlir
// expected-error @+1 {{gpu: "sm_count" is 304 (the measured device) but target 'h200' has 132 SMs: the calibration does not describe this target}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- other-gpu.json
{"version": 1, "gpu": {"device": "MI300X", "sm_count": 304}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- event-latency.mlir
// expected-error @+1 {{gpu: "event_latency_us" must be a number in [0, 1e+06]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- event-latency.json
{"version": 1, "gpu": {"event_latency_us": -2}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- attention-fixed.json
{
  "version": 1,
  "source": "hand-written",
  "gpu": {"device": "test", "sm_count": 132, "gemm_efficiency": 0.5,
          "gemm_tile_m": 128, "gemm_tile_n": 128,
          "gemm_wave_overhead_us": 2.0, "hbm_efficiency": 0.5,
          "launch_overhead_us": 1.0, "attention_efficiency": 0.3,
          "attention_grad_efficiency": 0.15, "attention_latency_us": 10,
          "attention_grad_latency_us": 20},
  "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]
}

//--- attention-latency.mlir
// expected-error @+1 {{gpu: "attention_latency_us" must be a number in [0, 1e+06]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- attention-latency.json
{"version": 1, "gpu": {"attention_latency_us": -1}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- attention-grad-latency.mlir
// expected-error @+1 {{gpu: "attention_grad_latency_us" must be a number in [0, 1e+06]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- attention-grad-latency.json
{"version": 1, "gpu": {"attention_grad_latency_us": "20"}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- latency.json
{"version": 1, "source": "hand-written", "gpu": {"event_latency_us": 50.0},
 "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- gated.mlir
// A copy on the compute stream, an all-gather of its result on the
// communication stream, and a copy of the gathered rows back on the
// compute stream. Each of the two cross-stream dependences costs the
// calibration's 50 us event latency.
// No overlap, so the contention row does not matter: 38.379 us without the
// latency, 138.379 us with it.
// NO-LATENCY: "span_us": 38.379{{[0-9]*}},
// LATENCY: "span_us": 138.379{{[0-9]*}},
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    %c = tandem.elementwise copy %x : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    %f = tandem.all_gather_start %c on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    %d = tandem.elementwise copy %g : tensor<2048x1024xbf16> -> tensor<2048x1024xbf16>
    return %d : tensor<2048x1024xbf16>
  }
}
