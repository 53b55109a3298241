//===- FlashAttention.cu - Fused attention forward and backward -----------===//
//
// Flash-attention style kernels for tandem.attention / attention_grad on the
// packed qkv layout of Kernels.h: tensor-core mma.sync.m16n8k16 (bf16 or
// f16 operands, f32 accumulation), online softmax, no score matrix in device
// memory. Head dims 64 and 128; causal and full; grouped-query attention.
//
// Forward (one CTA = 8 warps = 128 query rows of one head, 16 rows a warp):
// the CTA's Q tile is loaded once into registers; 64-key K/V tiles stream
// through shared memory double-buffered with cp.async; per tile S = Q K^T,
// the running row max / sum are updated (exp2 domain), O is rescaled and
// O += P V with P rounded to the input type in registers (the accumulator
// layout of S is the A-operand layout of the PV product). The epilogue
// writes O / l and the row log-sum-exp LSE = ln(sum_j exp(scale * s_j)).
// With `queries` = N the query rows are the last N of qkv: the Q tiles
// start qOffset = seq - N rows down, the grid covers N rows, and query row
// m sits at sequence position qOffset + m, so the causal mask (and the
// last key tile a CTA loads) is shifted by qOffset; key tiles past a CTA's
// last visible key are never loaded, as without queries.
//
// Backward (FlashAttention-2): D = rowsum(dO * O) first (the existing row-dot
// kernel), then two kernels that recompute P = exp(scale * S - LSE) tile by
// tile:
//  - dK/dV: one CTA per (kv head, part of its GQA group, 64 keys), 16 keys
//    a warp; it loops over the part's query heads and every query tile,
//    accumulating dV += P^T dO and dK += dS^T Q in registers. With the
//    group in one part (enough CTAs without splitting) it writes dK, dV
//    once; split into `splits` parts (few kv heads: a TP rank of a GQA
//    model holds one or two), each part writes f32 partial sums to scratch
//    and a last kernel adds the parts in part order and rounds
//    (dkdvSplits says how many parts).
//  - dQ: one CTA per (query head, 64 queries), looping over key tiles:
//    dQ += dS K.
// dQ is a separate pass rather than fp32 atomics from the dK/dV kernel: the
// runtime promises bitwise-reproducible results (tandem-run --check compares
// reordered plans bitwise), which atomics would break. The price is
// recomputing S and dP in the dQ pass (7 instead of 5 tile products).
//
// Shared-memory tiles are [rows][headDim] of 16-bit elements with the
// 16-byte chunk c of row r stored at chunk c ^ (r & 7), so that the 8 row
// addresses of an ldmatrix hit 8 different bank groups.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"

#include "tandem/runtime/Kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <string>

namespace tandem {
namespace runtime {

namespace {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

//===----------------------------------------------------------------------===//
// PTX wrappers
//===----------------------------------------------------------------------===//

__device__ __forceinline__ uint32_t smemAddress(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// 16 bytes global -> shared; `bytes` = 0 writes zeros (rows past seq).
__device__ __forceinline__ void cpAsync16(uint32_t dst, const void *src,
                                          int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(src), "r"(bytes));
}

__device__ __forceinline__ void cpAsync4(uint32_t dst, const void *src,
                                         int bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst),
               "l"(src), "r"(bytes));
}

__device__ __forceinline__ void cpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::);
}

__device__ __forceinline__ void cpAsyncWaitAll() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

__device__ __forceinline__ void ldmatrixX4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(addr));
}

__device__ __forceinline__ void ldmatrixX4Trans(uint32_t (&r)[4],
                                                uint32_t addr) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(addr));
}

template <typename T> struct Elem;

template <> struct Elem<__nv_bfloat16> {
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
  }
  /// c += a * b for one m16n8k16 tile.
  __device__ __forceinline__ static void mma(float (&c)[4],
                                             const uint32_t (&a)[4],
                                             uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0),
                   "r"(b1));
  }
};

template <> struct Elem<__half> {
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
  }
  __device__ __forceinline__ static void mma(float (&c)[4],
                                             const uint32_t (&a)[4],
                                             uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0),
                   "r"(b1));
  }
};

//===----------------------------------------------------------------------===//
// Tiles in shared memory
//===----------------------------------------------------------------------===//

/// Byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile.
template <int D>
__device__ __forceinline__ uint32_t swizzle(int row, int chunk) {
  return static_cast<uint32_t>(row * (D * 2) + ((chunk ^ (row & 7)) << 4));
}

/// Issues cp.async for rows [row0, row0 + ROWS) of a [seq][ld] global
/// matrix (columns [0, D) from `base`) into the swizzled tile at `tile`.
/// Rows at or past `seq` are zero-filled.
template <int D, int ROWS, int THREADS>
__device__ __forceinline__ void loadTile(uint32_t tile, const uint16_t *base,
                                         int64_t ld, int row0, int seq,
                                         int tid) {
  constexpr int kChunks = D / 8;
  constexpr int kTotal = ROWS * kChunks;
  static_assert(kTotal % THREADS == 0, "tile not divisible among threads");
#pragma unroll
  for (int k = 0; k < kTotal / THREADS; ++k) {
    int i = tid + k * THREADS;
    int r = i / kChunks, c = i % kChunks;
    int row = row0 + r;
    bool valid = row < seq;
    const uint16_t *src = base + (valid ? int64_t(row) * ld : 0) + c * 8;
    cpAsync16(tile + swizzle<D>(r, c), src, valid ? 16 : 0);
  }
}

