//===- Kernels.cu - Element-wise, norm, softmax and stand-in kernels ------===//
//
// The CUDA kernels behind Kernels.h (all but the cuBLASLt GEMMs) and the
// softmax kernels attention is built from (AttentionKernels.h).
//
// Determinism: every kernel either computes each output element on its own
// (grid-stride loops, so the launch configuration never changes a value) or
// reduces with a CTA of a fixed size in a fixed order: per-thread strided
// partial sums, a butterfly within each warp, then the warp totals summed in
// warp order. Nothing uses atomics.
//
// Kernels are templated on the element types so that type dispatch happens
// once per launch, not per element; values are loaded as float, computed in
// float and rounded once to the output type.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"
#include "KernelsInternal.h"

#include "tandem/runtime/Kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace tandem {
namespace runtime {

namespace {

//===----------------------------------------------------------------------===//
// Element types and launch helpers
//===----------------------------------------------------------------------===//

template <typename T> struct TypeTag { using type = T; };

/// Calls `fn(TypeTag<T>{})` with the CUDA type of `type`.
template <typename Fn> void withType(DType type, Fn &&fn) {
  switch (type) {
  case DType::BF16:
    fn(TypeTag<__nv_bfloat16>{});
    return;
  case DType::F16:
    fn(TypeTag<__half>{});
    return;
  case DType::F32:
    fn(TypeTag<float>{});
    return;
  }
}

__device__ __forceinline__ float toFloat(float v) { return v; }
__device__ __forceinline__ float toFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float toFloat(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T> struct Convert;
template <> struct Convert<float> {
  static __device__ __forceinline__ float from(float v) { return v; }
  static __device__ __forceinline__ float stepTowardZero(float v) {
    return __uint_as_float(__float_as_uint(v) - 1u);
  }
};
template <> struct Convert<__half> {
  static __device__ __forceinline__ __half from(float v) {
    return __float2half_rn(v);
  }
  static __device__ __forceinline__ __half stepTowardZero(__half v) {
    return __ushort_as_half(
        static_cast<unsigned short>(__half_as_ushort(v) - 1u));
  }
};
template <> struct Convert<__nv_bfloat16> {
  static __device__ __forceinline__ __nv_bfloat16 from(float v) {
    return __float2bfloat16_rn(v);
  }
  static __device__ __forceinline__ __nv_bfloat16
  stepTowardZero(__nv_bfloat16 v) {
    return __ushort_as_bfloat16(
        static_cast<unsigned short>(__bfloat16_as_ushort(v) - 1u));
  }
};

template <typename T> __device__ __forceinline__ T fromFloat(float v) {
  return Convert<T>::from(v);
}

constexpr int kThreads = 256;
/// Cap on the grid of grid-stride kernels: enough CTAs to fill an H200
/// several times over; values never depend on it.
constexpr int64_t kMaxBlocks = 8192;

int gridFor(int64_t work, int threads = kThreads) {
  int64_t blocks = (work + threads - 1) / threads;
  return static_cast<int>(std::max<int64_t>(1, std::min(blocks, kMaxBlocks)));
}

bool checkLaunch(const char *what, std::string &error) {
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess)
    return true;
  error = std::string(what) +
          ": kernel launch failed: " + cudaGetErrorName(status) + " (" +
          cudaGetErrorString(status) + ")";
  return false;
}

bool fail(std::string &error, const std::string &message) {
  error = message;
  return false;
}

//===----------------------------------------------------------------------===//
// Fixed-order CTA reductions
//===----------------------------------------------------------------------===//

/// Sum of `value` over the CTA (blockDim.x a multiple of 32, at most 1024),
/// returned to every thread. `shared` holds 32 floats. The order of the
/// additions depends only on blockDim.x.
__device__ float blockSum(float value, float *shared) {
  for (int offset = 16; offset > 0; offset >>= 1)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads(); // The previous reduction may still be reading `shared`.
  if (lane == 0)
    shared[warp] = value;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w)
    total += shared[w];
  return total;
}

__device__ float blockMax(float value, float *shared) {
  for (int offset = 16; offset > 0; offset >>= 1)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0)
    shared[warp] = value;
  __syncthreads();
  float result = shared[0];
  for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w)
    result = fmaxf(result, shared[w]);
  return result;
}

//===----------------------------------------------------------------------===//
// Fill
//===----------------------------------------------------------------------===//

__device__ __forceinline__ uint64_t splitmix64(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <typename T>
__global__ void fillKernel(T *dst, int64_t count, uint64_t seed, float scale) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < count; i += stride) {
    // 24 random bits: (k - 2^23) / 2^23 is exact in float, in [-1, 1).
    int32_t bits = static_cast<int32_t>(splitmix64(seed, i) >> 40);
    float unit = static_cast<float>(bits - (1 << 23)) * (1.0f / (1 << 23));
    T value = fromFloat<T>(unit * scale);
    // Rounding to a narrow type may land on +-scale or beyond; the next
    // value toward zero is then inside [-scale, scale).
    float back = toFloat(value);
    if (scale > 0.0f && (back >= scale || back < -scale))
      value = Convert<T>::stepTowardZero(value);
    dst[i] = value;
  }
}

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCoeff = 0.044715f;

