// RUN: tandem-opt %s -verify-diagnostics --tandem-assign-streams | FileCheck %s
// Idempotent: a second run keeps the manual and assigned streams and
// recomputes the same events.
// RUN: tandem-opt %s --tandem-assign-streams --tandem-assign-streams 2>/dev/null | FileCheck %s
// The output is what the schedule verifier accepts.
// RUN: tandem-opt %s --tandem-assign-streams -mlir-print-op-on-diagnostic=false 2>/dev/null \
// RUN:   | tandem-opt --tandem-verify-schedule -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=VERIFY --implicit-check-not=error
// The streams are the simulator's: the same count before and after.
// RUN: tandem-opt %s --tandem-simulate=report=- -o /dev/null | FileCheck %s --check-prefix=SIM
// RUN: tandem-opt %s --tandem-assign-streams 2>/dev/null | tandem-opt --tandem-simulate=report=- -o /dev/null | FileCheck %s --check-prefix=SIM

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  tandem.group @dp size(2) switch links(18 x 25.0 GBps, 2.0 us)

  // The start waits for the copy that produces its input; the wait waits for
  // the start (the collective's completion); the norm needs nothing.
  // CHECK-LABEL: func.func @overlap
  // CHECK-SAME:    attributes {tandem.num_events = 2 : i64, tandem.num_streams = 2 : i64}
  // CHECK:         %[[C:.*]] = tandem.elementwise copy %{{.*}} {tandem.record_event = 0 : i64, tandem.stream = 0 : i64}
  // CHECK:         %[[F:.*]] = tandem.all_gather_start %[[C]] on @tp dim 0 {tandem.record_event = 1 : i64, tandem.stream = 1 : i64, tandem.wait_events = array<i64: 0>}
  // CHECK:         tandem.norm layer %{{.*}} {tandem.stream = 0 : i64}
  // CHECK:         %[[G:.*]] = tandem.wait %[[F]] {tandem.stream = 0 : i64, tandem.wait_events = array<i64: 1>}
  // CHECK:         tandem.matmul fprop %[[G]], %{{.*}} {tandem.stream = 0 : i64}
  // CHECK:         return
  // expected-remark @+1 {{'@overlap': 2 stream(s) (0: compute, 1: comm @tp), 2 event(s)}}
  func.func @overlap(%x: tensor<256x1024xbf16>, %w: tensor<1024xbf16>, %b: tensor<1024x512xbf16>)
      -> (tensor<256x1024xbf16>, tensor<2048x512xbf16>) {
    %c = tandem.elementwise copy %x : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    %f = tandem.all_gather_start %c on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %n = tandem.norm layer %x, %w : tensor<256x1024xbf16>, tensor<1024xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    %y = tandem.matmul fprop %g, %b : tensor<2048x1024xbf16>, tensor<1024x512xbf16> -> tensor<2048x512xbf16>
    return %n, %y : tensor<256x1024xbf16>, tensor<2048x512xbf16>
  }

  // Blocking collectives run on the compute stream: one stream, no event.
  // CHECK-LABEL: func.func @blocking
  // CHECK-SAME:    attributes {tandem.num_events = 0 : i64, tandem.num_streams = 1 : i64}
  // CHECK:         tandem.all_gather %{{.*}} on @tp dim 0 {tandem.stream = 0 : i64}
  // CHECK-NOT:     tandem.record_event
  // CHECK:         return
  // expected-remark @+1 {{'@blocking': 1 stream(s) (0: compute), 0 event(s)}}
  func.func @blocking(%x: tensor<256x1024xbf16>) -> tensor<2048x1024xbf16> {
    // expected-remark @+1 {{blocking collective stays on the compute stream; run tandem-async-collectives to overlap it}}
    %g = tandem.all_gather %x on @tp dim 0 : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    return %g : tensor<2048x1024xbf16>
  }

  // Each group gets its own stream, numbered in order of first appearance:
  // @dp before @tp here. Starts that read function arguments need no event.
  // CHECK-LABEL: func.func @two_groups
  // CHECK-SAME:    attributes {tandem.num_events = 2 : i64, tandem.num_streams = 3 : i64}
  // CHECK:         %[[D:.*]] = tandem.all_reduce_start %{{.*}} on @dp {tandem.record_event = 0 : i64, tandem.stream = 1 : i64}
  // CHECK:         %[[T:.*]] = tandem.all_gather_start %{{.*}} on @tp dim 0 {tandem.record_event = 1 : i64, tandem.stream = 2 : i64}
  // CHECK:         tandem.wait %[[T]] {tandem.stream = 0 : i64, tandem.wait_events = array<i64: 1>}
  // CHECK:         tandem.wait %[[D]] {tandem.stream = 0 : i64, tandem.wait_events = array<i64: 0>}
  // expected-remark @+1 {{'@two_groups': 3 stream(s) (0: compute, 1: comm @dp, 2: comm @tp), 2 event(s)}}
  func.func @two_groups(%x: tensor<256x1024xbf16>, %g: tensor<1024x1024xbf16>)
      -> (tensor<2048x1024xbf16>, tensor<1024x1024xbf16>) {
    %fd = tandem.all_reduce_start %g on @dp : tensor<1024x1024xbf16> -> !tandem.future<tensor<1024x1024xbf16>>
    %ft = tandem.all_gather_start %x on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %t = tandem.wait %ft : !tandem.future<tensor<2048x1024xbf16>>
    %d = tandem.wait %fd : !tandem.future<tensor<1024x1024xbf16>>
    return %t, %d : tensor<2048x1024xbf16>, tensor<1024x1024xbf16>
  }

  // Waits are not repeated: the second start runs on stream 1 after the
  // first, which already waited for event 0 (recorded after %b, so %a is
  // covered too).
  // CHECK-LABEL: func.func @covered
  // CHECK-SAME:    attributes {tandem.num_events = 3 : i64, tandem.num_streams = 2 : i64}
  // CHECK:         %[[A:.*]] = tandem.elementwise copy %{{.*}} {tandem.stream = 0 : i64}
  // CHECK:         %[[B:.*]] = tandem.elementwise copy %[[A]] {tandem.record_event = 0 : i64, tandem.stream = 0 : i64}
  // CHECK:         tandem.all_gather_start %[[B]] on @tp dim 0 {tandem.record_event = 1 : i64, tandem.stream = 1 : i64, tandem.wait_events = array<i64: 0>}
  // CHECK:         tandem.all_gather_start %[[A]] on @tp dim 0 {tandem.record_event = 2 : i64, tandem.stream = 1 : i64}
  // CHECK:         tandem.wait %{{.*}} {tandem.stream = 0 : i64, tandem.wait_events = array<i64: 1>}
  // CHECK:         tandem.wait %{{.*}} {tandem.stream = 0 : i64, tandem.wait_events = array<i64: 2>}
  // expected-remark @+1 {{'@covered': 2 stream(s) (0: compute, 1: comm @tp), 3 event(s)}}
  func.func @covered(%x: tensor<256x1024xbf16>) -> (tensor<2048x1024xbf16>, tensor<2048x1024xbf16>) {
    %a = tandem.elementwise copy %x : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    %b = tandem.elementwise copy %a : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    %f1 = tandem.all_gather_start %b on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %f2 = tandem.all_gather_start %a on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g1 = tandem.wait %f1 : !tandem.future<tensor<2048x1024xbf16>>
    %g2 = tandem.wait %f2 : !tandem.future<tensor<2048x1024xbf16>>
    return %g1, %g2 : tensor<2048x1024xbf16>, tensor<2048x1024xbf16>
  }

  // A manual assignment is kept and shares the index space with the
  // defaults, as in the simulator: the copy asks for stream 2 (creating
  // "stream 1" and "stream 2"), so @tp's stream is 3. Events are computed
  // for the manual op too: it waits for nothing (it reads an argument) and
  // the start waits for it. The add on stream 0 reads the copy's result
  // without a wait of its own: the wait before it is ordered after the
  // start, which is ordered after the copy.
  // CHECK-LABEL: func.func @manual
  // CHECK-SAME:    attributes {tandem.num_events = 2 : i64, tandem.num_streams = 4 : i64}
  // CHECK:         %[[C:.*]] = tandem.elementwise copy %{{.*}} {tandem.record_event = 0 : i64, tandem.stream = 2 : i64}
  // CHECK:         %[[F:.*]] = tandem.all_gather_start %[[C]] on @tp dim 0 {tandem.record_event = 1 : i64, tandem.stream = 3 : i64, tandem.wait_events = array<i64: 0>}
  // CHECK:         %[[G:.*]] = tandem.wait %[[F]] {tandem.stream = 0 : i64, tandem.wait_events = array<i64: 1>}
  // CHECK:         tandem.elementwise add %[[C]], %{{.*}} {tandem.stream = 0 : i64}
  // expected-remark @+1 {{'@manual': 4 stream(s) (0: compute, 1: stream 1, 2: stream 2, 3: comm @tp), 2 event(s)}}
  func.func @manual(%x: tensor<256x1024xbf16>) -> tensor<256x1024xbf16> {
    %c = tandem.elementwise copy %x {tandem.stream = 2 : i64} : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    %f = tandem.all_gather_start %c on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    // expected-remark @+1 {{blocking collective stays on the compute stream; run tandem-async-collectives to overlap it}}
    %s = tandem.reduce_scatter %g on @tp dim 0 {tandem.stream = 0 : i64} : tensor<2048x1024xbf16> -> tensor<256x1024xbf16>
    %r = tandem.elementwise add %c, %s : tensor<256x1024xbf16>, tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    return %r : tensor<256x1024xbf16>
  }

  // Issue order: the start on @tp does not depend on the blocking
  // all-reduce on @tp, but must not overtake it, so it waits for it.
  // CHECK-LABEL: func.func @issue_order
  // CHECK-SAME:    attributes {tandem.num_events = 2 : i64, tandem.num_streams = 2 : i64}
  // CHECK:         tandem.all_reduce %{{.*}} on @tp {tandem.record_event = 0 : i64, tandem.stream = 0 : i64}
  // CHECK:         tandem.all_gather_start %{{.*}} on @tp dim 0 {tandem.record_event = 1 : i64, tandem.stream = 1 : i64, tandem.wait_events = array<i64: 0>}
  // expected-remark @+1 {{'@issue_order': 2 stream(s) (0: compute, 1: comm @tp), 2 event(s)}}
  func.func @issue_order(%x: tensor<256x1024xbf16>, %g: tensor<1024x1024xbf16>)
      -> (tensor<1024x1024xbf16>, tensor<2048x1024xbf16>) {
    // expected-remark @+1 {{blocking collective stays on the compute stream; run tandem-async-collectives to overlap it}}
    %r = tandem.all_reduce %g on @tp : tensor<1024x1024xbf16> -> tensor<1024x1024xbf16>
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %t = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    return %r, %t : tensor<1024x1024xbf16>, tensor<2048x1024xbf16>
  }

  // External functions are skipped.
  // CHECK-LABEL: func.func private @external
  // CHECK-NOT:     tandem.num_streams
  func.func private @external(tensor<8xbf16>) -> tensor<8xbf16>
}

// VERIFY: remark: schedule verified: 2 stream(s), 2 cross-stream use(s), 1 collective(s); values not compared (no reference)
// VERIFY: remark: schedule verified: 1 stream(s), 0 cross-stream use(s), 1 collective(s); values not compared (no reference)
// VERIFY: remark: schedule verified: 3 stream(s), 2 cross-stream use(s), 2 collective(s); values not compared (no reference)
// VERIFY: remark: schedule verified: 2 stream(s), 4 cross-stream use(s), 2 collective(s); values not compared (no reference)
// VERIFY: remark: schedule verified: 4 stream(s), 3 cross-stream use(s), 2 collective(s); values not compared (no reference)
// VERIFY: remark: schedule verified: 2 stream(s), 1 cross-stream use(s), 2 collective(s); values not compared (no reference)

// SIM:      "function": "overlap",
// SIM:      "streams": 2
// SIM:      "function": "blocking",
// SIM:      "streams": 1
// SIM:      "function": "two_groups",
// SIM:      "streams": 3
// SIM:      "function": "covered",
// SIM:      "streams": 2
// SIM:      "function": "manual",
// SIM:      "streams": 4
// SIM:      "function": "issue_order",
// SIM:      "streams": 2
