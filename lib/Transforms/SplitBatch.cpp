//===- SplitBatch.cpp - tandem-split-batch --------------------------------===//

#include "tandem/Analysis/Target.h"
#include "tandem/Dialect/Tandem/TandemBounds.h"
#include "tandem/Scheduling/BatchSplit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tandem/Transforms/PassOptions.h"
#include "tandem/Transforms/Passes.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMSPLITBATCH
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

namespace {
struct SplitBatchPass
    : public mlir::tandem::impl::TandemSplitBatchBase<SplitBatchPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The dialect bounds tandem.slice's chunks (kMaxChunks).
    if (parts < 0 || parts > kMaxChunks) {
      module.emitError() << "parts must be 0 (choose), 1 (no split) or in "
                            "[2, "
                         << kMaxChunks << "], got "
                         << static_cast<int64_t>(parts);
      return signalPassFailure();
    }
    if (!weights.empty()) {
      if (int64_t(weights.size()) < 2 || int64_t(weights.size()) > kMaxChunks) {
        module.emitError() << "weights needs 2 to " << kMaxChunks
                           << " parts, got " << weights.size();
        return signalPassFailure();
      }
      for (auto [i, w] : llvm::enumerate(weights))
        if (w < 1 || w > kMaxChunkWeight) {
          module.emitError() << "weight " << i << " (" << w
                             << ") is outside [1, " << kMaxChunkWeight << "]";
          return signalPassFailure();
        }
      if (parts != 0 && parts != int64_t(weights.size())) {
        module.emitError() << "parts=" << static_cast<int64_t>(parts)
                           << " disagrees with " << weights.size()
                           << " weights";
        return signalPassFailure();
      }
    }
    FailureOr<CostModel> model = buildSchedulingModel(
        module, memoryBudget, maxInFlight, {targetPreset, calibrationPath});
    if (failed(model))
      return signalPassFailure();
    OpTimer timer(*model);
    RemarkLog log;
    BatchSplitOptions options;
    options.parts = parts;
    options.weights.assign(weights.begin(), weights.end());
    options.waveAware = waveAwareParts;
    options.memoryBudget = memoryBudget;
    options.maxInFlight = maxInFlight;
    options.remarks = &log;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      FailureOr<BatchSplitResult> r = splitBatch(func, timer, options);
      log.emit(&getContext());
      if (failed(r))
        return signalPassFailure();
      if (r->parts > 1)
        ++numSplit;
    }
  }
};
} // namespace
