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
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>

namespace tandem {
namespace runtime {

namespace {

//===----------------------------------------------------------------------===//
// Element types and launch helpers
//===----------------------------------------------------------------------===//

template <typename T> struct TypeTag {
  using type = T;
};

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
/// CUDA's limit on gridDim.y.
constexpr int64_t kMaxGridY = 65535;

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

/// CTAs of `threads` threads of `kernel` that one SM of `device` holds at
/// once (cudaOccupancyMaxActiveBlocksPerMultiprocessor), remembered per
/// kernel, CTA size and device so that a launch does not pay the query.
cudaError_t residentCtas(const void *kernel, int threads, int device,
                         int &resident) {
  static std::mutex mutex;
  static std::map<std::tuple<const void *, int, int>, int> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_tuple(kernel, threads, device);
  if (auto it = known.find(key); it != known.end()) {
    resident = it->second;
    return cudaSuccess;
  }
  cudaError_t status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &resident, kernel, threads, 0);
  if (status == cudaSuccess)
    known.emplace(key, resident);
  return status;
}

//===----------------------------------------------------------------------===//
// Vector packs
//===----------------------------------------------------------------------===//

/// N consecutive elements moved by one vector access: up to 16 bytes at
/// once, wider packs as several 16-byte accesses. A pointer is suitable when
/// it is aligned to packAlignment<T, N>() bytes.
template <typename T, int N> constexpr int packAlignment() {
  return sizeof(T) * N < 16 ? static_cast<int>(sizeof(T) * N) : 16;
}
template <typename T, int N> struct alignas(packAlignment<T, N>()) Pack {
  T v[N];
};

template <typename T, int N>
__device__ __forceinline__ void loadPack(const T *p, float (&out)[N]) {
  Pack<T, N> pack = *reinterpret_cast<const Pack<T, N> *>(p);
#pragma unroll
  for (int e = 0; e < N; ++e)
    out[e] = toFloat(pack.v[e]);
}

template <typename T, int N>
__device__ __forceinline__ void storePack(T *p, const float (&in)[N]) {
  Pack<T, N> pack;
#pragma unroll
  for (int e = 0; e < N; ++e)
    pack.v[e] = fromFloat<T>(in[e]);
  *reinterpret_cast<Pack<T, N> *>(p) = pack;
}

/// Converts a pack loaded earlier to floats.
template <typename T, int N>
__device__ __forceinline__ void unpack(const Pack<T, N> &pack,
                                       float (&out)[N]) {
#pragma unroll
  for (int e = 0; e < N; ++e)
    out[e] = toFloat(pack.v[e]);
}

/// Whether `p` suits packs of `bytes` bytes (16 at most matter).
bool alignedTo(const void *p, int64_t bytes) {
  int64_t alignment = std::min<int64_t>(bytes, 16);
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

/// Whether `p` (null counts as aligned) suits packs of `n` elements of `t`.
bool packAligned(const void *p, DType t, int64_t n) {
  return !p || alignedTo(p, dtypeBytes(t) * n);
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

/// Grid-stride loop bounds: each element (or pack) is handled by exactly one
/// thread, whatever the grid size.
__device__ __forceinline__ int64_t gridThread() {
  return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ int64_t gridThreads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

/// add, mul, gelu_grad(dy = a, x = b): same-shape binary kinds.
__device__ __forceinline__ float binaryOp(ElementwiseKind kind, float a,
                                          float b) {
  switch (kind) {
  case ElementwiseKind::Add:
    return a + b;
  case ElementwiseKind::Mul:
    return a * b;
  default: // GeluGrad
    return a * geluDerivative(b);
  }
}

/// copy, cast, gelu, silu.
__device__ __forceinline__ float unaryOp(ElementwiseKind kind, float a) {
  switch (kind) {
  case ElementwiseKind::Gelu:
    return gelu(a);
  case ElementwiseKind::Silu:
    return silu(a);
  default: // Copy, Cast
    return a;
  }
}

/// Packs of V elements (the pointers suit them), then the count % V tail
/// element by element. `b` is unused (may be null) for unary kinds.
template <int V, bool Binary, typename A, typename B, typename O>
__global__ void elementwiseKernel(ElementwiseKind kind, const A *a, const B *b,
                                  O *out, int64_t count) {
  int64_t packs = count / V;
  for (int64_t p = gridThread(); p < packs; p += gridThreads()) {
    float x[V], y[V], r[V];
    loadPack<A, V>(a + p * V, x);
    if constexpr (Binary)
      loadPack<B, V>(b + p * V, y);
#pragma unroll
    for (int e = 0; e < V; ++e)
      r[e] = Binary ? binaryOp(kind, x[e], y[e]) : unaryOp(kind, x[e]);
    storePack<O, V>(out + p * V, r);
  }
  for (int64_t i = packs * V + gridThread(); i < count; i += gridThreads()) {
    float x = toFloat(a[i]);
    float r = Binary ? binaryOp(kind, x, toFloat(b[i])) : unaryOp(kind, x);
    out[i] = fromFloat<O>(r);
  }
}

/// out[r, c] = silu(x[r, c]) * x[r, cols + c]; x is rows x 2*cols. V divides
/// cols.
template <int V, typename A, typename O>
__global__ void swigluKernel(const A *x, O *out, int64_t rows, int64_t cols) {
  int64_t packsPerRow = cols / V;
  int64_t packs = rows * packsPerRow;
  for (int64_t p = gridThread(); p < packs; p += gridThreads()) {
    int64_t r = p / packsPerRow, c = (p - r * packsPerRow) * V;
    const A *row = x + r * 2 * cols;
    float gate[V], up[V], result[V];
    loadPack<A, V>(row + c, gate);
    loadPack<A, V>(row + cols + c, up);
#pragma unroll
    for (int e = 0; e < V; ++e)
      result[e] = silu(gate[e]) * up[e];
    storePack<O, V>(out + r * cols + c, result);
  }
}

/// out = [dgate | dup], all rows x cols; dy is rows x cols/2. V divides
/// cols/2.
template <int V, typename A, typename B, typename O>
__global__ void swigluGradKernel(const A *dy, const B *x, O *out, int64_t rows,
                                 int64_t cols) {
  int64_t half = cols / 2;
  int64_t packsPerRow = half / V;
  int64_t packs = rows * packsPerRow;
  for (int64_t p = gridThread(); p < packs; p += gridThreads()) {
    int64_t r = p / packsPerRow, c = (p - r * packsPerRow) * V;
    float g[V], gate[V], up[V], dgate[V], dup[V];
    loadPack<A, V>(dy + r * half + c, g);
    loadPack<B, V>(x + r * cols + c, gate);
    loadPack<B, V>(x + r * cols + half + c, up);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      dgate[e] = g[e] * up[e] * siluDerivative(gate[e]);
      dup[e] = g[e] * silu(gate[e]);
    }
    storePack<O, V>(out + r * cols + c, dgate);
    storePack<O, V>(out + r * cols + half + c, dup);
  }
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

constexpr float kNormEps = 1e-5f;

/// Packs per thread a norm CTA keeps in registers; the rest of a longer row
/// is read again from global memory (L1/L2) when needed.
constexpr int kNormCached = 4;

/// Threads of a row CTA for `packs` packs per row: enough that the row fits
/// the register cache, a multiple of 32 in [32, maxThreads].
int normThreads(int64_t packs, int maxThreads) {
  int64_t threads = (packs + kNormCached - 1) / kNormCached;
  threads = (threads + 31) / 32 * 32;
  return static_cast<int>(
      std::max<int64_t>(32, std::min<int64_t>(maxThreads, threads)));
}

/// Most threads of a forward norm CTA, and of the unfused backward's row
/// CTA (which keeps two rows). Forward CTAs of up to 512 threads (so that
/// rows of 12288 16-bit columns were read once, but two CTAs of 384
/// threads an SM) measured 14.9 us for 512 x 12288 bf16 through tandem-run
/// on the H200 (2026-12-04, kernels batch 1), against 12.4 us with these
/// (four CTAs an SM, the rest of the row read again from L2).
constexpr int kNormThreads = 256;

/// Row r of a norm, with its packs of V elements: the first kNormCached
/// packs of each thread (pack p = threadIdx.x + k * blockDim.x) are loaded
/// into `cached`, the rest are read when visited. Each thread visits its
/// packs in increasing order, so every per-thread sum has a fixed order.
template <int V, typename X> struct NormRow {
  const X *row;
  int64_t packs;
  float cached[kNormCached][V];

  __device__ NormRow(const X *row, int64_t packs) : row(row), packs(packs) {
#pragma unroll
    for (int k = 0; k < kNormCached; ++k) {
      int64_t p = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
      if (p < packs)
        loadPack<X, V>(row + p * V, cached[k]);
    }
  }

  /// fn(p, values) for every pack of this thread, in increasing order.
  template <typename Fn> __device__ void forEach(Fn &&fn) const {
#pragma unroll
    for (int k = 0; k < kNormCached; ++k) {
      int64_t p = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
      if (p < packs)
        fn(p, cached[k]);
    }
    for (int64_t p =
             threadIdx.x + static_cast<int64_t>(kNormCached) * blockDim.x;
         p < packs; p += blockDim.x) {
      float values[V];
      loadPack<X, V>(row + p * V, values);
      fn(p, values);
    }
  }
};

/// Mean (0 for RMS norm) and 1/sqrt(var + eps) of one row, in every thread.
template <int V, typename X>
__device__ void rowStatistics(NormKind kind, const NormRow<V, X> &row,
                              int64_t cols, float *shared, float &mean,
                              float &rstd) {
  mean = 0.0f;
  if (kind == NormKind::Layer) {
    float sum = 0.0f;
    row.forEach([&](int64_t, const float (&v)[V]) {
#pragma unroll
      for (int e = 0; e < V; ++e)
        sum += v[e];
    });
    mean = blockSum(sum, shared) / static_cast<float>(cols);
  }
  float squares = 0.0f;
  float m = mean;
  row.forEach([&](int64_t, const float (&v)[V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) {
      float centred = v[e] - m;
      squares += centred * centred;
    }
  });
  float variance = blockSum(squares, shared) / static_cast<float>(cols);
  rstd = 1.0f / sqrtf(variance + kNormEps);
}

/// One CTA per row; V divides cols and the pointers suit packs of V.
template <int V, typename X, typename W>
__global__ void __launch_bounds__(kNormThreads)
    normKernel(NormKind kind, const X *x, const W *w, X *y, int64_t cols) {
  __shared__ float shared[32];
  int64_t r = blockIdx.x;
  NormRow<V, X> row(x + r * cols, cols / V);
  float mean, rstd;
  rowStatistics(kind, row, cols, shared, mean, rstd);
  X *out = y + r * cols;
  row.forEach([&](int64_t p, const float (&v)[V]) {
    float weight[V], result[V];
    loadPack<W, V>(w + p * V, weight);
#pragma unroll
    for (int e = 0; e < V; ++e)
      result[e] = (v[e] - mean) * rstd * weight[e];
    storePack<X, V>(out + p * V, result);
  });
}

/// One CTA per row: dx, and the row statistics for the dw kernels.
/// With xhat = (x - mean) * rstd and g = dy * w:
///   RMS:   dx = rstd * (g - xhat * mean(g * xhat))
///   Layer: dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
template <int V, typename X, typename W>
__global__ void normGradRowKernel(NormKind kind, const X *dy, const X *x,
                                  const W *w, X *dx, int64_t cols,
                                  float *stats) {
  __shared__ float shared[32];
  int64_t r = blockIdx.x;
  int64_t packs = cols / V;
  NormRow<V, X> row(x + r * cols, packs);
  NormRow<V, X> dyRow(dy + r * cols, packs);
  float mean, rstd;
  rowStatistics(kind, row, cols, shared, mean, rstd);
  // Both rows visit the same packs in the same order: walk them together.
  float sumG = 0.0f, sumGX = 0.0f;
  auto visit = [&](auto &&fn) {
#pragma unroll
    for (int k = 0; k < kNormCached; ++k) {
      int64_t p = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
      if (p < packs)
        fn(p, row.cached[k], dyRow.cached[k]);
    }
    for (int64_t p =
             threadIdx.x + static_cast<int64_t>(kNormCached) * blockDim.x;
         p < packs; p += blockDim.x) {
      float xv[V], gv[V];
      loadPack<X, V>(row.row + p * V, xv);
      loadPack<X, V>(dyRow.row + p * V, gv);
      fn(p, xv, gv);
    }
  };
  visit([&](int64_t p, const float (&xv)[V], const float (&dv)[V]) {
    float weight[V];
    loadPack<W, V>(w + p * V, weight);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      float g = dv[e] * weight[e];
      float xhat = (xv[e] - mean) * rstd;
      sumG += g;
      sumGX += g * xhat;
    }
  });
  float n = static_cast<float>(cols);
  float meanG = kind == NormKind::Layer ? blockSum(sumG, shared) / n : 0.0f;
  float meanGX = blockSum(sumGX, shared) / n;
  X *out = dx + r * cols;
  visit([&](int64_t p, const float (&xv)[V], const float (&dv)[V]) {
    float weight[V], result[V];
    loadPack<W, V>(w + p * V, weight);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      float g = dv[e] * weight[e];
      float xhat = (xv[e] - mean) * rstd;
      result[e] = rstd * (g - meanG - xhat * meanGX);
    }
    storePack<X, V>(out + p * V, result);
  });
  if (threadIdx.x == 0) {
    stats[2 * r] = mean;
    stats[2 * r + 1] = rstd;
  }
}

/// Threads of a fused norm-backward CTA for `packs` packs per row: enough
/// that every pack of the row is in the register cache, a multiple of 32 in
/// [32, kNormGradFusedThreads]; 0 when the row does not fit (the unfused
/// kernels then run).
constexpr int kNormGradFusedThreads = 512;
/// Rows of at most this many threads' packs run the fused kernel compiled
/// for this CTA size (more registers a thread: normGradFusedKernel).
constexpr int kNormGradFusedSmallThreads = 256;
int normGradFusedThreads(int64_t packs) {
  int64_t threads = (packs + kNormCached - 1) / kNormCached;
  threads = std::max<int64_t>(32, (threads + 31) / 32 * 32);
  return threads > kNormGradFusedThreads ? 0 : static_cast<int>(threads);
}

/// Norm backward in one pass over x and dy: CTA b handles rows b, b + G,
/// ... (G = gridDim.x) in increasing order; per row it computes dx as
/// normGradRowKernel does and adds dy * xhat of its packs to per-thread
/// f32 sums, which it writes as row b of `partial` (G x cols) at the end.
/// Every pack of a row is in registers: packs <= kNormCached * blockDim.x.
/// The packs are kept as loaded (16 bytes each) and converted where used;
/// the weight packs are read again where used (L1 hits: every row reads
/// the same ones). CTAs of up to kNormGradFusedSmallThreads threads load
/// the next row's packs before the current row's reductions, so that a
/// CTA's loads of row r + G are in flight while it finishes row r. Every
/// sum runs in the order normGradRowKernel's does, prefetch or not.
/// MaxThreads bounds blockDim.x. The 256-thread build holds two rows a
/// thread (166 registers for bf16 on sm_90a, so one CTA an SM; 256 CTAs
/// run as two nearly full waves on an H200); the 512-thread build, at most
/// 128 registers a thread, has no room for a second row. Neither spills.
template <int V, int MaxThreads, bool Prefetch, typename X, typename W>
__global__ void
__launch_bounds__(MaxThreads, Prefetch ? 1 : kNormGradFusedThreads / MaxThreads)
    normGradFusedKernel(NormKind kind, const X *dy, const X *x, const W *w,
                        X *dx, int64_t rows, int64_t cols, float *partial) {
  __shared__ float shared[32];
  const int64_t packs = cols / V;
  const float n = static_cast<float>(cols);
  float acc[kNormCached][V];
#pragma unroll
  for (int k = 0; k < kNormCached; ++k)
#pragma unroll
    for (int e = 0; e < V; ++e)
      acc[k][e] = 0.0f;
  Pack<X, V> xs[kNormCached], dys[kNormCached], nextX[kNormCached],
      nextDy[kNormCached];
  auto fetch = [&](int64_t r, Pack<X, V>(&xp)[kNormCached],
                   Pack<X, V>(&dyp)[kNormCached]) {
#pragma unroll
    for (int k = 0; k < kNormCached; ++k) {
      int64_t p = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
      if (p < packs) {
        xp[k] = *reinterpret_cast<const Pack<X, V> *>(x + r * cols + p * V);
        dyp[k] = *reinterpret_cast<const Pack<X, V> *>(dy + r * cols + p * V);
      }
    }
  };
  // Without the prefetch, each row is loaded when the CTA reaches it.
  constexpr bool kPrefetch = Prefetch;
  if (kPrefetch && blockIdx.x < rows)
    fetch(blockIdx.x, nextX, nextDy);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    if constexpr (kPrefetch) {
#pragma unroll
      for (int k = 0; k < kNormCached; ++k) {
        xs[k] = nextX[k];
        dys[k] = nextDy[k];
      }
      if (r + gridDim.x < rows)
        fetch(r + gridDim.x, nextX, nextDy);
    } else {
      fetch(r, xs, dys);
    }
    // Row statistics in rowStatistics' order: per-thread sums over the
    // thread's packs in increasing order, then blockSum.
    float mean = 0.0f;
    if (kind == NormKind::Layer) {
      float sum = 0.0f;
#pragma unroll
      for (int k = 0; k < kNormCached; ++k) {
        int64_t p = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
        if (p < packs) {
          float v[V];
          unpack(xs[k], v);
#pragma unroll
          for (int e = 0; e < V; ++e)
            sum += v[e];
        }
      }
      mean = blockSum(sum, shared) / n;
    }
    float squares = 0.0f;
#pragma unroll
    for (int k = 0; k < kNormCached; ++k) {
      int64_t p = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
      if (p < packs) {
        float v[V];
        unpack(xs[k], v);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          float centred = v[e] - mean;
          squares += centred * centred;
        }
      }
    }
    float rstd = 1.0f / sqrtf(blockSum(squares, shared) / n + kNormEps);
    float sumG = 0.0f, sumGX = 0.0f;
#pragma unroll
    for (int k = 0; k < kNormCached; ++k) {
      int64_t p = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
      if (p < packs) {
        float xv[V], dv[V], wv[V];
        unpack(xs[k], xv);
        unpack(dys[k], dv);
        loadPack<W, V>(w + p * V, wv);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          float g = dv[e] * wv[e];
          float xhat = (xv[e] - mean) * rstd;
          sumG += g;
          sumGX += g * xhat;
          acc[k][e] += dv[e] * xhat;
        }
      }
    }
    float meanG = kind == NormKind::Layer ? blockSum(sumG, shared) / n : 0.0f;
    float meanGX = blockSum(sumGX, shared) / n;
    X *out = dx + r * cols;
#pragma unroll
    for (int k = 0; k < kNormCached; ++k) {
      int64_t p = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
      if (p < packs) {
        float xv[V], dv[V], wv[V], result[V];
        unpack(xs[k], xv);
        unpack(dys[k], dv);
        loadPack<W, V>(w + p * V, wv);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          float g = dv[e] * wv[e];
          float xhat = (xv[e] - mean) * rstd;
          result[e] = rstd * (g - meanG - xhat * meanGX);
        }
        storePack<X, V>(out + p * V, result);
      }
    }
  }