__device__ __forceinline__ float gelu(float x) {
  float inner = kSqrt2OverPi * (x + kGeluCoeff * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

__device__ __forceinline__ float geluDerivative(float x) {
  float inner = kSqrt2OverPi * (x + kGeluCoeff * x * x * x);
  float t = tanhf(inner);
  float dInner = kSqrt2OverPi * (1.0f + 3.0f * kGeluCoeff * x * x);
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * dInner;
}

__device__ __forceinline__ float sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}

__device__ __forceinline__ float silu(float x) { return x * sigmoid(x); }

__device__ __forceinline__ float siluDerivative(float x) {
  float s = sigmoid(x);
  return s + x * s * (1.0f - s);
}

/// Grid-stride loop bounds: each element is handled by exactly one thread,
/// whatever the grid size.
__device__ __forceinline__ int64_t gridThread() {
  return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ int64_t gridThreads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

/// add, mul, gelu_grad(dy = a, x = b): same-shape binary kinds.
template <typename A, typename B, typename O>
__global__ void binaryKernel(ElementwiseKind kind, const A *a, const B *b,
                             O *out, int64_t count) {
  switch (kind) {
  case ElementwiseKind::Add:
    for (int64_t i = gridThread(); i < count; i += gridThreads())
      out[i] = fromFloat<O>(toFloat(a[i]) + toFloat(b[i]));
    return;
  case ElementwiseKind::Mul:
    for (int64_t i = gridThread(); i < count; i += gridThreads())
      out[i] = fromFloat<O>(toFloat(a[i]) * toFloat(b[i]));
    return;
  default: // GeluGrad
    for (int64_t i = gridThread(); i < count; i += gridThreads())
      out[i] = fromFloat<O>(toFloat(a[i]) * geluDerivative(toFloat(b[i])));
    return;
  }
}

/// copy, cast, gelu, silu.
template <typename A, typename O>
__global__ void unaryKernel(ElementwiseKind kind, const A *a, O *out,
                            int64_t count) {
  switch (kind) {
  case ElementwiseKind::Gelu:
    for (int64_t i = gridThread(); i < count; i += gridThreads())
      out[i] = fromFloat<O>(gelu(toFloat(a[i])));
    return;
  case ElementwiseKind::Silu:
    for (int64_t i = gridThread(); i < count; i += gridThreads())
      out[i] = fromFloat<O>(silu(toFloat(a[i])));
    return;
  default: // Copy, Cast
    for (int64_t i = gridThread(); i < count; i += gridThreads())
      out[i] = fromFloat<O>(toFloat(a[i]));
    return;
  }
}

/// out[r, c] = silu(x[r, c]) * x[r, cols + c]; x is rows x 2*cols.
template <typename A, typename O>
__global__ void swigluKernel(const A *x, O *out, int64_t rows, int64_t cols) {
  for (int64_t i = gridThread(); i < rows * cols; i += gridThreads()) {
    int64_t r = i / cols, c = i % cols;
    const A *row = x + r * 2 * cols;
    out[i] = fromFloat<O>(silu(toFloat(row[c])) * toFloat(row[cols + c]));
  }
}

/// out = [dgate | dup], all rows x cols; dy is rows x cols/2.
template <typename A, typename B, typename O>
__global__ void swigluGradKernel(const A *dy, const B *x, O *out, int64_t rows,
                                 int64_t cols) {
  int64_t half = cols / 2;
  for (int64_t i = gridThread(); i < rows * cols; i += gridThreads()) {
    int64_t r = i / cols, c = i % cols;
    int64_t j = c < half ? c : c - half;
    float g = toFloat(dy[r * half + j]);
    float gate = toFloat(x[r * cols + j]);
    float result;
    if (c < half)
      result = g * toFloat(x[r * cols + half + j]) * siluDerivative(gate);
    else
      result = g * silu(gate);
    out[i] = fromFloat<O>(result);
  }
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

constexpr float kNormEps = 1e-5f;

/// Mean (0 for RMS norm) and 1/sqrt(var + eps) of one row, in every thread.
template <typename X>
__device__ void rowStatistics(NormKind kind, const X *row, int64_t cols,
                              float *shared, float &mean, float &rstd) {
  mean = 0.0f;
  if (kind == NormKind::Layer) {
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      sum += toFloat(row[c]);
    mean = blockSum(sum, shared) / static_cast<float>(cols);
  }
  float squares = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    float centred = toFloat(row[c]) - mean;
    squares += centred * centred;
  }
  float variance = blockSum(squares, shared) / static_cast<float>(cols);
  rstd = 1.0f / sqrtf(variance + kNormEps);
}

/// One CTA per row.
template <typename X, typename W>
__global__ void normKernel(NormKind kind, const X *x, const W *w, X *y,
                           int64_t cols) {
  __shared__ float shared[32];
  int64_t r = blockIdx.x;
  const X *row = x + r * cols;
  float mean, rstd;
  rowStatistics(kind, row, cols, shared, mean, rstd);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    y[r * cols + c] =
        fromFloat<X>((toFloat(row[c]) - mean) * rstd * toFloat(w[c]));
}

/// One CTA per row: dx, and the row statistics for the dw kernels.
/// With xhat = (x - mean) * rstd and g = dy * w:
///   RMS:   dx = rstd * (g - xhat * mean(g * xhat))
///   Layer: dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
template <typename X, typename W>
__global__ void normGradRowKernel(NormKind kind, const X *dy, const X *x,
                                  const W *w, X *dx, int64_t cols,
                                  float *stats) {
  __shared__ float shared[32];
  int64_t r = blockIdx.x;
  const X *row = x + r * cols;
  const X *dyRow = dy + r * cols;
  float mean, rstd;
  rowStatistics(kind, row, cols, shared, mean, rstd);
  float sumG = 0.0f, sumGX = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    float g = toFloat(dyRow[c]) * toFloat(w[c]);
    float xhat = (toFloat(row[c]) - mean) * rstd;
    sumG += g;
    sumGX += g * xhat;
  }
  float n = static_cast<float>(cols);
  float meanG = kind == NormKind::Layer ? blockSum(sumG, shared) / n : 0.0f;
  float meanGX = blockSum(sumGX, shared) / n;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    float g = toFloat(dyRow[c]) * toFloat(w[c]);
    float xhat = (toFloat(row[c]) - mean) * rstd;
    dx[r * cols + c] = fromFloat<X>(rstd * (g - meanG - xhat * meanGX));
  }
  if (threadIdx.x == 0) {
    stats[2 * r] = mean;
    stats[2 * r + 1] = rstd;
  }
}

