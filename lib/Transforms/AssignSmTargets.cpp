//===- AssignSmTargets.cpp - The tandem-assign-sm-targets pass ------------===//
//
// Thin driver over assignSmTargets() and relieveSmResidency(): checks the
// options, decides every function's windows, records the decisions, relieves
// collectives kept waiting for SMs, and explains both.
//
//===----------------------------------------------------------------------===//

#include "tandem/Scheduling/SmTargets.h"
#include "tandem/Analysis/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tandem/Transforms/Passes.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMASSIGNSMTARGETS
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

#define DEBUG_TYPE "tandem-assign-sm-targets"

namespace {
struct AssignSmTargetsPass
    : public mlir::tandem::impl::TandemAssignSmTargetsBase<
          AssignSmTargetsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CostModel> model = buildCostModel(module, {targetPreset, calibrationPath});
    if (failed(model))
      return signalPassFailure();

    // An option left out means the default list; one given empty is an
    // error (checkCommSmsCandidates says so).
    SmallVector<int64_t> candidates(std::begin(kDefaultCommSmsCandidates),
                                    std::end(kDefaultCommSmsCandidates));
    if (commSms.hasValue())
      candidates.assign(commSms.begin(), commSms.end());
    std::string error;
    if (failed(checkCommSmsCandidates(candidates, model->gpu(), error))) {
      module.emitError() << error;
      return signalPassFailure();
    }

    for (auto func : module.getOps<func::FuncOp>()) {
      FailureOr<SmallVector<WindowDecision>> decisions =
          assignSmTargets(func, *model, candidates);
      if (failed(decisions))
        return signalPassFailure();
      numRetargeted += applySmTargets(*decisions);
      numWindows += llvm::count_if(
          *decisions, [](const WindowDecision &d) { return d.decided(); });
      RemarkLog log;
      explainSmTargets(*decisions, model->gpu(), log);
      log.emit(&getContext());
      if (!relieveResidency)
        continue;
      FailureOr<ResidencyRelief> relief = relieveSmResidency(func, *model);
      if (failed(relief))
        return signalPassFailure();
      if (relief->applied)
        numRelieved += relief->targets.size();
      explainResidencyRelief(*relief, model->gpu(), log);
      log.emit(&getContext());
    }
  }
};
} // namespace
