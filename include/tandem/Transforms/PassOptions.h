//===- PassOptions.h - Checks of the options the passes share --*- C++ -*-===//
//
// The scheduling limits several passes take (`memory-budget`,
// `max-in-flight`) mean the same everywhere and are refused with the same
// error everywhere; each pass calls these instead of checking on its own.
// The scheduling passes then build their cost model the same way, so the
// two steps are offered together.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TRANSFORMS_PASSOPTIONS_H
#define TANDEM_TRANSFORMS_PASSOPTIONS_H

#include "tandem/Analysis/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace tandem {

/// Checks `memory-budget` (bytes; 0: the target's HBM) and, where the pass
/// has one, `max-in-flight` (0: no limit). Emits an error on `module` naming
/// the option and the value for a negative one.
LogicalResult checkSchedulingLimits(ModuleOp module, int64_t memoryBudget,
                                    std::optional<int64_t> maxInFlight);

/// What a scheduling pass does before it schedules: checks its limits
/// (checkSchedulingLimits) and builds the cost model for `module` under
/// `target` (buildCostModel). Fails, with the error emitted on `module`,
/// where either does.
FailureOr<CostModel> buildSchedulingModel(ModuleOp module, int64_t memoryBudget,
                                          std::optional<int64_t> maxInFlight,
                                          const TargetOptions &target);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_TRANSFORMS_PASSOPTIONS_H