/// Loads ROWS floats of a per-row statistic (LSE or D) starting at row0;
/// rows past seq read as 0.
template <int ROWS>
__device__ __forceinline__ void loadRowStat(uint32_t dst, const float *src,
                                            int row0, int seq, int tid) {
  if (tid < ROWS) {
    int row = row0 + tid;
    bool valid = row < seq;
    cpAsync4(dst + tid * 4, src + (valid ? row : 0), valid ? 4 : 0);
  }
}

/// A operand (16 rows x 16 k) at rows [r0, r0+16), k chunk pair kc, kc+1.
template <int D>
__device__ __forceinline__ void loadA(uint32_t (&a)[4], uint32_t tile, int r0,
                                      int kc, int lane) {
  ldmatrixX4(a, tile + swizzle<D>(r0 + (lane & 15), kc + (lane >> 4)));
}

/// B operands of two n8 tiles from a tile stored [n][k] (k contiguous):
/// rows [n0, n0 + 16), k chunks kc, kc+1. b[0..1]: n0..n0+7, b[2..3]:
/// n0+8..n0+15.
template <int D>
__device__ __forceinline__ void loadBnk(uint32_t (&b)[4], uint32_t tile,
                                        int n0, int kc, int lane) {
  ldmatrixX4(b, tile + swizzle<D>(n0 + (lane & 7) + ((lane >> 4) << 3),
                                  kc + ((lane >> 3) & 1)));
}

/// B operands of two n8 tiles from a tile stored [k][n] (n contiguous):
/// k rows [k0, k0 + 16), n chunks nc (b[0..1]) and nc + 1 (b[2..3]).
template <int D>
__device__ __forceinline__ void loadBkn(uint32_t (&b)[4], uint32_t tile,
                                        int k0, int nc, int lane) {
  ldmatrixX4Trans(b, tile + swizzle<D>(k0 + (lane & 15), nc + (lane >> 4)));
}

/// A operand for k16 step `kk` from an f32 accumulator array of n8 tiles.
template <typename T, int N>
__device__ __forceinline__ void accToA(uint32_t (&a)[4], const float (&c)[N][4],
                                       int kk) {
  a[0] = Elem<T>::pack(c[2 * kk][0], c[2 * kk][1]);
  a[1] = Elem<T>::pack(c[2 * kk][2], c[2 * kk][3]);
  a[2] = Elem<T>::pack(c[2 * kk + 1][0], c[2 * kk + 1][1]);
  a[3] = Elem<T>::pack(c[2 * kk + 1][2], c[2 * kk + 1][3]);
}

__device__ __forceinline__ float quadMax(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}

__device__ __forceinline__ float quadSum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

/// Stores a 16 x D f32 accumulator (rows row0 + g, row0 + g + 8) scaled by
/// `scale` to a row-major [seq][ld] matrix at `base`, rounding to T.
template <typename T, int D>
__device__ __forceinline__ void storeRows(const float (&acc)[D / 8][4],
                                          float scale0, float scale1,
                                          uint16_t *base, int64_t ld, int row0,
                                          int seq, int lane) {
  int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    int row = row0 + g + 8 * half;
    if (row >= seq)
      continue;
    float s = half ? scale1 : scale0;
    uint16_t *dst = base + int64_t(row) * ld + 2 * t;
#pragma unroll
    for (int j = 0; j < D / 8; ++j)
      *reinterpret_cast<uint32_t *>(dst + 8 * j) =
          Elem<T>::pack(acc[j][2 * half] * s, acc[j][2 * half + 1] * s);
  }
}

/// Stores a 16 x D f32 accumulator (rows row0 + g, row0 + g + 8) scaled by
/// `scale` to a row-major [seq][D] f32 matrix at `base`.
template <int D>
__device__ __forceinline__ void storeRowsF32(const float (&acc)[D / 8][4],
                                             float scale, float *base,
                                             int row0, int seq, int lane) {
  int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    int row = row0 + g + 8 * half;
    if (row >= seq)
      continue;
    float *dst = base + int64_t(row) * D + 2 * t;
#pragma unroll
    for (int j = 0; j < D / 8; ++j)
      *reinterpret_cast<float2 *>(dst + 8 * j) =
          make_float2(acc[j][2 * half] * scale, acc[j][2 * half + 1] * scale);
  }
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

struct FwdParams {
  const uint16_t *qkv;
  uint16_t *out; // null: statistics only (LSE for a backward without one)
  float *lse;
  int seq, heads, kvHeads, group;
  /// Query rows (the last `queries` of qkv), and the sequence position of
  /// the first: seq - queries.
  int queries, qOffset;
  /// Floats between two heads' statistics (queries, or the whole
  /// sequence's when a segment writes into them).
  int64_t lseStride;
  int64_t width, outWidth;
  float scaleLog2; // scale * log2(e)
};

constexpr int kFwdWarps = 8;
constexpr int kFwdRows = kFwdWarps * 16; // queries per CTA
constexpr int kKeyTile = 64;             // keys per pipeline stage

template <int D> constexpr int fwdSmemBytes() {
  return kFwdRows * D * 2 + 4 * kKeyTile * D * 2;
}