/// partial[chunk, c] = sum over the chunk's rows, in row order, of
/// dy[r, c] * xhat[r, c]. Grid: (column tiles, chunks).
template <typename X>
__global__ void normGradWeightPartialKernel(const X *dy, const X *x,
                                            const float *stats, int64_t rows,
                                            int64_t cols, int64_t rowsPerChunk,
                                            float *partial) {
  int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (c >= cols)
    return;
  int64_t begin = blockIdx.y * rowsPerChunk;
  int64_t end = begin + rowsPerChunk < rows ? begin + rowsPerChunk : rows;
  float sum = 0.0f;
  for (int64_t r = begin; r < end; ++r) {
    float xhat = (toFloat(x[r * cols + c]) - stats[2 * r]) * stats[2 * r + 1];
    sum += toFloat(dy[r * cols + c]) * xhat;
  }
  partial[blockIdx.y * cols + c] = sum;
}

/// dw[c] = sum over chunks, in chunk order, of partial[chunk, c].
template <typename W>
__global__ void normGradWeightFinalKernel(const float *partial, int64_t chunks,
                                          int64_t cols, W *dw) {
  for (int64_t c = gridThread(); c < cols; c += gridThreads()) {
    float sum = 0.0f;
    for (int64_t k = 0; k < chunks; ++k)
      sum += partial[k * cols + c];
    dw[c] = fromFloat<W>(sum);
  }
}

/// The dw reduction splits the rows into at most this many chunks.
constexpr int64_t kMaxNormGradChunks = 128;

int64_t normGradChunks(int64_t rows) {
  return std::max<int64_t>(1, std::min(kMaxNormGradChunks, (rows + 31) / 32));
}

int64_t alignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

//===----------------------------------------------------------------------===//
// Softmax (attention)
//===----------------------------------------------------------------------===//

/// One CTA per row i of the seq x seq score matrix.
template <typename P>
__global__ void softmaxForwardKernel(const float *scores, P *probs,
                                     float *probs32, int64_t seq, bool causal) {
  __shared__ float shared[32];
  int64_t i = blockIdx.x;
  const float *row = scores + i * seq;
  int64_t valid = causal ? i + 1 : seq;
  float localMax = -INFINITY;
  for (int64_t j = threadIdx.x; j < valid; j += blockDim.x)
    localMax = fmaxf(localMax, row[j]);
  float rowMax = blockMax(localMax, shared);
  float localSum = 0.0f;
  for (int64_t j = threadIdx.x; j < valid; j += blockDim.x)
    localSum += expf(row[j] - rowMax);
  float inverse = 1.0f / blockSum(localSum, shared);
  // Every read of `row` above precedes blockSum's barrier, so writing
  // probs32 over the scores (in place) below is safe: each element is read
  // and then written by the same thread.
  for (int64_t j = threadIdx.x; j < seq; j += blockDim.x) {
    float p = j < valid ? expf(row[j] - rowMax) * inverse : 0.0f;
    probs[i * seq + j] = fromFloat<P>(p);
    if (probs32)
      probs32[i * seq + j] = p;
  }
}

