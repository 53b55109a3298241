//===- Strategy.h - Overlap strategies and the automatic choice --*- C++
//-*-===//
//
// The strategies of the tandem-overlap pipeline as library calls, and the
// `auto` choice: simulate every candidate on a copy of the function and keep
// the fastest, so that the result is never predicted slower than the input.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_STRATEGY_H
#define TANDEM_SCHEDULING_STRATEGY_H

#include "tandem/Scheduling/Overlap.h"
#include "tandem/Scheduling/Pipeline.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace tandem {

enum class OverlapStrategy {
  None,               ///< The input as it is.
  Bulk,               ///< async + bulk overlap.
  Reschedule,         ///< Bulk + AG-WGRAD.
  Pipeline,           ///< Cost-chosen chunk pipelines + bulk.
  PipelineReschedule, ///< Pipeline + AG-WGRAD.
  TePreset,           ///< TransformerEngine's default choices + bulk.
  TePresetReschedule  ///< TransformerEngine's choices + AG-WGRAD.
};
llvm::StringRef stringifyStrategy(OverlapStrategy strategy);

struct OverlapOptions {
  int64_t memoryBudget = 0;
  int64_t maxInFlight = 2;
  bool emitRemarks = false;
  /// Run relieveSmResidency after the CTA budgets (`auto` runs it on its
  /// candidates itself, reusing their simulations).
  bool relieveResidency = true;
};

/// Chooses the CTA budget of every collective window with the cost model
/// (tandem-assign-sm-targets' decision) and records it, then (with
/// `options.relieveResidency`) gives SM targets to GEMMs that keep a
/// collective waiting for SMs where that shortens the simulated step; the
/// last phase of every strategy but `none`.
void assignCtaBudgets(func::FuncOp func, OpTimer &timer,
                      const OverlapOptions &options);

/// Applies one strategy to `func` in place, CTA budgets included.
void applyOverlapStrategy(func::FuncOp func, OpTimer &timer,
                          OverlapStrategy strategy,
                          const OverlapOptions &options);

struct StrategyChoice {
  OverlapStrategy chosen = OverlapStrategy::None;
  /// Predicted span of every candidate, in the order tried.
  llvm::SmallVector<std::pair<OverlapStrategy, double>> spansUs;
  /// Whether `func`'s body was replaced by the chosen candidate's (done
  /// when remarks are off: the candidate was scheduled silently already).
  bool applied = false;
};

/// Simulates every strategy on a copy of `func` (inserted next to it in its
/// module, then erased) and returns the one with the shortest span; ties go
/// to the simpler strategy. Without remarks, `func` takes the winning
/// copy's body (`applied`); with remarks the caller applies the strategy
/// itself so that every decision is explained. Fails if the simulator
/// cannot run the function (its errors are emitted).
FailureOr<StrategyChoice> chooseOverlapStrategy(func::FuncOp func,
                                                OpTimer &timer,
                                                const OverlapOptions &options);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_STRATEGY_H