template <typename T, int D, bool CAUSAL, bool WRITE_OUT>
__global__ void __launch_bounds__(kFwdWarps * 32, 1)
    flashForwardKernel(FwdParams p) {
  constexpr int kThreads = kFwdWarps * 32;
  constexpr int kTileBytes = kKeyTile * D * 2;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sQ = smemAddress(smem);
  const uint32_t sK = sQ + kFwdRows * D * 2; // two stages
  const uint32_t sV = sK + 2 * kTileBytes;   // two stages

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int h = blockIdx.x;
  // Causal CTAs with more keys start first.
  const int m0 = (gridDim.y - 1 - blockIdx.y) * kFwdRows;
  const int kvh = h / p.group;
  const uint16_t *qBase = p.qkv + int64_t(p.qOffset) * p.width + int64_t(h) * D;
  const uint16_t *kBase = p.qkv + int64_t(p.heads + kvh) * D;
  const uint16_t *vBase = p.qkv + int64_t(p.heads + p.kvHeads + kvh) * D;

  // One past the last key the CTA's last row sees (causal).
  const int keyEnd = CAUSAL ? min(p.seq, p.qOffset + m0 + kFwdRows) : p.seq;
  const int numTiles = (keyEnd + kKeyTile - 1) / kKeyTile;

  loadTile<D, kFwdRows, kThreads>(sQ, qBase, p.width, m0, p.queries, tid);
  loadTile<D, kKeyTile, kThreads>(sK, kBase, p.width, 0, p.seq, tid);
  if (WRITE_OUT)
    loadTile<D, kKeyTile, kThreads>(sV, vBase, p.width, 0, p.seq, tid);
  cpAsyncCommit();

  uint32_t qf[D / 16][4];
  float o[D / 8][4];
#pragma unroll
  for (int j = 0; j < D / 8; ++j)
    o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
  float rowMax[2] = {-INFINITY, -INFINITY}, rowSum[2] = {0.0f, 0.0f};
  const int rowA = m0 + warp * 16 + g; // rows rowA and rowA + 8
  const int posA = p.qOffset + rowA;   // their sequence positions

  for (int n = 0; n < numTiles; ++n) {
    cpAsyncWaitAll();
    __syncthreads();
    if (n == 0) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        loadA<D>(qf[kk], sQ, warp * 16, 2 * kk, lane);
    }
    if (n + 1 < numTiles) {
      int stage = (n + 1) & 1;
      loadTile<D, kKeyTile, kThreads>(sK + stage * kTileBytes, kBase, p.width,
                                      (n + 1) * kKeyTile, p.seq, tid);
      if (WRITE_OUT)
        loadTile<D, kKeyTile, kThreads>(sV + stage * kTileBytes, vBase,
                                        p.width, (n + 1) * kKeyTile, p.seq,
                                        tid);
    }
    cpAsyncCommit();
    const uint32_t kTile = sK + (n & 1) * kTileBytes;
    const uint32_t vTile = sV + (n & 1) * kTileBytes;

    float s[kKeyTile / 8][4];
#pragma unroll
    for (int j = 0; j < kKeyTile / 8; ++j)
      s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
      for (int nn = 0; nn < kKeyTile / 16; ++nn) {
        uint32_t b[4];
        loadBnk<D>(b, kTile, nn * 16, 2 * kk, lane);
        Elem<T>::mma(s[2 * nn], qf[kk], b[0], b[1]);
        Elem<T>::mma(s[2 * nn + 1], qf[kk], b[2], b[3]);
      }
    }

    const int n0 = n * kKeyTile;
    const bool mask =
        n0 + kKeyTile > p.seq || (CAUSAL && n0 + kKeyTile - 1 > p.qOffset + m0);
    if (mask) {
#pragma unroll
      for (int j = 0; j < kKeyTile / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          int key = n0 + 8 * j + 2 * t + (e & 1);
          int pos = posA + 8 * (e >> 1);
          if (key >= p.seq || (CAUSAL && key > pos))
            s[j][e] = -INFINITY;
        }
    }

#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < kKeyTile / 8; ++j)
        mx = fmaxf(mx, fmaxf(s[j][2 * half], s[j][2 * half + 1]));
      mx = quadMax(mx) * p.scaleLog2;
      float newMax = fmaxf(rowMax[half], mx);
      // A row with no visible key yet keeps max -inf: subtract 0 instead.
      float base = newMax == -INFINITY ? 0.0f : newMax;
      float alpha = exp2f(rowMax[half] - base);
      rowMax[half] = newMax;
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kKeyTile / 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float v = exp2f(fmaf(s[j][2 * half + e], p.scaleLog2, -base));
          s[j][2 * half + e] = v;
          sum += v;
        }
      rowSum[half] = rowSum[half] * alpha + sum;
      if (WRITE_OUT) {
#pragma unroll
        for (int j = 0; j < D / 8; ++j) {
          o[j][2 * half] *= alpha;
          o[j][2 * half + 1] *= alpha;
        }
      }
    }

    if (WRITE_OUT) {
#pragma unroll
      for (int kk = 0; kk < kKeyTile / 16; ++kk) {
        uint32_t a[4];
        accToA<T>(a, s, kk);
#pragma unroll
        for (int dn = 0; dn < D / 16; ++dn) {
          uint32_t b[4];
          loadBkn<D>(b, vTile, kk * 16, 2 * dn, lane);
          Elem<T>::mma(o[2 * dn], a, b[0], b[1]);
          Elem<T>::mma(o[2 * dn + 1], a, b[2], b[3]);
        }
      }
    }
  }

  float inv[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float l = quadSum(rowSum[half]);
    inv[half] = l > 0.0f ? 1.0f / l : 0.0f;
    int row = rowA + 8 * half;
    if (t == 0 && row < p.queries)
      p.lse[int64_t(h) * p.lseStride + row] =
          l > 0.0f ? (rowMax[half] + log2f(l)) * kLn2 : INFINITY;
  }
  if (WRITE_OUT)
    storeRows<T, D>(o, inv[0], inv[1], p.out + int64_t(h) * D, p.outWidth,
                    m0 + warp * 16, p.queries, lane);
}

//===----------------------------------------------------------------------===//
// Backward: dK and dV
//===----------------------------------------------------------------------===//

