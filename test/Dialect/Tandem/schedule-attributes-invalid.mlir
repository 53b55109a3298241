// RUN: tandem-opt %s -split-input-file -verify-diagnostics
//
// The schedule attributes are the dialect's (TandemDialect.td,
// discardableAttrs): one case per error of their verifier
// (ScheduleAttributes.cpp). An unknown `tandem.*` name, a wrong type, a value
// out of range or an attribute on an op it does not belong on is an error at
// the op, whichever pass runs next.

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{unknown attribute 'tandem.strem': the tandem dialect defines tandem.target, tandem.stream, tandem.sm_target, tandem.comm_sms, tandem.copy_engine, tandem.record_event, tandem.wait_events, tandem.seq, tandem.num_streams, tandem.num_events, tandem.calibration, tandem.measured_scale, tandem.avoid_overlap}}
    %y = tandem.elementwise copy %x {tandem.strem = 1 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.stream' must be in [0, 64), got -1}}
    %y = tandem.elementwise copy %x {tandem.stream = -1 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

// The bound on streams, which sizes the simulator's and the verifier's
// per-stream tables (issue 13: 2147483647 streams hung them).
module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.stream' must be in [0, 64), got 2147483647}}
    %y = tandem.elementwise copy %x {tandem.stream = 2147483647 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.stream' must be an i64 integer, got "comm"}}
    %y = tandem.elementwise copy %x {tandem.stream = "comm"} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.stream' must be an i64 integer, got 1 : i32}}
    %y = tandem.elementwise copy %x {tandem.stream = 1 : i32} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16>
      attributes {tandem.num_streams = 2 : i64} {
    // expected-error @+1 {{runs on stream 2, but '@f' declares 'tandem.num_streams' = 2}}
    %a = tandem.elementwise copy %x {tandem.stream = 2 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %a : tensor<8xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @f(%a: tensor<256x256xbf16>) -> tensor<256x256xbf16> {
    // expected-error @+1 {{'tandem.sm_target' must be in [1, 132], got 133}}
    %y = tandem.matmul fprop %a, %a {tandem.sm_target = 133 : i64} : tensor<256x256xbf16>, tensor<256x256xbf16> -> tensor<256x256xbf16>
    return %y : tensor<256x256xbf16>
  }
}

// -----

module {
  func.func @f(%a: tensor<256x256xbf16>) -> tensor<256x256xbf16> {
    // expected-error @+1 {{'tandem.sm_target' must be an i64 integer, got "all"}}
    %y = tandem.matmul fprop %a, %a {tandem.sm_target = "all"} : tensor<256x256xbf16>, tensor<256x256xbf16> -> tensor<256x256xbf16>
    return %y : tensor<256x256xbf16>
  }
}

// -----

module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    // expected-error @+1 {{'tandem.sm_target' belongs on a compute op, not on 'tandem.all_gather'}}
    %a = tandem.all_gather %x on @tp dim 0 {tandem.sm_target = 100 : i64} : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    return %a : tensor<2048x1024xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    // expected-error @+1 {{'tandem.comm_sms' must be in [1, 132), got 132}}
    %a = tandem.all_gather %x on @tp dim 0 {tandem.comm_sms = 132 : i64} : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    return %a : tensor<2048x1024xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.comm_sms' belongs on a collective, not on 'tandem.elementwise'}}
    %y = tandem.elementwise copy %x {tandem.comm_sms = 8 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    // expected-error @+1 {{'tandem.seq' must be an i64 integer, got "first"}}
    %a = tandem.all_gather %x on @tp dim 0 {tandem.seq = "first"} : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    return %a : tensor<2048x1024xbf16>
  }
}

// -----

module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    // expected-error @+1 {{'tandem.seq' must be non-negative, got -3}}
    %a = tandem.all_gather %x on @tp dim 0 {tandem.seq = -3 : i64} : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    return %a : tensor<2048x1024xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.record_event' must hold event ids in [0, 1048576), got -1}}
    %b = tandem.elementwise copy %x {tandem.record_event = -1 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %b : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16>
      attributes {tandem.num_events = 1 : i64} {
    // expected-error @+1 {{records event 1, but '@f' declares 'tandem.num_events' = 1}}
    %b = tandem.elementwise copy %x {tandem.record_event = 1 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %b : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.wait_events' must be an array<i64> of event ids, got [0]}}
    %a = tandem.elementwise copy %x {tandem.wait_events = [0]} : tensor<8xbf16> -> tensor<8xbf16>
    return %a : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16>
      attributes {tandem.num_events = 2 : i64} {
    // expected-error @+1 {{waits for event 5, but '@f' declares 'tandem.num_events' = 2}}
    %a = tandem.elementwise copy %x {tandem.wait_events = array<i64: 0, 5>} : tensor<8xbf16> -> tensor<8xbf16>
    return %a : tensor<8xbf16>
  }
}

// -----

// The bound on events, which sizes the event tables of the plan export
// (issue 13: 9223372036854775807 events ran it out of memory).
module {
  // expected-error @+1 {{'tandem.num_events' must be in [0, 1048576], got 9223372036854775807}}
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16>
      attributes {tandem.num_events = 9223372036854775807 : i64} {
    return %x : tensor<8xbf16>
  }
}

// -----

module {
  // expected-error @+1 {{'tandem.num_streams' must be in [1, 64], got 0}}
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16>
      attributes {tandem.num_streams = 0 : i64} {
    return %x : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.num_streams' belongs on a function, not on 'tandem.elementwise'}}
    %y = tandem.elementwise copy %x {tandem.num_streams = 2 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

// expected-error @+1 {{'tandem.calibration' must be a non-empty string (the path of a calibration file), got ""}}
module attributes {tandem.calibration = ""} {
}

// -----

module {
  // expected-error @+1 {{'tandem.calibration' belongs on the module, not on 'func.func'}}
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16>
      attributes {tandem.calibration = "c.json"} {
    return %x : tensor<8xbf16>
  }
}

// -----

// A diagnosis's facts (docs/diagnosis.md, "Prevention").
module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.measured_scale' must be an f64 in [1e-06, 1e+06] (measured over modelled time), got 0.000000e+00 : f64}}
    %y = tandem.elementwise copy %x {tandem.measured_scale = 0.0 : f64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.measured_scale' must be an f64 in [1e-06, 1e+06] (measured over modelled time), got 2 : i64}}
    %y = tandem.elementwise copy %x {tandem.measured_scale = 2 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.measured_scale' must be an f64 in [1e-06, 1e+06] (measured over modelled time), got 1.000000e+07 : f64}}
    %y = tandem.elementwise copy %x {tandem.measured_scale = 1.0e7 : f64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.avoid_overlap' must hold non-negative pair ids, got -1}}
    %y = tandem.elementwise copy %x {tandem.avoid_overlap = array<i64: 0, -1>} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.avoid_overlap' must be an array<i64> of pair ids, got [0]}}
    %y = tandem.elementwise copy %x {tandem.avoid_overlap = [0]} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module {
  func.func @f(%x: !tandem.future<tensor<8xbf16>>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.measured_scale' belongs on a compute op or a collective, not on 'tandem.wait'}}
    %y = tandem.wait %x {tandem.measured_scale = 2.0 : f64} : !tandem.future<tensor<8xbf16>>
    return %y : tensor<8xbf16>
  }
}

// -----

// tandem.copy_engine: all-gathers, reduce-scatters and permutes only.
module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<256x1024xbf16> {
    // expected-error @+1 {{'tandem.copy_engine' belongs on an all-gather, a reduce-scatter or a permute, not on 'tandem.all_reduce'}}
    %a = tandem.all_reduce %x on @tp {tandem.copy_engine} : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    return %a : tensor<256x1024xbf16>
  }
}

// -----

module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    // expected-error @+1 {{'tandem.copy_engine' must be a unit attribute, got true}}
    %a = tandem.all_gather %x on @tp dim 0 {tandem.copy_engine = true} : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    return %a : tensor<2048x1024xbf16>
  }
}

// -----

module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<2048x1024xbf16>) -> tensor<256x1024xbf16> {
    // expected-error @+1 {{'tandem.copy_engine' and 'tandem.comm_sms' exclude each other: a collective on the copy engines holds no SMs}}
    %a = tandem.reduce_scatter %x on @tp dim 0 {tandem.copy_engine, tandem.comm_sms = 16 : i64} : tensor<2048x1024xbf16> -> tensor<256x1024xbf16>
    return %a : tensor<256x1024xbf16>
  }
}
