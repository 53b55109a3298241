//===- Passes.td - Tandem passes ----------------------------*- tablegen -*-===//

#ifndef TANDEM_TRANSFORMS_PASSES_TD
#define TANDEM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TandemSimulate : Pass<"tandem-simulate", "::mlir::ModuleOp"> {
  let summary = "Simulate each function's schedule on the target and report";
  let description = [{
    Runs the discrete-event schedule simulator on every function with a body
    and reports, per function: the span, total compute and communication
    time (each op alone), the bound max(compute, communication), the critical
    path, exposed communication (time the compute stream waits on
    communication), the overlap efficiency (share of communication hidden)
    and peak memory.

    Contract:
    * The module carries `tandem.target` or the `target` option names a
      preset; an unknown preset, a missing target or a bad calibration file is
      an error.
    * Every op in a simulated function is a tandem compute op, a collective, a
      wait or `func.return`; anything else is an error at that op (no op is
      silently treated as free). Functions have a single block.
    * The IR is not changed.

    Streams, SM targets and CTA budgets are read from `tandem.stream`,
    `tandem.sm_target` and `tandem.comm_sms` where present (see
    docs/simulator.md for the defaults).
  }];
  let options = [
    Option<"reportPath", "report", "std::string", "\"\"",
           "Write the JSON report to this file ('-' for stdout)">,
    Option<"tracePath", "trace", "std::string", "\"\"",
           "Write a Chrome trace-event JSON (Perfetto) to this file">,
    Option<"summary", "summary", "bool", "false",
           "Print a human-readable summary to stderr">,
    Option<"targetPreset", "target", "std::string", "\"\"",
           "Use this target preset instead of the module's tandem.target">,
    Option<"calibrationPath", "calibration", "std::string", "\"\"",
           "Load the contention table from this calibration file">
  ];
  let statistics = [
    Statistic<"numFunctions", "functions", "Functions simulated">,
    Statistic<"numOpsSimulated", "ops", "Ops simulated">
  ];
  let dependentDialects = ["::mlir::tandem::TandemDialect"];
}

def TandemTestCostModel : Pass<"tandem-test-cost-model", "::mlir::ModuleOp"> {
  let summary = "Test pass: report the cost model's estimate for every op";
  let description = [{
    Emits a remark on every compute op and collective with the cost model's
    uncontended estimate (time, waves and SMs for GEMMs; algorithm, steps and
    bandwidth for collectives). For testing the cost model through FileCheck
    and -verify-diagnostics.
  }];
  let options = [
    Option<"smCount", "sms", "int64_t", "0",
           "SMs to give every compute op (0 = all)">,
    Option<"ctas", "ctas", "int64_t", "0",
           "CTA budget of every collective (0 = the target's default)">
  ];
}

def TandemTestLiveness : Pass<"tandem-test-liveness", "::mlir::ModuleOp"> {
  let summary = "Test pass: report peak memory and the critical path";
  let description = [{
    Emits a remark on every function with its program-order peak memory (and
    the op where it is reached) and a remark with the critical path length
    under the cost model.
  }];
}

//===----------------------------------------------------------------------===//
// Overlap passes
//===----------------------------------------------------------------------===//

def TandemAsyncCollectives
    : Pass<"tandem-async-collectives", "::mlir::ModuleOp"> {
  let summary = "Turn blocking collectives into start/wait pairs";
  let description = [{
    Replaces every blocking collective with its `_start` form followed at
    once by a `tandem.wait`, so that later passes can move compute between
    the two. Stamps every collective with `tandem.seq`, its index in its
    group's issue order, which tandem-verify-schedule checks later.

    Contract: the schedule and every value are unchanged (the wait follows
    its start immediately); collectives that are already asynchronous are
    only stamped.
  }];
  let statistics = [
    Statistic<"numConverted", "converted", "Blocking collectives converted">
  ];
}