struct BwdParams {
  const uint16_t *qkv, *dout;
  const float *lse, *rowDot; // [heads][seq]
  uint16_t *dqkv;
  /// splits > 1: [splits][2][kvHeads][seq][D] f32 partial dK (scaled), dV.
  float *partial;
  int seq, heads, kvHeads, group, splits;
  int64_t width, outWidth;
  float scale, scaleLog2;
};

constexpr int kBwdWarps = 4;
constexpr int kBwdKeys = kBwdWarps * 16; // keys per dK/dV CTA
constexpr int kBwdQueries = 64;          // queries per pipeline stage
constexpr int kDqRows = kBwdWarps * 16;  // queries per dQ CTA
/// The dK/dV pass splits a GQA group until it has at least this many CTAs
/// (about 2 waves of 2 CTAs per SM on a 132-SM H200), or every query head
/// is a part: a fixed number, so that a plan's scratch and results do not
/// depend on the device.
constexpr int64_t kMinDkDvCtas = 512;

template <int D> constexpr int dkdvSmemBytes() {
  return 2 * kBwdKeys * D * 2 + 4 * kBwdQueries * D * 2 + 4 * kBwdQueries * 4;
}

template <int D> constexpr int dqSmemBytes() {
  return 2 * kDqRows * D * 2 + 4 * kKeyTile * D * 2;
}

template <typename T, int D, bool CAUSAL>
__global__ void __launch_bounds__(kBwdWarps * 32, 2)
    flashBackwardDkDvKernel(BwdParams p) {
  constexpr int kThreads = kBwdWarps * 32;
  constexpr int kQTileBytes = kBwdQueries * D * 2;
  // Queries per inner step: bounds the registers of S^T and dP^T.
  constexpr int kSub = D == 128 ? 32 : 64;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sK = smemAddress(smem);
  const uint32_t sV = sK + kBwdKeys * D * 2;
  const uint32_t sQ = sV + kBwdKeys * D * 2;     // two stages
  const uint32_t sDo = sQ + 2 * kQTileBytes;     // two stages
  const uint32_t sLse = sDo + 2 * kQTileBytes;   // two stages of floats
  const uint32_t sDot = sLse + 2 * kBwdQueries * 4;
  const float *lseSmem = reinterpret_cast<const float *>(
      smem + (sLse - sK));
  const float *dotSmem = reinterpret_cast<const float *>(
      smem + (sDot - sK));

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int kvh = blockIdx.x / p.splits, part = blockIdx.x % p.splits;
  const int partHeads = p.group / p.splits;
  const int n0 = (gridDim.y - 1 - blockIdx.y) * kBwdKeys;
  const uint16_t *kBase = p.qkv + int64_t(p.heads + kvh) * D;
  const uint16_t *vBase = p.qkv + int64_t(p.heads + p.kvHeads + kvh) * D;

  const int qBegin = CAUSAL ? n0 / kBwdQueries * kBwdQueries : 0;
  const int qTiles = (p.seq - qBegin + kBwdQueries - 1) / kBwdQueries;
  const int iterations = qTiles * partHeads;

  auto issue = [&](int it) {
    int stage = it & 1;
    int head = kvh * p.group + part * partHeads + it / qTiles;
    int q0 = qBegin + (it % qTiles) * kBwdQueries;
    loadTile<D, kBwdQueries, kThreads>(sQ + stage * kQTileBytes,
                                       p.qkv + int64_t(head) * D, p.width, q0,
                                       p.seq, tid);
    loadTile<D, kBwdQueries, kThreads>(sDo + stage * kQTileBytes,
                                       p.dout + int64_t(head) * D, p.outWidth,
                                       q0, p.seq, tid);
    loadRowStat<kBwdQueries>(sLse + stage * kBwdQueries * 4,
                             p.lse + int64_t(head) * p.seq, q0, p.seq, tid);
    loadRowStat<kBwdQueries>(sDot + stage * kBwdQueries * 4,
                             p.rowDot + int64_t(head) * p.seq, q0, p.seq,
                             tid);
  };

  loadTile<D, kBwdKeys, kThreads>(sK, kBase, p.width, n0, p.seq, tid);
  loadTile<D, kBwdKeys, kThreads>(sV, vBase, p.width, n0, p.seq, tid);
  if (iterations > 0)
    issue(0);
  cpAsyncCommit();

  float dk[D / 8][4], dv[D / 8][4];
#pragma unroll
  for (int j = 0; j < D / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      dk[j][e] = dv[j][e] = 0.0f;
  const int keyA = n0 + warp * 16 + g; // keys keyA and keyA + 8

  for (int it = 0; it < iterations; ++it) {
    cpAsyncWaitAll();
    __syncthreads();
    if (it + 1 < iterations)
      issue(it + 1);
    cpAsyncCommit();
    const int stage = it & 1;
    const uint32_t qTile = sQ + stage * kQTileBytes;
    const uint32_t doTile = sDo + stage * kQTileBytes;
    const float *lseTile = lseSmem + stage * kBwdQueries;
    const float *dotTile = dotSmem + stage * kBwdQueries;
    const int q0 = qBegin + (it % qTiles) * kBwdQueries;
    const bool tileMask =
        q0 + kBwdQueries > p.seq || (CAUSAL && q0 < n0 + kBwdKeys - 1);

#pragma unroll
    for (int sub = 0; sub < kBwdQueries / kSub; ++sub) {
      const int qs = sub * kSub; // first query of this step within the tile
      // S^T = K_w Q^T (16 keys x kSub queries).
      float st[kSub / 8][4];
#pragma unroll
      for (int j = 0; j < kSub / 8; ++j)
        st[j][0] = st[j][1] = st[j][2] = st[j][3] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t a[4];
        loadA<D>(a, sK, warp * 16, 2 * kk, lane);
#pragma unroll
        for (int nn = 0; nn < kSub / 16; ++nn) {
          uint32_t b[4];
          loadBnk<D>(b, qTile, qs + nn * 16, 2 * kk, lane);
          Elem<T>::mma(st[2 * nn], a, b[0], b[1]);
          Elem<T>::mma(st[2 * nn + 1], a, b[2], b[3]);
        }
      }
      // P^T = exp(scale * S^T - LSE[query]).
#pragma unroll
      for (int j = 0; j < kSub / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          int qi = qs + 8 * j + 2 * t + (e & 1);
          float v =
              exp2f(fmaf(st[j][e], p.scaleLog2, -lseTile[qi] * kLog2e));
          if (tileMask) {
            int query = q0 + qi, key = keyA + 8 * (e >> 1);
            if (query >= p.seq || (CAUSAL && key > query))
              v = 0.0f;
          }
          st[j][e] = v;
        }
      // dV += P^T dO.
#pragma unroll
      for (int kk = 0; kk < kSub / 16; ++kk) {
        uint32_t a[4];
        accToA<T>(a, st, kk);
#pragma unroll
        for (int dn = 0; dn < D / 16; ++dn) {
          uint32_t b[4];
          loadBkn<D>(b, doTile, qs + kk * 16, 2 * dn, lane);
          Elem<T>::mma(dv[2 * dn], a, b[0], b[1]);
          Elem<T>::mma(dv[2 * dn + 1], a, b[2], b[3]);
        }
      }
      // dP^T = V_w dO^T.
      float dpt[kSub / 8][4];
#pragma unroll
      for (int j = 0; j < kSub / 8; ++j)
        dpt[j][0] = dpt[j][1] = dpt[j][2] = dpt[j][3] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t a[4];
        loadA<D>(a, sV, warp * 16, 2 * kk, lane);
#pragma unroll
        for (int nn = 0; nn < kSub / 16; ++nn) {
          uint32_t b[4];
          loadBnk<D>(b, doTile, qs + nn * 16, 2 * kk, lane);
          Elem<T>::mma(dpt[2 * nn], a, b[0], b[1]);
          Elem<T>::mma(dpt[2 * nn + 1], a, b[2], b[3]);
        }
      }
      // dS^T = P^T * (dP^T - D[query]), into dpt.
#pragma unroll
      for (int j = 0; j < kSub / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          int qi = qs + 8 * j + 2 * t + (e & 1);
          dpt[j][e] = st[j][e] * (dpt[j][e] - dotTile[qi]);
        }
      // dK += dS^T Q.
#pragma unroll
      for (int kk = 0; kk < kSub / 16; ++kk) {
        uint32_t a[4];
        accToA<T>(a, dpt, kk);
#pragma unroll
        for (int dn = 0; dn < D / 16; ++dn) {
          uint32_t b[4];
          loadBkn<D>(b, qTile, qs + kk * 16, 2 * dn, lane);
          Elem<T>::mma(dk[2 * dn], a, b[0], b[1]);
          Elem<T>::mma(dk[2 * dn + 1], a, b[2], b[3]);
        }
      }
    }
  }

  if (p.splits == 1) {
    storeRows<T, D>(dk, p.scale, p.scale,
                    p.dqkv + int64_t(p.heads + kvh) * D, p.width,
                    n0 + warp * 16, p.seq, lane);
    storeRows<T, D>(dv, 1.0f, 1.0f,
                    p.dqkv + int64_t(p.heads + p.kvHeads + kvh) * D, p.width,
                    n0 + warp * 16, p.seq, lane);
    return;
  }
  const int64_t plane = int64_t(p.kvHeads) * p.seq * D;
  float *dkPart = p.partial + (2 * int64_t(part)) * plane +
                  int64_t(kvh) * p.seq * D;
  storeRowsF32<D>(dk, p.scale, dkPart, n0 + warp * 16, p.seq, lane);
  storeRowsF32<D>(dv, 1.0f, dkPart + plane, n0 + warp * 16, p.seq, lane);
}

