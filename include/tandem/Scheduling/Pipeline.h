//===- Pipeline.h - Chunked AG->GEMM and GEMM->RS pipelines ------*- C++
//-*-===//
//
// Splits a dependent all-gather -> matmul (the matmul's lhs is the gathered
// tensor) or matmul -> reduce-scatter pair into an N-chunk pipeline, either
// as chunked native collectives or, for all-gathers, as a ring of
// peer-to-peer steps (tandem.permute). The method and N come from the cost
// model and the group's topology: on a full mesh a P2P step uses only the
// links to one peer, so P2P decomposition is refused there unless allowed.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_PIPELINE_H
#define TANDEM_SCHEDULING_PIPELINE_H

#include "tandem/Scheduling/Schedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace tandem {

enum class PipelineMethod { Unsplit, Chunked, PeerToPeer };
llvm::StringRef stringifyPipelineMethod(PipelineMethod method);

struct PipelineOptions {
  /// Restrict the method (std::nullopt = choose by cost).
  std::optional<PipelineMethod> method;
  /// Chunk count for chunked pipelines (0 = choose among 2, 4, 8).
  int64_t chunks = 0;
  /// Reproduce TransformerEngine's documented default per-layer choices
  /// instead of choosing by cost: ring-exchange (P2P) all-gather for the
  /// qkv/fc1 fprop and proj/fc2 dgrad GEMMs, a pipelined (4-chunk) native
  /// reduce-scatter after the proj/fc2 fprop GEMMs, nothing else split.
  /// Layers are recognised by the matmul's `layer` tag suffix.
  bool transformerEnginePreset = false;
  /// Peak-memory limit in bytes (0 = none): a pipeline that would raise the
  /// program-order peak above it (or above the input's peak, if that is
  /// already higher) is undone.
  int64_t memoryBudget = 0;
  /// Also consider pipelines whose pieces (chunked collectives, P2P ring
  /// steps) run on the copy engines (tandem.copy_engine), where the group
  /// allows them; not with the TransformerEngine preset, which keeps TE's
  /// choices.
  bool copyEngines = false;
  /// Where the decisions are explained (null: not explained).
  RemarkLog *remarks = nullptr;
};

struct PipelineResult {
  unsigned allGathers = 0, reduceScatters = 0, kept = 0;
  unsigned budgetBlocked = 0;
};

/// Rewrites the blocking AG->matmul and matmul->RS pairs of `func`.
PipelineResult pipelineCollectiveMatmuls(func::FuncOp func, OpTimer &timer,
                                         const PipelineOptions &options);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_PIPELINE_H
