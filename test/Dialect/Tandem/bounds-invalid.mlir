// RUN: tandem-opt %s -split-input-file -verify-diagnostics
//
// The bounds on sizes, counts and rates (TandemBounds.h): every value that
// sizes an allocation or becomes a duration or a rate, and every product of
// sizes, is bounded or checked. Cases from the fuzzing of issue 13.

//===----------------------------------------------------------------------===//
// Checked size products (issue 13 row 1: chunks x interleave wrapped to 0,
// SIGFPE in SliceOp::verify)
//===----------------------------------------------------------------------===//

func.func @slice_chunks_wrap(%x: tensor<8x4xbf16>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'tandem.slice' op attribute 'chunks' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1 whose maximum value is 1024}}
  %s = tandem.slice %x dim 0 chunk 0 of 4294967296 interleave 4294967296 : tensor<8x4xbf16> -> tensor<8x4xbf16>
  return %s : tensor<8x4xbf16>
}

// -----

func.func @slice_interleave_bound(%x: tensor<8x4xbf16>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'tandem.slice' op attribute 'interleave' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1 whose maximum value is 1048576}}
  %s = tandem.slice %x dim 0 chunk 0 of 1 interleave 4294967296 : tensor<8x4xbf16> -> tensor<8x4xbf16>
  return %s : tensor<8x4xbf16>
}

// -----

// The largest chunks and interleave together: the product is checked, and
// fits, so the divisibility rule decides.
func.func @slice_largest_counts(%x: tensor<8x4xbf16>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'tandem.slice' op dimension 0 (8) is not divisible by 1048576 group(s) x 1024 chunks}}
  %s = tandem.slice %x dim 0 chunk 0 of 1024 interleave 1048576 : tensor<8x4xbf16> -> tensor<8x4xbf16>
  return %s : tensor<8x4xbf16>
}

// -----

func.func @concat_interleave_bound(%x: tensor<8x4xbf16>) -> tensor<16x4xbf16> {
  // expected-error @+1 {{'tandem.concat' op attribute 'interleave' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1 whose maximum value is 1048576}}
  %c = tandem.concat %x, %x dim 0 interleave 9223372036854775807 : tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<16x4xbf16>
  return %c : tensor<16x4xbf16>
}

// -----

func.func @attention_columns_overflow(%qkv: tensor<4x12xbf16>) -> tensor<4x4xbf16> {
  // expected-error @+1 {{'tandem.attention' op head counts and head_dim give more than 2^48 columns: (4611686018427387904 + 2 * 4611686018427387904) * 1}}
  %o = tandem.attention %qkv heads(4611686018427387904, 4611686018427387904) head_dim(1) : tensor<4x12xbf16> -> tensor<4x4xbf16>
  return %o : tensor<4x4xbf16>
}

// -----

tandem.group @tp size(1048576) switch links(18 x 25.0 GBps, 2.0 us)

func.func @all_gather_dim_overflow(%x: tensor<281474976710656x0xi8>) -> tensor<0x0xi8> {
  // expected-error @+1 {{'tandem.all_gather' op all-gather result: dimension 0 must be 1048576 (group size) x 281474976710656 = (overflows int64), got 0}}
  %y = tandem.all_gather %x on @tp dim 0 : tensor<281474976710656x0xi8> -> tensor<0x0xi8>
  return %y : tensor<0x0xi8>
}

//===----------------------------------------------------------------------===//
// Tensor sizes: at most 2^48 bytes
//===----------------------------------------------------------------------===//

// -----

// 2^32 x 2^32 elements: the element count alone overflows int64.
func.func @tensor_elements_overflow(%a: tensor<4294967296x4294967296xbf16>) {
  // expected-error @+1 {{'tandem.elementwise' op operand #0 must be variadic of statically shaped tensor of at most 2^48 bytes of floating-point or integer values, but got 'tensor<4294967296x4294967296xbf16>'}}
  %r = tandem.elementwise copy %a : tensor<4294967296x4294967296xbf16> -> tensor<4294967296x4294967296xbf16>
  return
}

// -----

// 2^47 bf16 elements are 2^48 bytes: the largest tensor allowed.
func.func @tensor_largest(%a: tensor<140737488355328xbf16>) -> tensor<140737488355328xbf16> {
  %r = tandem.elementwise copy %a : tensor<140737488355328xbf16> -> tensor<140737488355328xbf16>
  return %r : tensor<140737488355328xbf16>
}

// -----

// One byte more.
func.func @tensor_too_large(%a: tensor<281474976710657xi8>) {
  // expected-error @+1 {{'tandem.elementwise' op operand #0 must be variadic of statically shaped tensor of at most 2^48 bytes}}
  %r = tandem.elementwise copy %a : tensor<281474976710657xi8> -> tensor<281474976710657xi8>
  return
}

// -----