/// dK, dV of split dK/dV work: element (kv head, row, column pair) of each
/// is the sum of the parts' partials in part order, rounded to T.
template <typename T, int D>
__global__ void flashBackwardDkDvReduceKernel(BwdParams p) {
  const int64_t pairs = int64_t(p.kvHeads) * p.seq * (D / 2);
  const int64_t plane = int64_t(p.kvHeads) * p.seq * D;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       i < 2 * pairs; i += int64_t(gridDim.x) * blockDim.x) {
    const int which = i >= pairs; // 0: dK, 1: dV
    const int64_t e = 2 * (i - which * pairs);
    const int64_t kvh = e / (int64_t(p.seq) * D);
    const int64_t row = (e / D) % p.seq, col = e % D;
    float2 sum = make_float2(0.0f, 0.0f);
    for (int part = 0; part < p.splits; ++part) {
      float2 v = *reinterpret_cast<const float2 *>(
          p.partial + (2 * int64_t(part) + which) * plane + e);
      sum.x += v.x;
      sum.y += v.y;
    }
    int64_t column = (p.heads + which * p.kvHeads + kvh) * D + col;
    *reinterpret_cast<uint32_t *>(p.dqkv + row * p.width + column) =
        Elem<T>::pack(sum.x, sum.y);
  }
}

//===----------------------------------------------------------------------===//
// Backward: dQ
//===----------------------------------------------------------------------===//

