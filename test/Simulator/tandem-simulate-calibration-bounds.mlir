// Calibration values that passed "positive and finite" but made a rate 0 or
// a time infinite, and a file nested so deep that the JSON parser overflowed
// the stack (issue 13 rows 4 and 6): each is refused, naming the file, the
// field and the bound. Each error needs its own file.
// RUN: split-file %s %t
// A file nested 100,000 levels deep, refused before it is parsed.
// RUN: %python -c "print('[' * 100000)" > %t/deep.json
// RUN: tandem-opt %t/deep.mlir --tandem-simulate="calibration=%t/deep.json" -verify-diagnostics -o /dev/null
// Brackets inside strings do not count; 64 levels are allowed.
// RUN: tandem-opt %t/strings.mlir --tandem-simulate="calibration=%t/strings.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/nest65.mlir --tandem-simulate="calibration=%t/nest65.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/gemm-efficiency.mlir --tandem-simulate="calibration=%t/gemm-efficiency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/bus-efficiency.mlir --tandem-simulate="calibration=%t/bus-efficiency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/slowdown.mlir --tandem-simulate="calibration=%t/slowdown.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/latency.mlir --tandem-simulate="calibration=%t/latency.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/comm-sms.mlir --tandem-simulate="calibration=%t/comm-sms.json" -verify-diagnostics -o /dev/null

//--- deep.mlir
// expected-error @+1 {{deep.json: arrays and objects nested more than 64 levels deep: not a calibration file}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- strings.mlir
// A string full of brackets is text: the file parses and fails later on
// its (wrong) version only.
// expected-error @+1 {{strings.json: "version" must be 1}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- strings.json
{"version": 2, "source": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ \" {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{", "x": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}

//--- nest65.mlir
// expected-error @+1 {{nest65.json: arrays and objects nested more than 64 levels deep}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- nest65.json
{"version": 1, "x": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}

//--- gemm-efficiency.mlir
// expected-error @+1 {{gemm-efficiency.json: gpu: "gemm_efficiency" must be a number in [0.001, 1]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- gemm-efficiency.json
{"version": 1, "gpu": {"gemm_efficiency": 1e-308}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- bus-efficiency.mlir
// expected-error @+1 {{bus-efficiency.json: comm: "bus_efficiency" must be a number in [0.001, 1]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- bus-efficiency.json
{"version": 1, "comm": {"bus_efficiency": 5e-324}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- slowdown.mlir
// expected-error @+1 {{slowdown.json: contention[0]: "comm_slowdown" must be a number in [1, 1000] (a slowdown factor)}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- slowdown.json
{"version": 1, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1e308}]}

//--- latency.mlir
// expected-error @+1 {{latency.json: comm: "link_latency_us" must be a number in [0, 1e+06]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- latency.json
{"version": 1, "comm": {"link_latency_us": 1e308}, "contention": [{"comm_sms": 8, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}

//--- comm-sms.mlir
// expected-error @+1 {{comm-sms.json: contention[0]: "comm_sms" must be an integer in [1, 4096]}}
module attributes {tandem.target = #tandem.target<"h200">} {
}

//--- comm-sms.json
{"version": 1, "contention": [{"comm_sms": 9223372036854775807, "gemm_slowdown": 1.0, "memory_slowdown": 1.0, "comm_slowdown": 1.0}]}
