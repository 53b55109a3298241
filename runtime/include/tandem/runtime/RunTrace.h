//===- RunTrace.h - The trace tandem-run writes ------------------*- C++
//-*-===//
//
// The Chrome trace of a run (tandem-run --trace): process 0 holds the
// measured steps of one rank, process 1 the simulator's prediction of the
// same steps, one thread per stream, in the layout of --tandem-simulate's
// trace. Its naming rule (stepTraceName) is shared with tandem-diagnose,
// which builds the expected timeline of a plan under the same names. Plain
// C++ (TandemPlan), tested without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_RUNTRACE_H
#define TANDEM_RUNTIME_RUNTRACE_H

#include "tandem/runtime/Plan.h"

#include <ostream>
#include <string>
#include <vector>

namespace tandem {
namespace runtime {

/// When one step ran, in microseconds from the step's start.
struct StepTiming {
  double startUs = 0, endUs = 0; ///< GPU: the events around its launch.
  /// Host: when the executor began enqueueing the step (before its event
  /// waits), from the host time at which the step's start event was
  /// recorded; negative = not recorded. The two clocks differ by the time
  /// the GPU takes to reach the start event (a few microseconds on an idle
  /// GPU), so a step whose GPU start is close to its host time waited for
  /// the host.
  double hostUs = -1;
};

/// The name of step `step` in the trace: its op name, then its label when
/// it has one ("tandem.matmul l0.qkv").
std::string stepTraceName(const Step &step);

/// Writes the trace of `measured` (one entry per step of `plan`, or fewer:
/// only those are written) for `rank`, followed by the plan's prediction
/// when it has one. Returns false when the stream fails.
bool writeRunTrace(std::ostream &out, const Plan &plan,
                   const std::vector<StepTiming> &measured, int rank);

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_RUNTRACE_H