template <typename T, int D, bool CAUSAL>
__global__ void __launch_bounds__(kBwdWarps * 32, 2)
    flashBackwardDqKernel(BwdParams p) {
  constexpr int kThreads = kBwdWarps * 32;
  constexpr int kTileBytes = kKeyTile * D * 2;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sQ = smemAddress(smem);
  const uint32_t sDo = sQ + kDqRows * D * 2;
  const uint32_t sK = sDo + kDqRows * D * 2; // two stages
  const uint32_t sV = sK + 2 * kTileBytes;   // two stages

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int h = blockIdx.x;
  const int m0 = (gridDim.y - 1 - blockIdx.y) * kDqRows;
  const int kvh = h / p.group;
  const uint16_t *kBase = p.qkv + int64_t(p.heads + kvh) * D;
  const uint16_t *vBase = p.qkv + int64_t(p.heads + p.kvHeads + kvh) * D;
  const int keyEnd = CAUSAL ? min(p.seq, m0 + kDqRows) : p.seq;
  const int numTiles = (keyEnd + kKeyTile - 1) / kKeyTile;

  loadTile<D, kDqRows, kThreads>(sQ, p.qkv + int64_t(h) * D, p.width, m0,
                                 p.seq, tid);
  loadTile<D, kDqRows, kThreads>(sDo, p.dout + int64_t(h) * D, p.outWidth, m0,
                                 p.seq, tid);
  loadTile<D, kKeyTile, kThreads>(sK, kBase, p.width, 0, p.seq, tid);
  loadTile<D, kKeyTile, kThreads>(sV, vBase, p.width, 0, p.seq, tid);
  cpAsyncCommit();

  const int rowA = m0 + warp * 16 + g;
  float lse2[2], dot[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    int row = rowA + 8 * half;
    bool valid = row < p.seq;
    lse2[half] = valid ? p.lse[int64_t(h) * p.seq + row] * kLog2e : 0.0f;
    dot[half] = valid ? p.rowDot[int64_t(h) * p.seq + row] : 0.0f;
  }
  float dq[D / 8][4];
#pragma unroll
  for (int j = 0; j < D / 8; ++j)
    dq[j][0] = dq[j][1] = dq[j][2] = dq[j][3] = 0.0f;

  for (int n = 0; n < numTiles; ++n) {
    cpAsyncWaitAll();
    __syncthreads();
    if (n + 1 < numTiles) {
      int stage = (n + 1) & 1;
      loadTile<D, kKeyTile, kThreads>(sK + stage * kTileBytes, kBase, p.width,
                                      (n + 1) * kKeyTile, p.seq, tid);
      loadTile<D, kKeyTile, kThreads>(sV + stage * kTileBytes, vBase, p.width,
                                      (n + 1) * kKeyTile, p.seq, tid);
    }
    cpAsyncCommit();
    const uint32_t kTile = sK + (n & 1) * kTileBytes;
    const uint32_t vTile = sV + (n & 1) * kTileBytes;

    float s[kKeyTile / 8][4], dp[kKeyTile / 8][4];
#pragma unroll
    for (int j = 0; j < kKeyTile / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        s[j][e] = dp[j][e] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t aq[4], ad[4];
      loadA<D>(aq, sQ, warp * 16, 2 * kk, lane);
      loadA<D>(ad, sDo, warp * 16, 2 * kk, lane);
#pragma unroll
      for (int nn = 0; nn < kKeyTile / 16; ++nn) {
        uint32_t b[4];
        loadBnk<D>(b, kTile, nn * 16, 2 * kk, lane);
        Elem<T>::mma(s[2 * nn], aq, b[0], b[1]);
        Elem<T>::mma(s[2 * nn + 1], aq, b[2], b[3]);
        loadBnk<D>(b, vTile, nn * 16, 2 * kk, lane);
        Elem<T>::mma(dp[2 * nn], ad, b[0], b[1]);
        Elem<T>::mma(dp[2 * nn + 1], ad, b[2], b[3]);
      }
    }
    const int n0 = n * kKeyTile;
    const bool mask =
        n0 + kKeyTile > p.seq || (CAUSAL && n0 + kKeyTile - 1 > m0);
#pragma unroll
    for (int j = 0; j < kKeyTile / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        int half = e >> 1;
        float v = exp2f(fmaf(s[j][e], p.scaleLog2, -lse2[half]));
        if (mask) {
          int key = n0 + 8 * j + 2 * t + (e & 1);
          if (key >= p.seq || (CAUSAL && key > rowA + 8 * half))
            v = 0.0f;
        }
        dp[j][e] = v * (dp[j][e] - dot[half]); // dS
      }
    // dQ += dS K.
#pragma unroll
    for (int kk = 0; kk < kKeyTile / 16; ++kk) {
      uint32_t a[4];
      accToA<T>(a, dp, kk);
#pragma unroll
      for (int dn = 0; dn < D / 16; ++dn) {
        uint32_t b[4];
        loadBkn<D>(b, kTile, kk * 16, 2 * dn, lane);
        Elem<T>::mma(dq[2 * dn], a, b[0], b[1]);
        Elem<T>::mma(dq[2 * dn + 1], a, b[2], b[3]);
      }
    }
  }
  storeRows<T, D>(dq, p.scale, p.scale, p.dqkv + int64_t(h) * D, p.width,
                  m0 + warp * 16, p.seq, lane);
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

bool fail(std::string &error, const std::string &message) {
  error = message;
  return false;
}

bool checkLaunch(const char *what, std::string &error) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    return true;
  error = std::string(what) + ": " + cudaGetErrorName(e) + " (" +
          cudaGetErrorString(e) + ")";
  return false;
}

/// Raises a kernel's dynamic shared-memory limit once per process.
template <typename Kernel>
bool allowSmem(Kernel kernel, int bytes, std::once_flag &flag,
               cudaError_t &status) {
  std::call_once(flag, [&] {
    status = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  });
  return status == cudaSuccess;
}