/// One warp per (head, query row) pair.
template <typename T>
__global__ void attentionRowDotKernel(const T *dout, const T *out,
                                      float *rowDot, int64_t seq, int64_t heads,
                                      int64_t headDim) {
  int64_t warpsPerBlock = blockDim.x / 32;
  int64_t pair = blockIdx.x * warpsPerBlock + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (pair >= seq * heads)
    return; // Uniform per warp: the shuffles below stay converged.
  int64_t h = pair / seq, i = pair % seq;
  int64_t base = i * heads * headDim + h * headDim;
  float sum = 0.0f;
  for (int64_t c = lane; c < headDim; c += 32)
    sum += toFloat(dout[base + c]) * toFloat(out[base + c]);
  for (int offset = 16; offset > 0; offset >>= 1)
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0)
    rowDot[h * seq + i] = sum;
}

template <typename T>
__global__ void softmaxBackwardKernel(const float *probs32, const float *dprobs,
                                      const float *rowDot, T *dscores,
                                      int64_t seq) {
  for (int64_t e = gridThread(); e < seq * seq; e += gridThreads()) {
    int64_t i = e / seq;
    dscores[e] = fromFloat<T>(probs32[e] * (dprobs[e] - rowDot[i]));
  }
}

//===----------------------------------------------------------------------===//
// Strided accumulate-cast
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void accumulateCastKernel(const float *src, int64_t srcLd, T *dst,
                                     int64_t dstLd, int64_t rows, int64_t cols,
                                     float beta) {
  for (int64_t e = gridThread(); e < rows * cols; e += gridThreads()) {
    int64_t r = e / cols, c = e % cols;
    float value = src ? src[r * srcLd + c] : 0.0f;
    if (beta != 0.0f)
      value += beta * toFloat(dst[r * dstLd + c]);
    dst[r * dstLd + c] = fromFloat<T>(value);
  }
}

//===----------------------------------------------------------------------===//
// Streaming traffic (opaque and collective stand-ins)
//===----------------------------------------------------------------------===//

