//===- Target.cpp - The target and calibration a module is priced on ------===//

#include "tandem/Analysis/Target.h"

using namespace mlir;
using namespace mlir::tandem;

std::string mlir::tandem::calibrationPathFor(ModuleOp module,
                                            const TargetOptions &options) {
  if (!options.calibrationPath.empty())
    return options.calibrationPath;
  if (auto path = module->getAttrOfType<StringAttr>(kCalibrationAttrName))
    return path.getValue().str();
  return "";
}

FailureOr<CostModel> mlir::tandem::buildCostModel(ModuleOp module,
                                                  const TargetOptions &options) {
  StringRef targetOverride = options.preset;
  std::string calibrationPath = calibrationPathFor(module, options);
  TargetAttr target;
  if (!targetOverride.empty()) {
    target = TargetAttr::getPreset(module.getContext(), targetOverride);
    if (!target) {
      auto diag = module.emitError() << "unknown target preset '"
                                     << targetOverride << "'; known presets: ";
      llvm::interleaveComma(TargetAttr::getPresetNames(), diag);
      return failure();
    }
  } else {
    Attribute attr = module->getAttr(TandemDialect::getTargetAttrName());
    target = dyn_cast_or_null<TargetAttr>(attr);
    if (!target)
      return module.emitError()
             << "the module has no '" << TandemDialect::getTargetAttrName()
             << "' attribute: add one (e.g. {tandem.target = "
                "#tandem.target<\"h200\">}) or pass a target preset";
  }
  GpuSpec gpu = GpuSpec::fromAttr(target);
  ContentionTable table = ContentionTable::defaults();
  CommParams comm;
  if (!calibrationPath.empty()) {
    // The file replaces the contention table and the target fields it
    // measured (docs/cost-model.md, "Calibration file").
    std::string error;
    std::optional<Calibration> loaded =
        Calibration::load(calibrationPath, error);
    if (!loaded || !loaded->applyTo(gpu, error))
      return module.emitError() << error;
    loaded->applyTo(comm);
    table = std::move(loaded->contention);
  }
  return CostModel(std::move(gpu), std::move(table), comm);
}
