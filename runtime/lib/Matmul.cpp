//===- Matmul.cpp - cuBLASLt matmuls on row-major tensors -----------------===//
//
// cuBLASLt is column-major. A row-major r x c matrix with row stride ld is
// the column-major c x r matrix (its transpose) with the same ld, so the
// row-major C = op(A) op(B) is computed as the column-major
// C^T = op(B)^T op(A)^T: B is passed as cuBLASLt's first operand, A as its
// second, and m and n swap. No data moves.
//
// Compute type CUBLAS_COMPUTE_32F with fp32 scale for bf16/f16 operands;
// f32 operands use CUBLAS_COMPUTE_32F_FAST_TF32, because the cost model
// prices f32 GEMMs at the TF32 tensor-core peak (docs/cost-model.md).
//
// cuBLASLt writes C in the operand type or fp32 only (and f32 operands only
// to f32). The other combinations go through an fp32 staging buffer carved
// from the front of the workspace, followed by one accumulate-and-round
// kernel, so C is still rounded once.
//
// Strided batches set CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT and
// STRIDED_BATCH_OFFSET on all three layouts; the alignment preferences then
// also account for the batch strides.
//
// Descriptors and the heuristic's first algorithm are cached per
// (handle, shape, strides, types, transposes, SM target, workspace,
// pointer alignments, batch count and strides): a plan launches the same GEMMs
// every step, and the heuristic query costs far more than the launch.
//
//===----------------------------------------------------------------------===//

#include "KernelsInternal.h"

#include "tandem/runtime/Kernels.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

