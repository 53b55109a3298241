//===- PipelineCollectiveMatmul.cpp - tandem-pipeline-collective-matmul ---===//

#include "tandem/Analysis/Target.h"
#include "tandem/Scheduling/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tandem/Transforms/Passes.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMPIPELINECOLLECTIVEMATMUL
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

namespace {
struct PipelineCollectiveMatmulPass
    : public mlir::tandem::impl::TandemPipelineCollectiveMatmulBase<
          PipelineCollectiveMatmulPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    PipelineOptions options;
    RemarkLog log;
    options.remarks = &log;
    StringRef m = method;
    if (m == "unsplit")
      options.method = PipelineMethod::Unsplit;
    else if (m == "chunked")
      options.method = PipelineMethod::Chunked;
    else if (m == "p2p")
      options.method = PipelineMethod::PeerToPeer;
    else if (m != "auto") {
      module.emitError() << "unknown method '" << m
                         << "'; expected auto, unsplit, chunked or p2p";
      return signalPassFailure();
    }
    // The dialect bounds tandem.slice's chunks (kMaxChunks): refuse more
    // before building that many ops.
    if (chunks < 0 || chunks == 1 || chunks > kMaxChunks) {
      module.emitError() << "chunks must be 0 (choose) or in [2, " << kMaxChunks
                         << "], got " << static_cast<int64_t>(chunks);
      return signalPassFailure();
    }
    options.chunks = chunks;
    options.copyEngines = copyEngines;
    FailureOr<CostModel> model =
        buildCostModel(module, {targetPreset, calibrationPath});
    if (failed(model))
      return signalPassFailure();
    OpTimer timer(*model);
    for (auto func : module.getOps<func::FuncOp>()) {
      PipelineResult r = pipelineCollectiveMatmuls(func, timer, options);
      log.emit(&getContext());
      numAllGathers += r.allGathers;
      numReduceScatters += r.reduceScatters;
      numKept += r.kept;
    }
  }
};
} // namespace
