// RUN: tandem-opt %s --tandem-simulate="report=%t.json trace=%t.trace.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// RUN: FileCheck %s --check-prefix=TRACE < %t.trace.json
// RUN: tandem-opt %s --tandem-simulate="summary=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: tandem-opt %s --tandem-simulate | FileCheck %s --check-prefix=IR

// h200 preset: a 4 MiB ring all-gather on 8 GPUs behind a switch takes
// 4 (launch) + 7 * 2 (latency) + 7/8 * 4 MiB / (18 links * 25 GB/s * 0.8)
// = 28.194 us; so does the reduce-scatter of the same buffer.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

  // Blocking collectives on the compute stream: all communication exposed.
  func.func @serial(%x: tensor<256x1024xbf16>) -> tensor<256x1024xbf16> {
    %g = tandem.all_gather %x on @tp dim 0 : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    %r = tandem.reduce_scatter %g on @tp dim 0 : tensor<2048x1024xbf16> -> tensor<256x1024xbf16>
    return %r : tensor<256x1024xbf16>
  }

  // An independent copy (1 MiB: 4 + 0.243 us) runs under the all-gather.
  // Both are slowed x1.13 while they overlap: the copy ends at 4.794 us,
  // the all-gather at 4.794 + (1 - 4.794 / (28.194 * 1.13)) * 28.194
  // = 28.745 us; the wait exposes 28.745 - 4.794 = 23.951 us.
  func.func @overlap(%x: tensor<256x1024xbf16>) -> (tensor<2048x1024xbf16>, tensor<256x1024xbf16>) {
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %c = tandem.elementwise copy %x : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    return %g, %c : tensor<2048x1024xbf16>, tensor<256x1024xbf16>
  }
}

// The top level repeats the first function's metrics.
// REPORT:      "bound_us": 56.38{{[0-9]*}},
// REPORT:      "comm_us": 56.38{{[0-9]*}},
// REPORT:      "compute_us": 0,
// REPORT:      "exposed_comm_us": 56.38{{[0-9]*}},
// REPORT:      "function": "serial",
// REPORT:      "functions": [
// REPORT:          "function": "serial",
// REPORT-NEXT:     "overlap_efficiency": 0,
// REPORT-NEXT:     "peak_memory_bytes": 5242880,
// REPORT-NEXT:     "span_over_bound": 1,
// REPORT-NEXT:     "span_us": 56.38{{[0-9]*}},
// REPORT:          "comm_us": 28.19{{[0-9]*}},
// REPORT-NEXT:     "compute_ops": 1,
// REPORT-NEXT:     "compute_us": 4.24{{[0-9]*}},
// REPORT-NEXT:     "critical_path_us": 28.19{{[0-9]*}},
// REPORT-NEXT:     "exposed_comm_us": 23.95{{[0-9]*}},
// REPORT-NEXT:     "function": "overlap",
// REPORT-NEXT:     "overlap_efficiency": 0.150{{[0-9]*}},
// REPORT:          "span_us": 28.74{{[0-9]*}},
// REPORT:      "target": "h200",
// REPORT-NEXT: "version": 1

// TRACE-DAG: {"args":{"name":"simulated @serial"},"name":"process_name","ph":"M","pid":0}
// TRACE-DAG: {"args":{"name":"comm @tp"},"name":"thread_name","ph":"M","pid":1,"tid":1}
// TRACE-DAG: "cat":"collective","dur":28.74{{[0-9]*}},"name":"tandem.all_gather_start#1","ph":"X","pid":1,"tid":1,"ts":0}
// TRACE-DAG: "cat":"memory","dur":4.79{{[0-9]*}},"name":"tandem.elementwise#2","ph":"X","pid":1,"tid":0,"ts":0}

// SUMMARY:      @serial: 0 compute ops, 2 collectives, 1 stream(s)
// SUMMARY-NEXT:   span                     0.056 ms
// SUMMARY:        exposed comm             0.056 ms   hidden 0.0%
// SUMMARY:      @overlap: 1 compute ops, 1 collectives, 2 stream(s)
// SUMMARY:        exposed comm             0.024 ms   hidden 15.0%

// The pass does not change the IR.
// IR-LABEL: func.func @serial
// IR-NEXT:    tandem.all_gather
// IR-NEXT:    tandem.reduce_scatter
