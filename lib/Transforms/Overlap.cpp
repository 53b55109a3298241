//===- Overlap.cpp - The tandem-overlap pipeline --------------------------===//
//
// Thin driver: parses the strategy, builds the cost model and applies the
// strategy (or, for `auto`, the one the simulator predicts fastest) to every
// function.
//
//===----------------------------------------------------------------------===//

#include "tandem/Scheduling/Strategy.h"
#include "tandem/Scheduling/Streams.h"
#include "tandem/Scheduling/VerifySchedule.h"
#include "tandem/Analysis/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tandem/Transforms/Passes.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMOVERLAP
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

namespace {
struct OverlapPass : public mlir::tandem::impl::TandemOverlapBase<OverlapPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<OverlapStrategy> fixed;
    bool automatic = false;
    StringRef name = strategy;
    if (name == "auto")
      automatic = true;
    else if (name == "none")
      fixed = OverlapStrategy::None;
    else if (name == "bulk")
      fixed = OverlapStrategy::Bulk;
    else if (name == "reschedule")
      fixed = OverlapStrategy::Reschedule;
    else if (name == "pipeline")
      fixed = OverlapStrategy::Pipeline;
    else if (name == "pipeline+reschedule")
      fixed = OverlapStrategy::PipelineReschedule;
    else if (name == "te-preset+reschedule")
      fixed = OverlapStrategy::TePresetReschedule;
    else if (name == "te-preset")
      fixed = OverlapStrategy::TePreset;
    else {
      module.emitError() << "unknown strategy '" << name
                         << "'; expected auto, none, bulk, reschedule, "
                            "pipeline, pipeline+reschedule, te-preset or "
                            "te-preset+reschedule";
      return signalPassFailure();
    }
    if (memoryBudget < 0 || maxInFlight < 1) {
      module.emitError() << "memory-budget must not be negative and "
                            "max-in-flight must be at least 1";
      return signalPassFailure();
    }
    FailureOr<CostModel> model = buildCostModel(module, {targetPreset, calibrationPath});
    if (failed(model))
      return signalPassFailure();
    OpTimer timer(*model);
    OverlapOptions options;
    options.memoryBudget = memoryBudget;
    options.maxInFlight = maxInFlight;
    options.emitRemarks = remarks;
    options.relieveResidency = relieveResidency;

    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      OverlapStrategy chosen = fixed.value_or(OverlapStrategy::None);
      bool applied = false;
      // The input, to prove the schedule computes the same values.
      func::FuncOp reference = verify ? func.clone() : func::FuncOp();
      auto dropReference = llvm::make_scope_exit([&] {
        if (reference)
          reference->erase();
      });
      if (automatic) {
        FailureOr<StrategyChoice> choice =
            chooseOverlapStrategy(func, timer, options);
        if (failed(choice))
          return signalPassFailure();
        chosen = choice->chosen;
        applied = choice->applied;
        auto remark = mlir::emitRemark(func.getLoc())
                      << "strategy " << stringifyStrategy(chosen)
                      << " chosen; predicted spans:";
        for (auto [candidate, span] : choice->spansUs)
          remark << " " << stringifyStrategy(candidate) << " "
                 << llvm::formatv("{0:F3}", span).str() << " us";
      }
      if (!applied)
        applyOverlapStrategy(func, timer, chosen, options);
      FailureOr<StreamAssignment> streams = assignStreams(func);
      if (failed(streams))
        return signalPassFailure();
      applyStreamAssignment(func, *streams);
      if (verify) {
        VerifyScheduleOptions verifyOptions;
        verifyOptions.remarks = remarks;
        if (failed(verifySchedule(func, reference, verifyOptions)))
          return signalPassFailure();
      }
      ++numFunctions;
    }
  }
};
} // namespace
