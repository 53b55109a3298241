//===- Overlap.cpp - The tandem-overlap pipeline --------------------------===//
//
// Thin driver: parses the strategy, builds the cost model and applies the
// strategy (or, for `auto`, the one the simulator predicts fastest) to every
// function.
//
//===----------------------------------------------------------------------===//

#include "tandem/Analysis/Target.h"
#include "tandem/Lowering/DiagnosisFeedback.h"
#include "tandem/Scheduling/Strategy.h"
#include "tandem/Scheduling/Streams.h"
#include "tandem/Scheduling/VerifySchedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tandem/Transforms/PassOptions.h"
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
    bool automatic = strategy == "auto";
    if (!automatic) {
      fixed = parseStrategy(strategy);
      if (!fixed) {
        auto diag = module.emitError()
                    << "unknown strategy '" << strategy << "'; expected auto";
        ArrayRef<StrategyPhases> all = getStrategies();
        for (const StrategyPhases &s : all.drop_back())
          diag << ", " << s.name;
        diag << " or " << all.back().name;
        return signalPassFailure();
      }
    }
    FailureOr<CostModel> model = buildSchedulingModel(
        module, memoryBudget, maxInFlight, {targetPreset, calibrationPath});
    if (failed(model))
      return signalPassFailure();
    std::optional<DiagnosisFeedback> diagnosis;
    std::optional<::tandem::runtime::Plan> diagnosedPlan;
    if (!diagnosisPath.empty()) {
      FailureOr<DiagnosisFeedback> d = loadDiagnosisFor(module, diagnosisPath);
      if (failed(d))
        return signalPassFailure();
      diagnosis = std::move(*d);
    }
    if (!diagnosisPlanPath.empty()) {
      if (!diagnosis) {
        module.emitError() << "diagnosis-plan needs a diagnosis";
        return signalPassFailure();
      }
      FailureOr<::tandem::runtime::Plan> p =
          loadDiagnosedPlan(module, *diagnosis, diagnosisPlanPath);
      if (failed(p))
        return signalPassFailure();
      diagnosedPlan = std::move(*p);
    }
    OpTimer timer(*model);
    OverlapOptions options;
    options.memoryBudget = memoryBudget;
    options.maxInFlight = maxInFlight;
    RemarkLog log;
    options.remarks = remarks ? &log : nullptr;
    options.relieveResidency = relieveResidency;
    options.copyEngines = copyEngines;
    options.waveAwareParts = waveAwareParts;

    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      if (diagnosis && func.getSymName() == diagnosis->function) {
        if (failed(applyDiagnosis(func, *diagnosis, *model, options.remarks,
                                  diagnosedPlan ? &*diagnosedPlan : nullptr)))
          return signalPassFailure();
      }
      // The input, to prove the schedule computes the same values.
      func::FuncOp reference = verify ? func.clone() : func::FuncOp();
      llvm::scope_exit dropReference([&] {
        if (reference)
          reference->erase();
      });
      OverlapStrategy appliedStrategy = fixed.value_or(OverlapStrategy::None);
      if (automatic) {
        FailureOr<StrategyChoice> choice =
            chooseOverlapStrategy(func, timer, options);
        if (failed(choice))
          return signalPassFailure();
        appliedStrategy = choice->chosen;
        auto remark = mlir::emitRemark(func.getLoc())
                      << "strategy " << stringifyStrategy(choice->chosen)
                      << " chosen; predicted spans:";
        for (auto [candidate, span] : choice->spansUs)
          remark << " " << stringifyStrategy(candidate) << " "
                 << llvm::formatv("{0:F3}", span).str() << " us";
      } else {
        applyOverlapStrategy(func, timer, *fixed, options);
      }
      log.emit(&getContext());
      FailureOr<StreamAssignment> streams = assignStreams(func);
      if (failed(streams))
        return signalPassFailure();
      applyStreamAssignment(func, *streams);
      if (verify) {
        VerifyScheduleOptions verifyOptions;
        verifyOptions.remarks = remarks;
        // The batch split may interleave micro-batches, which reorders
        // their collectives on purpose.
        verifyOptions.allowReorderedCollectives =
            getStrategyPhases(appliedStrategy).split;
        if (failed(verifySchedule(func, reference, verifyOptions)))
          return signalPassFailure();
      }
      ++numFunctions;
    }
  }
};
} // namespace
