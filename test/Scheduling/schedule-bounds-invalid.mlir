// Counts that size the tables the schedule passes build are refused by the
// dialect before any pass runs, with the bound named: a stream id of 2^31 - 1
// hung the simulator and the schedule verifier (stream tables and vector
// clocks of streams x streams), and 2^63 - 1 events ran --tandem-export-plan
// out of memory (issue 13 rows 3 and 5).
// RUN: tandem-opt %s -split-input-file -verify-diagnostics --tandem-simulate -o /dev/null
// RUN: tandem-opt %s -split-input-file -verify-diagnostics --tandem-verify-schedule -o /dev/null
// RUN: tandem-opt %s -split-input-file -verify-diagnostics --tandem-export-plan=file=%t.plan.json -o /dev/null
// RUN: not test -e %t.plan.json

module attributes {tandem.target = #tandem.target<"h200">} {
  // expected-error @+1 {{'tandem.num_events' must be in [0, 1048576], got 9223372036854775807}}
  func.func @events(%x: tensor<8xbf16>) -> tensor<8xbf16>
      attributes {tandem.num_streams = 1 : i64, tandem.num_events = 9223372036854775807 : i64} {
    %y = tandem.elementwise copy %x {tandem.stream = 0 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @stream(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.stream' must be in [0, 64), got 2147483647}}
    %y = tandem.elementwise copy %x {tandem.stream = 2147483647 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  // expected-error @+1 {{'tandem.num_streams' must be in [1, 64], got 2147483647}}
  func.func @num_streams(%x: tensor<8xbf16>) -> tensor<8xbf16>
      attributes {tandem.num_streams = 2147483647 : i64} {
    return %x : tensor<8xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @record(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    // expected-error @+1 {{'tandem.record_event' must hold event ids in [0, 1048576), got 9223372036854775806}}
    %y = tandem.elementwise copy %x {tandem.stream = 0 : i64, tandem.record_event = 9223372036854775806 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}