// Inline PTX so that neither the loads (whose values are unused) nor the
// stores (of the value just loaded) can be removed by the compiler. `.cg`
// caches in L2 only, like the copy engines of a collective would.
__device__ __forceinline__ uint4 loadStreaming(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ void storeStreaming(uint4 *p, uint4 v) {
  asm volatile("st.global.cg.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x),
               "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

/// Regions the opaque stand-in reads cyclically: 16-byte chunks.
constexpr int kMaxSweepRegions = 8;
struct SweepRegions {
  const uint4 *base[kMaxSweepRegions];
  int64_t chunks[kMaxSweepRegions];
  int count;
  int64_t totalChunks;
};

__global__ void readSweepKernel(SweepRegions regions, int64_t sweepChunks) {
  for (int64_t c = gridThread(); c < sweepChunks; c += gridThreads()) {
    int64_t pos = c % regions.totalChunks;
    int region = 0;
    while (region + 1 < regions.count && pos >= regions.chunks[region]) {
      pos -= regions.chunks[region];
      ++region;
    }
    loadStreaming(regions.base[region] + pos);
  }
}

/// Output element j of an opaque op: the 16-bit word j (cyclically) of input
/// 0 mapped to [-1, 1), or 0 without input 0.
template <typename T>
__global__ void opaqueGenerateKernel(const unsigned char *input,
                                     int64_t inputWords, T *out,
                                     int64_t count) {
  for (int64_t j = gridThread(); j < count; j += gridThreads()) {
    float value = 0.0f;
    if (inputWords > 0) {
      int64_t w = j % inputWords;
      unsigned word = input[2 * w] | (unsigned(input[2 * w + 1]) << 8);
      value = (static_cast<float>(word) - 32768.0f) * (1.0f / 32768.0f);
    }
    out[j] = fromFloat<T>(value);
  }
}

/// out[i] = factor * in[base + i % period]; then `trafficChunks` 16-byte
/// read+write pairs cycling over `scratchChunks` chunks of `scratch` (each
/// chunk is written back with the value just read, so the scratch contents
/// do not change).
template <typename T>
__global__ void
standinCollectiveKernel(const T *in, T *out, int64_t outCount, int64_t base,
                        int64_t period, float factor, uint4 *scratch,
                        int64_t scratchChunks, int64_t trafficChunks) {
  int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = first; i < outCount; i += stride)
    out[i] = fromFloat<T>(factor * toFloat(in[base + i % period]));
  if (trafficChunks <= 0 || first >= trafficChunks)
    return;
  int64_t pos = first % scratchChunks;
  int64_t step = stride % scratchChunks;
  for (int64_t c = first; c < trafficChunks; c += stride) {
    storeStreaming(scratch + pos, loadStreaming(scratch + pos));
    pos += step;
    if (pos >= scratchChunks)
      pos -= scratchChunks;
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Kernels.h
//===----------------------------------------------------------------------===//

bool launchFill(void *dst, DType type, int64_t count, uint64_t seed,
                float scale, cudaStream_t stream, std::string &error) {
  if (count < 0)
    return fail(error, "launchFill: negative count " + std::to_string(count));
  if (count == 0)
    return true;
  if (!dst)
    return fail(error, "launchFill: null destination");
  withType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fillKernel<T><<<gridFor(count), kThreads, 0, stream>>>(
        static_cast<T *>(dst), count, seed, scale);
  });
  return checkLaunch("launchFill (fillKernel)", error);
}

bool launchElementwise(ElementwiseKind kind, const void *a, DType aType,
                       const void *b, DType bType, void *out, DType outType,
                       int64_t rows, int64_t cols, cudaStream_t stream,
                       std::string &error) {
  std::string what =
      std::string("launchElementwise(") + elementwiseKindName(kind) + ")";
  if (rows < 0 || cols < 0)
    return fail(error, what + ": negative shape " + std::to_string(rows) +
                           " x " + std::to_string(cols));
  int64_t count = rows * cols;
  if (count == 0)
    return true;
  bool binary = kind == ElementwiseKind::Add || kind == ElementwiseKind::Mul ||
                kind == ElementwiseKind::GeluGrad ||
                kind == ElementwiseKind::SwigluGrad;
  if (!a || !out || (binary && !b))
    return fail(error, what + ": null " +
                           (!a     ? "first input"
                            : !out ? "output"
                                   : "second input"));
  int grid = gridFor(count);
  switch (kind) {
  case ElementwiseKind::Add:
  case ElementwiseKind::Mul:
  case ElementwiseKind::GeluGrad:
    withType(aType, [&](auto ta) {
      withType(bType, [&](auto tb) {
        withType(outType, [&](auto to) {
          using A = typename decltype(ta)::type;
          using B = typename decltype(tb)::type;
          using O = typename decltype(to)::type;
          binaryKernel<A, B, O><<<grid, kThreads, 0, stream>>>(
              kind, static_cast<const A *>(a), static_cast<const B *>(b),
              static_cast<O *>(out), count);
        });
      });
    });
    break;
  case ElementwiseKind::Copy:
  case ElementwiseKind::Cast:
    if (aType == outType) {
      // A float round trip is the identity for these types; copy the bytes.
      cudaError_t status = cudaMemcpyAsync(out, a, count * dtypeBytes(aType),
                                           cudaMemcpyDeviceToDevice, stream);
      if (status != cudaSuccess)
        return fail(error, what + ": cudaMemcpyAsync failed: " +
                               cudaGetErrorName(status) + " (" +
                               cudaGetErrorString(status) + ")");
      return true;
    }
    [[fallthrough]];
  case ElementwiseKind::Gelu:
  case ElementwiseKind::Silu:
    withType(aType, [&](auto ta) {
      withType(outType, [&](auto to) {
        using A = typename decltype(ta)::type;
        using O = typename decltype(to)::type;
        unaryKernel<A, O><<<grid, kThreads, 0, stream>>>(
            kind, static_cast<const A *>(a), static_cast<O *>(out), count);
      });
    });
    break;
  case ElementwiseKind::Swiglu:
    withType(aType, [&](auto ta) {
      withType(outType, [&](auto to) {
        using A = typename decltype(ta)::type;
        using O = typename decltype(to)::type;
        swigluKernel<A, O><<<grid, kThreads, 0, stream>>>(
            static_cast<const A *>(a), static_cast<O *>(out), rows, cols);
      });
    });
    break;
  case ElementwiseKind::SwigluGrad:
    if (cols % 2 != 0)
      return fail(error, what + ": the result has an odd number of columns (" +
                             std::to_string(cols) +
                             "); it must be [dgate | dup]");
    withType(aType, [&](auto ta) {
      withType(bType, [&](auto tb) {
        withType(outType, [&](auto to) {
          using A = typename decltype(ta)::type;
          using B = typename decltype(tb)::type;
          using O = typename decltype(to)::type;
          swigluGradKernel<A, B, O><<<grid, kThreads, 0, stream>>>(
              static_cast<const A *>(a), static_cast<const B *>(b),
              static_cast<O *>(out), rows, cols);
        });
      });
    });
    break;
  }
  return checkLaunch(what.c_str(), error);
}

bool launchNorm(NormKind kind, const void *x, DType xType, const void *w,
                DType wType, void *y, int64_t rows, int64_t cols,
                cudaStream_t stream, std::string &error) {
  if (rows < 0 || cols < 0)
    return fail(error, "launchNorm: negative shape " + std::to_string(rows) +
                           " x " + std::to_string(cols));
  if (rows == 0 || cols == 0)
    return true;
  if (!x || !w || !y)
    return fail(error, "launchNorm: null pointer argument");
  if (rows > INT32_MAX)
    return fail(error, "launchNorm: " + std::to_string(rows) +
                           " rows exceed the grid limit");
  withType(xType, [&](auto tx) {
    withType(wType, [&](auto tw) {
      using X = typename decltype(tx)::type;
      using W = typename decltype(tw)::type;
      normKernel<X, W><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
          kind, static_cast<const X *>(x), static_cast<const W *>(w),
          static_cast<X *>(y), cols);
    });
  });
  return checkLaunch("launchNorm (normKernel)", error);
}

int64_t normGradScratchBytes(int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0)
    return 0;
  // Per-row (mean, rstd), then per-chunk partial dw sums, both fp32.
  return alignUp(rows * 2 * 4, 256) + normGradChunks(rows) * cols * 4;
}

