//===- PassOptions.cpp - Checks of the options the passes share -----------===//

#include "tandem/Transforms/PassOptions.h"

using namespace mlir;
using namespace mlir::tandem;

LogicalResult
mlir::tandem::checkSchedulingLimits(ModuleOp module, int64_t memoryBudget,
                                    std::optional<int64_t> maxInFlight) {
  if (maxInFlight && *maxInFlight < 0)
    return module.emitError()
           << "max-in-flight must be 0 (no limit) or positive, got "
           << *maxInFlight;
  if (memoryBudget < 0)
    return module.emitError()
           << "memory-budget must be 0 (the target's HBM) or positive, got "
           << memoryBudget;
  return success();
}

FailureOr<CostModel>
mlir::tandem::buildSchedulingModel(ModuleOp module, int64_t memoryBudget,
                                   std::optional<int64_t> maxInFlight,
                                   const TargetOptions &target) {
  if (failed(checkSchedulingLimits(module, memoryBudget, maxInFlight)))
    return failure();
  return buildCostModel(module, target);
}
