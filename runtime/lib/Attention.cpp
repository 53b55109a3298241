//===- Attention.cpp - Attention from cuBLASLt GEMMs and softmax kernels --===//
//
// Standard (non-fused) attention: per query head, the seq x seq scores are
// materialised in fp32 scratch, so scratch grows with seq^2 but not with the
// number of heads. Heads run one after another on the stream; each step is a
// cuBLASLt GEMM that addresses the head's columns of the packed qkv tensor
// in place through its row stride (no repacking).
//
// Forward, query head h with kv head g = h / (heads / kvHeads):
//   S = scale * Q_h K_g^T (fp32),  P = softmax(S) (masked),  O_h = P V_g.
// Backward (recomputing P):
//   dP = dO_h V_g^T,  D = rowsum(dO_h * O_h),  dS = P * (dP - D),
//   dV_g += P^T dO_h,  dK_g += scale * dS^T Q_h,  dQ_h = scale * dS K_g.
// dK_g / dV_g accumulate over the query heads of the group in fp32 scratch
// (GEMMs with beta = 1, heads in increasing order, so the sum is
// deterministic) and are rounded into dqkv once per group.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"
#include "KernelsInternal.h"

#include "tandem/runtime/Kernels.h"

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

bool validate(const char *what, const AttentionArgs &args, std::string &error) {
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
  return true;
}

/// Offsets into the scratch buffers (bytes); see the *ScratchBytes functions.
struct ForwardScratch {
  int64_t scores, probs, total;
  explicit ForwardScratch(const AttentionArgs &args) {
    int64_t square = args.seq * args.seq;
    scores = 0;
    probs = scores + alignUp(square * 4);
    total = probs + alignUp(square * dtypeBytes(args.type));
  }
};

