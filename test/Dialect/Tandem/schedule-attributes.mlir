// RUN: tandem-opt %s | tandem-opt | FileCheck %s
//
// Every schedule attribute the dialect declares, in range, on the op it
// belongs on: accepted and printed back unchanged.

// CHECK: module attributes {tandem.calibration = "calibration.json", tandem.target = #tandem.target<"h200">}
module attributes {tandem.calibration = "calibration.json", tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  // CHECK-LABEL: func.func @f
  // CHECK-SAME: tandem.num_events = 1 : i64, tandem.num_streams = 2 : i64
  func.func @f(%a: tensor<256x1024xbf16>, %w: tensor<1024x1024xbf16>) -> tensor<256x1024xbf16>
      attributes {tandem.num_events = 1 : i64, tandem.num_streams = 2 : i64} {
    // CHECK: tandem.all_gather_start {{.*}} {tandem.comm_sms = 16 : i64, tandem.record_event = 0 : i64, tandem.seq = 0 : i64, tandem.stream = 1 : i64}
    %f = tandem.all_gather_start %a on @tp dim 0 {tandem.comm_sms = 16 : i64, tandem.record_event = 0 : i64, tandem.seq = 0 : i64, tandem.stream = 1 : i64} : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    // CHECK: tandem.matmul {{.*}} {tandem.sm_target = 116 : i64, tandem.stream = 0 : i64}
    %m = tandem.matmul fprop %a, %w {tandem.sm_target = 116 : i64, tandem.stream = 0 : i64} : tensor<256x1024xbf16>, tensor<1024x1024xbf16> -> tensor<256x1024xbf16>
    // CHECK: tandem.wait {{.*}} {tandem.wait_events = array<i64: 0>}
    %g = tandem.wait %f {tandem.wait_events = array<i64: 0>} : !tandem.future<tensor<2048x1024xbf16>>
    return %m : tensor<256x1024xbf16>
  }
}