bool launchNormGrad(NormKind kind, const void *dy, const void *x, DType xType,
                    const void *w, DType wType, void *dx, void *dw,
                    int64_t rows, int64_t cols, void *scratch,
                    cudaStream_t stream, std::string &error) {
  if (rows < 0 || cols < 0)
    return fail(error, "launchNormGrad: negative shape " +
                           std::to_string(rows) + " x " + std::to_string(cols));
  if (cols == 0)
    return true;
  if (!w || !dw)
    return fail(error, "launchNormGrad: null pointer argument");
  if (rows == 0) {
    // No rows: dw is an empty sum.
    cudaError_t status =
        cudaMemsetAsync(dw, 0, cols * dtypeBytes(wType), stream);
    if (status != cudaSuccess)
      return fail(error,
                  std::string("launchNormGrad: cudaMemsetAsync failed: ") +
                      cudaGetErrorName(status));
    return true;
  }
  if (!dy || !x || !dx || !scratch)
    return fail(error, "launchNormGrad: null pointer argument");
  if (rows > INT32_MAX)
    return fail(error, "launchNormGrad: " + std::to_string(rows) +
                           " rows exceed the grid limit");
  float *stats = static_cast<float *>(scratch);
  float *partial = reinterpret_cast<float *>(static_cast<char *>(scratch) +
                                             alignUp(rows * 2 * 4, 256));
  int64_t chunks = normGradChunks(rows);
  int64_t rowsPerChunk = (rows + chunks - 1) / chunks;
  dim3 partialGrid(static_cast<unsigned>((cols + kThreads - 1) / kThreads),
                   static_cast<unsigned>(chunks));
  withType(xType, [&](auto tx) {
    withType(wType, [&](auto tw) {
      using X = typename decltype(tx)::type;
      using W = typename decltype(tw)::type;
      normGradRowKernel<X, W>
          <<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
              kind, static_cast<const X *>(dy), static_cast<const X *>(x),
              static_cast<const W *>(w), static_cast<X *>(dx), cols, stats);
      normGradWeightPartialKernel<X><<<partialGrid, kThreads, 0, stream>>>(
          static_cast<const X *>(dy), static_cast<const X *>(x), stats, rows,
          cols, rowsPerChunk, partial);
      normGradWeightFinalKernel<W><<<gridFor(cols), kThreads, 0, stream>>>(
          partial, chunks, cols, static_cast<W *>(dw));
    });
  });
  return checkLaunch("launchNormGrad", error);
}

namespace detail {

OpaqueTraffic planOpaqueTraffic(const int64_t *inputBytes, int numInputs,
                                const int64_t *outputBytes,
                                DType const *outputTypes, int numOutputs,
                                int64_t declaredBytes) {
  OpaqueTraffic traffic;
  int64_t inputWords = numInputs > 0 ? inputBytes[0] / 2 : 0;
  for (int o = 0; o < numOutputs; ++o) {
    int64_t count = outputBytes[o] / dtypeBytes(outputTypes[o]);
    traffic.generateBytes +=
        count * dtypeBytes(outputTypes[o]) + 2 * std::min(count, inputWords);
  }
  // The sweep moves whole 16-byte chunks.
  traffic.sweepBytes =
      std::max<int64_t>(0, declaredBytes - traffic.generateBytes) / 16 * 16;
  return traffic;
}

} // namespace detail

