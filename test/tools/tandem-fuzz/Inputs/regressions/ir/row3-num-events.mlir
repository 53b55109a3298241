// Issue 13 row 3: 2^63 - 1 events ran --tandem-export-plan out of memory.
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @f(%x: tensor<8xbf16>) -> tensor<8xbf16>
      attributes {tandem.num_streams = 1 : i64, tandem.num_events = 9223372036854775807 : i64} {
    %y = tandem.elementwise copy %x {tandem.stream = 0 : i64, tandem.record_event = 0 : i64} : tensor<8xbf16> -> tensor<8xbf16>
    return %y : tensor<8xbf16>
  }
}
