//===- PassOptions.h - Checks of the options the passes share --*- C++ -*-===//
//
// The scheduling limits several passes take (`memory-budget`,
// `max-in-flight`) mean the same everywhere and are refused with the same
// error everywhere; each pass calls these instead of checking on its own.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TRANSFORMS_PASSOPTIONS_H
#define TANDEM_TRANSFORMS_PASSOPTIONS_H

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

} // namespace tandem
} // namespace mlir

#endif // TANDEM_TRANSFORMS_PASSOPTIONS_H
