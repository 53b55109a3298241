//===- CopyEngines.cpp - tandem-copy-engines ------------------------------===//
//
// Thin driver over assignCopyEngines() (Scheduling/CopyEngines.h): checks
// the options, decides and applies per function, explains.
//
//===----------------------------------------------------------------------===//

#include "tandem/Scheduling/CopyEngines.h"
#include "tandem/Analysis/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tandem/Transforms/PassOptions.h"
#include "tandem/Transforms/Passes.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMCOPYENGINES
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

namespace {
struct CopyEnginesPass
    : public mlir::tandem::impl::TandemCopyEnginesBase<CopyEnginesPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    CopyEngineOptions options;
    if (mode == "all") {
      options.mode = CopyEngineMode::All;
    } else if (mode != "cost") {
      module.emitError() << "unknown mode '" << mode
                         << "'; expected cost or all";
      return signalPassFailure();
    }
    options.memoryBudget = memoryBudget;
    FailureOr<CostModel> model = buildSchedulingModel(
        module, memoryBudget, std::nullopt, {targetPreset, calibrationPath});
    if (failed(model))
      return signalPassFailure();
    RemarkLog log;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      FailureOr<CopyEngineDecision> d =
          assignCopyEngines(func, *model, options);
      if (failed(d))
        return signalPassFailure();
      if (!d->leftAlone.empty())
        log.remark(func) << "copy engines: '@" << func.getSymName()
                         << "' left alone: " << d->leftAlone;
      explainCopyEngines(*d, log);
      for (const CopyEngineClass &c : d->classes)
        if (c.moved)
          numMoved += c.ops.size();
      log.emit(&getContext());
    }
  }
};
} // namespace