bool launchOpaque(const void *const *inputs, const int64_t *inputBytes,
                  int numInputs, void *const *outputs,
                  const int64_t *outputBytes, DType const *outputTypes,
                  int numOutputs, int64_t declaredBytes, cudaStream_t stream,
                  std::string &error) {
  if (numInputs < 0 || numOutputs < 0)
    return fail(error, "launchOpaque: negative operand count");
  for (int i = 0; i < numInputs; ++i)
    if (inputBytes[i] < 0 || (inputBytes[i] > 0 && !inputs[i]))
      return fail(error, "launchOpaque: input " + std::to_string(i) +
                             " is null or has a negative size");
  for (int o = 0; o < numOutputs; ++o)
    if (outputBytes[o] < 0 || (outputBytes[o] > 0 && !outputs[o]))
      return fail(error, "launchOpaque: output " + std::to_string(o) +
                             " is null or has a negative size");

  const unsigned char *input0 =
      numInputs > 0 ? static_cast<const unsigned char *>(inputs[0]) : nullptr;
  int64_t inputWords = numInputs > 0 ? inputBytes[0] / 2 : 0;
  for (int o = 0; o < numOutputs; ++o) {
    int64_t count = outputBytes[o] / dtypeBytes(outputTypes[o]);
    if (count == 0)
      continue;
    withType(outputTypes[o], [&](auto tag) {
      using T = typename decltype(tag)::type;
      opaqueGenerateKernel<T><<<gridFor(count), kThreads, 0, stream>>>(
          input0, inputWords, static_cast<T *>(outputs[o]), count);
    });
    if (!checkLaunch("launchOpaque (opaqueGenerateKernel)", error))
      return false;
  }

  detail::OpaqueTraffic traffic =
      detail::planOpaqueTraffic(inputBytes, numInputs, outputBytes, outputTypes,
                                numOutputs, declaredBytes);
  if (traffic.sweepBytes == 0)
    return true;
  // Read the inputs (or, without any, the outputs just written) cyclically;
  // only the 16-byte aligned interior of each buffer is swept.
  SweepRegions regions = {};
  auto addRegions = [&](const void *const *ptrs, const int64_t *bytes, int n) {
    for (int i = 0; i < n && regions.count < kMaxSweepRegions; ++i) {
      uintptr_t begin = reinterpret_cast<uintptr_t>(ptrs[i]);
      uintptr_t alignedBegin = (begin + 15) / 16 * 16;
      uintptr_t alignedEnd = (begin + bytes[i]) / 16 * 16;
      if (!ptrs[i] || alignedEnd <= alignedBegin)
        continue;
      regions.base[regions.count] =
          reinterpret_cast<const uint4 *>(alignedBegin);
      regions.chunks[regions.count] = (alignedEnd - alignedBegin) / 16;
      regions.totalChunks += regions.chunks[regions.count];
      ++regions.count;
    }
  };
  addRegions(inputs, inputBytes, numInputs);
  if (regions.count == 0)
    addRegions(const_cast<const void *const *>(outputs), outputBytes,
               numOutputs);
  if (regions.count == 0)
    return true; // Nothing large enough to stream through.
  int64_t sweepChunks = traffic.sweepBytes / 16;
  readSweepKernel<<<gridFor(sweepChunks), kThreads, 0, stream>>>(regions,
                                                                 sweepChunks);
  return checkLaunch("launchOpaque (readSweepKernel)", error);
}

