//===- Simulate.cpp - The tandem-simulate pass ----------------------------===//
//
// Thin driver over simulateFunction(): simulates every function with a body
// and writes the report, the trace and the summary the options ask for.
//
//===----------------------------------------------------------------------===//

#include "tandem/Simulator/Simulate.h"
#include "tandem/Lowering/DiagnosisFeedback.h"
#include "tandem/Transforms/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMSIMULATE
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

#define DEBUG_TYPE "tandem-simulate"

namespace {
struct SimulatePass
    : public mlir::tandem::impl::TandemSimulateBase<SimulatePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CostModel> model =
        buildCostModel(module, {targetPreset, calibrationPath});
    if (failed(model))
      return signalPassFailure();

    // With a diagnosis, a copy carries its measured durations.
    OwningOpRef<ModuleOp> measured;
    if (!diagnosisPlanPath.empty() && diagnosisPath.empty()) {
      module.emitError() << "diagnosis-plan needs a diagnosis";
      return signalPassFailure();
    }
    if (!diagnosisPath.empty()) {
      FailureOr<DiagnosisFeedback> d = loadDiagnosisFor(module, diagnosisPath);
      if (failed(d))
        return signalPassFailure();
      std::optional<::tandem::runtime::Plan> plan;
      if (!diagnosisPlanPath.empty()) {
        FailureOr<::tandem::runtime::Plan> p =
            loadDiagnosedPlan(module, *d, diagnosisPlanPath);
        if (failed(p))
          return signalPassFailure();
        plan = std::move(*p);
      }
      measured = module.clone();
      if (failed(applyDiagnosis(
              measured->lookupSymbol<func::FuncOp>(d->function), *d, *model,
              /*remarks=*/nullptr, plan ? &*plan : nullptr)))
        return signalPassFailure();
    }
    ModuleOp simulated = measured ? *measured : module;

    SmallVector<SimulationReport, 1> reports;
    for (auto func : simulated.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<SimulationReport> report = simulateFunction(func, *model);
      if (failed(report))
        return signalPassFailure();
      ++numFunctions;
      numOpsSimulated += report->model.problem().tasks.size();
      reports.push_back(std::move(*report));
    }

    if (summary)
      for (const SimulationReport &r : reports)
        printSummary(r, llvm::errs());
    if (!reportPath.empty() &&
        failed(writeTo(reportPath, [&](llvm::raw_ostream &os) {
          writeReportJson(reports, model->gpu().name, os);
        })))
      return signalPassFailure();
    if (!tracePath.empty() &&
        failed(writeTo(tracePath, [&](llvm::raw_ostream &os) {
          writeChromeTrace(reports, os);
        })))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }

  LogicalResult writeTo(StringRef path,
                        function_ref<void(llvm::raw_ostream &)> write) {
    if (path == "-") {
      write(llvm::outs());
      return success();
    }
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &error);
    if (!file)
      return getOperation().emitError()
             << "cannot write '" << path << "': " << error;
    write(file->os());
    file->keep();
    return success();
  }
};
} // namespace
