// Prevention (docs/diagnosis.md): --tandem-overlap=diagnosis= takes a
// tandem-diagnose --json report of a measured run. Inputs/diagnosis/ holds
// synthetic reports of a run of this step's bulk plan, naming its ops as
// tandem-run's trace does (`tandem.matmul l0.fc2` #1 is the wgrad,
// `tandem.reduce_scatter_start` #0 the collective).
//
// Without a diagnosis, bulk overlap hides the wgrad under the reduce-scatter.
// RUN: tandem-opt %s --tandem-overlap=strategy=bulk | FileCheck %s --check-prefix=PLAIN
// PLAIN-LABEL: func.func @step
// PLAIN:      tandem.reduce_scatter_start
// PLAIN-NEXT: tandem.matmul wgrad
// PLAIN-NEXT: tandem.wait %
//
// harmful.json: that overlap was measured slower than running the two one
// after the other. The re-plan keeps them apart (the wait moves above the
// wgrad) and the remarks name both.
// RUN: tandem-opt %s --mlir-print-op-on-diagnostic=false --tandem-overlap="strategy=bulk remarks=true diagnosis=%S/Inputs/diagnosis/harmful.json" 2>&1 | FileCheck %s --check-prefix=HARMFUL
// HARMFUL: remark: diagnosis: overlap with 'tandem.matmul l0.fc2' (#2) was harmful (40.0 us lost, anomaly #0); the two are not to run concurrently
// HARMFUL: remark: harmful overlap #0 with 'tandem.matmul l0.fc2' avoided: wait moved above it (the diagnosis measured the pair slower together than serially); 0 compute op(s) stay in the window
// HARMFUL-LABEL: func.func @step
// HARMFUL:      tandem.reduce_scatter_start {{.*}}tandem.avoid_overlap = array<i64: 0>
// HARMFUL-NEXT: tandem.wait %
// HARMFUL-NEXT: tandem.matmul wgrad {{.*}}tandem.avoid_overlap = array<i64: 0>
//
// `auto` sees every candidate separated: none of them hides anything, so it
// keeps the serial input (ties go to the simpler strategy).
// RUN: tandem-opt %s --mlir-print-op-on-diagnostic=false --tandem-overlap="diagnosis=%S/Inputs/diagnosis/harmful.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO
// AUTO: remark: strategy none chosen; predicted spans: none [[SPAN:[0-9.]+]] us bulk [[SPAN]] us reschedule [[SPAN]] us
//
// measured.json: a lost overlap whose collective ran 300 us. Its measured
// duration replaces the model's (x5.104 on the collective), for deciding
// and for evaluating alike: the simulation of the plain bulk schedule with
// the diagnosis, and of the re-plan (which carries the scale), agree.
// RUN: tandem-opt %s --tandem-overlap=strategy=bulk --tandem-simulate="report=-" -o /dev/null | FileCheck %s --check-prefix=MODEL
// RUN: tandem-opt %s --tandem-overlap=strategy=bulk --tandem-simulate="report=- diagnosis=%S/Inputs/diagnosis/measured.json" -o /dev/null | FileCheck %s --check-prefix=MEASURED
// RUN: tandem-opt %s --mlir-print-op-on-diagnostic=false --tandem-overlap="strategy=bulk remarks=true diagnosis=%S/Inputs/diagnosis/measured.json" --tandem-simulate="report=-" 2>&1 | FileCheck %s --check-prefixes=MEASURED,REPLAN
// MODEL: "span_us": 211.08
// REPLAN: remark: diagnosis: measured 300.0 us (anomaly #0, lost overlap, slower_collective) replaces the predicted 58.8 us (x5.104)
// MEASURED: "span_us": 413.92
// REPLAN: tandem.reduce_scatter_start {{.*}}tandem.measured_scale = 5.10395
//
// extra.json: an extra kernel (in the report's extra_ops) delayed the
// collective; the kernel is not in the plan and is skipped, the
// collective's measured 70 us is taken.
// RUN: tandem-opt %s --mlir-print-op-on-diagnostic=false --tandem-overlap="strategy=bulk remarks=true diagnosis=%S/Inputs/diagnosis/extra.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXTRA
// EXTRA: remark: diagnosis: measured 70.0 us (anomaly #0, lost overlap, extra_kernel) replaces the predicted 58.8 us (x1.191)
// EXTRA-NOT: injected

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}