namespace tandem {
namespace runtime {

namespace {

cudaDataType_t cudaDataType(DType type) {
  switch (type) {
  case DType::BF16:
    return CUDA_R_16BF;
  case DType::F16:
    return CUDA_R_16F;
  case DType::F32:
    return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

std::string statusText(cublasStatus_t status) {
  return std::string(cublasLtGetStatusName(status)) + " (" +
         cublasLtGetStatusString(status) + ")";
}

/// Whether cuBLASLt writes `cType` directly from `abType` operands.
bool cublasWritesDirectly(DType abType, DType cType) {
  return cType == DType::F32 || cType == abType;
}

/// Largest power of two (at most 256) that divides the address: cuBLASLt's
/// heuristic assumes 256-byte aligned buffers unless told otherwise.
uint32_t pointerAlignment(const void *pointer) {
  uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  uint32_t alignment = 256;
  while (alignment > 1 && address % alignment != 0)
    alignment /= 2;
  return alignment;
}

/// pointerAlignment of every matrix of a strided batch: the base's
/// alignment, lowered to what the batch stride (in bytes) preserves.
uint32_t batchAlignment(const void *pointer, int64_t count,
                        int64_t strideBytes) {
  uint32_t alignment = pointerAlignment(pointer);
  if (count > 1)
    while (alignment > 1 && strideBytes % alignment != 0)
      alignment /= 2;
  return alignment;
}

struct PlanKey {
  cublasLtHandle_t handle;
  int64_t m, n, k, lda, ldb, ldc;
  bool transA, transB;
  DType abType, dType;
  int smTarget;
  uint64_t workspaceBytes;
  uint32_t alignA, alignB, alignC;
  int64_t batchCount, strideA, strideB, strideC;

  bool operator<(const PlanKey &other) const {
    auto tie = [](const PlanKey &key) {
      return std::tie(key.handle, key.m, key.n, key.k, key.lda, key.ldb,
                      key.ldc, key.transA, key.transB, key.abType, key.dType,
                      key.smTarget, key.workspaceBytes, key.alignA, key.alignB,
                      key.alignC, key.batchCount, key.strideA, key.strideB,
                      key.strideC);
    };
    return tie(*this) < tie(other);
  }
};

/// Immutable once cached; cuBLASLt only reads descriptors, so concurrent
/// launches from several threads may share one entry.
struct MatmulPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t first = nullptr;  ///< cuBLASLt "A": our B.
  cublasLtMatrixLayout_t second = nullptr; ///< cuBLASLt "B": our A.
  cublasLtMatrixLayout_t output = nullptr; ///< C and D.
  cublasLtMatmulAlgo_t algo = {};

  ~MatmulPlan() {
    if (output)
      cublasLtMatrixLayoutDestroy(output);
    if (second)
      cublasLtMatrixLayoutDestroy(second);
    if (first)
      cublasLtMatrixLayoutDestroy(first);
    if (desc)
      cublasLtMatmulDescDestroy(desc);
  }
};

struct PlanCache {
  std::mutex mutex;
  std::map<PlanKey, std::unique_ptr<MatmulPlan>> plans;
};

/// Never destroyed: descriptors may still be in use from other static
/// destructors, and cuBLASLt may already be unloaded at exit.
PlanCache &planCache() {
  static PlanCache *cache = new PlanCache;
  return *cache;
}

#define TANDEM_CUBLAS_CHECK(call)                                              \
  do {                                                                         \
    cublasStatus_t status_ = (call);                                           \
    if (status_ != CUBLAS_STATUS_SUCCESS) {                                    \
      error = std::string("launchMatmul: ") + #call +                          \
              " failed: " + statusText(status_);                               \
      return nullptr;                                                          \
    }                                                                          \
  } while (false)

std::string describe(const PlanKey &key) {
  return (key.batchCount > 1 ? std::to_string(key.batchCount) + " x " : "") +
         std::to_string(key.m) + "x" + std::to_string(key.n) + "x" +
         std::to_string(key.k) + (key.transA ? " transA" : "") +
         (key.transB ? " transB" : "") + " " + dtypeName(key.abType) + "->" +
         dtypeName(key.dType);
}

/// Builds the descriptors and runs the heuristic for `key`.
std::unique_ptr<MatmulPlan> createPlan(const PlanKey &key, std::string &error) {
  auto plan = std::make_unique<MatmulPlan>();
  cublasComputeType_t compute = key.abType == DType::F32
                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                    : CUBLAS_COMPUTE_32F;
  TANDEM_CUBLAS_CHECK(
      cublasLtMatmulDescCreate(&plan->desc, compute, CUDA_R_32F));
  cublasOperation_t opFirst = key.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = key.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  TANDEM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opFirst, sizeof(opFirst)));
  TANDEM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opSecond, sizeof(opSecond)));
  if (key.smTarget > 0) {
    int32_t smCount = key.smTarget;
    TANDEM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        plan->desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &smCount,
        sizeof(smCount)));
  }

  // Column-major shapes of the stored matrices (before op).
  cudaDataType_t abType = cudaDataType(key.abType);
  uint64_t firstRows = key.transB ? key.k : key.n;
  uint64_t firstCols = key.transB ? key.n : key.k;
  uint64_t secondRows = key.transA ? key.m : key.k;
  uint64_t secondCols = key.transA ? key.k : key.m;
  TANDEM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(
      &plan->first, abType, firstRows, firstCols, key.ldb));
  TANDEM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(
      &plan->second, abType, secondRows, secondCols, key.lda));
  TANDEM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(
      &plan->output, cudaDataType(key.dType), key.n, key.m, key.ldc));
  if (key.batchCount > 1) {
    int32_t count = static_cast<int32_t>(key.batchCount);
    std::tuple<cublasLtMatrixLayout_t, int64_t> batched[] = {
        {plan->first, key.strideB},
        {plan->second, key.strideA},
        {plan->output, key.strideC}};
    for (auto &[layout, stride] : batched) {
      TANDEM_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
          layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
      TANDEM_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
          layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
          sizeof(stride)));
    }
  }

  cublasLtMatmulPreference_t preference = nullptr;
  TANDEM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  struct PreferenceGuard {
    cublasLtMatmulPreference_t p;
    ~PreferenceGuard() { cublasLtMatmulPreferenceDestroy(p); }
  } guard{preference};
  uint64_t workspace = key.workspaceBytes;
  TANDEM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
      sizeof(workspace)));
  // cuBLASLt's A is our B and vice versa.
  std::tuple<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.alignB},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.alignA},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.alignC},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.alignC}};
  for (auto &[attribute, value] : alignments)
    TANDEM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        preference, attribute, &value, sizeof(value)));

  cublasLtMatmulHeuristicResult_t result = {};
  int found = 0;
  TANDEM_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(
      key.handle, plan->desc, plan->first, plan->second, plan->output,
      plan->output, preference, 1, &result, &found));
  if (found == 0 || result.state != CUBLAS_STATUS_SUCCESS) {
    error = "launchMatmul: cublasLtMatmulAlgoGetHeuristic found no algorithm "
            "for " +
            describe(key) + " with " + std::to_string(key.workspaceBytes) +
            " workspace bytes" +
            (found ? ": " + statusText(result.state) : std::string());
    return nullptr;
  }
  plan->algo = result.algo;
  return plan;
}

