//===- Attention.cpp - Attention from cuBLASLt GEMMs and softmax kernels --===//
//
// Standard (non-fused) attention: the rows x seq scores of a batch of query
// heads (rows = seq, or the forward's `queries`) are materialised in fp32
// scratch at once, so scratch grows with rows * seq times the heads of a
// batch (detail::attentionBatching sizes batches to ~1 GiB of scores). Each
// step is a cuBLASLt strided-batched GEMM over the kv heads of the batch for
// one query index j within the GQA group: query head h = g * group + j, so the
// query (and dq, out, dout) matrices of the batch are group * headDim columns
// apart in the packed tensors and the key / value ones headDim apart; all are
// addressed in place through their row strides (no repacking). One softmax
// launch covers the whole batch.
//
// Forward, query head h with kv head g = h / group:
//   S = scale * Q_h K_g^T (fp32),  P = softmax(S) (masked),  O_h = P V_g.
// P is written over S in place (as `type`, row r of P starting where row r
// of S does), so a head needs rows * seq * 4 bytes. With `queries` = N the
// rows are the last N of qkv (Q_h starts N rows before the end, K_g and
// V_g are all seq rows): S is N x seq and the softmax's causal mask is
// shifted by seq - N (bottom-right aligned), so each output row is the
// full attention's row of the same position, at N x seq cost.
// Backward (recomputing P), per head, in two seq^2 fp32 buffers A and C:
//   A = S -> P (fp32, in place),  C = P (as `type`, narrowed layout),
//   dV_g (+)= P^T dO_h (reads C),  C = dP = dO_h V_g^T (fp32),
//   D = rowsum(dO_h * O_h),  C = dS = P * (dP - D) (as `type`, in place),
//   dK_g (+)= scale * dS^T Q_h,  dQ_h = scale * dS K_g.
// With GQA (group > 1), dK_g / dV_g accumulate over j = 0 .. group-1 in
// increasing order in fp32 scratch (GEMMs with beta = 1, so the sum is
// deterministic) and are rounded into dqkv once per batch of kv heads;
// without GQA the GEMMs write dK / dV straight into dqkv.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"
#include "KernelsInternal.h"

