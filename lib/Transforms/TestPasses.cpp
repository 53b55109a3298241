//===- TestPasses.cpp - Passes that expose analyses to tests --------------===//
//
// Write analysis results as remarks so that FileCheck and -verify-diagnostics
// can test the cost model, liveness and critical path on small inputs.
//
//===----------------------------------------------------------------------===//

#include "tandem/Analysis/CostModel.h"
#include "tandem/Analysis/DependenceGraph.h"
#include "tandem/Analysis/MemoryLiveness.h"
#include "tandem/Analysis/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tandem/Transforms/Passes.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMTESTCOSTMODEL
#define GEN_PASS_DEF_TANDEMTESTLIVENESS
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

/// Fixed-point text for remarks (Diagnostic does not take llvm::format).
static std::string fixed(double v, const char *unit) {
  return llvm::formatv("{0:F2} {1}", v, unit).str();
}

namespace {
struct TestCostModelPass
    : public mlir::tandem::impl::TandemTestCostModelBase<TestCostModelPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CostModel> model = buildCostModel(module, {targetPreset, calibrationPath});
    if (failed(model))
      return signalPassFailure();
    WalkResult walk = module.walk([&](Operation *op) {
      if (auto compute = dyn_cast<ComputeOpInterface>(op)) {
        std::string error;
        std::optional<ComputeEstimate> e =
            model->compute(compute, error, smCount);
        if (!e) {
          op->emitError() << error;
          return WalkResult::interrupt();
        }
        auto remark = op->emitRemark()
                      << fixed(e->timeUs, "us") << " on " << e->sms
                      << " SMs";
        if (e->tiles > 0)
          remark << ", " << e->tiles << " tiles in " << e->waves << " waves";
        remark << (e->memoryBound ? ", memory-bound" : ", compute-bound");
      } else if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
        GroupOp group = lookupGroup(op, collective.getGroupAttr());
        CollectiveEstimate e = model->collective(
            collective.getCollectiveKind(), collective.getPayloadBytes(),
            GroupSpec::fromOp(group), ctas, std::nullopt,
            collectiveShift(collective));
        op->emitRemark() << fixed(e.timeUs, "us") << ", "
                         << stringifyAlgorithm(e.algorithm) << ", " << e.steps
                         << " steps at "
                         << fixed(e.bandwidthBytesPerUs / 1e3, "GB/s");
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

struct TestLivenessPass
    : public mlir::tandem::impl::TandemTestLivenessBase<TestLivenessPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CostModel> model = buildCostModel(module);
    if (failed(model))
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &block = func.getBody().front();
      PeakMemory peak = computePeakMemory(block);
      auto remark = func.emitRemark()
                    << "peak memory " << peak.peakBytes << " bytes ("
                    << peak.argumentBytes << " in arguments)";
      if (peak.peakOp)
        remark << " at '" << peak.peakOp->getName() << "'";
      if (peak.peakOp)
        peak.peakOp->emitRemark() << "peak memory reached here";
      DependenceGraph graph(block);
      DependenceGraph::CriticalPath path =
          graph.getCriticalPath([&](Operation *op) -> double {
            std::string error;
            if (auto c = dyn_cast<ComputeOpInterface>(op))
              if (auto e = model->compute(c, error))
                return e->timeUs;
            if (auto c = dyn_cast<CollectiveOpInterface>(op))
              if (GroupOp g = lookupGroup(op, c.getGroupAttr()))
                return model
                    ->collective(c.getCollectiveKind(), c.getPayloadBytes(),
                                 GroupSpec::fromOp(g))
                    .timeUs;
            return 0.0;
          });
      func.emitRemark() << "critical path "
                        << fixed(path.lengthUs, "us") << " through "
                        << path.ops.size() << " ops";
    }
  }
};
} // namespace
