//===- AttentionKernels.h - Softmax kernels of attention --------*- C++ -*-===//
//
// Private to the runtime library. Attention.cpp builds attention from
// cuBLASLt GEMMs (Matmul.cpp) and these element-wise / row-wise kernels,
// which live in Kernels.cu so that Attention.cpp stays plain C++.
//
// Score matrices are per head, rows x seq, fp32, row-major and dense (row i
// holds the scores of query i against every key; rows = seq, or the
// forward's `queries`, the last rows of the sequence); a batch of heads
// stores its matrices back to back, and one launch covers the whole batch. Like
// everything in Kernels.h, each row is reduced by one CTA of a fixed size in
// a fixed order, so results are bitwise reproducible.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_ATTENTIONKERNELS_H
#define TANDEM_RUNTIME_LIB_ATTENTIONKERNELS_H

#include "tandem/runtime/Kernels.h"
#include "tandem/runtime/Plan.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace tandem {
namespace runtime {
namespace detail {

/// Row softmax of `count` already scaled score matrices (rows x keys fp32
/// each, stored back to back: row r = matrix r / rows, query i = r % rows,
/// at `scores + r * keys`). The queries are the last `rows` of `keys`
/// positions: with `causal`, keys j > keys - rows + i of query i are masked
/// (probability 0; the mask aligned to the bottom right, the usual one when
/// rows == keys). Writes the probabilities as `probsType` to row r of
/// `probs` (at `probs + r * probsLd` elements) and, when `probs32` is not
/// null, as fp32 to `probs32` (row stride keys). Either may alias `scores`
/// with the same row starts (probsLd * size(probsType) == keys * 4): the
/// probabilities then overwrite the scores in place.
bool launchSoftmaxForward(const float *scores, int64_t count, int64_t rows,
                          int64_t keys, bool causal, void *probs,
                          DType probsType, int64_t probsLd, float *probs32,
                          cudaStream_t stream, std::string &error);

/// `rowDot[h * seq + i] = sum_c dout[i, h*headDim + c] * out[i, h*headDim+c]`
/// for every head h, where `dout` and `out` are seq x heads*headDim of
/// `type`: the D term of the softmax backward.
bool launchAttentionRowDot(const void *dout, const void *out, DType type,
                           float *rowDot, int64_t seq, int64_t heads,
                           int64_t headDim, cudaStream_t stream,
                           std::string &error);

/// Which query head the score matrix in batch slot s belongs to: slot
/// s = jj * kvCount + gi holds head (kvBegin + gi) * group + groupBegin + jj.
struct AttentionHeadMap {
  int64_t kvBegin = 0, kvCount = 1, groupBegin = 0, group = 1;
};

/// Softmax backward for `count` score matrices laid out as in
/// launchSoftmaxForward: `dscores[r, j] = probs32[r, j] * (dprobs[r, j] -
/// rowDot[h * seq + i])` with h the head of slot r / seq (`map`) and
/// i = r % seq, rounded to `dscoresType` (row r at `dscores + r *
/// dscoresLd`). Masked entries have probability 0 and so get gradient 0.
/// `dscores` may alias `dprobs` with the same row starts (in place).
bool launchSoftmaxBackward(const float *probs32, const float *dprobs,
                           const float *rowDot, void *dscores,
                           DType dscoresType, int64_t dscoresLd, int64_t count,
                           int64_t seq, const AttentionHeadMap &map,
                           cudaStream_t stream, std::string &error);

/// launchFusedAttentionGrad with the dK/dV pass split into `splits` parts
/// of each GQA group (fusedAttentionGradSplits picks them; tests compare
/// the split and unsplit passes), and the scratch that needs.
bool launchFusedAttentionGrad(const AttentionArgs &args, const void *dout,
                              const void *qkv, const void *out,
                              const float *lse, void *dqkv, void *scratch,
                              int splits, cudaStream_t stream,
                              std::string &error);
int64_t fusedAttentionGradScratchBytes(const AttentionArgs &args, int splits);

} // namespace detail
} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_LIB_ATTENTIONKERNELS_H
