// RUN: tandem-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect --tandem-verify-schedule=remarks=false -o /dev/null

// (a) A start on the communication stream reads a value of the compute
// stream, and no event orders the two.
module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    // expected-note @+1 {{produced here: it needs 'tandem.record_event' and the user 'tandem.wait_events' (tandem-assign-streams adds both)}}
    %c = tandem.elementwise copy %x {tandem.stream = 0 : i64} : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    // expected-error @+1 {{'tandem.all_gather_start' on stream 1 uses operand #0, produced on stream 0, with no event ordering them}}
    %f = tandem.all_gather_start %c on @tp dim 0 {tandem.stream = 1 : i64} : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g = tandem.wait %f {tandem.stream = 0 : i64} : !tandem.future<tensor<2048x1024xbf16>>
    return %g : tensor<2048x1024xbf16>
  }
}

// -----

// (a) An event that does not cover the use: event 0 is recorded after %a,
// before %b.
module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    %a = tandem.elementwise copy %x {tandem.record_event = 0 : i64, tandem.stream = 0 : i64} : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    // expected-note @+1 {{produced here}}
    %b = tandem.elementwise copy %a {tandem.stream = 0 : i64} : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    // expected-error @+1 {{'tandem.all_gather_start' on stream 1 uses operand #0, produced on stream 0, with no event ordering them}}
    %f = tandem.all_gather_start %b on @tp dim 0 {tandem.stream = 1 : i64, tandem.wait_events = array<i64: 0>} : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g = tandem.wait %f {tandem.stream = 0 : i64} : !tandem.future<tensor<2048x1024xbf16>>
    return %g : tensor<2048x1024xbf16>
  }
}

// -----

// (a)/(b) The wait synchronises only its own stream: a GEMM placed on
// another stream reads the gathered tensor without an event.
module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>, %w: tensor<1024x512xbf16>) -> tensor<2048x512xbf16> {
    %f = tandem.all_gather_start %x on @tp dim 0 {tandem.stream = 1 : i64} : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    // expected-note @+1 {{produced here}}
    %g = tandem.wait %f {tandem.stream = 0 : i64} : !tandem.future<tensor<2048x1024xbf16>>
    // expected-error @+1 {{'tandem.matmul' on stream 2 uses the result of a tandem.wait on stream 0 with no event ordering them: the wait synchronises only stream 0}}
    %y = tandem.matmul fprop %g, %w {tandem.stream = 2 : i64} : tensor<2048x1024xbf16>, tensor<1024x512xbf16> -> tensor<2048x512xbf16>
    return %y : tensor<2048x512xbf16>
  }
}

// -----

// (b) An event waited for before any op records it (CUDA would not wait).
module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    // expected-error @+1 {{waits for event 0, which no earlier op records}}
    %f = tandem.all_gather_start %x on @tp dim 0 {tandem.stream = 1 : i64, tandem.wait_events = array<i64: 0>} : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    // expected-note @+1 {{event 0 is recorded only here, later}}
    %c = tandem.elementwise copy %x {tandem.record_event = 0 : i64, tandem.stream = 0 : i64} : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    %g = tandem.wait %f {tandem.stream = 0 : i64} : !tandem.future<tensor<2048x1024xbf16>>
    return %g : tensor<2048x1024xbf16>
  }
}

// -----

// (b) One event recorded by two ops.
module {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-note @+1 {{event 3 is recorded here first}}
    %a = tandem.elementwise copy %x {tandem.record_event = 3 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    // expected-error @+1 {{records event 3, which another op records already}}
    %b = tandem.elementwise copy %a {tandem.record_event = 3 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %b : tensor<8xbf16>
  }
}

// -----

// (c) tandem.seq out of the original order.
module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>, %y: tensor<256x1024xbf16>) -> (tensor<2048x1024xbf16>, tensor<2048x1024xbf16>) {
    // expected-note @+1 {{seq 3 is issued here}}
    %f3 = tandem.all_gather_start %x on @tp dim 0 {tandem.seq = 3 : i64} : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    // expected-error @+1 {{collectives on @tp are issued out of their original order: seq 3 before seq 2}}
    %f2 = tandem.all_gather_start %y on @tp dim 0 {tandem.seq = 2 : i64} : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g3 = tandem.wait %f3 : !tandem.future<tensor<2048x1024xbf16>>
    %g2 = tandem.wait %f2 : !tandem.future<tensor<2048x1024xbf16>>
    return %g3, %g2 : tensor<2048x1024xbf16>, tensor<2048x1024xbf16>
  }
}

// -----

// (c) The same seq twice; other groups are independent (@dp's seq 0 is
// fine).
module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  tandem.group @dp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> (tensor<2048x1024xbf16>, tensor<256x1024xbf16>, tensor<2048x1024xbf16>) {
    // expected-note @+1 {{seq 0 is issued here}}
    %a = tandem.all_gather %x on @tp dim 0 {tandem.seq = 0 : i64} : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    %b = tandem.all_reduce %x on @dp {tandem.seq = 0 : i64} : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    // expected-error @+1 {{two collectives on @tp carry seq 0}}
    %c = tandem.all_gather %x on @tp dim 0 {tandem.seq = 0 : i64} : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    return %a, %b, %c : tensor<2048x1024xbf16>, tensor<256x1024xbf16>, tensor<2048x1024xbf16>
  }
}

// -----

// (c) Two collectives of one group on two streams with nothing ordering
// them: they may run concurrently or in either order.
module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>, %y: tensor<256x1024xbf16>) -> (tensor<2048x1024xbf16>, tensor<2048x1024xbf16>) {
    // expected-note @+1 {{the previous collective on @tp}}
    %f1 = tandem.all_gather_start %x on @tp dim 0 {tandem.stream = 1 : i64} : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    // expected-error @+1 {{collectives on @tp may run out of their issue order: this one, on stream 2, is not ordered after the previous one, on stream 1}}
    %f2 = tandem.all_gather_start %y on @tp dim 0 {tandem.stream = 2 : i64} : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g1 = tandem.wait %f1 {tandem.stream = 0 : i64} : !tandem.future<tensor<2048x1024xbf16>>
    %g2 = tandem.wait %f2 {tandem.stream = 0 : i64} : !tandem.future<tensor<2048x1024xbf16>>
    return %g1, %g2 : tensor<2048x1024xbf16>, tensor<2048x1024xbf16>
  }
}

// -----

// (c) The same on the simulator's default streams: a blocking all-reduce
// on stream 0 and an independent start on @tp's stream 1.
module {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>, %g: tensor<1024x1024xbf16>) -> (tensor<1024x1024xbf16>, tensor<2048x1024xbf16>) {
    // expected-note @+1 {{the previous collective on @tp}}
    %r = tandem.all_reduce %g on @tp : tensor<1024x1024xbf16> -> tensor<1024x1024xbf16>
    // expected-error @+1 {{collectives on @tp may run out of their issue order: this one, on stream 1, is not ordered after the previous one, on stream 0}}
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %t = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    return %r, %t : tensor<1024x1024xbf16>, tensor<2048x1024xbf16>
  }
}

// -----

module {
  func.func @f() -> tensor<8xbf16> {
    // expected-error @+1 {{'test.make' has no stream: only tandem compute ops, collectives and waits run on streams}}
    %x = "test.make"() : () -> tensor<8xbf16>
    return %x : tensor<8xbf16>
  }
}

// -----

module {
  // expected-error @+1 {{streams need a single-block function; '@f' has 2 blocks}}
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    "test.br"()[^bb1] : () -> ()
  ^bb1:
    return %x : tensor<8xbf16>
  }
}