def TandemBulkOverlap : Pass<"tandem-bulk-overlap", "::mlir::ModuleOp"> {
  let summary = "Issue collectives early and wait late around independent compute";
  let description = [{
    For every `_start` collective, moves the start up to just after the last
    op it depends on and its wait down to just before the first op that uses
    the result, so that independent compute (e.g. the wgrad of a
    column-parallel layer under the preceding reduce-scatter) runs under the
    collective on another stream.

    Limits: a start never passes a collective of the same group (every rank
    issues a group's collectives in one order); at most `max-in-flight`
    collectives of one group are in flight at any point; with
    `memory-budget`, a move that would raise the program-order peak memory
    above the budget is undone (if the input already exceeds the budget, no
    move may raise the peak). Emits a remark per collective saying how far
    its start and wait moved, or why they stayed.
  }];
  let options = [
    Option<"maxInFlight", "max-in-flight", "int64_t", "2",
           "Collectives of one group in flight at once">,
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "Peak-memory limit in bytes (0 = none)">
  ];
  let statistics = [
    Statistic<"numHoisted", "hoisted", "Starts moved earlier">,
    Statistic<"numSunk", "sunk", "Waits moved later">,
    Statistic<"numBudgetBlocked", "budget-blocked",
              "Moves undone for the memory budget">
  ];
}

def TandemRescheduleWgrad
    : Pass<"tandem-reschedule-wgrad", "::mlir::ModuleOp"> {
  let summary = "Delay wgrad GEMMs into later collectives' windows (AG-WGRAD)";
  let description = [{
    Finds `wgrad` matmuls whose results reach nothing but function results,
    gradient accumulation (`tandem.elementwise add`) and gradient
    collectives, and moves each, with its accumulation chain, into the
    window (between `_start` and wait) of a later collective - all-gathers
    first, then other collectives - choosing windows with the cost model so
    that each window's compute fills, but does not exceed, its
    communication time under contention. Collectives are never split or
    replaced.

    `memory-budget` is a hard limit: peak memory (program-order liveness)
    after the pass never exceeds it; if the input already exceeds it, the
    pass makes it no worse and says so. Every wgrad gets a remark: where it
    moved and the window's fill, or why it stayed (no later window, window
    full, budget, dependences).

    Expects async collectives with their windows opened (run
    tandem-async-collectives and tandem-bulk-overlap first).
  }];
  let options = [
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "Peak-memory limit in bytes (0 = none)">,
    Option<"fillLimit", "fill-limit", "double", "1.0",
           "Fill windows up to this fraction of their collective's time">
  ];
  let statistics = [
    Statistic<"numMoved", "moved", "wgrad GEMMs moved into a window">,
    Statistic<"numKept", "kept", "wgrad GEMMs left in place">
  ];
}

def TandemOverlap : Pass<"tandem-overlap", "::mlir::ModuleOp"> {
  let summary = "Overlap communication with computation (named pipeline)";
  let description = [{
    Runs the overlap phases on every function, as chosen by `strategy`:

    * `none`: the input as it is (the serial baseline);
    * `bulk`: tandem-async-collectives, then tandem-bulk-overlap;
    * `reschedule`: `bulk`, then tandem-reschedule-wgrad (AG-WGRAD);
    * `auto`: simulates `none`, `bulk` and `reschedule` on copies of each
      function and keeps the one with the shortest predicted span, so the
      result is never predicted slower than the input; a remark lists the
      predicted span of every candidate. Inside the chosen strategy, each
      collective and each wgrad is decided by the cost model.
    * `pipeline` and `te-preset` need chunked AG->GEMM / GEMM->RS
      pipelines (tandem-pipeline-collective-matmul), which Tandem does not
      implement yet: asking for them is an error, never a silent fallback.

    `memory-budget` is passed to every phase as a hard limit on the
    program-order peak memory. With `remarks`, every phase explains each
    decision; without, only the strategy choice of `auto` is reported.
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", "\"auto\"",
           "auto|none|bulk|reschedule|pipeline|te-preset">,
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "Peak-memory limit in bytes (0 = none)">,
    Option<"maxInFlight", "max-in-flight", "int64_t", "2",
           "Collectives of one group in flight at once">,
    Option<"remarks", "remarks", "bool", "false",
           "Explain every decision of every phase as a remark">
  ];
  let statistics = [
    Statistic<"numFunctions", "functions", "Functions scheduled">
  ];
}

#endif // TANDEM_TRANSFORMS_PASSES_TD