struct BackwardScratch {
  int64_t probs32, dprobs, probs, rowDot, dk, dv, total;
  explicit BackwardScratch(const AttentionArgs &args) {
    int64_t square = args.seq * args.seq;
    int64_t kvBlock = args.seq * args.headDim * 4;
    probs32 = 0;
    dprobs = probs32 + alignUp(square * 4);
    probs = dprobs + alignUp(square * 4);
    rowDot = probs + alignUp(square * dtypeBytes(args.type));
    dk = rowDot + alignUp(args.heads * args.seq * 4);
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

int64_t attentionScratchBytes(const AttentionArgs &args) {
  if (args.seq <= 0)
    return 0;
  return ForwardScratch(args).total;
}

int64_t attentionGradScratchBytes(const AttentionArgs &args) {
  if (args.seq <= 0 || args.heads <= 0 || args.headDim <= 0)
    return 0;
  return BackwardScratch(args).total;
}

bool launchAttention(const BlasContext &blas, const AttentionArgs &args,
                     const void *qkv, void *out, void *scratch,
                     cudaStream_t stream, std::string &error) {
  const char *what = "launchAttention";
  if (!validate(what, args, error))
    return false;
  if (!qkv || !out || !scratch) {
    error = std::string(what) + ": null qkv, out or scratch";
    return false;
  }
  ForwardScratch layout(args);
  QkvLayout qkvLayout(args);
  float *scores = at<float>(scratch, layout.scores);
  void *probs = at<char>(scratch, layout.probs);
  int64_t seq = args.seq, d = args.headDim;
  int64_t outWidth = args.heads * d;
  int64_t group = args.heads / args.kvHeads;
  float scale = 1.0f / std::sqrt(static_cast<float>(d));

  for (int64_t h = 0; h < args.heads; ++h) {
    int64_t g = h / group;
    const void *query = offset(qkv, qkvLayout.query(h), args.type);
    const void *key = offset(qkv, qkvLayout.key(g), args.type);
    const void *value = offset(qkv, qkvLayout.value(g), args.type);
    // S = scale * Q_h K_g^T.
    if (!prefixError(
            what,
            detail::launchMatmulStrided(
                blas,
                gemm(args, seq, seq, d, false, true, DType::F32, scale, 0.0f),
                query, qkvLayout.width, key, qkvLayout.width, scores, seq,
                stream, error),
            error))
      return false;
    if (!prefixError(what,
                     detail::launchSoftmaxForward(scores, probs, args.type,
                                                  nullptr, seq, args.causal,
                                                  stream, error),
                     error))
      return false;
    // O_h = P V_g.
    if (!prefixError(
            what,
            detail::launchMatmulStrided(
                blas,
                gemm(args, seq, d, seq, false, false, args.type, 1.0f, 0.0f),
                probs, seq, value, qkvLayout.width,
                offset(out, h * d, args.type), outWidth, stream, error),
            error))
      return false;
  }
  return true;
}

bool launchAttentionGrad(const BlasContext &blas, const AttentionArgs &args,
                         const void *dout, const void *qkv, const void *out,
                         void *dqkv, void *scratch, cudaStream_t stream,
                         std::string &error) {
  const char *what = "launchAttentionGrad";
  if (!validate(what, args, error))
    return false;
  if (!dout || !qkv || !out || !dqkv || !scratch) {
    error = std::string(what) + ": null dout, qkv, out, dqkv or scratch";
    return false;
  }
  BackwardScratch layout(args);
  QkvLayout qkvLayout(args);
  float *probs32 = at<float>(scratch, layout.probs32);
  float *dprobs = at<float>(scratch, layout.dprobs);
  void *probs = at<char>(scratch, layout.probs); // Later dS, same type.
  float *rowDot = at<float>(scratch, layout.rowDot);
  float *dkAcc = at<float>(scratch, layout.dk);
  float *dvAcc = at<float>(scratch, layout.dv);
  int64_t seq = args.seq, d = args.headDim;
  int64_t outWidth = args.heads * d;
  int64_t group = args.heads / args.kvHeads;
  float scale = 1.0f / std::sqrt(static_cast<float>(d));
  int64_t width = qkvLayout.width;

  if (!prefixError(what,
                   detail::launchAttentionRowDot(dout, out, args.type, rowDot,
                                                 seq, args.heads, d, stream,
                                                 error),
                   error))
    return false;

  for (int64_t g = 0; g < args.kvHeads; ++g) {
    const void *key = offset(qkv, qkvLayout.key(g), args.type);
    const void *value = offset(qkv, qkvLayout.value(g), args.type);
    for (int64_t t = 0; t < group; ++t) {
      int64_t h = g * group + t;
      float accumulate = t == 0 ? 0.0f : 1.0f;
      const void *query = offset(qkv, qkvLayout.query(h), args.type);
      const void *dO = offset(dout, h * d, args.type);
      bool ok =
          // S = scale * Q_h K_g^T, then P in place (fp32) and as `type`.
          detail::launchMatmulStrided(
              blas,
              gemm(args, seq, seq, d, false, true, DType::F32, scale, 0.0f),
              query, width, key, width, probs32, seq, stream, error) &&
          detail::launchSoftmaxForward(probs32, probs, args.type, probs32, seq,
                                       args.causal, stream, error) &&
          // dP = dO_h V_g^T.
          detail::launchMatmulStrided(
              blas,
              gemm(args, seq, seq, d, false, true, DType::F32, 1.0f, 0.0f), dO,
              outWidth, value, width, dprobs, seq, stream, error) &&
          // dV_g (+)= P^T dO_h.
          detail::launchMatmulStrided(blas,
                                      gemm(args, seq, d, seq, true, false,
                                           DType::F32, 1.0f, accumulate),
                                      probs, seq, dO, outWidth, dvAcc, d,
                                      stream, error) &&
          // dS = P * (dP - D) overwrites P (the dV GEMM has read it: the
          // stream orders them).
          detail::launchSoftmaxBackward(probs32, dprobs, rowDot + h * seq,
                                        probs, args.type, seq, stream, error) &&
          // dK_g (+)= scale * dS^T Q_h.
          detail::launchMatmulStrided(blas,
                                      gemm(args, seq, d, seq, true, false,
                                           DType::F32, scale, accumulate),
                                      probs, seq, query, width, dkAcc, d,
                                      stream, error) &&
          // dQ_h = scale * dS K_g, straight into dqkv.
          detail::launchMatmulStrided(
              blas,
              gemm(args, seq, d, seq, false, false, args.type, scale, 0.0f),
              probs, seq, key, width,
              offset(dqkv, qkvLayout.query(h), args.type), width, stream,
              error);
      if (!prefixError(what, ok, error))
        return false;
    }
    bool ok = detail::launchAccumulateCast(
                  dkAcc, d, offset(dqkv, qkvLayout.key(g), args.type),
                  args.type, width, seq, d, 0.0f, stream, error) &&
              detail::launchAccumulateCast(
                  dvAcc, d, offset(dqkv, qkvLayout.value(g), args.type),
                  args.type, width, seq, d, 0.0f, stream, error);
    if (!prefixError(what, ok, error))
      return false;
  }
  return true;
}

} // namespace runtime
} // namespace tandem
