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

#endif // TANDEM_TRANSFORMS_PASSES_TD