// A zero dimension does not excuse an oversized one.
func.func @tensor_zero_and_huge(%a: tensor<0x9223372036854775807xi8>) {
  // expected-error @+1 {{'tandem.elementwise' op operand #0 must be variadic of statically shaped tensor of at most 2^48 bytes}}
  %r = tandem.elementwise copy %a : tensor<0x9223372036854775807xi8> -> tensor<0x9223372036854775807xi8>
  return
}

// -----

// expected-error @+1 {{future value type must be a statically shaped tensor of at most 2^48 bytes, got 'tensor<4294967296x4294967296xbf16>'}}
func.func private @future_too_large() -> !tandem.future<tensor<4294967296x4294967296xbf16>>

// -----

func.func @opaque_bytes_bound() {
  // expected-error @+1 {{'tandem.opaque' op attribute 'declared_bytes' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative whose maximum value is 281474976710656}}
  %y = tandem.opaque "k"() flops(0.0) bytes(9223372036854775807) : () -> tensor<4xf32>
  return
}

// -----

func.func @opaque_flops_bound() {
  // expected-error @+1 {{'tandem.opaque' op flops must be in [0, 1.000000e+24], got 1.000000e+308}}
  %y = tandem.opaque "k"() flops(1.0e308) bytes(0) : () -> tensor<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Group counts and link figures (issue 13 row 6: 1e-310 GBps, 1e308 us)
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'tandem.group' op attribute 'size' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1 whose maximum value is 1048576}}
tandem.group @g size(1048577) switch links(18 x 25.0 GBps, 2.0 us)

// -----

// expected-error @+1 {{'tandem.group' op attribute 'links_per_gpu' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1 whose maximum value is 1048576}}
tandem.group @g size(8) switch links(9223372036854775807 x 25.0 GBps, 2.0 us)

// -----

// expected-error @+1 {{'tandem.group' op link bandwidth must be in [1.000000e-03, 1.000000e+07] GB/s, got 1.000000e-310}}
tandem.group @g size(8) switch links(18 x 1.0e-310 GBps, 2.0 us)

// -----

// expected-error @+1 {{'tandem.group' op link bandwidth must be in}}
tandem.group @g size(8) switch links(18 x 1.0e308 GBps, 2.0 us)

// -----

// expected-error @+1 {{'tandem.group' op link latency must be in [0, 1.000000e+06] us, got 1.000000e+308}}
tandem.group @g size(8) switch links(18 x 25.0 GBps, 1.0e308 us)

// -----

// expected-error @+1 {{'tandem.group' op inter-node bandwidth must be in [1.000000e-03, 1.000000e+07] GB/s, got 4.940656e-324}}
tandem.group @g size(32) hierarchical links(18 x 25.0 GBps, 2.0 us)
    {gpus_per_node = 8 : i64, inter_node_bandwidth_gbps = 5.0e-324 : f64,
     inter_node_latency_us = 5.0 : f64}

// -----

// expected-error @+1 {{'tandem.group' op inter-node latency must be in [0, 1.000000e+06] us, got 1.000000e+307}}
tandem.group @g size(32) hierarchical links(18 x 25.0 GBps, 2.0 us)
    {gpus_per_node = 8 : i64, inter_node_bandwidth_gbps = 50.0 : f64,
     inter_node_latency_us = 1.0e307 : f64}

// -----

// expected-error @+1 {{'tandem.group' op gpus_per_node must be in [1, size = 8], got 16}}
tandem.group @g size(8) hierarchical links(18 x 25.0 GBps, 2.0 us)
    {gpus_per_node = 16 : i64, inter_node_bandwidth_gbps = 50.0 : f64,
     inter_node_latency_us = 5.0 : f64}

//===----------------------------------------------------------------------===//
// Target figures
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{target 'h200': gemm_efficiency must be in [1.000000e-03, 1], got 1.000000e-308}}
module attributes {tandem.target = #tandem.target<"h200", gemm_efficiency = 1.0e-308>} {}

// -----

// expected-error @+1 {{target 'h200': bf16_tflops must be in [1.000000e-03, 1.000000e+07], got 1.000000e+308}}
module attributes {tandem.target = #tandem.target<"h200", bf16_tflops = 1.0e308>} {}

// -----

// expected-error @+1 {{target 'h200': sm_count must be in [1, 4096], got 9223372036854775807}}
module attributes {tandem.target = #tandem.target<"h200", sm_count = 9223372036854775807>} {}

// -----

// expected-error @+1 {{target 'h200': gemm tile sizes must be in [1, 4096], got 9223372036854775807x256}}
module attributes {tandem.target = #tandem.target<"h200", gemm_tile_m = 9223372036854775807>} {}

// -----

// expected-error @+1 {{target 'h200': launch_overhead_us must be in [0, 1.000000e+06], got 1.000000e+308}}
module attributes {tandem.target = #tandem.target<"h200", launch_overhead_us = 1.0e308>} {}
