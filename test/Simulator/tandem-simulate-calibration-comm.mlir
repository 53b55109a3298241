// The calibration file's optional "comm" section (tandem-fit writes it from
// tandem-nccl-bench measurements): the communication parameters it replaces,
// and every error it can give, one file per case.
// RUN: split-file %s %t
// RUN: tandem-opt %t/model.mlir --tandem-simulate="report=-" -o /dev/null | FileCheck %t/model.mlir --check-prefix=BUILTIN
// RUN: tandem-opt %t/model.mlir --tandem-simulate="report=- calibration=%t/calibrated.json" -o /dev/null | FileCheck %t/model.mlir --check-prefix=CALIBRATED
// A file without "comm" keeps the built-in parameters.
// RUN: tandem-opt %t/model.mlir --tandem-simulate="report=- calibration=%S/../Inputs/slow-contention.json" -o /dev/null | FileCheck %t/model.mlir --check-prefix=BUILTIN
// RUN: tandem-opt %t/not-object.mlir --tandem-simulate="calibration=%t/not-object.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/unknown.mlir --tandem-simulate="calibration=%t/unknown.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/bus-zero.mlir --tandem-simulate="calibration=%t/bus-zero.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/bus-above-one.mlir --tandem-simulate="calibration=%t/bus-above-one.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/bus-string.mlir --tandem-simulate="calibration=%t/bus-string.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/links-per-cta.mlir --tandem-simulate="calibration=%t/links-per-cta.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/latency.mlir --tandem-simulate="calibration=%t/latency.json" -verify-diagnostics -o /dev/null

//--- model.mlir

// An all-gather of a 2048x1024 bf16 result (4,194,304 B) on 8 GPUs, alone.
// Built-in: 4 + 7 * 2.0 + 7/8 * B / (18 links * 25,000 * 0.80) = 28.194 us.
// BUILTIN: "span_us": 28.19{{[0-9]*}},
// Calibrated: 24 CTAs * 0.25 links = 6 links at 25,000 * 0.5 = 75,000 B/us;
// the latency 1.0 us replaces the group's 2.0 us:
// 4 + 7 * 1.0 + 3,670,016 / 75,000 = 59.9335 us.
// CALIBRATED: "span_us": 59.933{{[0-9]*}},
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @ag(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    %g = tandem.all_gather %x on @tp dim 0 : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    return %g : tensor<2048x1024xbf16>
  }
}

//--- calibrated.json
{
  "version": 1,
  "comm": {"bus_efficiency": 0.5, "links_per_cta": 0.25, "link_latency_us": 1.0},
  "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]
}

//--- not-object.mlir
// expected-error @+1 {{comm must be an object}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- not-object.json
{"version": 1, "comm": [1], "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- unknown.mlir
// expected-error @+1 {{comm: unknown field "bus_eficiency" (known: bus_efficiency, links_per_cta, link_latency_us, copy_engine_efficiency)}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- unknown.json
{"version": 1, "comm": {"bus_eficiency": 0.9}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- bus-zero.mlir
// expected-error @+1 {{comm: "bus_efficiency" must be a number in [0.001, 1]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- bus-zero.json
{"version": 1, "comm": {"bus_efficiency": 0}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- bus-above-one.mlir
// expected-error @+1 {{comm: "bus_efficiency" must be a number in [0.001, 1]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- bus-above-one.json
{"version": 1, "comm": {"bus_efficiency": 1.2}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- bus-string.mlir
// expected-error @+1 {{comm: "bus_efficiency" must be a number in [0.001, 1]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- bus-string.json
{"version": 1, "comm": {"bus_efficiency": "0.8"}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- links-per-cta.mlir
// expected-error @+1 {{comm: "links_per_cta" must be a number in [0.001, 1024]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- links-per-cta.json
{"version": 1, "comm": {"links_per_cta": 0}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- latency.mlir
// expected-error @+1 {{comm: "link_latency_us" must be a number in [0, 1e+06]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- latency.json
{"version": 1, "comm": {"link_latency_us": -1}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}