#pragma unroll
  for (int k = 0; k < kNormCached; ++k) {
    int64_t p = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
    if (p < packs)
      storePack<float, V>(partial + blockIdx.x * cols + p * V, acc[k]);
  }
}

/// partial[chunk, c] = sum over the chunk's rows, in row order, of
/// dy[r, c] * xhat[r, c]; each thread owns one pack of V columns. Grid:
/// (column-pack tiles, chunks). V divides cols.
template <int V, typename X>
__global__ void normGradWeightPartialKernel(const X *dy, const X *x,
                                            const float *stats, int64_t rows,
                                            int64_t cols, int64_t rowsPerChunk,
                                            float *partial) {
  int64_t p = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (p >= cols / V)
    return;
  int64_t c = p * V;
  int64_t begin = blockIdx.y * rowsPerChunk;
  int64_t end = begin + rowsPerChunk < rows ? begin + rowsPerChunk : rows;
  float sum[V];
#pragma unroll
  for (int e = 0; e < V; ++e)
    sum[e] = 0.0f;
#pragma unroll 4
  for (int64_t r = begin; r < end; ++r) {
    float xv[V], dv[V];
    loadPack<X, V>(x + r * cols + c, xv);
    loadPack<X, V>(dy + r * cols + c, dv);
    float mean = stats[2 * r], rstd = stats[2 * r + 1];
#pragma unroll
    for (int e = 0; e < V; ++e)
      sum[e] += dv[e] * ((xv[e] - mean) * rstd);
  }
  storePack<float, V>(partial + blockIdx.y * cols + c, sum);
}

