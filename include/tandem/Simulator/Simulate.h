//===- Simulate.h - Simulate a tandem function on its target -----*- C++
//-*-===//
//
// Front end of the schedule simulator: turns a function of the tandem
// dialect into a multi-stream problem (costs from the cost model), runs the
// engine, and reports span, compute and communication time, the bound
// max(compute, communication), exposed communication, overlap efficiency
// and peak memory. Writes the report as JSON and the schedule as a Chrome
// trace (one track per stream, one slice per op) that Perfetto opens.
//
// The problem comes from the schedule model (tandem/ScheduleModel), which
// gives streams by the StreamMap rule and honours a GEMM's
// `tandem.sm_target` and a collective's `tandem.comm_sms`.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SIMULATOR_SIMULATE_H
#define TANDEM_SIMULATOR_SIMULATE_H

#include "tandem/Analysis/CostModel.h"
#include "tandem/Analysis/Target.h"
#include "tandem/Engine/Engine.h"
#include "tandem/ScheduleModel/ScheduleModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace tandem {

struct SimulationReport {
  std::string function;
  double spanUs = 0;
  double computeUs = 0; ///< Sum of compute ops' uncontended times.
  double commUs = 0;    ///< Sum of collectives' uncontended times.
  double boundUs = 0;   ///< max(computeUs, commUs).
  double criticalPathUs = 0;
  /// Time the compute stream stood still waiting for communication.
  double exposedCommUs = 0;
  /// Share of communication time hidden: 1 - exposed / comm, in [0, 1].
  double overlapEfficiency = 1;
  int64_t peakMemoryBytes = 0;       ///< Over simulated time.
  int64_t staticPeakMemoryBytes = 0; ///< Program-order liveness.
  unsigned numComputeOps = 0, numCollectives = 0;
  /// The function as the engine saw it: tasks keyed by op.
  ScheduleModel model;
  sim::Result result;
  /// The timing of `op`'s task (null for the terminator and other ops).
  const sim::Timing *timingOf(Operation *op) const {
    std::optional<unsigned> task = model.taskOf(op);
    return task ? &result.timings[*task] : nullptr;
  }
};

/// Simulates `func`. Emits errors at the offending op (no cost model for an
/// op, unresolvable group, deadlock) and fails. With `spanOnly`, only the
/// timing metrics are computed (no peak memory, no critical path, and the
/// problem's tasks carry no names): what a scheduler comparing candidates
/// needs.
FailureOr<SimulationReport> simulateFunction(func::FuncOp func,
                                             const CostModel &model,
                                             bool spanOnly = false);

void writeReportJson(ArrayRef<SimulationReport> reports, StringRef target,
                     llvm::raw_ostream &os);
void writeChromeTrace(ArrayRef<SimulationReport> reports,
                      llvm::raw_ostream &os);
void printSummary(const SimulationReport &report, llvm::raw_ostream &os);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SIMULATOR_SIMULATE_H
