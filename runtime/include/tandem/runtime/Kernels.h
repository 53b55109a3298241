//===- Kernels.h - Compute launches the plan executor issues ----*- C++ -*-===//
//
// Every compute op of a plan becomes one call here: cuBLASLt matmuls, the
// attention forward/backward built from cuBLASLt batched GEMMs and softmax
// kernels (or the fused kernels of FlashAttention.cu), element-wise and
// norm kernels, the byte-moving kernel that stands
// for an opaque op, deterministic input initialisation, and the device-copy
// stand-ins for collectives of the single-GPU mode.
//
// Conventions shared by all functions:
//  - tensors are dense and row-major; `rows` x `cols` is the 2-D view of a
//    tensor whose last dimension is `cols`;
//  - element values are loaded as float, computed in float and rounded to
//    the output type once, so results do not depend on launch configuration;
//    no function uses atomics or anything else whose result depends on
//    scheduling: the same inputs give bitwise the same outputs;
//  - everything is enqueued on `stream` and nothing synchronises; a false
//    return means the launch itself failed and `error` names the call and the
//    CUDA / cuBLASLt status (execution errors surface at the next sync).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_KERNELS_H
#define TANDEM_RUNTIME_KERNELS_H

#include "tandem/runtime/Plan.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace tandem {
namespace runtime {

/// Copies `rows` rows of `rowBytes` bytes from `src` (row stride
/// `srcPitch` bytes) to `dst` (row stride `dstPitch`) with a kernel, in
/// 16-byte words where every pointer, pitch and width allows (else 4 or 1
/// bytes). The layout steps use it instead of cudaMemcpy2DAsync, so that
/// their copies run on the SMs like every other kernel the cost model
/// prices, not on the copy engines (docs/runtime.md). Regions must not
/// overlap.
bool launchCopy2D(void *dst, int64_t dstPitch, const void *src,
                  int64_t srcPitch, int64_t rowBytes, int64_t rows,
                  cudaStream_t stream, std::string &error);

/// Fills `count` elements with a deterministic pseudo-random sequence,
/// uniform in [-scale, scale): element i depends only on (seed, i).
bool launchFill(void *dst, DType type, int64_t count, uint64_t seed,
                float scale, cudaStream_t stream, std::string &error);

/// `result[rows, cols] = kind(inputs...)`, see ElementwiseKind for arity and
/// shapes. `a`/`b` are the first/second inputs (b null for unary kinds).
bool launchElementwise(ElementwiseKind kind, const void *a, DType aType,
                       const void *b, DType bType, void *out, DType outType,
                       int64_t rows, int64_t cols, cudaStream_t stream,
                       std::string &error);

/// Row-wise norm over the last dimension: `y = norm(x) * w`. Layer norm
/// subtracts the row mean (no bias); RMS norm does not. `eps` = 1e-5.
bool launchNorm(NormKind kind, const void *x, DType xType, const void *w,
                DType wType, void *y, int64_t rows, int64_t cols,
                cudaStream_t stream, std::string &error);

/// Backward of launchNorm: `dx` (xType, rows x cols) and `dw` (wType, cols).
/// `dw` is reduced over rows in a fixed order (deterministic); `scratch`
/// must hold normGradScratchBytes(rows, cols) bytes.
int64_t normGradScratchBytes(int64_t rows, int64_t cols);
bool launchNormGrad(NormKind kind, const void *dy, const void *x, DType xType,
                    const void *w, DType wType, void *dx, void *dw,
                    int64_t rows, int64_t cols, void *scratch,
                    cudaStream_t stream, std::string &error);

/// One cuBLASLt context per stream: the handle is shared, the workspace is
/// not (two streams must never use one workspace concurrently).
struct BlasContext {
  cublasLtHandle_t handle = nullptr;
  void *workspace = nullptr;
  int64_t workspaceBytes = 0;
};

/// `C[m, n] = op(A)[m, k] * op(B)[k, n]` with fp32 accumulation, where op
/// transposes when the flag is set (A stored k x m, B stored n x k). A and B
/// share one type (bf16, f16 or f32); C may be any of the three.
/// `smTarget` > 0 sets CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET. `beta` = 1
/// accumulates into C.
struct MatmulArgs {
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  DType abType = DType::BF16;
  DType cType = DType::BF16;
  int smTarget = 0;
  float alpha = 1.0f, beta = 0.0f;
};
bool launchMatmul(const BlasContext &blas, const MatmulArgs &args,
                  const void *a, const void *b, void *c, cudaStream_t stream,
                  std::string &error);

/// Attention on packed qkv, as tandem.attention defines it: each row of
/// `qkv` (seq x (heads + 2 * kvHeads) * headDim) holds the queries of all
/// heads, then the keys of all kv heads, then the values; query head h uses
/// kv head h / (heads / kvHeads). `out` is queryRows() x heads * headDim.
/// Scores are scaled by 1/sqrt(headDim); causal masks keys after the query.
///
/// `queries` (forward only) = N in [1, seq]: every row of qkv is a key and
/// a value, but only the last N rows are queries, at sequence positions
/// seq - N .. seq - 1 (causal: query i sees keys 0 .. seq - N + i, the
/// mask aligned to the bottom right of the N x seq score matrix). The
/// result is exactly the last N rows of the full attention, computed as
/// N x seq work: the prefix attention of part j of a split sequence over
/// parts 0 .. j. 0 (the default) makes every row a query. The backward
/// launches refuse a nonzero `queries`.
struct AttentionArgs {
  int64_t seq = 0, heads = 0, kvHeads = 0, headDim = 0;
  bool causal = false;
  DType type = DType::BF16;
  int smTarget = 0;
  int64_t queries = 0;
  /// Forward (fused and cuDNN): the distance in floats between two heads'
  /// statistics (row log-sum-exp), 0 = queryRows(). A causal segment's
  /// forward writes its rows into the statistics of the whole sequence
  /// (stride seq of the backward, at its first query's position), which the
  /// backward then reads instead of recomputing them.
  int64_t lseStride = 0;
  /// Rows of `out`: `queries`, or seq when it is 0.
  int64_t queryRows() const { return queries > 0 ? queries : seq; }
  int64_t lseRowStride() const {
    return lseStride > 0 ? lseStride : queryRows();
  }
};
/// Forward FLOPs of `args` as the cost model counts them: 4 * heads *
/// headDim per visible (query, key) pair (QK^T and PV, 2 FLOPs a
/// multiply-add), where N x seq pairs are visible without a mask and, with
/// causal, N * (seq - N) + N^2 / 2 (the full causal square counts half of
/// seq^2, as the cost model does; the backward is 2.5x the forward). 0 for
/// invalid arguments.
double attentionForwardFlops(const AttentionArgs &args);
int64_t attentionScratchBytes(const AttentionArgs &args);
bool launchAttention(const BlasContext &blas, const AttentionArgs &args,
                     const void *qkv, void *out, void *scratch,
                     cudaStream_t stream, std::string &error);

/// Gradient of launchAttention with respect to qkv, given the output
/// gradient `dout` and the forward output `out` (both seq x heads * headDim;
/// `queries` must be 0).
int64_t attentionGradScratchBytes(const AttentionArgs &args);
bool launchAttentionGrad(const BlasContext &blas, const AttentionArgs &args,
                         const void *dout, const void *qkv, const void *out,
                         void *dqkv, void *scratch, cudaStream_t stream,
                         std::string &error);

/// Fused (flash-attention style) attention, FlashAttention.cu: the same
/// function as launchAttention / launchAttentionGrad without materialising
/// scores (mma.sync tensor-core tiles, online softmax). Takes bf16 or f16
/// with head dim 64 or 128; fusedAttentionSupported says why not otherwise
/// (callers then use the unfused path). Softmax statistics are f32.
///
/// The forward writes `out` (null: statistics only) and the row log-sum-exp
/// `lse[h * rows + i] = ln(sum_j exp(scale * q_i . k_j))` over the keys
/// query i sees (heads * rows floats with rows = queryRows(),
/// fusedAttentionLseBytes). The backward takes that `lse`, or null
/// to recompute it, and `scratch` of fusedAttentionGradScratchBytes. Like
/// every launch here it uses no atomics: dQ is a separate pass, so results
/// are bitwise reproducible. Pointers must be 16-byte aligned. `smTarget`
/// is not honoured (the grid is not persistent).
bool fusedAttentionSupported(const AttentionArgs &args, std::string &reason);
int64_t fusedAttentionLseBytes(const AttentionArgs &args);
int64_t fusedAttentionGradScratchBytes(const AttentionArgs &args);
/// Parts the backward's dK/dV pass splits each GQA group into: 1 where the
/// kv heads x 64-key blocks give enough CTAs, otherwise the smallest
/// divisor of the group that gives 512 (or the whole group). Split parts
/// add f32 partial sums in a fixed order: still no atomics.
int fusedAttentionGradSplits(const AttentionArgs &args);
bool launchFusedAttention(const AttentionArgs &args, const void *qkv, void *out,
                          float *lse, cudaStream_t stream, std::string &error);
bool launchFusedAttentionGrad(const AttentionArgs &args, const void *dout,
                              const void *qkv, const void *out,
                              const float *lse, void *dqkv, void *scratch,
                              cudaStream_t stream, std::string &error);

/// Stands for compute Tandem does not model: reads the inputs and writes
/// every output so that `declaredBytes` bytes in total cross HBM (at least
/// each output once). Output element j of output o is element (j mod n) of
/// input 0 (n elements of `input0Type`), converted to the output type, or 0
/// without inputs: a continuous function of the input, so that a rounding
/// difference upstream stays a rounding difference downstream.
bool launchOpaque(const void *const *inputs, const int64_t *inputBytes,
                  int numInputs, DType input0Type, void *const *outputs,
                  const int64_t *outputBytes, DType const *outputTypes,
                  int numOutputs, int64_t declaredBytes, cudaStream_t stream,
                  std::string &error);

/// Single-GPU stand-in for a collective of a `groupSize`-rank group, as if
/// every rank held this rank's data (docs/runtime.md). Writes what the
/// collective would produce under that assumption:
///  - AllGather: `out` = groupSize copies of `in` (dim 0);
///  - ReduceScatter: `out` = groupSize * block `rank` of `in` (dim 0, sum);
///    max/min: block `rank`; avg: block `rank`;
///  - AllReduce: `out` = groupSize * `in` (sum); max/min/avg: `in`;
///  - AllToAll: `out` = groupSize copies of block `rank` of `in`;
///  - Permute: `out` = `in`.
/// The kernel runs on `ctas` CTAs (the SMs the collective would hold) and,
/// besides writing `out`, streams `trafficBytes` through `scratch` (which
/// holds at least min(trafficBytes, scratchBytes) bytes, reused cyclically)
/// so that the HBM traffic matches the collective's per-rank volume.
bool launchStandinCollective(CollectiveKind kind, ReduceKind reduce,
                             const void *in, int64_t inCount, void *out,
                             int64_t outCount, DType type, int groupSize,
                             int rank, int ctas, int64_t trafficBytes,
                             void *scratch, int64_t scratchBytes,
                             cudaStream_t stream, std::string &error);

/// Emulated fabric for one GPU (docs/runtime.md): the same values as
/// launchStandinCollective, written with 16-byte accesses where the layout
/// allows, plus `stagingBytes` read and written through `scratch` (the
/// received partial sums a reducing collective reads: emulatedStagingBytes),
/// on `ctas` CTAs of 512 threads (24 when 0), and paced with %globaltimer so
/// that every CTA takes at least `paceUs` from its own start, its traffic
/// spread evenly over that time. If the bytes cannot move in `paceUs` on
/// that many CTAs the kernel takes longer (the fabric is then not what
/// limits it). Not communication: no other rank's memory is touched.
bool launchEmulatedCollective(CollectiveKind kind, ReduceKind reduce,
                              const void *in, int64_t inCount, void *out,
                              int64_t outCount, DType type, int groupSize,
                              int rank, int ctas, int64_t stagingBytes,
                              void *scratch, int64_t scratchBytes,
                              double paceUs, cudaStream_t stream,
                              std::string &error);

/// The event-timed cost of an emulated collective beyond its pace, measured
/// with collectives queued back to back (as the cost model's launch
/// overhead is measured): a 1 MiB permute through `scratch` (>= 2 MiB,
/// 16-byte aligned; its contents are overwritten), or an empty collective
/// without one. What the executor subtracts from each target.
bool measureEmulatedCollectiveOffset(cudaStream_t stream, void *scratch,
                                     int64_t scratchBytes, double &offsetUs,
                                     std::string &error);

/// Bytes a rank of a `groupSize` ring would receive into staging and read
/// back while reducing: (n-1)/n of the input for reduce-scatter, 2(n-1)/n
/// for all-reduce, 0 for the kinds that only copy. A copy-engine
/// reduce-scatter stages the same n-1 blocks (the peers' chunks it pulls).
int64_t emulatedStagingBytes(CollectiveKind kind, int64_t inBytes,
                             int groupSize);

/// Copy-engine collective of the single-GPU modes (a step with transport
/// copy_engine; docs/runtime.md, "Copy-engine collectives"): the values of
/// launchStandinCollective, moved by device-to-device cudaMemcpyAsync
/// copies instead of a kernel on the collective's CTA budget. (On one GPU
/// the driver runs such a copy as its own kernel on the SMs, measured on
/// the H100: the copies take SMs in short bursts, unlike NVLink copy
/// engines.) AllGather, ReduceScatter and Permute, dim 0.
///  - Permute: one copy of `in` into `out` (same element count), then the
///    final wait;
///  - AllGather: one copy of `in` into each of the groupSize slots of
///    `out`, the peers' slots (rank+1, rank+2, ...) first and this rank's
///    own slot last;
///  - ReduceScatter: groupSize-1 copies of block `rank` of `in` into
///    consecutive blocks of `staging` (the peers' chunks a copy-engine
///    reduce-scatter pulls; at least emulatedStagingBytes bytes, 16-byte
///    aligned for the vector path), then a reduction kernel on the SMs
///    that combines block `rank` and the staged blocks into `out` (every
///    reduce kind; exactly the stand-in's values).
/// With `paceUs` >= 0 (the emulated fabric) a 1-CTA, 32-thread kernel first
/// stamps %globaltimer into `timerSlot` (8 bytes of device memory, not used
/// concurrently by another collective), a 1-CTA wait kernel after copy i
/// (0-based) spins with __nanosleep until stamp + (i+1)/groupSize x
/// `paceUs`, and one after the last copy (and the reduction) until stamp +
/// `paceUs`: alone the collective takes `paceUs` after its stamp, its
/// copies' HBM traffic spread over that time, and it holds at most one CTA
/// while it waits. The last copy (the all-gather's own slot, the
/// reduce-scatter's last staged block) has only the final wait, and where
/// a share paceUs / groupSize is under 5 us only the final wait runs.
/// Copies slower than the pace make it take longer. With
/// `paceUs` < 0 (the stand-in mode) nothing is paced and `timerSlot` may be
/// null. With `peerInputs` null, not communication: no other rank's memory
/// is touched.
///
/// Across GPUs (the executor's NCCL mode) `peerInputs` holds groupSize
/// pointers, entry p rank p's input as this device addresses it (a peer
/// device's memory with peer access enabled, or a CUDA IPC mapping; entry
/// `rank` is `in`): the all-gather's slot p is a copy of peerInputs[p], the
/// reduce-scatter's staged block i a copy of block `rank` of rank
/// (rank+1+i) mod groupSize's input, pulled by this device's copy engines
/// (cudaMemcpyDefault). The caller orders the copies against the peers
/// (launchPeerSignalWait) and passes a permute's source rank's input as
/// `in`.
bool launchCopyEngineCollective(CollectiveKind kind, ReduceKind reduce,
                                const void *in, int64_t inCount, void *out,
                                int64_t outCount, DType type, int groupSize,
                                int rank, void *staging, int64_t stagingBytes,
                                uint64_t *timerSlot, double paceUs,
                                cudaStream_t stream, std::string &error,
                                const void *const *peerInputs = nullptr);

/// Cross-rank ordering of copy-engine collectives between ranks that map
/// each other's memory. `signalBases` (device memory) holds groupSize
/// pointers, entry p rank p's signal array (uint64 slots) as this device
/// addresses it. One CTA on `stream`: after a system-scope fence it stores
/// the epoch in `*epoch` (device memory) into slot `slot + rank` of each
/// peer's array (every peer, or only `signalTo` when >= 0), then waits
/// until slot `slot + p` of this rank's own array holds at least that epoch
/// for each peer p (every peer, or only `waitFrom` when >= 0). Epochs only
/// grow (launchAdvanceEpoch once per step on every rank), so no slot is
/// ever reset. A wait longer than `timeoutSeconds` traps: the step fails
/// with a launch error instead of hanging on a peer that is gone. Holds one
/// CTA while it waits; nothing for a group of one.
bool launchPeerSignalWait(uint64_t *const *signalBases, int groupSize, int rank,
                          int64_t slot, int signalTo, int waitFrom,
                          const uint64_t *epoch, double timeoutSeconds,
                          cudaStream_t stream, std::string &error);
/// `*epoch += 1` on `stream` (one thread).
bool launchAdvanceEpoch(uint64_t *epoch, cudaStream_t stream,
                        std::string &error);

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_KERNELS_H
