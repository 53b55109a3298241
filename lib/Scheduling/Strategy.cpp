//===- Strategy.cpp - Overlap strategies and the automatic choice ---------===//

#include "tandem/Scheduling/Strategy.h"
#include "tandem/Simulator/Simulate.h"

#include "mlir/IR/SymbolTable.h"

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
  if (strategy != OverlapStrategy::Reschedule &&
      strategy != OverlapStrategy::PipelineReschedule)
    return;
  RescheduleOptions reschedule;
  reschedule.memoryBudget = options.memoryBudget;
  reschedule.emitRemarks = options.emitRemarks;
  rescheduleWgrad(func, timer, reschedule);
}

FailureOr<StrategyChoice>
mlir::tandem::chooseOverlapStrategy(func::FuncOp func, OpTimer &timer,
                                    const OverlapOptions &options) {
  StrategyChoice choice;
  auto module = func->getParentOfType<ModuleOp>();
  SymbolTable symbols(module);
  OverlapOptions quiet = options;
  quiet.emitRemarks = false;
  double best = 0;
  func::FuncOp bestCopy;
  auto dropBest = [&] {
    if (bestCopy)
      symbols.erase(bestCopy);
    bestCopy = {};
  };
  for (OverlapStrategy strategy :
       {OverlapStrategy::None, OverlapStrategy::Bulk,
        OverlapStrategy::Reschedule, OverlapStrategy::Pipeline,
        OverlapStrategy::PipelineReschedule, OverlapStrategy::TePreset}) {
    func::FuncOp copy = func.clone();
    symbols.insert(copy); // renames the copy to a unique name
    applyOverlapStrategy(copy, timer, strategy, quiet);
    FailureOr<SimulationReport> report =
        simulateFunction(copy, timer.costModel(), /*spanOnly=*/true);
    if (failed(report)) {
      symbols.erase(copy);
      dropBest();
      return failure();
    }
    choice.spansUs.push_back({strategy, report->spanUs});
    // A later (more aggressive) strategy must be strictly faster to win.
    if (choice.spansUs.size() == 1 || report->spanUs < best * (1 - 1e-9)) {
      best = report->spanUs;
      choice.chosen = strategy;
      dropBest();
      bestCopy = copy;
    } else {
      symbols.erase(copy);
    }
  }
  if (!options.emitRemarks && bestCopy) {
    func.getBody().takeBody(bestCopy.getBody());
    choice.applied = true;
  }
  dropBest();
  return choice;
}
