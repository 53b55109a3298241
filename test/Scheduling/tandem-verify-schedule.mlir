// Schedules of Inputs/verify-schedule-reference.mlir that the verifier
// accepts, without and with the reference.
// RUN: tandem-opt %s -split-input-file -verify-diagnostics --tandem-verify-schedule -o /dev/null
// RUN: tandem-opt %s -split-input-file -verify-diagnostics --tandem-verify-schedule="reference=%S/Inputs/verify-schedule-reference.mlir" -o /dev/null
// RUN: tandem-opt %s -split-input-file --tandem-verify-schedule="reference=%S/Inputs/verify-schedule-reference.mlir" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REF
// REF-COUNT-3: remark: schedule verified{{.*}}; values match the reference

// The IR is left unchanged.
// RUN: tandem-opt %s -split-input-file --tandem-verify-schedule -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=IR
// IR: tandem.all_gather_start %{{.*}} on @tp dim 0 {tandem.seq = 0 : i64}
// IR: tandem.elementwise copy %{{.*}} {tandem.record_event = 0 : i64, tandem.stream = 0 : i64}

// The input itself (blocking collectives, no tandem.seq): nothing to order
// against the input, which the remarks say.
// RUN: tandem-opt %S/Inputs/verify-schedule-reference.mlir --tandem-verify-schedule -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOSEQ --implicit-check-not=error
// NOSEQ: remark: 2 collective(s) on @tp carry no 'tandem.seq': their order cannot be checked against the input (run tandem-async-collectives, or pass a reference)
// NOSEQ: remark: schedule verified on the simulator's default streams (no stream attributes: every use is ordered after its producer): 1 stream(s), 0 cross-stream use(s), 2 collective(s); values not compared (no reference)
// NOSEQ: remark: 2 collective(s) on @dp carry no 'tandem.seq'
// NOSEQ: remark: schedule verified on the simulator's default streams

// The overlap passes followed by stream assignment produce a schedule that
// is proven safe and equal to the input.
// RUN: tandem-opt %S/Inputs/verify-schedule-reference.mlir --tandem-async-collectives --tandem-bulk-overlap \
// RUN:   --tandem-assign-streams --tandem-verify-schedule="reference=%S/Inputs/verify-schedule-reference.mlir" \
// RUN:   -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPE --implicit-check-not=error
// PIPE: remark: schedule verified: 2 stream(s), 4 cross-stream use(s), 2 collective(s); values match the reference
// PIPE: remark: schedule verified: 2 stream(s), 4 cross-stream use(s), 2 collective(s); values match the reference

// Without stream attributes: the simulator's default streams (the starts on
// @tp's stream 1, everything else on stream 0), every use ordered after its
// producer. The wgrad moved under the all-gather; seq stamps kept in order.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-remark @+1 {{schedule verified on the simulator's default streams (no stream attributes: every use is ordered after its producer): 2 stream(s), 4 cross-stream use(s), 2 collective(s);}}
  func.func @layer(%x: tensor<256x1024xbf16>, %w: tensor<1024xbf16>,
                   %a: tensor<1024x512xbf16>, %b: tensor<512x1024xbf16>,
                   %xs: tensor<2048x1024xbf16>, %dy: tensor<2048x512xbf16>)
      -> (tensor<256x1024xbf16>, tensor<1024x512xbf16>) {
    %n = tandem.norm layer %x, %w : tensor<256x1024xbf16>, tensor<1024xbf16>
    %f = tandem.all_gather_start %n on @tp dim 0 {tandem.seq = 0 : i64} : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %dw = tandem.matmul wgrad %xs, %dy transpose_lhs : tensor<2048x1024xbf16>, tensor<2048x512xbf16> -> tensor<1024x512xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    %h = tandem.matmul fprop %g, %a : tensor<2048x1024xbf16>, tensor<1024x512xbf16> -> tensor<2048x512xbf16>
    %y = tandem.matmul fprop %h, %b : tensor<2048x512xbf16>, tensor<512x1024xbf16> -> tensor<2048x1024xbf16>
    %fr = tandem.reduce_scatter_start %y on @tp dim 0 {tandem.seq = 1 : i64} : tensor<2048x1024xbf16> -> !tandem.future<tensor<256x1024xbf16>>
    %r = tandem.wait %fr : !tandem.future<tensor<256x1024xbf16>>
    return %r, %dw : tensor<256x1024xbf16>, tensor<1024x512xbf16>
  }
}

