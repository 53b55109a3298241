//===- CudnnAttention.h - cuDNN's fused attention as an option --*- C++ -*-===//
//
// cuDNN's fused scaled-dot-product attention (its flash-attention engines,
// wgmma on Hopper), reached through cudnn-frontend's graph API, for the same
// function as launchFusedAttention / launchFusedAttentionGrad (Kernels.h):
// the packed qkv layout, causal or full, grouped-query heads, bf16 or f16
// with f32 softmax statistics. It is an option of the runtime: it exists
// where the build found cuDNN and cudnn-frontend (TANDEM_CUDNN,
// docs/runtime.md "Attention"); a runtime built without them still builds
// and runs, and CudnnAttention::create then fails with that reason.
//
// The statistics are the forward's row log-sum-exp in the layout of
// fusedAttentionLseBytes (`lse[h * seq + i]`, natural log, the scores
// scaled by 1/sqrt(headDim)), so a cuDNN backward may read the LSE of
// either forward.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_CUDNNATTENTION_H
#define TANDEM_RUNTIME_CUDNNATTENTION_H

#include "tandem/runtime/Kernels.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>

namespace tandem {
namespace runtime {

/// Whether this runtime was built with cuDNN; otherwise `reason` says why not
/// (the configure step's finding).
bool cudnnAttentionBuilt(std::string &reason);

/// The version of the cuDNN library loaded at run time (e.g. 91900), or 0 in
/// a build without cuDNN.
int64_t cudnnAttentionLibraryVersion();

/// One cuDNN handle on the current device and the attention graphs built on
/// it, one per shape and direction (building one takes cuDNN's heuristics
/// and plan compilation, tens of milliseconds, so it happens in prepare(),
/// before any step is timed). Not thread-safe: one per host thread.
class CudnnAttention {
public:
  /// `deterministic` asks the backward for cuDNN's deterministic algorithm
  /// (no atomics in dQ: bitwise reproducible, as the runtime's own kernels
  /// are); the forward is deterministic either way.
  static std::unique_ptr<CudnnAttention> create(bool deterministic,
                                                std::string &error);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention &) = delete;
  CudnnAttention &operator=(const CudnnAttention &) = delete;

  /// Builds the forward (or backward) graph of `args` unless built already.
  /// False, with cuDNN's reason, where cuDNN has no engine for it or the
  /// arguments are outside this function (types other than bf16/f16, head
  /// dims that are not a multiple of 8 or above 256, kvHeads not dividing
  /// heads, `queries` on the backward).
  bool prepare(const AttentionArgs &args, bool backward, std::string &reason);
  /// Workspace the prepared graph needs (bytes, 256-byte aligned pointer).
  int64_t workspaceBytes(const AttentionArgs &args, bool backward) const;

  /// Forward: writes `out` (rows x heads * headDim) and `lse` (heads * rows
  /// floats), rows = args.queryRows() (the last rows of qkv are the
  /// queries; causal then masks bottom-right aligned). The graph must have
  /// been prepared.
  bool forward(const AttentionArgs &args, const void *qkv, void *out,
               float *lse, void *workspace, cudaStream_t stream,
               std::string &error);
  /// Backward: writes every element of `dqkv` from the output gradient
  /// `dout`, the forward's `qkv`, `out` and `lse`.
  bool backward(const AttentionArgs &args, const void *dout, const void *qkv,
                const void *out, const float *lse, void *dqkv, void *workspace,
                cudaStream_t stream, std::string &error);

private:
  struct Impl;
  explicit CudnnAttention(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_CUDNNATTENTION_H
