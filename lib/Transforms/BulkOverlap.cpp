//===- BulkOverlap.cpp - The tandem-bulk-overlap pass ---------------------===//

#include "tandem/Analysis/Target.h"
#include "tandem/Scheduling/Overlap.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tandem/Transforms/PassOptions.h"
#include "tandem/Transforms/Passes.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMBULKOVERLAP
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

namespace {
struct BulkOverlapPass
    : public mlir::tandem::impl::TandemBulkOverlapBase<BulkOverlapPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CostModel> model = buildSchedulingModel(
        module, memoryBudget, maxInFlight, {targetPreset, calibrationPath});
    if (failed(model))
      return signalPassFailure();
    OpTimer timer(*model);
    BulkOverlapOptions options;
    RemarkLog log;
    options.remarks = &log;
    options.maxInFlight = maxInFlight;
    options.memoryBudget = memoryBudget;
    for (auto func : module.getOps<func::FuncOp>()) {
      BulkOverlapResult r = bulkOverlap(func, timer, options);
      log.emit(&getContext());
      numHoisted += r.hoisted;
      numSunk += r.sunk;
      numBudgetBlocked += r.budgetBlocked;
    }
  }
};
} // namespace
