//===- ExportPlan.cpp - The tandem-export-plan pass -----------------------===//
//
// Thin driver over lowerToPlan(): picks the function, builds the cost model
// for the prediction, writes the plan file and explains the result in a
// remark.
//
//===----------------------------------------------------------------------===//

#include "tandem/Lowering/PlanLowering.h"
#include "tandem/Analysis/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tandem/Transforms/Passes.h"
#include "tandem/runtime/MemoryPlanner.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMEXPORTPLAN
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

namespace {
struct ExportPlanPass
    : public mlir::tandem::impl::TandemExportPlanBase<ExportPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (file.empty()) {
      module.emitError() << "tandem-export-plan needs 'file=<path>'";
      return signalPassFailure();
    }
    func::FuncOp func;
    if (!functionName.empty()) {
      func = module.lookupSymbol<func::FuncOp>(functionName);
      if (!func || func.isExternal()) {
        module.emitError() << "no function '@" << functionName
                           << "' with a body to export";
        return signalPassFailure();
      }
    } else {
      for (auto f : module.getOps<func::FuncOp>()) {
        if (f.isExternal())
          continue;
        if (func) {
          f.emitError() << "several functions have a body; name the one to "
                           "export with 'function=<name>'";
          return signalPassFailure();
        }
        func = f;
      }
      if (!func) {
        module.emitError() << "no function with a body to export";
        return signalPassFailure();
      }
    }

    PlanLoweringOptions options;
    std::optional<CostModel> model;
    if (simulate) {
      FailureOr<CostModel> built =
          buildCostModel(module, {targetPreset, calibrationPath});
      if (failed(built))
        return signalPassFailure();
      model = std::move(*built);
      options.model = &*model;
      options.targetName = model->gpu().name;
    }
    FailureOr<::tandem::runtime::Plan> plan = lowerToPlan(func, options);
    if (failed(plan))
      return signalPassFailure();

    std::string error;
    if (!::tandem::runtime::writePlanFile(*plan, file, error)) {
      module.emitError() << error;
      return signalPassFailure();
    }
    int64_t temps = 0, tempBytes = 0;
    for (const auto &b : plan->buffers)
      if (b.role == ::tandem::runtime::Buffer::Role::Temp) {
        ++temps;
        tempBytes += b.bytes();
      }
    numSteps += plan->steps.size();
    arenaBytes += plan->arenaBytes;
    mlir::emitRemark(func.getLoc())
        << "plan: " << plan->steps.size() << " steps on " << plan->numStreams
        << " stream(s), " << plan->numEvents << " event(s), "
        << plan->buffers.size() << " buffers (" << temps
        << " in the arena); arena " << plan->arenaBytes << " bytes for "
        << tempBytes << " bytes of temporaries";
    markAllAnalysesPreserved();
  }
};
} // namespace