#include "tandem/runtime/Kernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tandem {
namespace runtime {

namespace {

constexpr int64_t kScratchAlignment = 256;

int64_t alignUp(int64_t value) {
  return (value + kScratchAlignment - 1) / kScratchAlignment *
         kScratchAlignment;
}

bool validate(const char *what, const AttentionArgs &args, bool backward,
              std::string &error) {
  if (args.seq <= 0 || args.heads <= 0 || args.kvHeads <= 0 ||
      args.headDim <= 0) {
    error = std::string(what) + ": seq, heads, kvHeads and headDim must be " +
            "positive (got " + std::to_string(args.seq) + ", " +
            std::to_string(args.heads) + ", " + std::to_string(args.kvHeads) +
            ", " + std::to_string(args.headDim) + ")";
    return false;
  }
  if (args.heads % args.kvHeads != 0) {
    error = std::string(what) + ": " + std::to_string(args.heads) +
            " query heads are not a multiple of " +
            std::to_string(args.kvHeads) + " kv heads";
    return false;
  }
  if (args.queries < 0 || args.queries > args.seq) {
    error = std::string(what) + ": queries " + std::to_string(args.queries) +
            " outside [0, " + std::to_string(args.seq) + "] (the rows of qkv)";
    return false;
  }
  if (backward && args.queries != 0) {
    error = std::string(what) + ": queries " + std::to_string(args.queries) +
            " applies to the attention forward only (the backward takes " +
            "every row of qkv as a query)";
    return false;
  }
  return true;
}

/// Scores of one batch may use this much scratch (at least one head).
constexpr int64_t kScoresBudget = int64_t(1) << 30;

/// Test override of the heads per batch (0: none).
std::atomic<int64_t> maxHeadsPerBatch{0};

bool validArgs(const AttentionArgs &args) {
  return args.seq > 0 && args.heads > 0 && args.kvHeads > 0 &&
         args.headDim > 0 && args.heads % args.kvHeads == 0 &&
         args.queries >= 0 && args.queries <= args.seq;
}

/// Offsets into the scratch buffers (bytes); see the *ScratchBytes functions.
struct ForwardScratch {
  int64_t scores, total;
  explicit ForwardScratch(const AttentionArgs &args) {
    int64_t heads = detail::attentionBatching(args, false).headsPerBatch();
    scores = 0;
    total = scores + alignUp(heads * args.queryRows() * args.seq * 4);
  }
};

struct BackwardScratch {
  int64_t rowDot, probs32, dprobs, dk, dv, total;
  explicit BackwardScratch(const AttentionArgs &args) {
    detail::AttentionBatching batching = detail::attentionBatching(args, true);
    int64_t scores = batching.headsPerBatch() * args.seq * args.seq * 4;
    int64_t group = args.heads / args.kvHeads;
    // fp32 dK / dV sums of a batch's kv heads, only with GQA.
    int64_t kvBlock =
        group > 1 ? batching.kvPerBatch * args.seq * args.headDim * 4 : 0;
    rowDot = 0;
    probs32 = rowDot + alignUp(args.heads * args.seq * 4);
    dprobs = probs32 + alignUp(scores);
    dk = dprobs + alignUp(scores);
    dv = dk + alignUp(kvBlock);
    total = dv + alignUp(kvBlock);
  }
};

/// Element offsets of the packed qkv layout.
struct QkvLayout {
  int64_t width, headDim, heads, kvHeads;
  explicit QkvLayout(const AttentionArgs &args)
      : width((args.heads + 2 * args.kvHeads) * args.headDim),
        headDim(args.headDim), heads(args.heads), kvHeads(args.kvHeads) {}
  int64_t query(int64_t h) const { return h * headDim; }
  int64_t key(int64_t g) const { return (heads + g) * headDim; }
  int64_t value(int64_t g) const { return (heads + kvHeads + g) * headDim; }
};

/// Pointer `elements` elements of `type` past `base`.
template <typename T> T *offset(T *base, int64_t elements, DType type) {
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return reinterpret_cast<T *>(reinterpret_cast<Byte *>(base) +
                               elements * dtypeBytes(type));
}

template <typename T> T *at(void *scratch, int64_t bytes) {
  return reinterpret_cast<T *>(static_cast<char *>(scratch) + bytes);
}

/// MatmulArgs for one attention GEMM.
MatmulArgs gemm(const AttentionArgs &args, int64_t m, int64_t n, int64_t k,
                bool transA, bool transB, DType cType, float alpha,
                float beta) {
  MatmulArgs result;
  result.m = m;
  result.n = n;
  result.k = k;
  result.transA = transA;
  result.transB = transB;
  result.abType = args.type;
  result.cType = cType;
  result.smTarget = args.smTarget;
  result.alpha = alpha;
  result.beta = beta;
  return result;
}

bool prefixError(const char *what, bool ok, std::string &error) {
  if (!ok)
    error = std::string(what) + ": " + error;
  return ok;
}

} // namespace

namespace detail {

AttentionBatching attentionBatching(const AttentionArgs &args, bool backward) {
  AttentionBatching batching;
  if (!validArgs(args))
    return batching;
  int64_t group = args.heads / args.kvHeads;
  // Scratch per head: the rows x seq scores (forward); two seq x seq
  // buffers (backward, where every row is a query).
  int64_t perHead =
      backward ? args.seq * args.seq * 4 * 2 : args.queryRows() * args.seq * 4;
  int64_t fit = std::max<int64_t>(1, kScoresBudget / perHead);
  if (int64_t cap = maxHeadsPerBatch.load(); cap > 0)
    fit = std::min(fit, cap);
  // Balanced batches: the same number of batches, as even as possible.
  auto balance = [](int64_t total, int64_t most) {
    int64_t batches = (total + most - 1) / most;
    return (total + batches - 1) / batches;
  };
  if (fit >= group) {
    batching.groupPerBatch = group;
    batching.kvPerBatch = balance(args.kvHeads, fit / group);
  } else {
    batching.kvPerBatch = 1;
    batching.groupPerBatch = balance(group, fit);
  }
  return batching;
}

void setAttentionMaxHeadsPerBatch(int64_t heads) {
  maxHeadsPerBatch.store(std::max<int64_t>(0, heads));
}

} // namespace detail

double attentionForwardFlops(const AttentionArgs &args) {
  if (!validArgs(args))
    return 0;
  double n = static_cast<double>(args.queryRows());
  double s = static_cast<double>(args.seq);
  double pairs = args.causal ? n * (s - n) + n * n / 2 : n * s;
  return 4.0 * pairs * static_cast<double>(args.headDim) *
         static_cast<double>(args.heads);
}

int64_t attentionScratchBytes(const AttentionArgs &args) {
  if (!validArgs(args))
    return 0;
  return ForwardScratch(args).total;
}

int64_t attentionGradScratchBytes(const AttentionArgs &args) {
  if (!validArgs(args))
    return 0;
  return BackwardScratch(args).total;
}

bool launchAttention(const BlasContext &blas, const AttentionArgs &args,
                     const void *qkv, void *out, void *scratch,
                     cudaStream_t stream, std::string &error) {
  const char *what = "launchAttention";
  if (!validate(what, args, false, error))
    return false;
  if (!qkv || !out || !scratch) {
    error = std::string(what) + ": null qkv, out or scratch";
    return false;
  }
  ForwardScratch layout(args);
  QkvLayout qkvLayout(args);
  detail::AttentionBatching batching = detail::attentionBatching(args, false);
  float *scores = at<float>(scratch, layout.scores);
  // rows x seq scores per head: the queries are the last `rows` rows.
  int64_t seq = args.seq, rows = args.queryRows(), d = args.headDim;
  int64_t matrix = rows * seq;
  int64_t outWidth = args.heads * d;
  int64_t group = args.heads / args.kvHeads;
  float scale = 1.0f / std::sqrt(static_cast<float>(d));
  // P overwrites S: row r of P (as `type`) starts where row r of S does.
  int64_t typeBytes = dtypeBytes(args.type);
  int64_t probsLd = seq * 4 / typeBytes;
  int64_t probsStride = matrix * 4 / typeBytes;
  const void *queries = offset(qkv, (seq - rows) * qkvLayout.width, args.type);

  for (int64_t g0 = 0; g0 < args.kvHeads; g0 += batching.kvPerBatch) {
    int64_t nb = std::min(batching.kvPerBatch, args.kvHeads - g0);
    for (int64_t j0 = 0; j0 < group; j0 += batching.groupPerBatch) {
      int64_t nj = std::min(batching.groupPerBatch, group - j0);
      // Slot jj * nb + gi holds head (g0 + gi) * group + j0 + jj.
      for (int64_t jj = 0; jj < nj; ++jj) {
        int64_t h = g0 * group + j0 + jj;
        detail::MatmulBatch batch;
        batch.count = nb;
        batch.strideA = group * d;
        batch.strideB = d;
        batch.strideC = matrix;
        // S = scale * Q_h K_g^T.
        if (!prefixError(what,
                         detail::launchMatmulStridedBatched(
                             blas,
                             gemm(args, rows, seq, d, false, true, DType::F32,
                                  scale, 0.0f),
                             offset(queries, qkvLayout.query(h), args.type),
                             qkvLayout.width,
                             offset(qkv, qkvLayout.key(g0), args.type),
                             qkvLayout.width, scores + jj * nb * matrix, seq,
                             batch, stream, error),
                         error))
          return false;
      }
      if (!prefixError(what,
                       detail::launchSoftmaxForward(
                           scores, nb * nj, rows, seq, args.causal, scores,
                           args.type, probsLd, nullptr, stream, error),
                       error))
        return false;
      for (int64_t jj = 0; jj < nj; ++jj) {
        int64_t h = g0 * group + j0 + jj;
        detail::MatmulBatch batch;
        batch.count = nb;
        batch.strideA = probsStride;
        batch.strideB = d;
        batch.strideC = group * d;
        // O_h = P V_g.
        if (!prefixError(what,
                         detail::launchMatmulStridedBatched(
                             blas,
                             gemm(args, rows, d, seq, false, false, args.type,
                                  1.0f, 0.0f),
                             offset(static_cast<const void *>(scores),
                                    jj * nb * probsStride, args.type),
                             probsLd,
                             offset(qkv, qkvLayout.value(g0), args.type),
                             qkvLayout.width, offset(out, h * d, args.type),
                             outWidth, batch, stream, error),
                         error))
          return false;
      }
    }
  }
  return true;
}

bool launchAttentionGrad(const BlasContext &blas, const AttentionArgs &args,
                         const void *dout, const void *qkv, const void *out,
                         void *dqkv, void *scratch, cudaStream_t stream,
                         std::string &error) {
  const char *what = "launchAttentionGrad";
  if (!validate(what, args, true, error))
    return false;
  if (!dout || !qkv || !out || !dqkv || !scratch) {
    error = std::string(what) + ": null dout, qkv, out, dqkv or scratch";
    return false;
  }
  BackwardScratch layout(args);
  QkvLayout qkvLayout(args);
  detail::AttentionBatching batching = detail::attentionBatching(args, true);
  float *rowDot = at<float>(scratch, layout.rowDot);
  float *probs32 = at<float>(scratch, layout.probs32); // Buffer A.
  float *dprobs = at<float>(scratch, layout.dprobs);   // Buffer C.
  void *probs = dprobs; // P, then dS, as `type` over C.
  float *dkAcc = at<float>(scratch, layout.dk);
  float *dvAcc = at<float>(scratch, layout.dv);
  int64_t seq = args.seq, d = args.headDim, square = seq * seq;
  int64_t outWidth = args.heads * d;
  int64_t group = args.heads / args.kvHeads;
  bool accumulate = group > 1;
  float scale = 1.0f / std::sqrt(static_cast<float>(d));
  int64_t width = qkvLayout.width;
  int64_t typeBytes = dtypeBytes(args.type);
  int64_t probsLd = seq * 4 / typeBytes;
  int64_t probsStride = square * 4 / typeBytes;
  DType kvType = accumulate ? DType::F32 : args.type;

  if (!prefixError(what,
                   detail::launchAttentionRowDot(dout, out, args.type, rowDot,
                                                 seq, args.heads, d, stream,
                                                 error),
                   error))
    return false;

  for (int64_t g0 = 0; g0 < args.kvHeads; g0 += batching.kvPerBatch) {
    int64_t nb = std::min(batching.kvPerBatch, args.kvHeads - g0);
    const void *key = offset(qkv, qkvLayout.key(g0), args.type);
    const void *value = offset(qkv, qkvLayout.value(g0), args.type);
    // dK / dV of kv head g0 + gi: column gi * d of the fp32 sums (row
    // stride nb * d), or straight into dqkv without GQA.
    void *dkOut = accumulate ? static_cast<void *>(dkAcc)
                             : offset(dqkv, qkvLayout.key(g0), args.type);
    void *dvOut = accumulate ? static_cast<void *>(dvAcc)
                             : offset(dqkv, qkvLayout.value(g0), args.type);
    int64_t kvLd = accumulate ? nb * d : width;
    for (int64_t j0 = 0; j0 < group; j0 += batching.groupPerBatch) {
      int64_t nj = std::min(batching.groupPerBatch, group - j0);
      auto launch = [&](const MatmulArgs &gemmArgs, const void *a, int64_t lda,
                        int64_t strideA, const void *b, int64_t ldb,
                        int64_t strideB, void *c, int64_t ldc,
                        int64_t strideC) {
        detail::MatmulBatch batch;
        batch.count = nb;
        batch.strideA = strideA;
        batch.strideB = strideB;
        batch.strideC = strideC;
        return prefixError(
            what,
            detail::launchMatmulStridedBatched(blas, gemmArgs, a, lda, b, ldb,
                                               c, ldc, batch, stream, error),
            error);
      };
      auto probsOf = [&](int64_t jj) {
        return offset(probs, jj * nb * probsStride, args.type);
      };
      // S = scale * Q_h K_g^T into A.
      for (int64_t jj = 0; jj < nj; ++jj) {
        int64_t h = g0 * group + j0 + jj;
        if (!launch(
                gemm(args, seq, seq, d, false, true, DType::F32, scale, 0.0f),
                offset(qkv, qkvLayout.query(h), args.type), width, group * d,
                key, width, d, probs32 + jj * nb * square, seq, square))
          return false;
      }
      // P in place in A (fp32) and as `type` into C.
      if (!prefixError(what,
                       detail::launchSoftmaxForward(
                           probs32, nb * nj, seq, seq, args.causal, probs,
                           args.type, probsLd, probs32, stream, error),
                       error))
        return false;
      // dV_g (+)= P^T dO_h, in increasing j.
      for (int64_t jj = 0; jj < nj; ++jj) {
        int64_t j = j0 + jj, h = g0 * group + j;
        float beta = accumulate && j > 0 ? 1.0f : 0.0f;
        if (!launch(gemm(args, seq, d, seq, true, false, kvType, 1.0f, beta),
                    probsOf(jj), probsLd, probsStride,
                    offset(dout, h * d, args.type), outWidth, group * d, dvOut,
                    kvLd, d))
          return false;
      }
      // dP = dO_h V_g^T into C (the dV GEMMs above have read P: the stream
      // orders them).
      for (int64_t jj = 0; jj < nj; ++jj) {
        int64_t h = g0 * group + j0 + jj;
        if (!launch(
                gemm(args, seq, seq, d, false, true, DType::F32, 1.0f, 0.0f),
                offset(dout, h * d, args.type), outWidth, group * d, value,
                width, d, dprobs + jj * nb * square, seq, square))
          return false;
      }
      // dS = P * (dP - D), as `type` in place over dP.
      detail::AttentionHeadMap map;
      map.kvBegin = g0;
      map.kvCount = nb;
      map.groupBegin = j0;
      map.group = group;
      if (!prefixError(what,
                       detail::launchSoftmaxBackward(
                           probs32, dprobs, rowDot, probs, args.type, probsLd,
                           nb * nj, seq, map, stream, error),
                       error))
        return false;
      for (int64_t jj = 0; jj < nj; ++jj) {
        int64_t j = j0 + jj, h = g0 * group + j;
        float beta = accumulate && j > 0 ? 1.0f : 0.0f;
        const void *query = offset(qkv, qkvLayout.query(h), args.type);
        // dK_g (+)= scale * dS^T Q_h, then dQ_h = scale * dS K_g.
        if (!launch(gemm(args, seq, d, seq, true, false, kvType, scale, beta),
                    probsOf(jj), probsLd, probsStride, query, width, group * d,
                    dkOut, kvLd, d) ||
            !launch(
                gemm(args, seq, d, seq, false, false, args.type, scale, 0.0f),
                probsOf(jj), probsLd, probsStride, key, width, d,
                offset(dqkv, qkvLayout.query(h), args.type), width, group * d))
          return false;
      }
    }
    if (!accumulate)
      continue;
    bool ok = detail::launchAccumulateCast(
                  dkAcc, nb * d, offset(dqkv, qkvLayout.key(g0), args.type),
                  args.type, width, seq, nb * d, 0.0f, stream, error) &&
              detail::launchAccumulateCast(
                  dvAcc, nb * d, offset(dqkv, qkvLayout.value(g0), args.type),
                  args.type, width, seq, nb * d, 0.0f, stream, error);
    if (!prefixError(what, ok, error))
      return false;
  }
  return true;
}

} // namespace runtime
} // namespace tandem
