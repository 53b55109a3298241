//===- AttentionKernels.h - Softmax kernels of attention --------*- C++ -*-===//
//
// Private to the runtime library. Attention.cpp builds attention from
// cuBLASLt GEMMs (Matmul.cpp) and these element-wise / row-wise kernels,
// which live in Kernels.cu so that Attention.cpp stays plain C++.
//
// Score matrices are per head, seq x seq, fp32, row-major and dense (row i
// holds the scores of query i against every key). Like everything in
// Kernels.h, each row is reduced by one CTA of a fixed size in a fixed order,
// so results are bitwise reproducible.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_ATTENTIONKERNELS_H
#define TANDEM_RUNTIME_LIB_ATTENTIONKERNELS_H

#include "tandem/runtime/Plan.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace tandem {
namespace runtime {
namespace detail {

/// Row softmax of already scaled `scores` (seq x seq fp32). With `causal`,
/// keys j > i of row i are masked (probability 0). Writes the probabilities
/// to `probs` (seq x seq, `probsType`) and, when `probs32` is not null, also
/// as fp32 to `probs32`, which may be `scores` itself (in place).
bool launchSoftmaxForward(const float *scores, void *probs, DType probsType,
                          float *probs32, int64_t seq, bool causal,
                          cudaStream_t stream, std::string &error);

/// `rowDot[h * seq + i] = sum_c dout[i, h*headDim + c] * out[i, h*headDim+c]`
/// for every head h, where `dout` and `out` are seq x heads*headDim of
/// `type`: the D term of the softmax backward.
bool launchAttentionRowDot(const void *dout, const void *out, DType type,
                           float *rowDot, int64_t seq, int64_t heads,
                           int64_t headDim, cudaStream_t stream,
                           std::string &error);

/// Softmax backward for one head: `dscores[i, j] = probs32[i, j] *
/// (dprobs[i, j] - rowDot[i])`, rounded to `dscoresType` (seq x seq). Masked
/// entries have probability 0 and so get gradient 0.
bool launchSoftmaxBackward(const float *probs32, const float *dprobs,
                           const float *rowDot, void *dscores,
                           DType dscoresType, int64_t seq, cudaStream_t stream,
                           std::string &error);

} // namespace detail
} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_LIB_ATTENTIONKERNELS_H