/// dw[c] = sum over chunks of partial[chunk, c] in a fixed order: thread
/// (x, y) of a 32 x 8 CTA sums chunks y, y + 8, ... of column x of its tile,
/// then row y = 0 adds the 8 sums in order of y.
constexpr int kDwLanes = 8;
constexpr int kDwUnroll = 8;
template <typename W>
__global__ void normGradWeightFinalKernel(const float *partial, int64_t chunks,
                                          int64_t cols, W *dw) {
  __shared__ float sums[kDwLanes][33];
  int64_t c = blockIdx.x * static_cast<int64_t>(32) + threadIdx.x;
  float sum = 0.0f;
  if (c < cols) {
    // kDwUnroll chunks are loaded before any is added, so that their loads
    // are in flight together (a chunk at a time, 256 chunks were 32 memory
    // latencies in a row); the additions keep the order k = y, y + 8, ...
    int64_t k = threadIdx.y;
    for (; k + (kDwUnroll - 1) * kDwLanes < chunks; k += kDwUnroll * kDwLanes) {
      float v[kDwUnroll];
#pragma unroll
      for (int u = 0; u < kDwUnroll; ++u)
        v[u] = partial[(k + u * kDwLanes) * cols + c];
#pragma unroll
      for (int u = 0; u < kDwUnroll; ++u)
        sum += v[u];
    }
    for (; k < chunks; k += kDwLanes)
      sum += partial[k * cols + c];
  }
  sums[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float total = 0.0f;
    for (int y = 0; y < kDwLanes; ++y)
      total += sums[y][threadIdx.x];
    dw[c] = fromFloat<W>(total);
  }
}

/// The dw reduction splits the rows into at most this many chunks (of at
/// least kNormGradMinChunkRows rows where there are enough rows). The fused
/// kernel runs one CTA per chunk: 256 CTAs are about two per SM of an H200
/// (132 SMs), and 4 rows a CTA keep the f32 partials at most a quarter
/// (bf16) of the bytes of x and dy.
constexpr int64_t kMaxNormGradChunks = 256;
constexpr int64_t kNormGradMinChunkRows = 4;

int64_t normGradChunks(int64_t rows) {
  return std::max<int64_t>(
      1, std::min(kMaxNormGradChunks,
                  (rows + kNormGradMinChunkRows - 1) / kNormGradMinChunkRows));
}

int64_t alignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

//===----------------------------------------------------------------------===//
// Softmax (attention)
//===----------------------------------------------------------------------===//

constexpr int kSoftmaxThreads = 256;
/// Packs per thread the forward softmax keeps in registers (with packs of
/// 4, rows of up to 4096 scores are read from memory once).
constexpr int kSoftmaxCached = 4;

