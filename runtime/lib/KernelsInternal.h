//===- KernelsInternal.h - Helpers of the compute launches ------*- C++ -*-===//
//
// Private to the runtime library (and its unit tests): the strided (and
// strided-batched) matmul that launchMatmul and the attention launches share,
// how attention splits its heads into scratch-bounded batches, the fp32-to-any
// cast used where cuBLASLt cannot write the requested output type, and the byte
// accounting of the opaque stand-in, exposed so that tests can check it.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_KERNELSINTERNAL_H
#define TANDEM_RUNTIME_LIB_KERNELSINTERNAL_H

#include "tandem/runtime/Kernels.h"

#include <cstdint>
#include <string>

namespace tandem {
namespace runtime {
namespace detail {

/// launchMatmul with explicit leading dimensions (in elements) of the
/// row-major operands: A is stored m x k (k x m when transposed) with row
/// stride `lda`, B k x n (n x k) with `ldb`, C m x n with `ldc`. Lets
/// attention address one head's columns of the packed qkv tensor in place.
bool launchMatmulStrided(const BlasContext &blas, const MatmulArgs &args,
                         const void *a, int64_t lda, const void *b, int64_t ldb,
                         void *c, int64_t ldc, cudaStream_t stream,
                         std::string &error);

/// A strided batch of `count` GEMMs of one shape: matrix i of A, B and C
/// starts `i * stride*` elements (of its own type) after the pointer passed
/// for it. Strides may be smaller than a matrix (interleaved heads of a
/// packed tensor) as long as the matrices of C do not overlap.
struct MatmulBatch {
  int64_t count = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0;
};

/// launchMatmulStrided over a strided batch: one cuBLASLt launch
/// (CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT / STRIDED_BATCH_OFFSET) where cuBLASLt
/// writes C directly, one launch per matrix otherwise.
bool launchMatmulStridedBatched(const BlasContext &blas, const MatmulArgs &args,
                                const void *a, int64_t lda, const void *b,
                                int64_t ldb, void *c, int64_t ldc,
                                const MatmulBatch &batch, cudaStream_t stream,
                                std::string &error);

/// `dst[r, c] = round(src[r, c] + beta * dst[r, c])` over a rows x cols
/// window; `src` (fp32) and `dst` are row-major with row strides `srcLd` and
/// `dstLd`. A null `src` reads as zeros; `beta` = 0 never reads `dst`.
bool launchAccumulateCast(const float *src, int64_t srcLd, void *dst,
                          DType dstType, int64_t dstLd, int64_t rows,
                          int64_t cols, float beta, cudaStream_t stream,
                          std::string &error);

/// How launchOpaque splits its traffic: `generateBytes` are the bytes the
/// output-writing kernels move (each output written once, plus the bytes of
/// input 0 they read), `sweepBytes` the extra read-only traffic over the
/// inputs (or, without inputs, the outputs) that brings the total to
/// `declaredBytes`. The total is max(declaredBytes, generateBytes).
/// How the attention launches batch their heads: the kv heads are taken
/// `kvPerBatch` at a time and, within those, the query heads of each group
/// `groupPerBatch` at a time, so a batch holds at most kvPerBatch *
/// groupPerBatch heads (its score matrices live in scratch at once). One
/// cuBLASLt launch covers the kv heads of a batch for one query index within
/// the group. Sized so that the scores of a batch stay within ~1 GiB.
struct AttentionBatching {
  int64_t kvPerBatch = 1, groupPerBatch = 1;
  int64_t headsPerBatch() const { return kvPerBatch * groupPerBatch; }
};
AttentionBatching attentionBatching(const AttentionArgs &args, bool backward);

/// Test hook: caps the heads of one attention batch (0 restores the
/// default). Not thread-safe with concurrent launches; tests only.
void setAttentionMaxHeadsPerBatch(int64_t heads);

/// How launchCopy2D spreads a copy of `rows` rows of `rowWords` words: CTAs
/// of threadsX x threadsY threads (threadsX a multiple of 32, the product
/// 256; narrow rows put several rows in a CTA), a grid of blocksX x blocksY
/// CTAs sized to one full wave of the device's `smCount` SMs (fewer where
/// the copy is small), each thread moving several words per row.
struct CopyGrid {
  int threadsX = 32, threadsY = 1;
  int64_t blocksX = 1, blocksY = 1;
};
CopyGrid planCopy2D(int64_t rowWords, int64_t rows, int smCount);

/// The widest word (16, 8, 4, 2 or 1 bytes) that divides the row width,
/// both pitches and both addresses: launchCopy2D's access size.
int copyWordBytes(uintptr_t dst, int64_t dstPitch, uintptr_t src,
                  int64_t srcPitch, int64_t rowBytes);

struct OpaqueTraffic {
  int64_t generateBytes = 0;
  int64_t sweepBytes = 0;
};
OpaqueTraffic planOpaqueTraffic(const int64_t *inputBytes, int numInputs,
                                const int64_t *outputBytes,
                                DType const *outputTypes, int numOutputs,
                                int64_t declaredBytes);

} // namespace detail
} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_LIB_KERNELSINTERNAL_H
