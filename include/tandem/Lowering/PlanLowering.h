//===- PlanLowering.h - Scheduled tandem IR to an execution plan -*- C++
//-*-===//
//
// Converts one function of scheduled tandem IR into the runtime's Plan
// (runtime/include/tandem/runtime/Plan.h): every SSA value becomes a buffer
// (dim-0 slices become views, a wait's result is its `_start`'s buffer),
// every op a step on its stream with its event waits and records, and the
// static memory plan is computed from the schedule's happens-before order.
// docs/runtime.md describes the result; `--tandem-export-plan` writes it.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LOWERING_PLANLOWERING_H
#define TANDEM_LOWERING_PLANLOWERING_H

#include "tandem/Analysis/CostModel.h"
#include "tandem/runtime/Plan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace mlir {
namespace tandem {

/// The label of the step `op` lowers to: an opaque op's kernel, else the
/// op's `layer` tag, else empty.
std::string getStepLabel(Operation *op);
/// The source location a plan step records for `op` (Step::location).
std::string getStepLocation(Operation *op);
/// The name a tandem-run trace gives the step `op` lowers to
/// (runtime::stepTraceName: `<op> <label>`), or std::nullopt for ops that
/// lower to no step (the terminator, dim-0 view slices).
std::optional<std::string> getStepTraceName(Operation *op);

struct PlanLoweringOptions {
  /// Attach the simulator's prediction (per step and for the whole plan),
  /// computed with this model; null leaves the plan without predictions.
  const CostModel *model = nullptr;
  /// Target name recorded with the prediction.
  std::string targetName;
  /// Free text recorded as the plan's producer.
  std::string producer = "tandem-opt --tandem-export-plan";
};

/// Lowers `func`. When the function carries no stream attributes, the
/// streams and events of assignStreams() are used (for an unscheduled
/// function: one stream, every collective blocking on it). Fails with an
/// error at the offending op for what the runtime cannot execute: element
/// types other than bf16/f16/f32, collectives along a dimension other than
/// 0, all_to_all with split or concat dimension other than 0, unranked or
/// dynamic tensors, ops that are not tandem ops, several blocks.
FailureOr<::tandem::runtime::Plan>
lowerToPlan(func::FuncOp func, const PlanLoweringOptions &options);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_LOWERING_PLANLOWERING_H