bool launchStandinCollective(CollectiveKind kind, ReduceKind reduce,
                             const void *in, int64_t inCount, void *out,
                             int64_t outCount, DType type, int groupSize,
                             int rank, int ctas, int64_t trafficBytes,
                             void *scratch, int64_t scratchBytes,
                             cudaStream_t stream, std::string &error) {
  std::string what =
      std::string("launchStandinCollective(") + collectiveKindName(kind) + ")";
  if (groupSize < 1 || rank < 0 || rank >= groupSize)
    return fail(error, what + ": rank " + std::to_string(rank) +
                           " is not in a group of " +
                           std::to_string(groupSize));
  if (inCount < 0 || outCount < 0)
    return fail(error, what + ": negative element count");
  auto countError = [&](const std::string &expected) {
    return fail(error, what + ": in has " + std::to_string(inCount) +
                           " elements and out " + std::to_string(outCount) +
                           "; expected " + expected + " for a group of " +
                           std::to_string(groupSize));
  };
  int64_t base = 0, period = inCount;
  bool sum = reduce == ReduceKind::Sum;
  float factor = 1.0f;
  switch (kind) {
  case CollectiveKind::AllGather:
    if (outCount != inCount * groupSize)
      return countError("out = groupSize * in");
    break;
  case CollectiveKind::ReduceScatter:
    if (inCount != outCount * groupSize)
      return countError("in = groupSize * out");
    base = rank * outCount;
    period = outCount;
    factor = sum ? static_cast<float>(groupSize) : 1.0f;
    break;
  case CollectiveKind::AllReduce:
    if (outCount != inCount)
      return countError("out = in");
    factor = sum ? static_cast<float>(groupSize) : 1.0f;
    break;
  case CollectiveKind::AllToAll:
    if (outCount != inCount || inCount % groupSize != 0)
      return countError("out = in, divisible by the group size");
    period = inCount / groupSize;
    base = rank * period;
    break;
  case CollectiveKind::Permute:
    if (outCount != inCount)
      return countError("out = in");
    break;
  }
  if (outCount > 0 && (!in || !out))
    return fail(error, what + ": null input or output");

  // The 16-byte aligned part of the scratch, at most trafficBytes long.
  uint4 *scratchChunks = nullptr;
  int64_t numScratchChunks = 0, trafficChunks = 0;
  if (trafficBytes > 0) {
    uintptr_t begin = reinterpret_cast<uintptr_t>(scratch);
    uintptr_t alignedBegin = (begin + 15) / 16 * 16;
    int64_t usable = std::min(trafficBytes, scratchBytes) -
                     static_cast<int64_t>(alignedBegin - begin);
    numScratchChunks = usable > 0 ? usable / 16 : 0;
    if (!scratch || numScratchChunks == 0)
      return fail(error, what + ": " + std::to_string(trafficBytes) +
                             " bytes of traffic need a scratch buffer of at "
                             "least 16 aligned bytes (got " +
                             std::to_string(scratchBytes) + " bytes at " +
                             (scratch ? "an unaligned address" : "null") + ")");
    scratchChunks = reinterpret_cast<uint4 *>(alignedBegin);
    trafficChunks = (trafficBytes + 15) / 16;
  }
  if (outCount == 0 && trafficChunks == 0)
    return true;

  // NCCL's kernels run 512-thread CTAs too; `ctas` bounds the SMs held.
  constexpr int kCollectiveThreads = 512;
  int grid = ctas > 0 ? ctas : 24;
  withType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    standinCollectiveKernel<T><<<grid, kCollectiveThreads, 0, stream>>>(
        static_cast<const T *>(in), static_cast<T *>(out), outCount, base,
        std::max<int64_t>(period, 1), factor, scratchChunks,
        std::max<int64_t>(numScratchChunks, 1), trafficChunks);
  });
  return checkLaunch(what.c_str(), error);
}

//===----------------------------------------------------------------------===//
// Private launches (AttentionKernels.h, KernelsInternal.h)
//===----------------------------------------------------------------------===//

namespace detail {

bool launchSoftmaxForward(const float *scores, void *probs, DType probsType,
                          float *probs32, int64_t seq, bool causal,
                          cudaStream_t stream, std::string &error) {
  if (seq <= 0)
    return true;
  if (seq > INT32_MAX)
    return fail(error, "launchSoftmaxForward: sequence too long");
  withType(probsType, [&](auto tag) {
    using P = typename decltype(tag)::type;
    softmaxForwardKernel<P>
        <<<static_cast<unsigned>(seq), kThreads, 0, stream>>>(
            scores, static_cast<P *>(probs), probs32, seq, causal);
  });
  return checkLaunch("attention softmax (softmaxForwardKernel)", error);
}

bool launchAttentionRowDot(const void *dout, const void *out, DType type,
                           float *rowDot, int64_t seq, int64_t heads,
                           int64_t headDim, cudaStream_t stream,
                           std::string &error) {
  int64_t pairs = seq * heads;
  if (pairs <= 0)
    return true;
  constexpr int kWarpsPerBlock = kThreads / 32;
  int64_t blocks = (pairs + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (blocks > INT32_MAX)
    return fail(error, "launchAttentionRowDot: too many rows");
  withType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    attentionRowDotKernel<T>
        <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
            static_cast<const T *>(dout), static_cast<const T *>(out), rowDot,
            seq, heads, headDim);
  });
  return checkLaunch("attention backward (attentionRowDotKernel)", error);
}

bool launchSoftmaxBackward(const float *probs32, const float *dprobs,
                           const float *rowDot, void *dscores,
                           DType dscoresType, int64_t seq, cudaStream_t stream,
                           std::string &error) {
  if (seq <= 0)
    return true;
  withType(dscoresType, [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmaxBackwardKernel<T><<<gridFor(seq * seq), kThreads, 0, stream>>>(
        probs32, dprobs, rowDot, static_cast<T *>(dscores), seq);
  });
  return checkLaunch("attention backward (softmaxBackwardKernel)", error);
}

bool launchAccumulateCast(const float *src, int64_t srcLd, void *dst,
                          DType dstType, int64_t dstLd, int64_t rows,
                          int64_t cols, float beta, cudaStream_t stream,
                          std::string &error) {
  if (rows <= 0 || cols <= 0)
    return true;
  withType(dstType, [&](auto tag) {
    using T = typename decltype(tag)::type;
    accumulateCastKernel<T><<<gridFor(rows * cols), kThreads, 0, stream>>>(
        src, srcLd, static_cast<T *>(dst), dstLd, rows, cols, beta);
  });
  return checkLaunch("accumulateCastKernel", error);
}

} // namespace detail

} // namespace runtime
} // namespace tandem
