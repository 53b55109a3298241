//===- Target.h - Target and calibration a module is priced on --*- C++ -*-===//
//
// One cost model per module, the same for every pass that prices anything
// (the overlap passes, the simulator, the plan export): the target is the
// module's `tandem.target` or a preset named by the caller; the calibration
// is the file the caller names or, without one, the file the module's
// `tandem.calibration` attribute names. A pipeline that optimises and then
// evaluates therefore decides with the model it is evaluated by.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_TARGET_H
#define TANDEM_ANALYSIS_TARGET_H

#include "tandem/Analysis/CostModel.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir {
namespace tandem {

/// What a pass's `target` and `calibration` options say.
struct TargetOptions {
  /// A target preset that replaces the module's `tandem.target` (empty: the
  /// module's).
  std::string preset;
  /// A calibration file (empty: the module's `tandem.calibration`, if any).
  std::string calibrationPath;
};

/// The calibration file the model of `module` uses under `options`: the
/// option's, else the module's attribute, else empty (no calibration).
std::string calibrationPathFor(ModuleOp module, const TargetOptions &options);

/// Builds the cost model for `module`: its target (or the preset), with the
/// calibration's contention table and the target fields its "gpu" section
/// measured. Emits an error on `module` and fails when neither gives a
/// target, the preset is unknown, or the calibration file is unreadable,
/// malformed or describes another GPU.
FailureOr<CostModel> buildCostModel(ModuleOp module,
                                    const TargetOptions &options = {});

} // namespace tandem
} // namespace mlir

#endif // TANDEM_ANALYSIS_TARGET_H