#undef TANDEM_CUBLAS_CHECK

/// The cached plan for `key`, created on first use.
const MatmulPlan *getPlan(const PlanKey &key, std::string &error) {
  PlanCache &cache = planCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.plans.find(key);
  if (it != cache.plans.end())
    return it->second.get();
  std::unique_ptr<MatmulPlan> plan = createPlan(key, error);
  if (!plan)
    return nullptr;
  const MatmulPlan *result = plan.get();
  cache.plans.emplace(key, std::move(plan));
  return result;
}

int64_t alignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

} // namespace

namespace detail {

bool launchMatmulStrided(const BlasContext &blas, const MatmulArgs &args,
                         const void *a, int64_t lda, const void *b, int64_t ldb,
                         void *c, int64_t ldc, cudaStream_t stream,
                         std::string &error) {
  return launchMatmulStridedBatched(blas, args, a, lda, b, ldb, c, ldc,
                                    MatmulBatch(), stream, error);
}

bool launchMatmulStridedBatched(const BlasContext &blas, const MatmulArgs &args,
                                const void *a, int64_t lda, const void *b,
                                int64_t ldb, void *c, int64_t ldc,
                                const MatmulBatch &batch, cudaStream_t stream,
                                std::string &error) {
  int64_t m = args.m, n = args.n, k = args.k;
  if (batch.count < 1 || batch.count > INT32_MAX) {
    error = "launchMatmul: batch count " + std::to_string(batch.count) +
            " is not in [1, 2^31)";
    return false;
  }
  if (m < 0 || n < 0 || k < 0) {
    error = "launchMatmul: negative shape " + std::to_string(m) + "x" +
            std::to_string(n) + "x" + std::to_string(k);
    return false;
  }
  if (m == 0 || n == 0)
    return true;
  // Row strides must cover the stored rows.
  int64_t aCols = args.transA ? m : k, bCols = args.transB ? k : n;
  if (lda < std::max<int64_t>(1, aCols) || ldb < std::max<int64_t>(1, bCols) ||
      ldc < n) {
    error = "launchMatmul: row stride smaller than the row (lda " +
            std::to_string(lda) + ", ldb " + std::to_string(ldb) + ", ldc " +
            std::to_string(ldc) + ")";
    return false;
  }
  if (!c || (k > 0 && (!a || !b))) {
    error = "launchMatmul: null operand";
    return false;
  }
  bool direct = cublasWritesDirectly(args.abType, args.cType);
  if (batch.count > 1 && (k == 0 || !direct)) {
    // Rare paths (empty sums, staged output types): one GEMM per matrix.
    MatmulBatch single;
    for (int64_t i = 0; i < batch.count; ++i) {
      const char *ai = static_cast<const char *>(a);
      const char *bi = static_cast<const char *>(b);
      char *ci = static_cast<char *>(c);
      int64_t abBytes = dtypeBytes(args.abType);
      if (!launchMatmulStridedBatched(
              blas, args, ai ? ai + i * batch.strideA * abBytes : nullptr, lda,
              bi ? bi + i * batch.strideB * abBytes : nullptr, ldb,
              ci + i * batch.strideC * dtypeBytes(args.cType), ldc, single,
              stream, error))
        return false;
    }
    return true;
  }
  if (k == 0) // An empty sum: C = beta * C.
    return detail::launchAccumulateCast(nullptr, 0, c, args.cType, ldc, m, n,
                                        args.beta, stream, error);
  if (!blas.handle) {
    error = "launchMatmul: null cuBLASLt handle";
    return false;
  }
  if (blas.workspaceBytes > 0 && !blas.workspace) {
    error = "launchMatmul: null workspace of " +
            std::to_string(blas.workspaceBytes) + " bytes";
    return false;
  }

  // cuBLASLt wants a 256-byte aligned workspace; use the aligned part.
  char *workspace = static_cast<char *>(blas.workspace);
  int64_t workspaceBytes = blas.workspaceBytes;
  if (workspace) {
    int64_t skip = alignUp(reinterpret_cast<uintptr_t>(workspace), 256) -
                   static_cast<int64_t>(reinterpret_cast<uintptr_t>(workspace));
    workspace += skip;
    workspaceBytes = std::max<int64_t>(0, workspaceBytes - skip);
  }

  void *d = c;
  int64_t ldd = ldc;
  float beta = args.beta;
  if (!direct) {
    int64_t staging = alignUp(m * n * 4, 256);
    if (staging > workspaceBytes) {
      error = std::string("launchMatmul: cuBLASLt cannot write ") +
              dtypeName(args.cType) + " from " + dtypeName(args.abType) +
              " operands; the fp32 staging buffer of " +
              std::to_string(m * n * 4) +
              " bytes needs a workspace of at "
              "least that size plus 256 (have " +
              std::to_string(blas.workspaceBytes) + ")";
      return false;
    }
    d = workspace;
    ldd = n;
    beta = 0.0f;
    workspace += staging;
    workspaceBytes -= staging;
  }

  PlanKey key;
  key.handle = blas.handle;
  key.m = m;
  key.n = n;
  key.k = k;
  key.lda = lda;
  key.ldb = ldb;
  key.ldc = ldd;
  key.transA = args.transA;
  key.transB = args.transB;
  key.abType = args.abType;
  key.dType = direct ? args.cType : DType::F32;
  key.smTarget = std::max(0, args.smTarget);
  key.workspaceBytes = static_cast<uint64_t>(workspaceBytes);
  int64_t abBytes = dtypeBytes(args.abType);
  int64_t dBytes = dtypeBytes(key.dType);
  key.batchCount = batch.count;
  key.strideA = batch.count > 1 ? batch.strideA : 0;
  key.strideB = batch.count > 1 ? batch.strideB : 0;
  key.strideC = batch.count > 1 ? batch.strideC : 0;
  key.alignA = batchAlignment(a, batch.count, key.strideA * abBytes);
  key.alignB = batchAlignment(b, batch.count, key.strideB * abBytes);
  key.alignC = batchAlignment(d, batch.count, key.strideC * dBytes);
  const MatmulPlan *plan = getPlan(key, error);
  if (!plan)
    return false;

  float alpha = args.alpha;
  cublasStatus_t status =
      cublasLtMatmul(blas.handle, plan->desc, &alpha, b, plan->first, a,
                     plan->second, &beta, d, plan->output, d, plan->output,
                     &plan->algo, workspaceBytes > 0 ? workspace : nullptr,
                     static_cast<size_t>(workspaceBytes), stream);
  if (status != CUBLAS_STATUS_SUCCESS) {
    error = "launchMatmul: cublasLtMatmul failed for " + describe(key) + ": " +
            statusText(status);
    return false;
  }
  if (direct)
    return true;
  return detail::launchAccumulateCast(static_cast<const float *>(d), n, c,
                                      args.cType, ldc, m, n, args.beta, stream,
                                      error);
}

} // namespace detail

bool launchMatmul(const BlasContext &blas, const MatmulArgs &args,
                  const void *a, const void *b, void *c, cudaStream_t stream,
                  std::string &error) {
  int64_t lda = args.transA ? args.m : args.k;
  int64_t ldb = args.transB ? args.k : args.n;
  return detail::launchMatmulStrided(
      blas, args, a, std::max<int64_t>(1, lda), b, std::max<int64_t>(1, ldb), c,
      std::max<int64_t>(1, args.n), stream, error);
}

} // namespace runtime
} // namespace tandem