template <typename T, int D, bool CAUSAL, bool WRITE_OUT>
bool forward(const FwdParams &p, cudaStream_t stream, std::string &error) {
  static std::once_flag flag;
  static cudaError_t status = cudaSuccess;
  auto kernel = flashForwardKernel<T, D, CAUSAL, WRITE_OUT>;
  constexpr int bytes = fwdSmemBytes<D>();
  if (!allowSmem(kernel, bytes, flag, status))
    return fail(error, std::string("fused attention forward: "
                                   "cudaFuncSetAttribute failed: ") +
                           cudaGetErrorName(status));
  dim3 grid(p.heads, (p.queries + kFwdRows - 1) / kFwdRows);
  kernel<<<grid, kFwdWarps * 32, bytes, stream>>>(p);
  return checkLaunch("fused attention forward (flashForwardKernel)", error);
}

template <typename T, int D, bool CAUSAL>
bool backward(const BwdParams &p, cudaStream_t stream, std::string &error) {
  static std::once_flag flagKv, flagQ;
  static cudaError_t statusKv = cudaSuccess, statusQ = cudaSuccess;
  auto kv = flashBackwardDkDvKernel<T, D, CAUSAL>;
  auto q = flashBackwardDqKernel<T, D, CAUSAL>;
  if (!allowSmem(kv, dkdvSmemBytes<D>(), flagKv, statusKv) ||
      !allowSmem(q, dqSmemBytes<D>(), flagQ, statusQ))
    return fail(error, std::string("fused attention backward: "
                                   "cudaFuncSetAttribute failed: ") +
                           cudaGetErrorName(statusKv != cudaSuccess ? statusKv
                                                                    : statusQ));
  dim3 gridKv(p.kvHeads * p.splits, (p.seq + kBwdKeys - 1) / kBwdKeys);
  kv<<<gridKv, kBwdWarps * 32, dkdvSmemBytes<D>(), stream>>>(p);
  if (!checkLaunch("fused attention backward (flashBackwardDkDvKernel)",
                   error))
    return false;
  if (p.splits > 1) {
    constexpr int kThreads = 256;
    int64_t pairs = 2 * int64_t(p.kvHeads) * p.seq * (D / 2);
    int64_t blocks = std::min<int64_t>((pairs + kThreads - 1) / kThreads,
                                       int64_t(1) << 16);
    flashBackwardDkDvReduceKernel<T, D>
        <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(p);
    if (!checkLaunch("fused attention backward "
                     "(flashBackwardDkDvReduceKernel)",
                     error))
      return false;
  }
  dim3 gridQ(p.heads, (p.seq + kDqRows - 1) / kDqRows);
  q<<<gridQ, kBwdWarps * 32, dqSmemBytes<D>(), stream>>>(p);
  return checkLaunch("fused attention backward (flashBackwardDqKernel)",
                     error);
}

template <typename T, int D>
bool forwardFor(const FwdParams &p, bool causal, cudaStream_t stream,
                std::string &error) {
  if (p.out)
    return causal ? forward<T, D, true, true>(p, stream, error)
                  : forward<T, D, false, true>(p, stream, error);
  return causal ? forward<T, D, true, false>(p, stream, error)
                : forward<T, D, false, false>(p, stream, error);
}

template <typename T>
bool forwardFor(const FwdParams &p, int64_t headDim, bool causal,
                cudaStream_t stream, std::string &error) {
  return headDim == 64 ? forwardFor<T, 64>(p, causal, stream, error)
                       : forwardFor<T, 128>(p, causal, stream, error);
}

template <typename T>
bool backwardFor(const BwdParams &p, int64_t headDim, bool causal,
                 cudaStream_t stream, std::string &error) {
  if (headDim == 64)
    return causal ? backward<T, 64, true>(p, stream, error)
                  : backward<T, 64, false>(p, stream, error);
  return causal ? backward<T, 128, true>(p, stream, error)
                : backward<T, 128, false>(p, stream, error);
}

bool aligned16(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

} // namespace

bool fusedAttentionSupported(const AttentionArgs &args, std::string &reason) {
  if (args.type != DType::BF16 && args.type != DType::F16) {
    reason = std::string("element type ") + dtypeName(args.type) +
             " (fused attention takes bf16 or f16)";
    return false;
  }
  if (args.headDim != 64 && args.headDim != 128) {
    reason = "head dim " + std::to_string(args.headDim) +
             " (fused attention takes 64 or 128)";
    return false;
  }
  if (args.seq <= 0 || args.heads <= 0 || args.kvHeads <= 0 ||
      args.heads % args.kvHeads != 0) {
    reason = "invalid head layout";
    return false;
  }
  if (args.queries < 0 || args.queries > args.seq) {
    reason = "queries " + std::to_string(args.queries) + " outside [0, " +
             std::to_string(args.seq) + "] (the rows of qkv)";
    return false;
  }
  // Offsets are computed in 64 bits, tile indices in 32.
  if (args.seq > (int64_t(1) << 30) || args.heads > 65535) {
    reason = "sequence or head count too large for the fused kernels";
    return false;
  }
  return true;
}

int64_t fusedAttentionLseBytes(const AttentionArgs &args) {
  return args.heads * args.queryRows() * 4;
}

int fusedAttentionGradSplits(const AttentionArgs &args) {
  if (args.kvHeads <= 0 || args.heads % args.kvHeads != 0 || args.seq <= 0)
    return 1;
  int64_t group = args.heads / args.kvHeads;
  int64_t ctas = args.kvHeads * ((args.seq + kBwdKeys - 1) / kBwdKeys);
  for (int64_t s = 1; s < group; ++s)
    if (group % s == 0 && ctas * s >= kMinDkDvCtas)
      return static_cast<int>(s);
  return static_cast<int>(group);
}

