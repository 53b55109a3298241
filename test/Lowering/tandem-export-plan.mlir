// RUN: tandem-opt %s --tandem-export-plan="file=%t.ref.json" -o /dev/null \
// RUN:   --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=REMARK-REF
// RUN: FileCheck %s --check-prefix=REF < %t.ref.json
// RUN: FileCheck %s --check-prefix=ALONE < %t.ref.json
// RUN: tandem-opt %s --tandem-overlap="strategy=bulk" \
// RUN:   --tandem-export-plan="file=%t.bulk.json" -o /dev/null \
// RUN:   --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=REMARK-BULK
// RUN: FileCheck %s --check-prefix=BULK < %t.bulk.json
// RUN: tandem-opt %s --tandem-pipeline-collective-matmul="method=p2p" \
// RUN:   --tandem-export-plan="file=%t.pipe.json simulate=false" -o /dev/null \
// RUN:   --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=REMARK-PIPE
// RUN: FileCheck %s --check-prefix=PIPE < %t.pipe.json
// RUN: tandem-opt %s --tandem-pipeline-collective-matmul="method=chunked chunks=2" \
// RUN:   --tandem-export-plan="file=%t.chunk.json simulate=false" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=CHUNK < %t.chunk.json
// RUN: tandem-opt %s --tandem-pipeline-collective-matmul="method=chunked chunks=2" \
// RUN:   --tandem-async-collectives --tandem-bulk-overlap --tandem-assign-streams \
// RUN:   --tandem-export-plan="file=%t.chunk-async.json simulate=false" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=CHUNK-ASYNC < %t.chunk-async.json

// One TP layer: all-gather -> fc1 -> gelu -> fc2 -> reduce-scatter, plus an
// independent wgrad. The unscheduled function lowers to one stream with
// blocking collectives; scheduled ones keep their streams and events.

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(4) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
  func.func @layer(%x: tensor<512x1024xbf16>, %w1: tensor<1024x4096xbf16>,
                   %w2: tensor<4096x1024xbf16>, %a: tensor<2048x1024xbf16>,
                   %g: tensor<2048x4096xbf16>)
      -> (tensor<512x1024xbf16>, tensor<1024x4096xbf16>) {
    %ag = tandem.all_gather %x on @tp dim 0 : tensor<512x1024xbf16> -> tensor<2048x1024xbf16>
    %y = tandem.matmul fprop %ag, %w1 {layer = "l0.fc1"} : tensor<2048x1024xbf16>, tensor<1024x4096xbf16> -> tensor<2048x4096xbf16>
    %h = tandem.elementwise gelu %y : tensor<2048x4096xbf16> -> tensor<2048x4096xbf16>
    %z = tandem.matmul fprop %h, %w2 {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x1024xbf16> -> tensor<2048x1024xbf16>
    %rs = tandem.reduce_scatter %z on @tp dim 0 : tensor<2048x1024xbf16> -> tensor<512x1024xbf16>
    %dw = tandem.matmul wgrad %a, %g transpose_lhs {layer = "l0.fc1"} : tensor<2048x1024xbf16>, tensor<2048x4096xbf16> -> tensor<1024x4096xbf16>
    return %rs, %dw : tensor<512x1024xbf16>, tensor<1024x4096xbf16>
  }
}

// REMARK-REF: remark: plan: 6 steps on 1 stream(s), 0 event(s), 11 buffers (6 in the arena)

// REF:      "arena_bytes": [[ARENA:[0-9]+]]
// REF:      "buffers": [
// REF:        "name": "arg0",
// REF-NEXT:   "role": "input",
// REF-NEXT:   "shape": [
// REF-NEXT:    512,
// REF-NEXT:    1024
// GEMM weights are initialised at 1/sqrt(K): K = 1024 for %w1.
// REF:        "init_scale": 0.03125,
// REF-NEXT:   "name": "arg1",
// REF:        "format": "tandem-plan",
// REF-NEXT:  "format_version": 1,
// REF-NEXT:  "function": "layer",
// REF:        "inputs": [
// REF-NEXT:    0,
// REF-NEXT:    1,
// REF-NEXT:    2,
// REF-NEXT:    3,
// REF-NEXT:    4
// REF-NEXT:   ],
// REF:        "outputs": [
// REF-NEXT:    9,
// REF-NEXT:    10
// REF:        "prediction": {
// REF:         "span_us":
// REF-NEXT:    "target": "h200"
// REF:        "steps": [
// REF:         "collective": "all_gather",
// REF:         "group": 0,
// REF:         "kind": "collective",
// REF:         "op": "tandem.all_gather",
// REF:         "stream": 0
// REF:         "kind": "matmul",
// REF-NEXT:    "label": "l0.fc1",
// REF-NEXT:    "loc": "loc(\"{{.*}}tandem-export-plan.mlir\":[[@LINE-45]]:10)",
// REF:         "role": "fprop",
// REF-NEXT:    "sm_target": 0,
// REF-NEXT:    "stream": 0,
// REF-NEXT:    "transpose_lhs": false,
// REF-NEXT:    "transpose_rhs": false
// REF:         "elementwise": "gelu",
// REF:         "collective": "reduce_scatter",
// REF:         "reduce": "sum",
// REF:         "transpose_lhs": true,
// REF:        "streams": [
// REF-NEXT:    {
// REF-NEXT:     "name": "compute",
// REF-NEXT:     "priority": 0
// REF-NEXT:    }
// REF-NEXT:   ]

// Bulk overlap: collectives become _start steps on the communication
// stream (higher priority), each wait a sync step on the compute stream.
// REMARK-BULK: remark: plan: 8 steps on 2 stream(s), {{[1-9][0-9]*}} event(s)
// BULK:       "kind": "collective",
// BULK:       "op": "tandem.all_gather_start",
// BULK:       "stream": 1
// BULK:       "kind": "sync",
// BULK:       "op": "tandem.wait",
// BULK:       "stream": 0,
// BULK-NEXT:  "wait_events": [
// BULK:       "name": "comm @tp",
// BULK-NEXT:  "priority": -1

// P2P pipelining turns the gather into ring steps: permutes, and a
// ring_concat copy step that places each rank's block.
// REMARK-PIPE: remark: plan:
// PIPE-NOT:   "prediction"
// PIPE:       "collective": "permute",
// PIPE:       "shift": 1,
// PIPE:       "kind": "ring_concat",

// Chunked pipelines: contiguous dim-0 chunks are views; the interleaved
// concat after the gather and the interleaved slices feeding the
// reduce-scatter are copies.
// CHUNK:      "role": "view",
// CHUNK:      "interleave": 4,
// CHUNK-NEXT: "kind": "concat",
// CHUNK:      "interleave": 4,
// CHUNK-NEXT: "kind": "slice",

// A view slice that records an event for the collective reading it stays
// as a sync step (no inputs, no launch) that records the event.
// CHUNK-ASYNC:      "inputs": [],
// CHUNK-ASYNC-NEXT: "kind": "sync",
// CHUNK-ASYNC:      "op": "tandem.slice",
// CHUNK-ASYNC-NEXT: "outputs": [],
// CHUNK-ASYNC-NEXT: "record_event": 0,

// Every simulated step carries its time alone beside its time in the
// schedule (the emulated fabric paces collectives to it); serially they are
// equal.
// ALONE:      "collective": "all_gather",
// ALONE:      "predicted": {
// ALONE-NEXT:   "alone_us": [[ALONE:[0-9.]+]],
// ALONE-NEXT:   "duration_us": [[ALONE]],