/// One CTA per row r of a batch of rows x seq score matrices stored back to
/// back (query i = r % rows, at position seq - rows + i); V divides seq.
/// The probabilities go to `probs` (row stride probsLd) and, if not null,
/// to `probs32` (row stride seq).
/// Either may alias `scores` with row r starting where row r of the scores
/// does: every score a write could overwrite is read before that write
/// (the cached packs before the first write; the others chunk by chunk,
/// with a barrier between a chunk's reads and its writes, and a chunk's
/// writes never reach past the scores already read).
template <int V, typename P>
__global__ void softmaxForwardKernel(const float *scores, int64_t rows,
                                     int64_t seq, bool causal, P *probs,
                                     int64_t probsLd, float *probs32) {
  __shared__ float shared[32];
  int64_t r = blockIdx.x;
  int64_t i = r % rows;
  const float *row = scores + r * seq;
  P *outRow = probs + r * probsLd;
  float *outRow32 = probs32 ? probs32 + r * seq : nullptr;
  int64_t valid = causal ? seq - rows + i + 1 : seq;
  int64_t packs = seq / V;
  int64_t stride = blockDim.x;

  float cached[kSoftmaxCached][V];
  float localMax = -INFINITY;
#pragma unroll
  for (int k = 0; k < kSoftmaxCached; ++k) {
    int64_t p = threadIdx.x + k * stride;
    if (p < packs && p * V < valid) {
      loadPack<float, V>(row + p * V, cached[k]);
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (p * V + e < valid)
          localMax = fmaxf(localMax, cached[k][e]);
    }
  }
  for (int64_t p = threadIdx.x + kSoftmaxCached * stride;
       p < packs && p * V < valid; p += stride) {
    float v[V];
    loadPack<float, V>(row + p * V, v);
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (p * V + e < valid)
        localMax = fmaxf(localMax, v[e]);
  }
  float rowMax = blockMax(localMax, shared);

  float localSum = 0.0f;
#pragma unroll
  for (int k = 0; k < kSoftmaxCached; ++k) {
    int64_t p = threadIdx.x + k * stride;
    if (p < packs && p * V < valid) {
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (p * V + e < valid)
          localSum += expf(cached[k][e] - rowMax);
    }
  }
  for (int64_t p = threadIdx.x + kSoftmaxCached * stride;
       p < packs && p * V < valid; p += stride) {
    float v[V];
    loadPack<float, V>(row + p * V, v);
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (p * V + e < valid)
        localSum += expf(v[e] - rowMax);
  }
  // blockSum's barriers order every read above before the writes below.
  float inverse = 1.0f / blockSum(localSum, shared);

  auto write = [&](int64_t p, const float (&v)[V]) {
    float result[V];
#pragma unroll
    for (int e = 0; e < V; ++e)
      result[e] = p * V + e < valid ? expf(v[e] - rowMax) * inverse : 0.0f;
    storePack<P, V>(outRow + p * V, result);
    if (outRow32)
      storePack<float, V>(outRow32 + p * V, result);
  };
#pragma unroll
  for (int k = 0; k < kSoftmaxCached; ++k) {
    int64_t p = threadIdx.x + k * stride;
    if (p < packs)
      write(p, cached[k]); // Masked packs were not loaded: not read.
  }
  // Uniform loop bounds: every thread reaches every barrier.
  for (int64_t base = kSoftmaxCached * stride; base < packs; base += stride) {
    int64_t p = base + threadIdx.x;
    float v[V];
#pragma unroll
    for (int e = 0; e < V; ++e)
      v[e] = 0.0f;
    if (p < packs && p * V < valid)
      loadPack<float, V>(row + p * V, v);
    __syncthreads();
    if (p < packs)
      write(p, v);
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

/// One CTA per row r of a batch of score matrices (slot r / seq, query
/// i = r % seq); V divides seq. `dscores` (row stride dscoresLd) may alias
/// `dprobs` with row r starting where row r of dprobs does: each chunk's
/// reads precede its writes (barrier), and its writes stay below the
/// dprobs values later chunks read.
template <int V, typename T>
__global__ void softmaxBackwardKernel(const float *probs32, const float *dprobs,
                                      const float *rowDot, T *dscores,
                                      int64_t dscoresLd, int64_t seq,
                                      detail::AttentionHeadMap map) {
  int64_t r = blockIdx.x;
  int64_t slot = r / seq, i = r - slot * seq;
  int64_t h = (map.kvBegin + slot % map.kvCount) * map.group + map.groupBegin +
              slot / map.kvCount;
  float d = rowDot[h * seq + i];
  const float *p32 = probs32 + r * seq;
  const float *dp = dprobs + r * seq;
  T *out = dscores + r * dscoresLd;
  int64_t packs = seq / V;
  for (int64_t base = 0; base < packs; base += blockDim.x) {
    int64_t q = base + threadIdx.x;
    float result[V];
    if (q < packs) {
      float pv[V], dv[V];
      loadPack<float, V>(p32 + q * V, pv);
      loadPack<float, V>(dp + q * V, dv);
#pragma unroll
      for (int e = 0; e < V; ++e)
        result[e] = pv[e] * (dv[e] - d);
    }
    __syncthreads();
    if (q < packs)
      storePack<T, V>(out + q * V, result);
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

/// Output element j of an opaque op: element j (cyclically) of input 0,
/// converted, or 0 without input 0.
template <typename TIn, typename T>
__global__ void opaqueGenerateKernel(const TIn *input, int64_t inputCount,
                                     T *out, int64_t count) {
  for (int64_t j = gridThread(); j < count; j += gridThreads()) {
    float value = inputCount > 0 ? toFloat(input[j % inputCount]) : 0.0f;
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

__device__ __forceinline__ uint64_t globalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// The emulated fabric's collective (launchEmulatedCollective). Values as
/// the stand-in's; the work is cut into rounds in which every thread of the
/// grid handles kUnroll items (independent 16-byte accesses in flight,
/// coalesced across the grid), and paced: every `paceEvery` rounds the CTA
/// waits until the share of `paceNs` that its bytes so far represent has
/// passed since the CTA started, and at the end until all of `paceNs` has.
/// Each CTA paces itself, so a CTA that starts late (its SM busy) finishes
/// late, as a channel of a real collective would.
///
/// VEC: items of 16 bytes. Output = `copies` = outCount / period copies of
/// the input window [base, base + period) (scaled by `factor`); each input
/// item is read once and written to its copies, as a rank reads what it
/// sends once and writes what it receives. Otherwise one element per item
/// (layouts whose counts are not multiples of 16 bytes).
template <typename T, bool VEC>
__global__ void __launch_bounds__(512)
    emulatedCollectiveKernel(const T *in, T *out, int64_t outCount,
                             int64_t base, int64_t period, float factor,
                             uint4 *scratch, int64_t scratchChunks,
                             int64_t trafficChunks, int64_t paceNs) {
  constexpr int kPer = VEC ? 16 / sizeof(T) : 1;
  constexpr int kUnroll = VEC ? 8 : 1;
  __shared__ uint64_t start;
  if (threadIdx.x == 0)
    start = globalTimerNs();
  __syncthreads();
  const int64_t first =
      blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t perRound = stride * kUnroll;
  // Items of the value phase: source items (VEC) or output elements.
  const int64_t copies = VEC ? outCount / period : 1;
  const int64_t items = VEC ? period / kPer : outCount;
  const int64_t outRounds = (items + perRound - 1) / perRound;
  const int64_t trafficRounds = (trafficChunks + perRound - 1) / perRound;
  const int64_t rounds = outRounds + trafficRounds;
  const double outRoundBytes =
      double(perRound) * kPer * sizeof(T) * (1 + copies);
  const double trafficRoundBytes = double(perRound) * 32;
  const double totalBytes =
      outRounds * outRoundBytes + trafficRounds * trafficRoundBytes;
  const int64_t paceEvery = rounds > 64 ? rounds / 64 : 1;
  auto pace = [&](double doneBytes) {
    __syncthreads();
    if (threadIdx.x == 0 && paceNs > 0) {
      uint64_t until =
          start + static_cast<uint64_t>(totalBytes > 0
                                            ? paceNs * (doneBytes / totalBytes)
                                            : double(paceNs));
      while (globalTimerNs() < until)
        __nanosleep(128);
    }
    __syncthreads();
  };
  for (int64_t r = 0; r < rounds; ++r) {
    if (r < outRounds) {
      int64_t i0 = r * perRound + first;
      if constexpr (VEC) {
        union Pack {
          uint4 v;
          T e[kPer];
        };
        Pack src[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          int64_t i = i0 + u * stride;
          if (i < items)
            src[u].v = *reinterpret_cast<const uint4 *>(in + base + i * kPer);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          int64_t i = i0 + u * stride;
          if (i >= items)
            continue;
          Pack dst;
#pragma unroll
          for (int k = 0; k < kPer; ++k)
            dst.e[k] = fromFloat<T>(factor * toFloat(src[u].e[k]));
          for (int64_t c = 0; c < copies; ++c)
            *reinterpret_cast<uint4 *>(out + c * period + i * kPer) = dst.v;
        }
      } else {
        if (i0 < outCount)
          out[i0] = fromFloat<T>(factor * toFloat(in[base + i0 % period]));
      }
    } else {
      int64_t c0 = (r - outRounds) * perRound + first;
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        int64_t c = c0 + u * stride;
        if (c < trafficChunks)
          v[u] = loadStreaming(scratch + c % scratchChunks);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        int64_t c = c0 + u * stride;
        if (c < trafficChunks)
          storeStreaming(scratch + c % scratchChunks, v[u]);
      }
    }
    if ((r + 1) % paceEvery == 0 && r + 1 < rounds)
      pace(r + 1 <= outRounds ? (r + 1) * outRoundBytes
                              : outRounds * outRoundBytes +
                                    (r + 1 - outRounds) * trafficRoundBytes);
  }
  pace(totalBytes);
}

/// Copy-engine collectives (launchCopyEngineCollective): the pacing stamp
/// and waits run on one CTA of one warp, so that a collective whose bytes
/// move on the copy engines holds at most one CTA while it waits.
__global__ void __launch_bounds__(32) copyEngineStampKernel(uint64_t *slot) {
  if (threadIdx.x == 0)
    *slot = globalTimerNs();
}

__global__ void __launch_bounds__(32)
    copyEngineWaitKernel(const uint64_t *slot, int64_t afterNs) {
  if (threadIdx.x != 0)
    return;
  const uint64_t until = *slot + static_cast<uint64_t>(afterNs);
  while (globalTimerNs() < until)
    __nanosleep(128);
}

/// Cross-rank ordering of copy-engine collectives between ranks that map
/// each other's memory (launchPeerSignalWait). Thread t of the one CTA
/// handles rank t, t + blockDim.x, ...: it first stores this step's epoch
/// into slot `slot + rank` of rank t's signal array (where t is a rank to
/// signal), after a system-scope fence so that everything this stream wrote
/// before is visible to t first; then it spins until slot `slot + t` of
/// this rank's own array holds at least the epoch (where t is a rank to
/// wait for). A wait longer than `timeoutNs` traps (an error the host
/// reports) instead of spinning forever on a peer that is gone.
__global__ void __launch_bounds__(256)
    peerSignalWaitKernel(uint64_t *const *signalBases, int groupSize, int rank,
                         int64_t slot, int signalTo, int waitFrom,
                         const uint64_t *epochSlot, uint64_t timeoutNs) {
  const uint64_t epoch = *epochSlot;
  __threadfence_system();
  for (int t = threadIdx.x; t < groupSize; t += blockDim.x)
    if (t != rank && (signalTo < 0 || t == signalTo))
      *reinterpret_cast<volatile uint64_t *>(signalBases[t] + slot + rank) =
          epoch;
  const volatile uint64_t *own = signalBases[rank] + slot;
  const uint64_t start = globalTimerNs();
  for (int t = threadIdx.x; t < groupSize; t += blockDim.x) {
    if (t == rank || (waitFrom >= 0 && t != waitFrom))
      continue;
    while (own[t] < epoch) {
      if (globalTimerNs() - start > timeoutNs)
        __trap();
      __nanosleep(256);
    }
  }
  __threadfence_system();
}

__global__ void __launch_bounds__(32) advanceEpochKernel(uint64_t *epoch) {
  if (threadIdx.x == 0)
    *epoch += 1;
}

/// The reduction of a copy-engine reduce-scatter: out = reduce(own, the
/// `staged` blocks of `block` elements each), N elements per item (one
/// 16-byte pack, or 1 where the layout does not allow packs). Accumulated
/// in double and rounded once. On one GPU the staged blocks are copies of
/// `own` (every rank holds this rank's data), so each partial sum k x is
/// exact and the result is bitwise the stand-in's factor * x; across ranks
/// the order (own, then rank+1, rank+2, ...) is fixed, so the result is
/// reproducible run to run.
template <typename T, int N>
__global__ void copyEngineReduceKernel(const T *own, const T *staged,
                                       int64_t block, int stagedBlocks,
                                       ReduceKind op, int groupSize, T *out) {
  const int64_t items = block / N;
  for (int64_t item = gridThread(); item < items; item += gridThreads()) {
    const int64_t i = item * N;
    double acc[N];
    Pack<T, N> p = *reinterpret_cast<const Pack<T, N> *>(own + i);
#pragma unroll
    for (int e = 0; e < N; ++e)
      acc[e] = toFloat(p.v[e]);
    for (int b = 0; b < stagedBlocks; ++b) {
      Pack<T, N> q =
          *reinterpret_cast<const Pack<T, N> *>(staged + b * block + i);
#pragma unroll
      for (int e = 0; e < N; ++e) {
        double v = toFloat(q.v[e]);
        switch (op) {
        case ReduceKind::Max:
          acc[e] = fmax(acc[e], v);
          break;
        case ReduceKind::Min:
          acc[e] = fmin(acc[e], v);
          break;
        default:
          acc[e] += v;
          break;
        }
      }
    }
    Pack<T, N> r;
#pragma unroll
    for (int e = 0; e < N; ++e)
      r.v[e] = fromFloat<T>(static_cast<float>(
          op == ReduceKind::Avg ? acc[e] / groupSize : acc[e]));
    *reinterpret_cast<Pack<T, N> *>(out + i) = r;
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Kernels.h
//===----------------------------------------------------------------------===//

/// Words a copy thread loads before it stores any: several 16-byte loads
/// of each thread in flight, as a bandwidth-bound copy needs.
constexpr int kCopyUnroll = 4;
/// Threads of a copy CTA.
constexpr int kCopyThreads = 256;
/// Copy CTAs per SM the grid is sized for: 8 CTAs of 256 threads are the
/// 2048 threads an SM of sm_80 / sm_90 holds, so the grid is one full wave.
constexpr int kCopyCtasPerSm = 8;

/// Word w of row r: dst[r * dstPitch + w] = src[r * srcPitch + w], pitches
/// and the row width in words of W. Thread (x, y) of CTA (bx, by) copies
/// rows by * blockDim.y + y, then every gridDim.y * blockDim.y-th row after
/// it, and in each row the words bx * blockDim.x + x, then every
/// gridDim.x * blockDim.x-th word: no division per word, and each word is
/// copied by exactly one thread whatever the grid.
template <typename W>
__global__ void __launch_bounds__(kCopyThreads)
    copy2DKernel(W *dst, int64_t dstPitch, const W *src, int64_t srcPitch,
                 int64_t rowWords, int64_t rows) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t rowStride = static_cast<int64_t>(gridDim.y) * blockDim.y;
  for (int64_t r = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
       r < rows; r += rowStride) {
    const W *from = src + r * srcPitch;
    W *to = dst + r * dstPitch;
    int64_t w = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; w + (kCopyUnroll - 1) * stride < rowWords;
         w += kCopyUnroll * stride) {
      W v[kCopyUnroll];
#pragma unroll
      for (int u = 0; u < kCopyUnroll; ++u)
        v[u] = from[w + u * stride];
#pragma unroll
      for (int u = 0; u < kCopyUnroll; ++u)
        to[w + u * stride] = v[u];
    }
    for (; w < rowWords; w += stride)
      to[w] = from[w];
  }
}

namespace detail {

CopyGrid planCopy2D(int64_t rowWords, int64_t rows, int smCount) {
  CopyGrid g;
  // A CTA spans at most a row: narrow rows share a CTA (x a multiple of
  // 32 covering the row, y = rows per CTA).
  int64_t x = std::min<int64_t>(kCopyThreads, (rowWords + 31) / 32 * 32);
  g.threadsX = static_cast<int>(std::max<int64_t>(32, x));
  g.threadsY = kCopyThreads / g.threadsX;
  int64_t ctas = std::max<int64_t>(1, int64_t(smCount) * kCopyCtasPerSm);
  // CTAs across a row: enough that each thread has kCopyUnroll words, at
  // most the whole budget.
  int64_t perRow = int64_t(g.threadsX) * kCopyUnroll;
  g.blocksX = std::max<int64_t>(
      1, std::min<int64_t>(ctas, (rowWords + perRow - 1) / perRow));
  int64_t rowGroups = (rows + g.threadsY - 1) / g.threadsY;
  g.blocksY = std::max<int64_t>(
      1, std::min<int64_t>(
             {rowGroups, std::max<int64_t>(1, ctas / g.blocksX), kMaxGridY}));
  return g;
}

int copyWordBytes(uintptr_t dst, int64_t dstPitch, uintptr_t src,
                  int64_t srcPitch, int64_t rowBytes) {
  for (int w : {16, 8, 4, 2})
    if (rowBytes % w == 0 && dstPitch % w == 0 && srcPitch % w == 0 &&
        dst % w == 0 && src % w == 0)
      return w;
  return 1;
}

} // namespace detail

bool launchCopy2D(void *dst, int64_t dstPitch, const void *src,
                  int64_t srcPitch, int64_t rowBytes, int64_t rows,
                  cudaStream_t stream, std::string &error) {
  if (rowBytes < 0 || rows < 0 || dstPitch < rowBytes || srcPitch < rowBytes)
    return fail(error, "launchCopy2D: invalid shape (" + std::to_string(rows) +
                           " rows of " + std::to_string(rowBytes) +
                           " bytes, pitches " + std::to_string(srcPitch) +
                           " and " + std::to_string(dstPitch) + ")");
  if (rowBytes == 0 || rows == 0)
    return true;
  if (!dst || !src)
    return fail(error, "launchCopy2D: null pointer argument");
  int device = 0, smCount = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount,
                             device) != cudaSuccess)
    return checkLaunch("launchCopy2D (device query)", error);
  int word = detail::copyWordBytes(reinterpret_cast<uintptr_t>(dst), dstPitch,
                                   reinterpret_cast<uintptr_t>(src), srcPitch,
                                   rowBytes);
  auto launch = [&](auto tag) {
    using W = decltype(tag);
    constexpr int64_t w = sizeof(W);
    int64_t rowWords = rowBytes / w;
    detail::CopyGrid g = detail::planCopy2D(rowWords, rows, smCount);
    copy2DKernel<W><<<dim3(static_cast<unsigned>(g.blocksX),
                           static_cast<unsigned>(g.blocksY)),
                      dim3(g.threadsX, g.threadsY), 0, stream>>>(
        static_cast<W *>(dst), dstPitch / w, static_cast<const W *>(src),
        srcPitch / w, rowWords, rows);
  };
  switch (word) {
  case 16:
    launch(uint4{});
    break;
  case 8:
    launch(uint2{});
    break;
  case 4:
    launch(uint32_t{});
    break;
  case 2:
    launch(uint16_t{});
    break;
  default:
    launch(uint8_t{});
    break;
  }
  return checkLaunch("launchCopy2D (copy2DKernel)", error);
}

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
  // Packs of 16 bytes of the narrowest type involved (wider types move
  // several 16-byte vectors per pack); element by element where the
  // pointers (or, for the row-wise kinds, the row lengths) do not allow it.
  int64_t narrowest = std::min(dtypeBytes(aType), dtypeBytes(outType));
  if (binary)
    narrowest = std::min(narrowest, dtypeBytes(bType));
  int64_t width = 16 / narrowest;
  bool aligned = packAligned(a, aType, width) &&
                 (!binary || packAligned(b, bType, width)) &&
                 packAligned(out, outType, width);
  // Launches `kernel<V>` with V = width when `vector`, else V = 1.
  auto dispatch = [&](bool vector, auto &&launch) {
    if (vector && width == 8)
      launch(std::integral_constant<int, 8>{});
    else if (vector && width == 4)
      launch(std::integral_constant<int, 4>{});
    else
      launch(std::integral_constant<int, 1>{});
  };
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
          dispatch(aligned, [&](auto v) {
            constexpr int V = decltype(v)::value;
            elementwiseKernel<V, true, A, B, O>
                <<<gridFor((count + V - 1) / V), kThreads, 0, stream>>>(
                    kind, static_cast<const A *>(a), static_cast<const B *>(b),
                    static_cast<O *>(out), count);
          });
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
        dispatch(aligned, [&](auto v) {
          constexpr int V = decltype(v)::value;
          elementwiseKernel<V, false, A, A, O>
              <<<gridFor((count + V - 1) / V), kThreads, 0, stream>>>(
                  kind, static_cast<const A *>(a), nullptr,
                  static_cast<O *>(out), count);
        });
      });
    });
    break;
  case ElementwiseKind::Swiglu:
    withType(aType, [&](auto ta) {
      withType(outType, [&](auto to) {
        using A = typename decltype(ta)::type;
        using O = typename decltype(to)::type;
        dispatch(aligned && cols % width == 0, [&](auto v) {
          constexpr int V = decltype(v)::value;
          swigluKernel<V, A, O><<<gridFor(count / V), kThreads, 0, stream>>>(
              static_cast<const A *>(a), static_cast<O *>(out), rows, cols);
        });
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
          dispatch(aligned && (cols / 2) % width == 0, [&](auto v) {
            constexpr int V = decltype(v)::value;
            swigluGradKernel<V, A, B, O>
                <<<gridFor(count / 2 / V), kThreads, 0, stream>>>(
                    static_cast<const A *>(a), static_cast<const B *>(b),
                    static_cast<O *>(out), rows, cols);
          });
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
  int64_t width = 16 / dtypeBytes(xType);
  bool vector = cols % width == 0 && packAligned(x, xType, width) &&
                packAligned(y, xType, width) && packAligned(w, wType, width);
  withType(xType, [&](auto tx) {
    withType(wType, [&](auto tw) {
      using X = typename decltype(tx)::type;
      using W = typename decltype(tw)::type;
      constexpr int kWidth = 16 / sizeof(X);
      auto launch = [&](auto v) {
        constexpr int V = decltype(v)::value;
        normKernel<V, X, W><<<static_cast<unsigned>(rows),
                              normThreads(cols / V, kNormThreads), 0, stream>>>(
            kind, static_cast<const X *>(x), static_cast<const W *>(w),
            static_cast<X *>(y), cols);
      };
      if (vector)
        launch(std::integral_constant<int, kWidth>{});
      else
        launch(std::integral_constant<int, 1>{});
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
  int64_t rowsPerChunk =
      (rows + normGradChunks(rows) - 1) / normGradChunks(rows);
  int64_t chunks = (rows + rowsPerChunk - 1) / rowsPerChunk;
  int64_t width = 16 / dtypeBytes(xType);
  // The partial sums are fp32 packs of `width`: the scratch must suit them.
  bool vector = cols % width == 0 && packAligned(x, xType, width) &&
                packAligned(dy, xType, width) &&
                packAligned(dx, xType, width) && packAligned(w, wType, width) &&
                packAligned(partial, DType::F32, width);
  constexpr int kPartialThreads = 128;
  int device = 0, smCount = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status == cudaSuccess)
    status = cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount,
                                    device);
  if (status != cudaSuccess)
    return fail(error, std::string("launchNormGrad: device query failed: ") +
                           cudaGetErrorName(status));
  withType(xType, [&](auto tx) {
    withType(wType, [&](auto tw) {
      using X = typename decltype(tx)::type;
      using W = typename decltype(tw)::type;
      constexpr int kWidth = 16 / sizeof(X);
      auto launch = [&](auto v) {
        constexpr int V = decltype(v)::value;
        int64_t packs = cols / V;
        if (int threads = normGradFusedThreads(packs)) {
          bool small = threads <= kNormGradFusedSmallThreads;
          auto fused =
              small
                  ? normGradFusedKernel<V, kNormGradFusedSmallThreads, false, X,
                                        W>
                  : normGradFusedKernel<V, kNormGradFusedThreads, false, X, W>;
          // The prefetching build holds fewer CTAs an SM (one of 256
          // threads): it runs where every chunk's CTA is resident at once.
          // Both give the same values.
          auto prefetch =
              normGradFusedKernel<V, kNormGradFusedSmallThreads, true, X, W>;
          if (small) {
            int resident = 0;
            status = residentCtas(reinterpret_cast<const void *>(prefetch),
                                  threads, device, resident);
            if (status != cudaSuccess)
              return;
            if (int64_t(resident) * smCount >= chunks)
              fused = prefetch;
          }
          fused<<<static_cast<unsigned>(chunks), threads, 0, stream>>>(
              kind, static_cast<const X *>(dy), static_cast<const X *>(x),
              static_cast<const W *>(w), static_cast<X *>(dx), rows, cols,
              partial);
          return;
        }
        normGradRowKernel<V, X, W>
            <<<static_cast<unsigned>(rows), normThreads(packs, kNormThreads), 0,
               stream>>>(kind, static_cast<const X *>(dy),
                         static_cast<const X *>(x), static_cast<const W *>(w),
                         static_cast<X *>(dx), cols, stats);
        dim3 partialGrid(static_cast<unsigned>((packs + kPartialThreads - 1) /
                                               kPartialThreads),
                         static_cast<unsigned>(chunks));
        normGradWeightPartialKernel<V, X>
            <<<partialGrid, kPartialThreads, 0, stream>>>(
                static_cast<const X *>(dy), static_cast<const X *>(x), stats,
                rows, cols, rowsPerChunk, partial);
      };
      if (vector)
        launch(std::integral_constant<int, kWidth>{});
      else
        launch(std::integral_constant<int, 1>{});
      if (status != cudaSuccess)
        return;
      normGradWeightFinalKernel<W>
          <<<static_cast<unsigned>((cols + 31) / 32), dim3(32, kDwLanes), 0,
             stream>>>(partial, chunks, cols, static_cast<W *>(dw));
    });
  });
  if (status != cudaSuccess)
    return fail(error, std::string("launchNormGrad: occupancy query failed: ") +
                           cudaGetErrorName(status));
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
                  int numInputs, DType input0Type, void *const *outputs,
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

  const void *input0 = numInputs > 0 ? inputs[0] : nullptr;
  int64_t inputCount =
      numInputs > 0 ? inputBytes[0] / dtypeBytes(input0Type) : 0;
  for (int o = 0; o < numOutputs; ++o) {
    int64_t count = outputBytes[o] / dtypeBytes(outputTypes[o]);
    if (count == 0)
      continue;
    withType(outputTypes[o], [&](auto tag) {
      using T = typename decltype(tag)::type;
      withType(input0Type, [&](auto inTag) {
        using TIn = typename decltype(inTag)::type;
        opaqueGenerateKernel<TIn, T><<<gridFor(count), kThreads, 0, stream>>>(
            static_cast<const TIn *>(input0), inputCount,
            static_cast<T *>(outputs[o]), count);
      });
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

namespace {

/// Shared by the stand-in and the emulated collective: checks the counts,
/// derives what `out` holds, and launches the kernel (paced when
/// `paceNs` >= 0).
bool launchCollectiveKernel(const char *name, CollectiveKind kind,
                            ReduceKind reduce, const void *in, int64_t inCount,
                            void *out, int64_t outCount, DType type,
                            int groupSize, int rank, int ctas,
                            int64_t trafficBytes, void *scratch,
                            int64_t scratchBytes, int64_t paceNs,
                            cudaStream_t stream, std::string &error) {
  std::string what = std::string(name) + "(" + collectiveKindName(kind) + ")";
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
  if (outCount == 0 && trafficChunks == 0 && paceNs <= 0)
    return true;

  // NCCL's kernels run 512-thread CTAs too; `ctas` bounds the SMs held.
  constexpr int kCollectiveThreads = 512;
  int grid = ctas > 0 ? ctas : 24;
  withType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (paceNs < 0) {
      standinCollectiveKernel<T><<<grid, kCollectiveThreads, 0, stream>>>(
          static_cast<const T *>(in), static_cast<T *>(out), outCount, base,
          std::max<int64_t>(period, 1), factor, scratchChunks,
          std::max<int64_t>(numScratchChunks, 1), trafficChunks);
      return;
    }
    constexpr int64_t kPer = 16 / sizeof(T);
    bool vec = period > 0 && outCount % period == 0 && period % kPer == 0 &&
               base % kPer == 0 && packAligned(in, type, kPer) &&
               packAligned(out, type, kPer);
    auto launch = [&](auto kernel) {
      kernel<<<grid, kCollectiveThreads, 0, stream>>>(
          static_cast<const T *>(in), static_cast<T *>(out), outCount, base,
          std::max<int64_t>(period, 1), factor, scratchChunks,
          std::max<int64_t>(numScratchChunks, 1), trafficChunks, paceNs);
    };
    if (vec)
      launch(emulatedCollectiveKernel<T, true>);
    else
      launch(emulatedCollectiveKernel<T, false>);
  });
  return checkLaunch(what.c_str(), error);
}

} // namespace

bool launchStandinCollective(CollectiveKind kind, ReduceKind reduce,
                             const void *in, int64_t inCount, void *out,
                             int64_t outCount, DType type, int groupSize,
                             int rank, int ctas, int64_t trafficBytes,
                             void *scratch, int64_t scratchBytes,
                             cudaStream_t stream, std::string &error) {
  return launchCollectiveKernel("launchStandinCollective", kind, reduce, in,
                                inCount, out, outCount, type, groupSize, rank,
                                ctas, trafficBytes, scratch, scratchBytes, -1,
                                stream, error);
}

bool launchEmulatedCollective(CollectiveKind kind, ReduceKind reduce,
                              const void *in, int64_t inCount, void *out,
                              int64_t outCount, DType type, int groupSize,
                              int rank, int ctas, int64_t stagingBytes,
                              void *scratch, int64_t scratchBytes,
                              double paceUs, cudaStream_t stream,
                              std::string &error) {
  if (!(paceUs >= 0))
    return fail(error, "launchEmulatedCollective: negative or NaN pace");
  return launchCollectiveKernel(
      "launchEmulatedCollective", kind, reduce, in, inCount, out, outCount,
      type, groupSize, rank, ctas, stagingBytes, scratch, scratchBytes,
      static_cast<int64_t>(std::llround(paceUs * 1000.0)), stream, error);
}

bool measureEmulatedCollectiveOffset(cudaStream_t stream, void *scratch,
                                     int64_t scratchBytes, double &offsetUs,
                                     std::string &error) {
  // kLaunches back-to-back collectives paced to kPaceUs (long enough that
  // the host's launches run ahead and the bytes move well within the pace),
  // between two events, three times; the offset is the per-kernel time
  // beyond the pace (median). With scratch: a 1 MiB permute on 24 CTAs (a
  // real kernel's start and drain); without: an empty one.
  constexpr int kLaunches = 20;
  constexpr double kPaceUs = 40;
  const int64_t kBytes = 1 << 20;
  bool real = scratch && scratchBytes >= 2 * kBytes &&
              reinterpret_cast<uintptr_t>(scratch) % 16 == 0;
  char *half = static_cast<char *>(scratch) + (real ? kBytes : 0);
  int64_t count = real ? kBytes / 4 : 0;
  cudaEvent_t a = nullptr, b = nullptr;
  auto cudaOk = [&](cudaError_t e, const char *what) {
    if (e == cudaSuccess)
      return true;
    error = std::string("measureEmulatedCollectiveOffset: ") + what + ": " +
            cudaGetErrorName(e);
    return false;
  };
  bool ok = cudaOk(cudaEventCreate(&a), "cudaEventCreate") &&
            cudaOk(cudaEventCreate(&b), "cudaEventCreate");
  double samples[3] = {0, 0, 0};
  for (int rep = 0; ok && rep < 4; ++rep) {
    ok = cudaOk(cudaEventRecord(a, stream), "cudaEventRecord");
    for (int i = 0; ok && i < kLaunches; ++i)
      ok = launchEmulatedCollective(
          CollectiveKind::Permute, ReduceKind::Sum, real ? scratch : nullptr,
          count, real ? half : nullptr, count, DType::F32, 1, 0, 24, 0, nullptr,
          0, kPaceUs, stream, error);
    ok = ok && cudaOk(cudaEventRecord(b, stream), "cudaEventRecord") &&
         cudaOk(cudaEventSynchronize(b), "cudaEventSynchronize");
    float ms = 0;
    ok = ok && cudaOk(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    if (ok && rep > 0) // the first repetition warms up
      samples[rep - 1] = ms * 1000.0 / kLaunches - kPaceUs;
  }
  if (a)
    cudaEventDestroy(a);
  if (b)
    cudaEventDestroy(b);
  if (!ok)
    return false;
  std::sort(samples, samples + 3);
  offsetUs = std::max(0.0, samples[1]);
  return true;
}

bool launchPeerSignalWait(uint64_t *const *signalBases, int groupSize, int rank,
                          int64_t slot, int signalTo, int waitFrom,
                          const uint64_t *epoch, double timeoutSeconds,
                          cudaStream_t stream, std::string &error) {
  const char *what = "launchPeerSignalWait";
  if (groupSize < 1 || rank < 0 || rank >= groupSize)
    return fail(error, std::string(what) + ": rank " + std::to_string(rank) +
                           " is not in a group of " +
                           std::to_string(groupSize));
  if (signalTo >= groupSize || waitFrom >= groupSize)
    return fail(error, std::string(what) + ": peer outside the group");
  if (!signalBases || !epoch || slot < 0)
    return fail(error, std::string(what) + ": null signal table or epoch");
  if (!(timeoutSeconds > 0))
    return fail(error, std::string(what) + ": the timeout must be positive");
  if (groupSize == 1)
    return true;
  uint64_t timeoutNs =
      static_cast<uint64_t>(std::min(timeoutSeconds, 1e9) * 1e9);
  int threads = std::min(256, (groupSize + 31) / 32 * 32);
  peerSignalWaitKernel<<<1, threads, 0, stream>>>(
      signalBases, groupSize, rank, slot, signalTo, waitFrom, epoch, timeoutNs);
  return checkLaunch(what, error);
}

bool launchAdvanceEpoch(uint64_t *epoch, cudaStream_t stream,
                        std::string &error) {
  if (!epoch)
    return fail(error, "launchAdvanceEpoch: null epoch");
  advanceEpochKernel<<<1, 32, 0, stream>>>(epoch);
  return checkLaunch("launchAdvanceEpoch", error);
}

int64_t emulatedStagingBytes(CollectiveKind kind, int64_t inBytes,
                             int groupSize) {
  int64_t n = groupSize;
  if (n <= 1)
    return 0;
  switch (kind) {
  case CollectiveKind::ReduceScatter:
    return inBytes * (n - 1) / n;
  case CollectiveKind::AllReduce:
    return 2 * inBytes * (n - 1) / n;
  default:
    return 0;
  }
}

bool launchCopyEngineCollective(CollectiveKind kind, ReduceKind reduce,
                                const void *in, int64_t inCount, void *out,
                                int64_t outCount, DType type, int groupSize,
                                int rank, void *staging, int64_t stagingBytes,
                                uint64_t *timerSlot, double paceUs,
                                cudaStream_t stream, std::string &error,
                                const void *const *peerInputs) {
  std::string what = std::string("launchCopyEngineCollective(") +
                     collectiveKindName(kind) + ")";
  bool gather = kind == CollectiveKind::AllGather;
  if (kind == CollectiveKind::Permute) {
    // One P2P ring step: one copy of the whole input (the stand-in's value
    // of a permute), paced like the others.
    if (inCount != outCount || inCount < 0)
      return fail(error, what + ": a permute's input and output must have "
                                "the same element count");
    if (inCount > 0 && (!in || !out))
      return fail(error, what + ": null input or output");
    if (std::isnan(paceUs))
      return fail(error, what + ": NaN pace");
    bool pacedStep = paceUs >= 0;
    if (pacedStep && !timerSlot)
      return fail(error, what + ": pacing needs a timer slot");
    if (pacedStep) {
      copyEngineStampKernel<<<1, 32, 0, stream>>>(timerSlot);
      if (!checkLaunch((what + " (stamp)").c_str(), error))
        return false;
    }
    int64_t bytes = inCount * dtypeBytes(type);
    if (bytes > 0) {
      cudaError_t status =
          cudaMemcpyAsync(out, in, bytes, cudaMemcpyDefault, stream);
      if (status != cudaSuccess)
        return fail(error, what + ": cudaMemcpyAsync of " +
                               std::to_string(bytes) +
                               " bytes failed: " + cudaGetErrorName(status) +
                               " (" + cudaGetErrorString(status) + ")");
    }
    if (!pacedStep)
      return true;
    copyEngineWaitKernel<<<1, 32, 0, stream>>>(timerSlot,
                                               std::llround(paceUs * 1000.0));
    return checkLaunch((what + " (wait)").c_str(), error);
  }
  if (!gather && kind != CollectiveKind::ReduceScatter)
    return fail(error, what + ": copy-engine collectives are all_gather, "
                              "reduce_scatter and permute only");
  if (groupSize < 1 || rank < 0 || rank >= groupSize)
    return fail(error, what + ": rank " + std::to_string(rank) +
                           " is not in a group of " +
                           std::to_string(groupSize));
  if (inCount < 0 || outCount < 0)
    return fail(error, what + ": negative element count");
  if (std::isnan(paceUs))
    return fail(error, what + ": NaN pace");
  int64_t block = gather ? inCount : outCount;
  int64_t whole = gather ? outCount : inCount;
  if (whole != block * groupSize)
    return fail(error,
                what + ": in has " + std::to_string(inCount) +
                    " elements and out " + std::to_string(outCount) +
                    "; expected " +
                    (gather ? "out = groupSize * in" : "in = groupSize * out") +
                    " for a group of " + std::to_string(groupSize));
  const int64_t blockBytes = block * dtypeBytes(type);
  if (blockBytes > 0 && (!in || !out))
    return fail(error, what + ": null input or output");
  const int64_t stagingNeeded = gather ? 0 : (groupSize - 1) * blockBytes;
  if (stagingNeeded > 0 && (!staging || stagingBytes < stagingNeeded))
    return fail(error, what + ": the " + std::to_string(groupSize - 1) +
                           " staged peer blocks need " +
                           std::to_string(stagingNeeded) +
                           " bytes of staging, got " +
                           std::to_string(staging ? stagingBytes : 0));
  const bool paced = paceUs >= 0;
  if (paced && !timerSlot)
    return fail(error, what + ": pacing needs a timer slot");
  const int64_t paceNs = paced ? std::llround(paceUs * 1000.0) : 0;

  const char *src = static_cast<const char *>(in);
  char *dst = static_cast<char *>(out);
  char *stage = static_cast<char *>(staging);
  // Rank p's input as this device addresses it: `in` itself on one GPU.
  auto inputOf = [&](int p) {
    return peerInputs ? static_cast<const char *>(peerInputs[p]) : src;
  };
  if (peerInputs && blockBytes > 0)
    for (int p = 0; p < groupSize; ++p)
      if (!peerInputs[p])
        return fail(error,
                    what + ": no input pointer for rank " + std::to_string(p));
  auto copy = [&](void *to, const void *from) {
    if (blockBytes == 0)
      return true;
    // cudaMemcpyDefault: a peer's buffer may live on another device (peer
    // access or a CUDA IPC mapping); UVA names the direction.
    cudaError_t status =
        cudaMemcpyAsync(to, from, blockBytes, cudaMemcpyDefault, stream);
    if (status == cudaSuccess)
      return true;
    return fail(error, what + ": cudaMemcpyAsync of " +
                           std::to_string(blockBytes) +
                           " bytes failed: " + cudaGetErrorName(status) + " (" +
                           cudaGetErrorString(status) + ")");
  };
  auto waitUntil = [&](int64_t afterNs) {
    copyEngineWaitKernel<<<1, 32, 0, stream>>>(timerSlot, afterNs);
    return checkLaunch((what + " (wait)").c_str(), error);
  };
  if (paced) {
    copyEngineStampKernel<<<1, 32, 0, stream>>>(timerSlot);
    if (!checkLaunch((what + " (stamp)").c_str(), error))
      return false;
  }
  // The peers' blocks, one copy each, the time shares of the pace between
  // them; then this rank's own slot (all-gather) or the reduction. The
  // last copy is followed by the final wait only: a reduce-scatter's last
  // staged copy goes straight on to the reduction, which then has the last
  // two shares (it reads n blocks and writes one, more than a copy moves).
  // Shares shorter than kMinShareNs get no wait of their own: a wait costs
  // about as much as such a share (a launch, ~2 us on an H100), and copies
  // back to back take about that long each anyway.
  constexpr int64_t kMinShareNs = 5000;
  const bool waitEach = paced && paceNs / groupSize >= kMinShareNs;
  for (int i = 0; i + 1 < groupSize; ++i) {
    int peer = (rank + 1 + i) % groupSize;
    bool ok = gather ? copy(dst + int64_t(peer) * blockBytes, inputOf(peer))
                     : copy(stage + int64_t(i) * blockBytes,
                            inputOf(peer) + int64_t(rank) * blockBytes);
    bool last = !gather && i + 2 == groupSize;
    if (!ok || (waitEach && !last && !waitUntil(paceNs * (i + 1) / groupSize)))
      return false;
  }
  if (gather) {
    if (!copy(dst + int64_t(rank) * blockBytes, src))
      return false;
  } else if (block > 0) {
    withType(type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      constexpr int kPer = 16 / sizeof(T);
      const T *own = reinterpret_cast<const T *>(src) + rank * block;
      const T *staged = reinterpret_cast<const T *>(stage);
      T *result = reinterpret_cast<T *>(dst);
      int stagedBlocks = groupSize - 1;
      bool vec = block % kPer == 0 && packAligned(own, type, kPer) &&
                 packAligned(stagedBlocks ? staged : nullptr, type, kPer) &&
                 packAligned(result, type, kPer);
      if (vec)
        copyEngineReduceKernel<T, kPer>
            <<<gridFor(block / kPer), kThreads, 0, stream>>>(
                own, staged, block, stagedBlocks, reduce, groupSize, result);
      else
        copyEngineReduceKernel<T, 1><<<gridFor(block), kThreads, 0, stream>>>(
            own, staged, block, stagedBlocks, reduce, groupSize, result);
    });
    if (!checkLaunch((what + " (reduction)").c_str(), error))
      return false;
  }
  return !paced || waitUntil(paceNs);
}

//===----------------------------------------------------------------------===//
// Private launches (AttentionKernels.h, KernelsInternal.h)
//===----------------------------------------------------------------------===//

namespace detail {

bool launchSoftmaxForward(const float *scores, int64_t count, int64_t rows,
                          int64_t keys, bool causal, void *probs,
                          DType probsType, int64_t probsLd, float *probs32,
                          cudaStream_t stream, std::string &error) {
  if (rows <= 0 || keys <= 0 || count <= 0)
    return true;
  if (rows > keys)
    return fail(error, "launchSoftmaxForward: more query rows than keys");
  if (count * rows > INT32_MAX)
    return fail(error, "launchSoftmaxForward: too many rows");
  constexpr int kWidth = 4;
  bool vector = keys % kWidth == 0 && probsLd % kWidth == 0 &&
                packAligned(scores, DType::F32, kWidth) &&
                packAligned(probs, probsType, kWidth) &&
                packAligned(probs32, DType::F32, kWidth);
  withType(probsType, [&](auto tag) {
    using P = typename decltype(tag)::type;
    unsigned blocks = static_cast<unsigned>(count * rows);
    if (vector)
      softmaxForwardKernel<kWidth, P><<<blocks, kSoftmaxThreads, 0, stream>>>(
          scores, rows, keys, causal, static_cast<P *>(probs), probsLd,
          probs32);
    else
      softmaxForwardKernel<1, P><<<blocks, kSoftmaxThreads, 0, stream>>>(
          scores, rows, keys, causal, static_cast<P *>(probs), probsLd,
          probs32);
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
                           DType dscoresType, int64_t dscoresLd, int64_t count,
                           int64_t seq, const AttentionHeadMap &map,
                           cudaStream_t stream, std::string &error) {
  if (seq <= 0 || count <= 0)
    return true;
  if (count * seq > INT32_MAX)
    return fail(error, "launchSoftmaxBackward: too many rows");
  if (map.kvCount <= 0 || map.group <= 0)
    return fail(error, "launchSoftmaxBackward: empty head map");
  constexpr int kWidth = 4;
  bool vector = seq % kWidth == 0 && dscoresLd % kWidth == 0 &&
                packAligned(probs32, DType::F32, kWidth) &&
                packAligned(dprobs, DType::F32, kWidth) &&
                packAligned(dscores, dscoresType, kWidth);
  withType(dscoresType, [&](auto tag) {
    using T = typename decltype(tag)::type;
    unsigned rows = static_cast<unsigned>(count * seq);
    if (vector)
      softmaxBackwardKernel<kWidth, T><<<rows, kSoftmaxThreads, 0, stream>>>(
          probs32, dprobs, rowDot, static_cast<T *>(dscores), dscoresLd, seq,
          map);
    else
      softmaxBackwardKernel<1, T><<<rows, kSoftmaxThreads, 0, stream>>>(
          probs32, dprobs, rowDot, static_cast<T *>(dscores), dscoresLd, seq,
          map);
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
