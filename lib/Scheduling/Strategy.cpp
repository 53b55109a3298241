//===- Strategy.cpp - Overlap strategies and the automatic choice ---------===//

#include "tandem/Scheduling/Strategy.h"
#include "tandem/Scheduling/SmTargets.h"
#include "tandem/Simulator/Simulate.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::tandem;

StringRef mlir::tandem::stringifyStrategy(OverlapStrategy strategy) {
  switch (strategy) {
  case OverlapStrategy::None:
    return "none";
  case OverlapStrategy::Bulk:
    return "bulk";
  case OverlapStrategy::Reschedule:
    return "reschedule";
  case OverlapStrategy::Pipeline:
    return "pipeline";
  case OverlapStrategy::PipelineReschedule:
    return "pipeline+reschedule";
  case OverlapStrategy::TePreset:
    return "te-preset";
  }
  llvm_unreachable("unknown strategy");
}

void mlir::tandem::applyOverlapStrategy(func::FuncOp func, OpTimer &timer,
                                        OverlapStrategy strategy,
                                        const OverlapOptions &options) {
  if (strategy == OverlapStrategy::None)
    return;
  if (strategy == OverlapStrategy::Pipeline ||
      strategy == OverlapStrategy::PipelineReschedule ||
      strategy == OverlapStrategy::TePreset) {
    PipelineOptions pipeline;
    pipeline.transformerEnginePreset = strategy == OverlapStrategy::TePreset;
    pipeline.memoryBudget = options.memoryBudget;
    pipeline.emitRemarks = options.emitRemarks;
    pipelineCollectiveMatmuls(func, timer, pipeline);
  }
  convertToAsyncCollectives(func);
  BulkOverlapOptions bulk;
  bulk.maxInFlight = options.maxInFlight;
  bulk.memoryBudget = options.memoryBudget;
  bulk.emitRemarks = options.emitRemarks;
  bulkOverlap(func, timer, bulk);
  if (strategy == OverlapStrategy::Reschedule ||
      strategy == OverlapStrategy::PipelineReschedule) {
    RescheduleOptions reschedule;
    reschedule.memoryBudget = options.memoryBudget;
    reschedule.emitRemarks = options.emitRemarks;
    rescheduleWgrad(func, timer, reschedule);
  }
  assignCtaBudgets(func, timer, options);
}

void mlir::tandem::assignCtaBudgets(func::FuncOp func, OpTimer &timer,
                                    const OverlapOptions &options) {
  const GpuSpec &gpu = timer.costModel().gpu();
  SmallVector<int64_t> budgets;
  for (int64_t k : {8, 16, 24, 32})
    if (k < gpu.smCount)
      budgets.push_back(k);
  FailureOr<SmallVector<WindowDecision>> decisions =
      assignSmTargets(func, timer.costModel(), budgets);
  // The strategy's ops are all priceable (the simulator checks the same);
  // a failure here has already been reported at the op.
  if (failed(decisions))
    return;
  applySmTargets(*decisions);
  if (options.emitRemarks)
    emitSmTargetRemarks(*decisions, gpu);
}

FailureOr<StrategyChoice>
mlir::tandem::chooseOverlapStrategy(func::FuncOp func, OpTimer &timer,
                                    const OverlapOptions &options) {
  StrategyChoice choice;
  auto module = func->getParentOfType<ModuleOp>();
  SymbolTable symbols(module);
  OverlapOptions quiet = options;
  quiet.emitRemarks = false;
  RescheduleOptions reschedule;
  reschedule.memoryBudget = options.memoryBudget;
  reschedule.emitRemarks = false;

  double best = 0;
  func::FuncOp bestCopy; // null while the input itself is best
  SmallVector<func::FuncOp> copies;
  auto cleanup = llvm::make_scope_exit([&] {
    for (func::FuncOp copy : copies)
      symbols.erase(copy);
  });
  auto cloneOf = [&](func::FuncOp from) {
    func::FuncOp copy = from.clone();
    symbols.insert(copy); // renames the copy to a unique name
    copies.push_back(copy);
    return copy;
  };
  // Simulates one candidate; a later (more aggressive) strategy must be
  // strictly faster to win.
  auto evaluate = [&](func::FuncOp candidate,
                      OverlapStrategy strategy) -> LogicalResult {
    FailureOr<SimulationReport> report =
        simulateFunction(candidate, timer.costModel(), /*spanOnly=*/true);
    if (failed(report))
      return failure();
    choice.spansUs.push_back({strategy, report->spanUs});
    if (choice.spansUs.size() == 1 || report->spanUs < best * (1 - 1e-9)) {
      best = report->spanUs;
      choice.chosen = strategy;
      bestCopy = candidate == func ? func::FuncOp() : candidate;
    }
    return success();
  };

  // Strategies that extend another one start from a copy of its result.
  if (failed(evaluate(func, OverlapStrategy::None)))
    return failure();
  // CTA budgets come last in every strategy: each candidate gets them after
  // the copy for the next candidate is taken.
  func::FuncOp bulk = cloneOf(func);
  convertToAsyncCollectives(bulk);
  BulkOverlapOptions bulkOptions;
  bulkOptions.maxInFlight = options.maxInFlight;
  bulkOptions.memoryBudget = options.memoryBudget;
  bulkOptions.emitRemarks = false;
  bulkOverlap(bulk, timer, bulkOptions);
  func::FuncOp rescheduled = cloneOf(bulk);
  assignCtaBudgets(bulk, timer, quiet);
  if (failed(evaluate(bulk, OverlapStrategy::Bulk)))
    return failure();
  rescheduleWgrad(rescheduled, timer, reschedule);
  assignCtaBudgets(rescheduled, timer, quiet);
  if (failed(evaluate(rescheduled, OverlapStrategy::Reschedule)))
    return failure();
  func::FuncOp pipelined = cloneOf(func);
  PipelineOptions pipelineOptions;
  pipelineOptions.memoryBudget = options.memoryBudget;
  pipelineOptions.emitRemarks = false;
  pipelineCollectiveMatmuls(pipelined, timer, pipelineOptions);
  convertToAsyncCollectives(pipelined);
  bulkOverlap(pipelined, timer, bulkOptions);
  func::FuncOp both = cloneOf(pipelined);
  assignCtaBudgets(pipelined, timer, quiet);
  if (failed(evaluate(pipelined, OverlapStrategy::Pipeline)))
    return failure();
  rescheduleWgrad(both, timer, reschedule);
  assignCtaBudgets(both, timer, quiet);
  if (failed(evaluate(both, OverlapStrategy::PipelineReschedule)))
    return failure();
  func::FuncOp te = cloneOf(func);
  applyOverlapStrategy(te, timer, OverlapStrategy::TePreset, quiet);
  if (failed(evaluate(te, OverlapStrategy::TePreset)))
    return failure();

  if (!options.emitRemarks) {
    if (bestCopy)
      func.getBody().takeBody(bestCopy.getBody());
    choice.applied = true;
  }
  return choice;
}
