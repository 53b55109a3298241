// The calibration keys of the runtime's measured bandwidth-bound kernels
// (tandem-calibrate's `norm` and `strided_copy`, fitted by tandem-fit):
// norm, norm_grad and layout copies cost their latency plus their bytes at
// their own efficiency; other bandwidth-bound ops keep hbm_efficiency; a
// view costs nothing. And every error the keys can give.
// RUN: split-file %s %t
// RUN: tandem-opt %t/model.mlir --tandem-simulate="report=-" -o /dev/null | FileCheck %t/model.mlir --check-prefix=BUILTIN
// RUN: tandem-opt %t/model.mlir --tandem-simulate="report=- calibration=%t/calibrated.json" -o /dev/null | FileCheck %t/model.mlir --check-prefix=CALIBRATED
// Only a latency: the rate stays hbm_efficiency's.
// RUN: tandem-opt %t/model.mlir --tandem-simulate="report=- calibration=%t/latency-only.json" -o /dev/null | FileCheck %t/model.mlir --check-prefix=LATENCY-ONLY
// RUN: tandem-opt %t/norm-efficiency.mlir --tandem-simulate="calibration=%t/norm-efficiency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/norm-latency.mlir --tandem-simulate="calibration=%t/norm-latency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/norm-grad-efficiency.mlir --tandem-simulate="calibration=%t/norm-grad-efficiency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/norm-grad-latency.mlir --tandem-simulate="calibration=%t/norm-grad-latency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/copy-efficiency.mlir --tandem-simulate="calibration=%t/copy-efficiency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/copy-latency.mlir --tandem-simulate="calibration=%t/copy-latency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/misspelt.mlir --tandem-simulate="calibration=%t/misspelt.json" -verify-diagnostics -o /dev/null

//--- model.mlir

// Built-in h200: 4800 GB/s at 0.90 (4320 B/us), launch 4 us.
// Calibrated: launch 1 us, hbm_efficiency 0.5 (2400 B/us); norm 3 us +
// 0.8 (3840 B/us); norm_grad 5 us + 0.5; layout copies 2 us + 0.4 (1920
// B/us).
// norm, 1024 x 4096 bf16: x + w + y = 16,785,408 B.
// BUILTIN: "function": "norm"
// BUILTIN: "span_us": 7.8855{{[0-9]*}},
// 3 + 16,785,408 / 3,840,000 + 1 = 8.3712 us.
// CALIBRATED: "function": "norm"
// CALIBRATED: "span_us": 8.3712{{[0-9]*}},
// 3 + 16,785,408 / 2,400,000 + 1 = 10.9939 us.
// LATENCY-ONLY: "function": "norm"
// LATENCY-ONLY: "span_us": 10.9939{{[0-9]*}},
// norm_grad: dy + x + w + dx + dw = 25,182,208 B.
// BUILTIN: "function": "norm_grad"
// BUILTIN: "span_us": 9.8292{{[0-9]*}},
// 5 + 25,182,208 / 2,400,000 + 1 = 16.4926 us.
// CALIBRATED: "function": "norm_grad"
// CALIBRATED: "span_us": 16.4925{{[0-9]*}},
// 4 + 25,182,208 / 2,400,000 + 1 = 15.4926 us.
// LATENCY-ONLY: "function": "norm_grad"
// LATENCY-ONLY: "span_us": 15.4925{{[0-9]*}},
// A slice of columns is a copy of its result, read and written: 8,388,608 B.
// BUILTIN: "function": "slice_copy"
// BUILTIN: "span_us": 5.9418{{[0-9]*}},
// 2 + 8,388,608 / 1,920,000 + 1 = 7.3691 us.
// CALIBRATED: "function": "slice_copy"
// CALIBRATED: "span_us": 7.3690{{[0-9]*}},
// 2 + 8,388,608 / 2,400,000 + 1 = 6.4953 us.
// LATENCY-ONLY: "function": "slice_copy"
// LATENCY-ONLY: "span_us": 6.4952{{[0-9]*}},
// An interleaved concat and a ring_concat are copies of their result
// (8 MiB read and written: 16,777,216 B): built in 3.8836 + 4 us,
// calibrated 2 + 8.7381 + 1 us.
// BUILTIN: "function": "concat_copy"
// BUILTIN: "span_us": 7.8836{{[0-9]*}},
// CALIBRATED: "function": "concat_copy"
// CALIBRATED: "span_us": 11.7381{{[0-9]*}},
// BUILTIN: "function": "ring_concat_copy"
// BUILTIN: "span_us": 7.8836{{[0-9]*}},
// CALIBRATED: "function": "ring_concat_copy"
// CALIBRATED: "span_us": 11.7381{{[0-9]*}},
// A slice of rows is a view: no kernel, no latency.
// CALIBRATED: "function": "slice_view"
// CALIBRATED: "span_us": 0{{[,.]}}
// An element-wise copy (4,194,304 B) keeps hbm_efficiency: 1.7476 + 1 us.
// BUILTIN: "function": "elementwise_copy"
// BUILTIN: "span_us": 4.9709{{[0-9]*}},
// CALIBRATED: "function": "elementwise_copy"
// CALIBRATED: "span_us": 2.7476{{[0-9]*}},
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @norm(%x: tensor<1024x4096xbf16>, %w: tensor<4096xbf16>) -> tensor<1024x4096xbf16> {
    %y = tandem.norm rms %x, %w {layer = "l0.ln1"} : tensor<1024x4096xbf16>, tensor<4096xbf16>
    return %y : tensor<1024x4096xbf16>
  }
  func.func @norm_grad(%dy: tensor<1024x4096xbf16>, %x: tensor<1024x4096xbf16>, %w: tensor<4096xbf16>) -> (tensor<1024x4096xbf16>, tensor<4096xbf16>) {
    %dx, %dw = tandem.norm_grad rms %dy, %x, %w {layer = "l0.ln1"} : tensor<1024x4096xbf16>, tensor<4096xbf16>
    return %dx, %dw : tensor<1024x4096xbf16>, tensor<4096xbf16>
  }
  func.func @slice_copy(%x: tensor<1024x4096xbf16>) -> tensor<1024x2048xbf16> {
    %s = tandem.slice %x dim 1 chunk 0 of 2 : tensor<1024x4096xbf16> -> tensor<1024x2048xbf16>
    return %s : tensor<1024x2048xbf16>
  }
  func.func @concat_copy(%a: tensor<512x4096xbf16>, %b: tensor<512x4096xbf16>) -> tensor<1024x4096xbf16> {
    %c = tandem.concat %a, %b dim 0 interleave 2 : tensor<512x4096xbf16>, tensor<512x4096xbf16> -> tensor<1024x4096xbf16>
    return %c : tensor<1024x4096xbf16>
  }
  func.func @ring_concat_copy(%a: tensor<512x4096xbf16>, %b: tensor<512x4096xbf16>) -> tensor<1024x4096xbf16> {
    %c = tandem.ring_concat %a, %b on @tp dim 0 : tensor<512x4096xbf16>, tensor<512x4096xbf16> -> tensor<1024x4096xbf16>
    return %c : tensor<1024x4096xbf16>
  }
  func.func @slice_view(%x: tensor<1024x4096xbf16>) -> tensor<512x4096xbf16> {
    %s = tandem.slice %x dim 0 chunk 0 of 2 : tensor<1024x4096xbf16> -> tensor<512x4096xbf16>
    return %s : tensor<512x4096xbf16>
  }
  func.func @elementwise_copy(%x: tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16> {
    %c = tandem.elementwise copy %x : tensor<1024x1024xbf16> -> tensor<1024x1024xbf16>
    return %c : tensor<1024x1024xbf16>
  }
}