int64_t fusedAttentionGradScratchBytes(const AttentionArgs &args) {
  return detail::fusedAttentionGradScratchBytes(
      args, fusedAttentionGradSplits(args));
}

int64_t detail::fusedAttentionGradScratchBytes(const AttentionArgs &args,
                                               int splits) {
  // rowDot, then the LSE when the caller has none, then the f32 partial
  // dK / dV of a split dK/dV pass.
  int64_t stats = (fusedAttentionLseBytes(args) + 255) / 256 * 256;
  int64_t partials = splits > 1 ? int64_t(splits) * 2 * args.kvHeads *
                                      args.seq * args.headDim * 4
                                : 0;
  return 2 * stats + partials;
}

bool launchFusedAttention(const AttentionArgs &args, const void *qkv,
                          void *out, float *lse, cudaStream_t stream,
                          std::string &error) {
  std::string reason;
  if (!fusedAttentionSupported(args, reason))
    return fail(error, "launchFusedAttention: unsupported: " + reason);
  if (!qkv || !lse || !aligned16(qkv) || (out && !aligned16(out)))
    return fail(error, "launchFusedAttention: qkv, out and lse must be "
                       "non-null and qkv/out 16-byte aligned");
  FwdParams p;
  p.qkv = static_cast<const uint16_t *>(qkv);
  p.out = static_cast<uint16_t *>(out);
  p.lse = lse;
  p.seq = static_cast<int>(args.seq);
  p.queries = static_cast<int>(args.queryRows());
  p.qOffset = p.seq - p.queries;
  p.lseStride = args.lseRowStride();
  p.heads = static_cast<int>(args.heads);
  p.kvHeads = static_cast<int>(args.kvHeads);
  p.group = static_cast<int>(args.heads / args.kvHeads);
  p.width = (args.heads + 2 * args.kvHeads) * args.headDim;
  p.outWidth = args.heads * args.headDim;
  p.scaleLog2 = kLog2e / std::sqrt(static_cast<float>(args.headDim));
  if (args.type == DType::BF16)
    return forwardFor<__nv_bfloat16>(p, args.headDim, args.causal, stream,
                                     error);
  return forwardFor<__half>(p, args.headDim, args.causal, stream, error);
}

bool launchFusedAttentionGrad(const AttentionArgs &args, const void *dout,
                              const void *qkv, const void *out,
                              const float *lse, void *dqkv, void *scratch,
                              cudaStream_t stream, std::string &error) {
  return detail::launchFusedAttentionGrad(args, dout, qkv, out, lse, dqkv,
                                          scratch,
                                          fusedAttentionGradSplits(args),
                                          stream, error);
}

bool detail::launchFusedAttentionGrad(const AttentionArgs &args,
                                      const void *dout, const void *qkv,
                                      const void *out, const float *lse,
                                      void *dqkv, void *scratch, int splits,
                                      cudaStream_t stream,
                                      std::string &error) {
  std::string reason;
  if (!fusedAttentionSupported(args, reason))
    return fail(error, "launchFusedAttentionGrad: unsupported: " + reason);
  if (args.queries != 0)
    return fail(error, "launchFusedAttentionGrad: queries " +
                           std::to_string(args.queries) +
                           " applies to the attention forward only (the "
                           "backward takes every row of qkv as a query)");
  if (splits < 1 || (args.heads / args.kvHeads) % splits != 0)
    return fail(error, "launchFusedAttentionGrad: " + std::to_string(splits) +
                           " dK/dV parts do not divide the GQA group of " +
                           std::to_string(args.heads / args.kvHeads));
  if (!dout || !qkv || !out || !dqkv || !scratch || !aligned16(dout) ||
      !aligned16(qkv) || !aligned16(dqkv) || !aligned16(scratch))
    return fail(error, "launchFusedAttentionGrad: null or misaligned "
                       "(16 bytes) dout, qkv, out, dqkv or scratch");
  int64_t stats = (fusedAttentionLseBytes(args) + 255) / 256 * 256;
  float *rowDot = static_cast<float *>(scratch);
  if (!lse) {
    // No forward statistics: recompute them (the forward without PV).
    float *own = reinterpret_cast<float *>(static_cast<char *>(scratch) +
                                           stats);
    if (!launchFusedAttention(args, qkv, nullptr, own, stream, error))
      return false;
    lse = own;
  }
  if (!detail::launchAttentionRowDot(dout, out, args.type, rowDot, args.seq,
                             args.heads, args.headDim, stream, error))
    return false;
  BwdParams p;
  p.qkv = static_cast<const uint16_t *>(qkv);
  p.dout = static_cast<const uint16_t *>(dout);
  p.lse = lse;
  p.rowDot = rowDot;
  p.dqkv = static_cast<uint16_t *>(dqkv);
  p.seq = static_cast<int>(args.seq);
  p.heads = static_cast<int>(args.heads);
  p.kvHeads = static_cast<int>(args.kvHeads);
  p.group = static_cast<int>(args.heads / args.kvHeads);
  p.splits = splits;
  p.partial = splits > 1 ? reinterpret_cast<float *>(
                               static_cast<char *>(scratch) + 2 * stats)
                         : nullptr;
  p.width = (args.heads + 2 * args.kvHeads) * args.headDim;
  p.outWidth = args.heads * args.headDim;
  p.scale = 1.0f / std::sqrt(static_cast<float>(args.headDim));
  p.scaleLog2 = p.scale * kLog2e;
  if (args.type == DType::BF16)
    return backwardFor<__nv_bfloat16>(p, args.headDim, args.causal, stream,
                                      error);
  return backwardFor<__half>(p, args.headDim, args.causal, stream, error);
}

} // namespace runtime
} // namespace tandem
