//===- RescheduleWgrad.cpp - The tandem-reschedule-wgrad pass -------------===//

#include "tandem/Analysis/Target.h"
#include "tandem/Scheduling/Overlap.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tandem/Transforms/PassOptions.h"
#include "tandem/Transforms/Passes.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMRESCHEDULEWGRAD
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

namespace {
struct RescheduleWgradPass
    : public mlir::tandem::impl::TandemRescheduleWgradBase<
          RescheduleWgradPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!(fillLimit > 0.0)) {
      module.emitError() << "fill-limit must be positive, got "
                         << static_cast<double>(fillLimit);
      return signalPassFailure();
    }
    FailureOr<CostModel> model = buildSchedulingModel(
        module, memoryBudget, std::nullopt, {targetPreset, calibrationPath});
    if (failed(model))
      return signalPassFailure();
    OpTimer timer(*model);
    RescheduleOptions options;
    RemarkLog log;
    options.remarks = &log;
    options.memoryBudget = memoryBudget;
    options.fillLimit = fillLimit;
    options.splitToFill = splitWgrads;
    for (auto func : module.getOps<func::FuncOp>()) {
      RescheduleResult r = rescheduleWgrad(func, timer, options);
      log.emit(&getContext());
      numMoved += r.moved;
      numKept += r.kept;
      numSplit += r.split;
    }
  }
};
} // namespace