//--- calibrated.json
{"version": 1, "source": "hand-written",
 "gpu": {"sm_count": 132, "hbm_efficiency": 0.5, "launch_overhead_us": 1.0,
         "norm_latency_us": 3.0, "norm_hbm_efficiency": 0.8,
         "norm_grad_latency_us": 5.0, "norm_grad_hbm_efficiency": 0.5,
         "layout_copy_latency_us": 2.0, "layout_copy_hbm_efficiency": 0.4},
 "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- latency-only.json
{"version": 1,
 "gpu": {"hbm_efficiency": 0.5, "launch_overhead_us": 1.0,
         "norm_latency_us": 3.0, "norm_grad_latency_us": 4.0,
         "layout_copy_latency_us": 2.0},
 "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- norm-efficiency.mlir
// expected-error @+1 {{gpu: "norm_hbm_efficiency" must be a number in [0.001, 1]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- norm-efficiency.json
{"version": 1, "gpu": {"norm_hbm_efficiency": 1.5}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- norm-latency.mlir
// expected-error @+1 {{gpu: "norm_latency_us" must be a number in [0, 1e+06]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- norm-latency.json
{"version": 1, "gpu": {"norm_latency_us": -1}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- norm-grad-efficiency.mlir
// expected-error @+1 {{gpu: "norm_grad_hbm_efficiency" must be a number in [0.001, 1]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- norm-grad-efficiency.json
{"version": 1, "gpu": {"norm_grad_hbm_efficiency": 0}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- norm-grad-latency.mlir
// expected-error @+1 {{gpu: "norm_grad_latency_us" must be a number in [0, 1e+06]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- norm-grad-latency.json
{"version": 1, "gpu": {"norm_grad_latency_us": "7"}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- copy-efficiency.mlir
// expected-error @+1 {{gpu: "layout_copy_hbm_efficiency" must be a number in [0.001, 1]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- copy-efficiency.json
{"version": 1, "gpu": {"layout_copy_hbm_efficiency": 1e-9}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- copy-latency.mlir
// expected-error @+1 {{gpu: "layout_copy_latency_us" must be a number in [0, 1e+06]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- copy-latency.json
{"version": 1, "gpu": {"layout_copy_latency_us": 2e6}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- misspelt.mlir
// expected-error @+1 {{gpu: unknown field "norm_latency" (known: device, sm_count, gemm_efficiency, hbm_efficiency, launch_overhead_us, gemm_tile_m, gemm_tile_n, gemm_wave_overhead_us, gemms_hold_sms, attention_efficiency, attention_grad_efficiency, attention_latency_us, attention_grad_latency_us, event_latency_us, copy_engine_latency_us, norm_latency_us, norm_hbm_efficiency, norm_grad_latency_us, norm_grad_hbm_efficiency, layout_copy_latency_us, layout_copy_hbm_efficiency)}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- misspelt.json
{"version": 1, "gpu": {"norm_latency": 3}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}