// -----

// Explicit events; the wgrad placed by hand on a second compute stream. Its
// result reaches only the return, which needs no event.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-remark @+1 {{schedule verified: 3 stream(s), 4 cross-stream use(s), 2 collective(s);}}
  func.func @layer(%x: tensor<256x1024xbf16>, %w: tensor<1024xbf16>,
                   %a: tensor<1024x512xbf16>, %b: tensor<512x1024xbf16>,
                   %xs: tensor<2048x1024xbf16>, %dy: tensor<2048x512xbf16>)
      -> (tensor<256x1024xbf16>, tensor<1024x512xbf16>)
      attributes {tandem.num_events = 4 : i64, tandem.num_streams = 3 : i64} {
    %n = tandem.norm layer %x, %w {tandem.record_event = 0 : i64, tandem.stream = 0 : i64} : tensor<256x1024xbf16>, tensor<1024xbf16>
    %f = tandem.all_gather_start %n on @tp dim 0 {tandem.record_event = 1 : i64, tandem.seq = 0 : i64, tandem.stream = 1 : i64, tandem.wait_events = array<i64: 0>} : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %dw = tandem.matmul wgrad %xs, %dy transpose_lhs {tandem.stream = 2 : i64} : tensor<2048x1024xbf16>, tensor<2048x512xbf16> -> tensor<1024x512xbf16>
    %g = tandem.wait %f {tandem.stream = 0 : i64, tandem.wait_events = array<i64: 1>} : !tandem.future<tensor<2048x1024xbf16>>
    %h = tandem.matmul fprop %g, %a {tandem.stream = 0 : i64} : tensor<2048x1024xbf16>, tensor<1024x512xbf16> -> tensor<2048x512xbf16>
    %y = tandem.matmul fprop %h, %b {tandem.record_event = 2 : i64, tandem.stream = 0 : i64} : tensor<2048x512xbf16>, tensor<512x1024xbf16> -> tensor<2048x1024xbf16>
    %fr = tandem.reduce_scatter_start %y on @tp dim 0 {tandem.record_event = 3 : i64, tandem.seq = 1 : i64, tandem.stream = 1 : i64, tandem.wait_events = array<i64: 2>} : tensor<2048x1024xbf16> -> !tandem.future<tensor<256x1024xbf16>>
    %r = tandem.wait %fr {tandem.stream = 0 : i64, tandem.wait_events = array<i64: 3>} : !tandem.future<tensor<256x1024xbf16>>
    return %r, %dw : tensor<256x1024xbf16>, tensor<1024x512xbf16>
  }
}

// -----

// Transitive ordering: the second start reads %c1, which precedes %c0 on
// stream 0, so the first start's wait for event 0 (recorded after %c0)
// covers it. The waits carry no event: a tandem.wait is itself the
// synchronisation with its collective.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @dp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-remark @+1 {{schedule verified: 2 stream(s), 4 cross-stream use(s), 2 collective(s);}}
  func.func @grads(%g0: tensor<1024x512xbf16>, %g1: tensor<512x1024xbf16>)
      -> (tensor<1024x512xbf16>, tensor<512x1024xbf16>) {
    %c1 = tandem.elementwise copy %g1 {tandem.stream = 0 : i64} : tensor<512x1024xbf16> -> tensor<512x1024xbf16>
    %c0 = tandem.elementwise copy %g0 {tandem.record_event = 0 : i64, tandem.stream = 0 : i64} : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    %f0 = tandem.all_reduce_start %c0 on @dp {tandem.seq = 0 : i64, tandem.stream = 1 : i64, tandem.wait_events = array<i64: 0>} : tensor<1024x512xbf16> -> !tandem.future<tensor<1024x512xbf16>>
    %f1 = tandem.all_reduce_start %c1 on @dp {tandem.seq = 1 : i64, tandem.stream = 1 : i64} : tensor<512x1024xbf16> -> !tandem.future<tensor<512x1024xbf16>>
    %s0 = tandem.wait %f0 {tandem.stream = 0 : i64} : !tandem.future<tensor<1024x512xbf16>>
    %s1 = tandem.wait %f1 {tandem.stream = 0 : i64} : !tandem.future<tensor<512x1024xbf16>>
    return %s0, %s1 : tensor<1024x512xbf16>, tensor<512x1024xbf16>
  }
}
