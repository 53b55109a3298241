// RUN: tandem-opt %s -split-input-file | FileCheck %s
// RUN: tandem-opt %s -split-input-file | tandem-opt -split-input-file | FileCheck %s
//
// Printing of #tandem.target: a preset prints as its name alone, a preset
// with overrides prints only the fields that differ from the preset, and a
// custom target prints every field. Fields always print in the attribute's
// parameter order, whatever order they were written in.

// A preset alone prints as just its name.
// CHECK-LABEL: module @h100
// CHECK-SAME: attributes {tandem.target = #tandem.target<"h100">}
module @h100 attributes {tandem.target = #tandem.target<"h100">} {}

// -----

// CHECK-LABEL: module @h200
// CHECK-SAME: attributes {tandem.target = #tandem.target<"h200">}
module @h200 attributes {tandem.target = #tandem.target<"h200">} {}

// -----

// CHECK-LABEL: module @mi300x
// CHECK-SAME: attributes {tandem.target = #tandem.target<"mi300x">}
module @mi300x attributes {tandem.target = #tandem.target<"mi300x">} {}

// -----

// Overrides that restate the preset's own values (however they are spelled)
// are not printed.
// CHECK-LABEL: module @restated
// CHECK-SAME: attributes {tandem.target = #tandem.target<"h200">}
module @restated attributes {tandem.target = #tandem.target<"h200",
    sm_count = 132, hbm_gbps = 4.8e3, gemm_efficiency = 0.80,
    collective_sms = 24>} {}

// -----

// Only the overridden fields that differ print, in parameter order.
// CHECK-LABEL: module @overrides
// CHECK-SAME: attributes {tandem.target = #tandem.target<"h200", sm_count = 108, hbm_bytes = 85899345920, collective_sms = 16, launch_overhead_us = 2.500000e+00>}
module @overrides attributes {tandem.target = #tandem.target<"h200",
    launch_overhead_us = 2.5, collective_sms = 16, hbm_bytes = 85899345920,
    sm_count = 108, gemm_tile_m = 128>} {}

// -----

// A float that six significant digits would round prints with full precision.
// CHECK-LABEL: module @precise
// CHECK-SAME: attributes {tandem.target = #tandem.target<"mi300x", hbm_gbps = 5300.1234567889996>}
module @precise attributes {
    tandem.target = #tandem.target<"mi300x", hbm_gbps = 5300.123456789>} {}

// -----

// Every field of a preset overridden: every field prints.
// CHECK-LABEL: module @all_overridden
// CHECK-SAME: attributes {tandem.target = #tandem.target<"h100", sm_count = 114,
// CHECK-SAME: bf16_tflops = 7.560000e+02, f16_tflops = 7.550000e+02,
// CHECK-SAME: fp8_tflops = 1.513000e+03, f32_tflops = 3.780000e+02,
// CHECK-SAME: hbm_gbps = 2.000000e+03, hbm_bytes = 68719476736,
// CHECK-SAME: gemm_efficiency = 7.500000e-01, hbm_efficiency = 8.000000e-01,
// CHECK-SAME: collective_sms = 20, gemm_tile_m = 256, gemm_tile_n = 128,
// CHECK-SAME: launch_overhead_us = 5.000000e+00>}
module @all_overridden attributes {tandem.target = #tandem.target<"h100",
    sm_count = 114, bf16_tflops = 756.0, f16_tflops = 755.0,
    fp8_tflops = 1513.0, f32_tflops = 378.0, hbm_gbps = 2000.0,
    hbm_bytes = 68719476736, gemm_efficiency = 0.75, hbm_efficiency = 0.8,
    collective_sms = 20, gemm_tile_m = 256, gemm_tile_n = 128,
    launch_overhead_us = 5.0>} {}

// -----

// A custom target prints every field, in parameter order.
// CHECK-LABEL: module @custom
// CHECK-SAME: attributes {tandem.target = #tandem.target<"my-gpu", sm_count = 100,
// CHECK-SAME: bf16_tflops = 5.000000e+02, f16_tflops = 5.000000e+02,
// CHECK-SAME: fp8_tflops = 1.000000e+03, f32_tflops = 6.000000e+01,
// CHECK-SAME: hbm_gbps = 3.000000e+03, hbm_bytes = 68719476736,
// CHECK-SAME: gemm_efficiency = 8.000000e-01, hbm_efficiency = 9.000000e-01,
// CHECK-SAME: collective_sms = 16, gemm_tile_m = 128, gemm_tile_n = 256,
// CHECK-SAME: launch_overhead_us = 0.000000e+00>}
module @custom attributes {tandem.target = #tandem.target<"my-gpu",
    launch_overhead_us = 0.0, gemm_tile_n = 256, gemm_tile_m = 128,
    collective_sms = 16, hbm_efficiency = 0.9, gemm_efficiency = 0.8,
    hbm_bytes = 68719476736, hbm_gbps = 3000.0, f32_tflops = 60.0,
    fp8_tflops = 1000.0, f16_tflops = 500.0, bf16_tflops = 500.0,
    sm_count = 100>} {}

// -----

// A custom target with exactly the h200 preset's values still prints every
// field: only the name selects a preset.
// CHECK-LABEL: module @h200_lookalike
// CHECK-SAME: attributes {tandem.target = #tandem.target<"h200-sxm", sm_count = 132,
// CHECK-SAME: bf16_tflops = 989.39999999999998, f16_tflops = 989.39999999999998,
// CHECK-SAME: fp8_tflops = 1.978900e+03, f32_tflops = 4.947000e+02,
// CHECK-SAME: hbm_gbps = 4.800000e+03, hbm_bytes = 150754820096,
// CHECK-SAME: gemm_efficiency = 8.000000e-01, hbm_efficiency = 9.000000e-01,
// CHECK-SAME: collective_sms = 24, gemm_tile_m = 128, gemm_tile_n = 256,
// CHECK-SAME: launch_overhead_us = 4.000000e+00>}
module @h200_lookalike attributes {tandem.target = #tandem.target<"h200-sxm",
    sm_count = 132, bf16_tflops = 989.4, f16_tflops = 989.4,
    fp8_tflops = 1978.9, f32_tflops = 494.7, hbm_gbps = 4800.0,
    hbm_bytes = 150754820096, gemm_efficiency = 0.8, hbm_efficiency = 0.9,
    collective_sms = 24, gemm_tile_m = 128, gemm_tile_n = 256,
    launch_overhead_us = 4.0>} {}

// -----

// The attribute prints the same wherever it appears, not only on a module.
// CHECK-LABEL: func.func @elsewhere()
// CHECK-SAME: attributes {targets = [#tandem.target<"h100">, #tandem.target<"h200", collective_sms = 8>]}
func.func @elsewhere() attributes {targets = [#tandem.target<"h100">,
    #tandem.target<"h200", collective_sms = 8>]} {
  return
}

// A name with a quote is escaped, so the printed form parses back.
// CHECK-LABEL: module @quoted_name
// CHECK-SAME: #tandem.target<"my\22gpu"
module @quoted_name attributes {tandem.target = #tandem.target<"my\"gpu", sm_count = 100, bf16_tflops = 500.0, f16_tflops = 500.0, fp8_tflops = 1000.0, f32_tflops = 60.0, hbm_gbps = 3000.0, hbm_bytes = 68719476736, gemm_efficiency = 0.8, hbm_efficiency = 0.9, collective_sms = 16, gemm_tile_m = 128, gemm_tile_n = 256, launch_overhead_us = 4.0>} {}
