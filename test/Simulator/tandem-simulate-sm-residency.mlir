// SM residency in the simulator (docs/cost-model.md, "SM residency"): a
// GEMM sized for all SMs that is issued before a collective keeps it off
// the SMs until the GEMM ends; a collective issued first keeps its SMs; a
// GEMM whose SM target leaves the collective's CTAs free does not block.
// A calibration file with "gemms_hold_sms": false turns the rule off.
// RUN: split-file %s %t
// RUN: tandem-opt %t/step.mlir --tandem-simulate="report=- trace=%t/on.json" -o /dev/null | FileCheck %t/step.mlir --check-prefix=ON
// RUN: FileCheck %t/step.mlir --check-prefix=ON-TRACE < %t/on.json
// RUN: tandem-opt %t/step.mlir --tandem-simulate="report=- trace=%t/off.json calibration=%t/off.json.in" -o /dev/null | FileCheck %t/step.mlir --check-prefix=OFF
// RUN: FileCheck %t/step.mlir --check-prefix=OFF-TRACE < %t/off.json

//--- step.mlir
// The GEMM: 2 waves of 128x256 tiles on 132 SMs, 93.53 us (see
// tandem-assign-sm-targets.mlir); the all-gather: 38.39 us alone on 24
// CTAs. @gemm_first: the all-gather waits 93.53 us for SMs, then runs
// alone: 131.92 us, all of it exposed. @collective_first and @targeted
// (SM target 108 = 132 - 24): both run side by side, 98.18 us (the GEMM's
// 3 waves on 108 SMs while the collective runs, slowed x1.12).
// ON:       "functions": [
// ON:       "exposed_comm_us": 38.38{{[0-9]*}},
// ON-NEXT:  "function": "gemm_first",
// ON:       "span_us": 131.92{{[0-9]*}},
// ON:       "exposed_comm_us": 0,
// ON-NEXT:  "function": "collective_first",
// ON:       "span_us": 98.18{{[0-9]*}},
// ON:       "exposed_comm_us": 0,
// ON-NEXT:  "function": "targeted",
// ON:       "span_us": 98.18{{[0-9]*}},
// ON-TRACE: "waited_for_sms_us":93.53{{[0-9]*}}},"cat":"collective"{{.*}}"waited_for_sms_us":0},"cat":"collective"{{.*}}"waited_for_sms_us":0},"cat":"collective"
// Without the rule @gemm_first overlaps like @collective_first.
// OFF:      "functions": [
// OFF:      "function": "gemm_first",
// OFF:      "span_us": 98.18{{[0-9]*}},
// OFF:      "function": "collective_first",
// OFF:      "span_us": 98.18{{[0-9]*}},
// OFF-TRACE-NOT: "waited_for_sms_us":9
// OFF-TRACE: "waited_for_sms_us":0
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
  func.func @gemm_first(%x: tensor<256x2048xbf16>, %a: tensor<1536x4096xbf16>, %b: tensor<4096x4608xbf16>) -> (tensor<2048x2048xbf16>, tensor<1536x4608xbf16>) {
    %y = tandem.matmul fprop %a, %b : tensor<1536x4096xbf16>, tensor<4096x4608xbf16> -> tensor<1536x4608xbf16>
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x2048xbf16> -> !tandem.future<tensor<2048x2048xbf16>>
    %g = tandem.wait %f : !tandem.future<tensor<2048x2048xbf16>>
    return %g, %y : tensor<2048x2048xbf16>, tensor<1536x4608xbf16>
  }
  func.func @collective_first(%x: tensor<256x2048xbf16>, %a: tensor<1536x4096xbf16>, %b: tensor<4096x4608xbf16>) -> (tensor<2048x2048xbf16>, tensor<1536x4608xbf16>) {
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x2048xbf16> -> !tandem.future<tensor<2048x2048xbf16>>
    %y = tandem.matmul fprop %a, %b : tensor<1536x4096xbf16>, tensor<4096x4608xbf16> -> tensor<1536x4608xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<2048x2048xbf16>>
    return %g, %y : tensor<2048x2048xbf16>, tensor<1536x4608xbf16>
  }
  func.func @targeted(%x: tensor<256x2048xbf16>, %a: tensor<1536x4096xbf16>, %b: tensor<4096x4608xbf16>) -> (tensor<2048x2048xbf16>, tensor<1536x4608xbf16>) {
    %y = tandem.matmul fprop %a, %b {tandem.sm_target = 108 : i64} : tensor<1536x4096xbf16>, tensor<4096x4608xbf16> -> tensor<1536x4608xbf16>
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x2048xbf16> -> !tandem.future<tensor<2048x2048xbf16>>
    %g = tandem.wait %f : !tandem.future<tensor<2048x2048xbf16>>
    return %g, %y : tensor<2048x2048xbf16>, tensor<1536x4608xbf16>
  }
}

//--- off.json.in
{"version": 1, "gpu": {"gemms_hold_sms": false}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.13, "comm_slowdown": 1.13}, {"comm_sms": 16, "gemm_slowdown": 1.11, "memory_slowdown": 1.135, "comm_slowdown": 1.135}, {"comm_sms": 24, "gemm_slowdown": 1.12, "memory_slowdown": 1.13, "comm_slowdown": 1.13}, {"comm_sms": 32, "gemm_slowdown": 1.10, "memory_slowdown": 1.145, "comm_slowdown": 1.145}]}
