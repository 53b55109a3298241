//===- Strategy.h - Overlap strategies and the automatic choice -*- C++ -*-===//
//
// The strategies of the tandem-overlap pipeline, as data: one table gives
// each strategy's phases (which pipelines, whether bulk overlap and AG-WGRAD
// run), and both a named strategy and `auto` walk it. `auto` schedules every
// strategy on a copy of the function, simulates each, keeps the fastest (so
// that the result is never predicted slower than the input) and emits the
// winner's recorded explanations, without scheduling it again.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_STRATEGY_H
#define TANDEM_SCHEDULING_STRATEGY_H

#include "tandem/Scheduling/BatchSplit.h"
#include "tandem/Scheduling/Overlap.h"
#include "tandem/Scheduling/Pipeline.h"

#include "llvm/ADT/ArrayRef.h"
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
  TePresetReschedule, ///< TransformerEngine's choices + AG-WGRAD.
  Split,              ///< Batch split (part count by cost) + bulk.
  SplitReschedule     ///< Batch split + AG-WGRAD.
};

/// Which pipelines a strategy builds before bulk overlap.
enum class PipelinePhase {
  None,    ///< No pipeline.
  ByCost,  ///< Chunked or P2P pipelines chosen by the cost model.
  TePreset ///< TransformerEngine's documented per-layer choices.
};

/// The phases of one strategy, in the order they run: (with `split`) the
/// batch split, pipelines, then (with `overlap`) async collectives and bulk
/// overlap, then (with `reschedule`) AG-WGRAD, then CTA budgets, SM targets
/// and the SM residency relief.
struct StrategyPhases {
  OverlapStrategy strategy;
  llvm::StringLiteral name;
  PipelinePhase pipeline;
  bool overlap;
  bool reschedule;
  bool split = false;
};

/// Every strategy, simplest first: `auto` tries them in this order, prefers
/// the earlier on a tie, and lists their spans in this order.
llvm::ArrayRef<StrategyPhases> getStrategies();
const StrategyPhases &getStrategyPhases(OverlapStrategy strategy);
llvm::StringRef stringifyStrategy(OverlapStrategy strategy);
/// The strategy called `name`, or std::nullopt.
std::optional<OverlapStrategy> parseStrategy(llvm::StringRef name);

struct OverlapOptions {
  int64_t memoryBudget = 0;
  int64_t maxInFlight = 0; ///< Per group; 0: no limit.
  /// Where every phase explains its decisions (null: not explained).
  RemarkLog *remarks = nullptr;
  /// Run relieveSmResidency after the CTA budgets (`auto` runs it on its
  /// candidates itself, reusing their simulations).
  bool relieveResidency = true;
  /// Move all-gathers and reduce-scatters to the copy engines where the
  /// simulated step gets shorter (assignCopyEngines), before the CTA
  /// budgets of every strategy but `none`. Off by default: the runtime
  /// emulates copy-engine collectives on one GPU but does not yet run them
  /// across GPUs (docs/passes/copy-engines.md).
  bool copyEngines = false;
  /// The split strategies also try uneven parts sized to fill GEMM waves
  /// (BatchSplitOptions::waveAware).
  bool waveAwareParts = true;
};

/// Keeps apart the pairs a diagnosis found harmful (avoidHarmfulOverlaps),
/// then (with `options.copyEngines`) moves collectives to the copy engines
/// where that pays, then chooses the CTA budget of every collective window with
/// the cost model (tandem-assign-sm-targets' decision, over
/// kDefaultCommSmsCandidates) and records it, then (with
/// `options.relieveResidency`) gives SM targets to GEMMs that keep a collective
/// waiting for SMs where that shortens the simulated step; the last phase of
/// every strategy but `none`.
void assignCtaBudgets(func::FuncOp func, OpTimer &timer,
                      const OverlapOptions &options);

/// Applies one strategy to `func` in place, CTA budgets included.
void applyOverlapStrategy(func::FuncOp func, OpTimer &timer,
                          OverlapStrategy strategy,
                          const OverlapOptions &options);

struct StrategyChoice {
  OverlapStrategy chosen = OverlapStrategy::None;
  /// Predicted span of every candidate, in getStrategies() order.
  llvm::SmallVector<std::pair<OverlapStrategy, double>> spansUs;
};

/// Schedules every strategy on a copy of `func` (inserted next to it in its
/// module, then erased), simulates each and gives `func` the body of the
/// one with the shortest span; ties go to the simpler strategy. With
/// `options.remarks`, the winner's explanations, recorded while it was
/// scheduled, are appended there. Fails if the simulator cannot run the
/// function (its errors are emitted).
FailureOr<StrategyChoice> chooseOverlapStrategy(func::FuncOp func,
                                                OpTimer &timer,
                                                const OverlapOptions &options);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_STRATEGY_H
