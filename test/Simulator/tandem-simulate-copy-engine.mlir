// Collectives on the copy engines (`tandem.copy_engine`): their time alone
// and the contention beside them, with the built-in parameters and with a
// calibration file's copy_engine_latency_us ("gpu"), copy_engine_efficiency
// ("comm") and copy_engine_contention; and the calibration's errors.
// RUN: split-file %s %t
// RUN: tandem-opt %t/model.mlir --tandem-simulate="report=-" -o /dev/null | FileCheck %t/model.mlir --check-prefix=BUILTIN
// RUN: tandem-opt %t/model.mlir --tandem-simulate="report=- calibration=%t/calibrated.json" -o /dev/null | FileCheck %t/model.mlir --check-prefix=CALIBRATED
// RUN: tandem-opt %t/not-object.mlir --tandem-simulate="calibration=%t/not-object.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/unknown.mlir --tandem-simulate="calibration=%t/unknown.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/below-one.mlir --tandem-simulate="calibration=%t/below-one.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/efficiency.mlir --tandem-simulate="calibration=%t/efficiency.json" -verify-diagnostics -o /dev/null

//--- model.mlir

// h200 preset: launch 4 us; switch 18 links x 25,000 B/us; copies at 0.84
// of that (378,000 B/us), each copy paying the launch overhead (4 us)
// unless a calibration measured it.
// All-gather of 4,194,304 B: 4 + 2.0 + 7 * 4 + 7/8 * B / 378,000 = 43.709 us.
// BUILTIN-LABEL: "function": "ag"
// BUILTIN: "span_us": 43.709{{[0-9]*}},
// Reduce-scatter: the same copies, then a 4 us launch and a sum reading
// 8 blocks and writing one (9/8 * B at 0.9 of 4.8 TB/s): 48.801 us.
// BUILTIN-LABEL: "function": "rs"
// BUILTIN: "span_us": 48.801{{[0-9]*}},
// Permute on a full mesh: one copy over the one link to that peer:
// 4 + 1.5 + 4 + B / (64,000 * 0.84) = 87.519 us.
// BUILTIN-LABEL: "function": "permute"
// BUILTIN: "span_us": 87.519{{[0-9]*}},
// Beside a GEMM (183.065 us alone) the built-in copy-engine point slows a
// GEMM by 1.00: the span is the GEMM's alone time.
// The trace names the transport of every collective.
// RUN: tandem-opt %t/model.mlir --tandem-simulate="trace=%t/trace.json" -o /dev/null
// RUN: FileCheck %t/model.mlir --check-prefix=TRACE < %t/trace.json
// TRACE: "transport":{{ ?}}"copy_engine"
// BUILTIN-LABEL: "function": "beside"
// BUILTIN: "span_us": 183.065{{[0-9]*}},
//
// Calibrated: 1 us per copy at 0.5: 4 + 2 + 7 + 3,670,016 / 225,000 =
// 29.311 us.
// CALIBRATED-LABEL: "function": "ag"
// CALIBRATED: "span_us": 29.311{{[0-9]*}},
// The GEMM runs at 1/1.5 of its rate for the all-gather's 29.311 us, then
// alone: 29.311 + (1 - 29.311 / (1.5 * 183.065)) * 183.065 = 192.836 us.
// CALIBRATED-LABEL: "function": "beside"
// CALIBRATED: "span_us": 192.83{{[0-9]*}},
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  tandem.group @mesh size(8) full_mesh links(7 x 64.0 GBps, 1.5 us)
  func.func @ag(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    %g = tandem.all_gather %x on @tp dim 0 {tandem.copy_engine} : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    return %g : tensor<2048x1024xbf16>
  }
  func.func @rs(%x: tensor<2048x1024xbf16>) -> tensor<256x1024xbf16> {
    %g = tandem.reduce_scatter %x on @tp dim 0 {tandem.copy_engine} : tensor<2048x1024xbf16> -> tensor<256x1024xbf16>
    return %g : tensor<256x1024xbf16>
  }
  func.func @permute(%x: tensor<2048x1024xbf16>) -> tensor<2048x1024xbf16> {
    %g = tandem.permute %x on @mesh shift 1 {tandem.copy_engine} : tensor<2048x1024xbf16> -> tensor<2048x1024xbf16>
    return %g : tensor<2048x1024xbf16>
  }
  func.func @beside(%x: tensor<256x1024xbf16>, %a: tensor<4096x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<2048x1024xbf16>, tensor<4096x4096xbf16>) {
    %f = tandem.all_gather_start %x on @tp dim 0 {tandem.copy_engine} : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %y = tandem.matmul fprop %a, %w : tensor<4096x4096xbf16>, tensor<4096x4096xbf16> -> tensor<4096x4096xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    return %g, %y : tensor<2048x1024xbf16>, tensor<4096x4096xbf16>
  }
}

//--- calibrated.json
{"version": 1,
 "gpu": {"copy_engine_latency_us": 1.0},
 "comm": {"copy_engine_efficiency": 0.5},
 "copy_engine_contention": {"gemm_slowdown": 1.5, "memory_slowdown": 1.2, "comm_slowdown": 1.0},
 "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- not-object.mlir
// expected-error @+1 {{copy_engine_contention must be an object}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- not-object.json
{"version": 1, "copy_engine_contention": [1.0], "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- unknown.mlir
// expected-error @+1 {{copy_engine_contention: unknown field "gemm" (known: gemm_slowdown, memory_slowdown, comm_slowdown)}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- unknown.json
{"version": 1, "copy_engine_contention": {"gemm": 1.0}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- below-one.mlir
// expected-error @+1 {{copy_engine_contention: "memory_slowdown" must be a number in [1, }}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- below-one.json
{"version": 1, "copy_engine_contention": {"gemm_slowdown": 1.0, "memory_slowdown": 0.9, "comm_slowdown": 1.0}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- efficiency.mlir
// expected-error @+1 {{comm: "copy_engine_efficiency" must be a number in [0.001, 1]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- efficiency.json
{"version": 1, "comm": {"copy_engine_efficiency": 1.5}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}
