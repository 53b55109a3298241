//===- KernelsTest.cpp - Compute launches against CPU references ----------===//
//
// Every launch of Kernels.h on small shapes, compared with a straightforward
// CPU reference computed in double from the same (already rounded) inputs,
// plus bitwise determinism across runs. The GPU tests skip, naming the
// reason, where no usable CUDA device is present (build hosts); the few
// tests of pure host-side logic (argument checks, byte accounting) run
// everywhere.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Kernels.h"
#include "tandem/runtime/CudnnAttention.h"

#include "../lib/AttentionKernels.h"
#include "../lib/KernelsInternal.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace tandem::runtime;

namespace {

//===----------------------------------------------------------------------===//
// Host-side helpers
//===----------------------------------------------------------------------===//

/// Whether kernels of this build run here; `reason` says why not.
bool gpuUsable(std::string &reason) {
  static std::string cachedReason;
  static int cached = -1;
  if (cached < 0) {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      cachedReason = std::string("no usable CUDA device: cudaGetDeviceCount "
                                 "returned ") +
                     cudaGetErrorName(status);
      cudaGetLastError();
    } else if (count == 0) {
      cachedReason = "no usable CUDA device: cudaGetDeviceCount found none";
    } else {
      // Also catches a GPU the build's CMAKE_CUDA_ARCHITECTURES do not cover.
      void *probe = nullptr;
      std::string error;
      if (cudaMalloc(&probe, 64) != cudaSuccess) {
        cachedReason = "no usable CUDA device: cudaMalloc failed";
      } else if (!launchFill(probe, DType::F32, 16, 1, 1.0f, nullptr, error)) {
        cachedReason = "kernels of this build cannot run here: " + error;
      } else if (cudaError_t sync = cudaDeviceSynchronize();
                 sync != cudaSuccess) {
        cachedReason = std::string("kernels of this build cannot run here: ") +
                       cudaGetErrorName(sync);
      }
      if (probe)
        cudaFree(probe);
      cudaGetLastError();
    }
    cached = cachedReason.empty() ? 1 : 0;
  }
  reason = cachedReason;
  return cached == 1;
}

int64_t typeBytes(DType type) { return dtypeBytes(type); }

/// Rounds to `type` (nearest even) and back.
float roundTo(DType type, float value) {
  switch (type) {
  case DType::BF16:
    return __bfloat162float(__float2bfloat16_rn(value));
  case DType::F16:
    return __half2float(__float2half_rn(value));
  case DType::F32:
    return value;
  }
  return value;
}

std::vector<uint8_t> encode(DType type, const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * typeBytes(type));
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == DType::BF16) {
      __nv_bfloat16 v = __float2bfloat16_rn(values[i]);
      std::memcpy(&bytes[2 * i], &v, 2);
    } else if (type == DType::F16) {
      __half v = __float2half_rn(values[i]);
      std::memcpy(&bytes[2 * i], &v, 2);
    } else {
      std::memcpy(&bytes[4 * i], &values[i], 4);
    }
  }
  return bytes;
}

std::vector<float> decode(DType type, const std::vector<uint8_t> &bytes) {
  size_t count = bytes.size() / typeBytes(type);
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    if (type == DType::BF16) {
      __nv_bfloat16 v;
      std::memcpy(&v, &bytes[2 * i], 2);
      values[i] = __bfloat162float(v);
    } else if (type == DType::F16) {
      __half v;
      std::memcpy(&v, &bytes[2 * i], 2);
      values[i] = __half2float(v);
    } else {
      std::memcpy(&values[i], &bytes[4 * i], 4);
    }
  }
  return values;
}

/// Values uniform in [lo, hi), already representable in `type`.
std::vector<float> randomValues(DType type, size_t count, uint64_t seed,
                                float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> values(count);
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (float &v : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    float unit = static_cast<float>(state >> 40) / static_cast<float>(1 << 24);
    v = roundTo(type, lo + (hi - lo) * unit);
  }
  return values;
}

/// Unit roundoff of the type (f32: what float arithmetic typically loses).
double eps(DType type) {
  switch (type) {
  case DType::BF16:
    return 1.0 / 256;
  case DType::F16:
    return 1.0 / 2048;
  case DType::F32:
    return 1e-6;
  }
  return 0;
}

/// Device buffer owned by the test.
class DeviceBuffer {
public:
  explicit DeviceBuffer(int64_t bytes) : bytes_(bytes) {
    if (bytes > 0) {
      EXPECT_EQ(cudaMalloc(&data_, bytes), cudaSuccess);
    }
  }
  DeviceBuffer(DType type, const std::vector<float> &values)
      : DeviceBuffer(static_cast<int64_t>(values.size()) * typeBytes(type)) {
    upload(encode(type, values));
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (data_)
      cudaFree(data_);
  }
  void *get() const { return data_; }
  int64_t bytes() const { return bytes_; }
  void upload(const std::vector<uint8_t> &bytes) {
    ASSERT_LE(static_cast<int64_t>(bytes.size()), bytes_);
    ASSERT_EQ(
        cudaMemcpy(data_, bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
        cudaSuccess);
  }
  std::vector<uint8_t> download() const {
    std::vector<uint8_t> bytes(bytes_);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(bytes.data(), data_, bytes_, cudaMemcpyDeviceToHost),
              cudaSuccess);
    return bytes;
  }
  std::vector<float> values(DType type) const {
    return decode(type, download());
  }

private:
  void *data_ = nullptr;
  int64_t bytes_ = 0;
};

/// Expects |got - want| <= atol + rtol * |want| element-wise; reports the
/// first few mismatches.
void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 double rtol, double atol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0, mismatches = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(diff <= atol + rtol * std::fabs(want[i]))) {
      ++mismatches;
      if (reported++ < 5)
        ADD_FAILURE() << what << ": element " << i << " is " << got[i]
                      << ", expected " << want[i] << " (diff " << diff << ")";
    }
  }
  EXPECT_EQ(mismatches, 0) << what;
}

double maxAbs(const std::vector<double> &values) {
  double result = 0;
  for (double v : values)
    result = std::max(result, std::fabs(v));
  return result;
}

const char *name(DType type) { return dtypeName(type); }

constexpr DType kTypes[] = {DType::BF16, DType::F16, DType::F32};

//===----------------------------------------------------------------------===//
// Fixture
//===----------------------------------------------------------------------===//

class KernelsTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string reason;
    if (!gpuUsable(reason))
      GTEST_SKIP() << reason;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    ASSERT_EQ(cublasLtCreate(&blas.handle), CUBLAS_STATUS_SUCCESS);
    blas.workspaceBytes = 32 << 20;
    ASSERT_EQ(cudaMalloc(&blas.workspace, blas.workspaceBytes), cudaSuccess);
  }
  void TearDown() override {
    if (blas.workspace)
      cudaFree(blas.workspace);
    if (blas.handle)
      cublasLtDestroy(blas.handle);
    if (stream)
      cudaStreamDestroy(stream);
  }
  void sync() { ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess); }
  void checkElementwise(int64_t rows, int64_t cols, int64_t shift);
  void checkAttention(const AttentionArgs &args, const std::string &what);
  void checkFusedAttention(const AttentionArgs &args, const std::string &what);
  enum class AttentionPath { Unfused, Fused, Cudnn };
  void checkAttentionQueries(AttentionPath path, const AttentionArgs &args,
                             std::initializer_list<int64_t> queries,
                             CudnnAttention *cudnn, const std::string &what);

  cudaStream_t stream = nullptr;
  BlasContext blas;
  std::string error;
};

//===----------------------------------------------------------------------===//
// Fill
//===----------------------------------------------------------------------===//

TEST_F(KernelsTest, Copy2DCopiesEveryRowAndNothingElse) {
  // 16-byte words (all aligned), 8-byte words (8-aligned offsets), 4-byte
  // words (a 4-aligned offset), 2-byte words (an even width) and bytes (an
  // odd width); narrow rows (several rows a CTA), more rows than the grid
  // has row slots (each thread copies several rows) and rows wider than
  // the grid's threads times the unroll (the tail loop). The destination's
  // bytes outside the rows keep their value.
  struct Case {
    int64_t srcOffset, dstOffset, srcPitch, dstPitch, rowBytes, rows;
  };
  for (Case c :
       {Case{0, 0, 4096, 8192, 4096, 37}, Case{8, 24, 2056, 4104, 2048, 7},
        Case{4, 12, 1028, 2060, 1024, 9}, Case{2, 6, 1002, 3002, 998, 5},
        Case{1, 3, 1001, 3003, 999, 5}, Case{0, 0, 64, 64, 64, 1},
        Case{0, 16, 64, 256, 48, 3000},
        Case{0, 0, (1 << 20) + 80, (1 << 20) + 80, (1 << 20) + 80, 3},
        Case{0, 0, 33 * 16, 33 * 16, 33 * 16, 70000}}) {
    SCOPED_TRACE("width " + std::to_string(c.rowBytes));
    int64_t srcBytes = c.srcOffset + c.srcPitch * c.rows;
    int64_t dstBytes = c.dstOffset + c.dstPitch * c.rows;
    std::vector<uint8_t> src(srcBytes), dst(dstBytes);
    for (int64_t i = 0; i < srcBytes; ++i)
      src[i] = static_cast<uint8_t>(i * 7 + 3);
    for (int64_t i = 0; i < dstBytes; ++i)
      dst[i] = static_cast<uint8_t>(0xA5 ^ i);
    DeviceBuffer dSrc(srcBytes), dDst(dstBytes);
    dSrc.upload(src);
    dDst.upload(dst);
    ASSERT_TRUE(launchCopy2D(static_cast<char *>(dDst.get()) + c.dstOffset,
                             c.dstPitch,
                             static_cast<char *>(dSrc.get()) + c.srcOffset,
                             c.srcPitch, c.rowBytes, c.rows, stream, error))
        << error;
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t b = 0; b < c.rowBytes; ++b)
        dst[c.dstOffset + r * c.dstPitch + b] =
            src[c.srcOffset + r * c.srcPitch + b];
    EXPECT_EQ(dDst.download(), dst);
  }
  EXPECT_FALSE(launchCopy2D(nullptr, 8, nullptr, 4, 8, 1, stream, error));
  EXPECT_NE(error.find("invalid shape"), std::string::npos) << error;
}

TEST_F(KernelsTest, FillIsDeterministicCounterBasedAndInRange) {
  const int64_t count = 10000;
  const float scale = 0.3f; // Not representable: exercises the range fix.
  for (DType type : kTypes) {
    SCOPED_TRACE(name(type));
    DeviceBuffer a(count * typeBytes(type)), b(count * typeBytes(type)),
        prefix(100 * typeBytes(type)), other(count * typeBytes(type));
    ASSERT_TRUE(launchFill(a.get(), type, count, 42, scale, stream, error))
        << error;
    ASSERT_TRUE(launchFill(b.get(), type, count, 42, scale, stream, error))
        << error;
    ASSERT_TRUE(launchFill(prefix.get(), type, 100, 42, scale, stream, error))
        << error;
    ASSERT_TRUE(launchFill(other.get(), type, count, 43, scale, stream, error))
        << error;
    std::vector<uint8_t> bytesA = a.download();
    EXPECT_EQ(bytesA, b.download());
    std::vector<uint8_t> prefixBytes = prefix.download();
    EXPECT_TRUE(
        std::equal(prefixBytes.begin(), prefixBytes.end(), bytesA.begin()))
        << "element i must depend only on (seed, i)";
    EXPECT_NE(bytesA, other.download()) << "the seed must matter";

    std::vector<float> values = decode(type, bytesA);
    double sum = 0, sumSquares = 0;
    for (float v : values) {
      ASSERT_GE(v, -scale);
      ASSERT_LT(v, scale);
      sum += v;
      sumSquares += double(v) * v;
    }
    // Uniform on [-s, s): mean 0, variance s^2 / 3.
    EXPECT_NEAR(sum / count, 0.0, 0.02);
    EXPECT_NEAR(sumSquares / count, scale * scale / 3, 0.005);
  }
}

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

constexpr double kPi = 3.14159265358979323846;

double geluRef(double x) {
  const double k = std::sqrt(2.0 / kPi);
  return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
double geluGradRef(double x) {
  const double k = std::sqrt(2.0 / kPi);
  double t = std::tanh(k * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
}
double sigmoidRef(double x) { return 1 / (1 + std::exp(-x)); }
double siluRef(double x) { return x * sigmoidRef(x); }
double siluGradRef(double x) {
  double s = sigmoidRef(x);
  return s + x * s * (1 - s);
}

struct ElementwiseCase {
  ElementwiseKind kind;
  DType a, b, out;
};

TEST_F(KernelsTest, ElementwiseMatchesReference) {
  // 37 x 64: 16-byte packs throughout; 5 x 26: packs plus a scalar tail for
  // the flat kinds, element by element for the row-wise swiglu kinds (13 and
  // 26 are no multiple of a pack); 3 x 48 shifted by one element: pointers
  // unaligned for packs (scalar fallback).
  struct Shape {
    int64_t rows, cols, shift;
  };
  for (Shape shape : {Shape{37, 64, 0}, Shape{5, 26, 0}, Shape{3, 48, 1}})
    checkElementwise(shape.rows, shape.cols, shape.shift);
}

void KernelsTest::checkElementwise(int64_t rows, int64_t cols, int64_t shift) {
  std::vector<ElementwiseCase> cases;
  for (DType t : kTypes) {
    for (ElementwiseKind kind :
         {ElementwiseKind::Add, ElementwiseKind::Mul, ElementwiseKind::Copy,
          ElementwiseKind::Gelu, ElementwiseKind::GeluGrad,
          ElementwiseKind::Silu, ElementwiseKind::Swiglu,
          ElementwiseKind::SwigluGrad})
      cases.push_back({kind, t, t, t});
  }
  // Mixed types and casts.
  cases.push_back({ElementwiseKind::Add, DType::BF16, DType::F32, DType::F32});
  cases.push_back({ElementwiseKind::Add, DType::F32, DType::BF16, DType::BF16});
  cases.push_back({ElementwiseKind::Mul, DType::F16, DType::BF16, DType::F32});
  cases.push_back(
      {ElementwiseKind::GeluGrad, DType::BF16, DType::F32, DType::BF16});
  cases.push_back(
      {ElementwiseKind::SwigluGrad, DType::F32, DType::BF16, DType::BF16});
  cases.push_back(
      {ElementwiseKind::Swiglu, DType::BF16, DType::BF16, DType::F32});
  cases.push_back({ElementwiseKind::Gelu, DType::F32, DType::F32, DType::BF16});
  for (DType from : kTypes)
    for (DType to : kTypes)
      cases.push_back({ElementwiseKind::Cast, from, from, to});

  for (const ElementwiseCase &c : cases) {
    std::string what = std::string(elementwiseKindName(c.kind)) + " " +
                       name(c.a) + "," + name(c.b) + "->" + name(c.out) + " " +
                       std::to_string(rows) + "x" + std::to_string(cols) +
                       (shift ? " shifted" : "");
    SCOPED_TRACE(what);
    int64_t aCount = rows * cols, bCount = rows * cols;
    if (c.kind == ElementwiseKind::Swiglu)
      aCount = rows * 2 * cols;
    if (c.kind == ElementwiseKind::SwigluGrad)
      aCount = rows * cols / 2;
    std::vector<float> a = randomValues(c.a, aCount, 1, -3, 3);
    std::vector<float> b = randomValues(c.b, bCount, 2, -3, 3);
    // `shift` leading elements move a, b and out off their allocation.
    auto padded = [&](std::vector<float> values) {
      values.insert(values.begin(), shift, 0.0f);
      return values;
    };
    DeviceBuffer da(c.a, padded(a)), db(c.b, padded(b)),
        out((rows * cols + shift) * typeBytes(c.out));
    const void *aPtr =
        static_cast<const char *>(da.get()) + shift * typeBytes(c.a);
    const void *bPtr =
        static_cast<const char *>(db.get()) + shift * typeBytes(c.b);
    void *outPtr = static_cast<char *>(out.get()) + shift * typeBytes(c.out);
    std::vector<double> want(rows * cols);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < cols; ++j) {
        int64_t i = r * cols + j;
        double value = 0;
        switch (c.kind) {
        case ElementwiseKind::Add:
          value = double(a[i]) + b[i];
          break;
        case ElementwiseKind::Mul:
          value = double(a[i]) * b[i];
          break;
        case ElementwiseKind::Copy:
        case ElementwiseKind::Cast:
          value = a[i];
          break;
        case ElementwiseKind::Gelu:
          value = geluRef(a[i]);
          break;
        case ElementwiseKind::GeluGrad:
          value = a[i] * geluGradRef(b[i]);
          break;
        case ElementwiseKind::Silu:
          value = siluRef(a[i]);
          break;
        case ElementwiseKind::Swiglu:
          value = siluRef(a[r * 2 * cols + j]) * a[r * 2 * cols + cols + j];
          break;
        case ElementwiseKind::SwigluGrad: {
          int64_t half = cols / 2, k = j < half ? j : j - half;
          double dy = a[r * half + k], gate = b[r * cols + k],
                 up = b[r * cols + half + k];
          value = j < half ? dy * up * siluGradRef(gate) : dy * siluRef(gate);
          break;
        }
        }
        want[i] = roundTo(c.out, static_cast<float>(value));
      }
    }
    bool unary =
        c.kind == ElementwiseKind::Copy || c.kind == ElementwiseKind::Cast ||
        c.kind == ElementwiseKind::Gelu || c.kind == ElementwiseKind::Silu ||
        c.kind == ElementwiseKind::Swiglu;
    ASSERT_TRUE(launchElementwise(c.kind, aPtr, c.a, unary ? nullptr : bPtr,
                                  c.b, outPtr, c.out, rows, cols, stream,
                                  error))
        << error;
    // float vs double evaluation may straddle one rounding boundary.
    double rtol = c.out == DType::F32 ? 1e-5 : 2 * eps(c.out);
    std::vector<float> got = out.values(c.out);
    got.erase(got.begin(), got.begin() + shift);
    expectClose(got, want, rtol, 1e-6, what);
    // Same inputs, same bits.
    std::vector<uint8_t> first = out.download();
    ASSERT_TRUE(launchElementwise(c.kind, aPtr, c.a, unary ? nullptr : bPtr,
                                  c.b, outPtr, c.out, rows, cols, stream,
                                  error))
        << error;
    EXPECT_EQ(first, out.download());
  }
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

struct NormRef {
  std::vector<double> y, dx, dw;
};

NormRef normReference(NormKind kind, const std::vector<float> &x,
                      const std::vector<float> &w, const std::vector<float> &dy,
                      int64_t rows, int64_t cols) {
  NormRef ref;
  ref.y.resize(rows * cols);
  ref.dx.resize(rows * cols);
  ref.dw.assign(cols, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = &x[r * cols];
    double mean = 0;
    if (kind == NormKind::Layer) {
      for (int64_t c = 0; c < cols; ++c)
        mean += row[c];
      mean /= cols;
    }
    double var = 0;
    for (int64_t c = 0; c < cols; ++c)
      var += (row[c] - mean) * (row[c] - mean);
    var /= cols;
    double rstd = 1 / std::sqrt(var + 1e-5);
    double meanG = 0, meanGX = 0;
    for (int64_t c = 0; c < cols; ++c) {
      double xhat = (row[c] - mean) * rstd;
      double g = double(dy[r * cols + c]) * w[c];
      ref.y[r * cols + c] = xhat * w[c];
      meanG += g;
      meanGX += g * xhat;
      ref.dw[c] += dy[r * cols + c] * xhat;
    }
    meanG /= cols;
    meanGX /= cols;
    if (kind == NormKind::Rms)
      meanG = 0;
    for (int64_t c = 0; c < cols; ++c) {
      double xhat = (row[c] - mean) * rstd;
      double g = double(dy[r * cols + c]) * w[c];
      ref.dx[r * cols + c] = rstd * (g - meanG - xhat * meanGX);
    }
  }
  return ref;
}

TEST_F(KernelsTest, NormAndNormGradMatchReference) {
  struct Shape {
    int64_t rows, cols;
  };
  // Packs of 16 bytes where cols allow (64, 1000, 8 for f32, 4096; 16384
  // f32 and 24576 also reread packs beyond the forward's register cache),
  // element by element otherwise (70; 8 for 16-bit types takes one pack);
  // 300, 1000 and 2000 rows split the dw sum into many chunks (2000: 8 rows
  // a fused CTA). The backward runs fused while a row fits the fused CTA's
  // registers (16384 16-bit columns), unfused beyond (16384 f32, 24576
  // columns); fused CTAs of up to 256 threads prefetch the next row where
  // every CTA is resident at once (on an H200: 2000 x 64, 400 x 8192 16-bit,
  // several rows a CTA), others do not (600 x 8192 16-bit: 150 CTAs of 256
  // threads; 40 x 12288: 384 threads, 4 rows a CTA). 2000 rows (256
  // chunks) also take the dw sum's unrolled loop.
  for (Shape shape :
       {Shape{37, 64}, Shape{5, 1000}, Shape{70, 8}, Shape{3, 4096},
        Shape{2, 16384}, Shape{9, 70}, Shape{300, 24}, Shape{1000, 8},
        Shape{2000, 64}, Shape{3, 24576}, Shape{600, 8192}, Shape{400, 8192},
        Shape{40, 12288}}) {
    for (NormKind kind : {NormKind::Rms, NormKind::Layer}) {
      for (auto [xType, wType] : {std::pair{DType::BF16, DType::BF16},
                                  std::pair{DType::F16, DType::F32},
                                  std::pair{DType::F32, DType::F32},
                                  std::pair{DType::BF16, DType::F32}}) {
        int64_t rows = shape.rows, cols = shape.cols;
        std::string what =
            std::string(kind == NormKind::Rms ? "rms" : "layer") + " " +
            std::to_string(rows) + "x" + std::to_string(cols) +
            " x:" + name(xType) + " w:" + name(wType);
        SCOPED_TRACE(what);
        // An offset makes layer norm's mean matter.
        std::vector<float> x = randomValues(xType, rows * cols, 3, -1, 2);
        std::vector<float> w = randomValues(wType, cols, 4, 0.5f, 1.5f);
        std::vector<float> dy = randomValues(xType, rows * cols, 5);
        NormRef ref = normReference(kind, x, w, dy, rows, cols);
        DeviceBuffer dX(xType, x), dW(wType, w), dDy(xType, dy),
            y(rows * cols * typeBytes(xType)),
            dx(rows * cols * typeBytes(xType)), dw(cols * typeBytes(wType)),
            scratch(normGradScratchBytes(rows, cols));

        ASSERT_TRUE(launchNorm(kind, dX.get(), xType, dW.get(), wType, y.get(),
                               rows, cols, stream, error))
            << error;
        expectClose(y.values(xType), ref.y, 2 * eps(xType) + 1e-5, 1e-5,
                    what + " y");

        ASSERT_TRUE(launchNormGrad(kind, dDy.get(), dX.get(), xType, dW.get(),
                                   wType, dx.get(), dw.get(), rows, cols,
                                   scratch.get(), stream, error))
            << error;
        expectClose(dx.values(xType), ref.dx, 2 * eps(xType) + 1e-5,
                    (eps(xType) + 1e-5) * maxAbs(ref.dx), what + " dx");
        expectClose(dw.values(wType), ref.dw, 2 * eps(wType) + 1e-5,
                    1e-4 * maxAbs(ref.dw), what + " dw");

        std::vector<uint8_t> dxBits = dx.download(), dwBits = dw.download();
        ASSERT_TRUE(launchNormGrad(kind, dDy.get(), dX.get(), xType, dW.get(),
                                   wType, dx.get(), dw.get(), rows, cols,
                                   scratch.get(), stream, error))
            << error;
        EXPECT_EQ(dxBits, dx.download());
        EXPECT_EQ(dwBits, dw.download());
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

TEST_F(KernelsTest, MatmulMatchesReferenceForAllTransposesAndTypes) {
  const int64_t m = 33, n = 65, k = 17;
  struct TypeCase {
    DType ab, c;
  };
  std::vector<TypeCase> typeCases = {
      {DType::BF16, DType::BF16},
      {DType::BF16, DType::F32},
      {DType::F16, DType::F16},
      {DType::F16, DType::F32},
      {DType::F32, DType::F32},
      // Not written directly by cuBLASLt: staged through fp32.
      {DType::BF16, DType::F16},
      {DType::F32, DType::BF16}};
  for (TypeCase types : typeCases) {
    for (int trans = 0; trans < 4; ++trans) {
      for (int variant = 0; variant < 2; ++variant) {
        MatmulArgs args;
        args.m = m;
        args.n = n;
        args.k = k;
        args.transA = trans & 1;
        args.transB = trans & 2;
        args.abType = types.ab;
        args.cType = types.c;
        // Variant 1 accumulates (beta = 1) and targets 16 SMs.
        args.alpha = variant ? 1.25f : 1.0f;
        args.beta = variant ? 1.0f : 0.0f;
        args.smTarget = variant ? 16 : 0;
        std::string what = std::string(name(types.ab)) + "->" + name(types.c) +
                           (args.transA ? " transA" : "") +
                           (args.transB ? " transB" : "") +
                           (variant ? " beta=1 sm=16" : "");
        SCOPED_TRACE(what);
        std::vector<float> a = randomValues(types.ab, m * k, 6 + trans);
        std::vector<float> b = randomValues(types.ab, k * n, 7 + trans);
        std::vector<float> c0 = randomValues(types.c, m * n, 8);
        DeviceBuffer dA(types.ab, a), dB(types.ab, b), dC(types.c, c0);
        std::vector<double> want(m * n);
        std::vector<double> bound(m * n); // sum |a||b| per element
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0, abs = 0;
            for (int64_t p = 0; p < k; ++p) {
              double av = args.transA ? a[p * m + i] : a[i * k + p];
              double bv = args.transB ? b[j * k + p] : b[p * n + j];
              sum += av * bv;
              abs += std::fabs(av * bv);
            }
            want[i * n + j] = args.alpha * sum + args.beta * c0[i * n + j];
            bound[i * n + j] =
                args.alpha * abs + args.beta * std::fabs(c0[i * n + j]);
          }
        }
        ASSERT_TRUE(launchMatmul(blas, args, dA.get(), dB.get(), dC.get(),
                                 stream, error))
            << error;
        std::vector<float> got = dC.values(types.c);
        // TF32 keeps 10 mantissa bits of f32 operands.
        double productError = types.ab == DType::F32 ? 4e-3 : 1e-6;
        int mismatches = 0;
        for (int64_t e = 0; e < m * n; ++e) {
          double tol = productError * bound[e] +
                       eps(types.c) * 2 * std::fabs(want[e]) + 1e-6;
          if (std::fabs(got[e] - want[e]) > tol && mismatches++ < 5)
            ADD_FAILURE() << what << ": C[" << e / n << "," << e % n
                          << "] = " << got[e] << ", expected " << want[e];
        }
        EXPECT_EQ(mismatches, 0);

        // The cached plan gives the same bits.
        dC.upload(encode(types.c, c0));
        ASSERT_TRUE(launchMatmul(blas, args, dA.get(), dB.get(), dC.get(),
                                 stream, error))
            << error;
        EXPECT_EQ(encode(types.c, got), dC.download());
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

struct AttentionRef {
  std::vector<double> out, dqkv;
};

/// Forward, and with `dout` the backward, in double. `out` for the
/// backward's D term is the forward output passed to the launch.
AttentionRef attentionReference(const AttentionArgs &args,
                                const std::vector<float> &qkv,
                                const std::vector<float> *dout,
                                const std::vector<float> *out) {
  int64_t seq = args.seq, d = args.headDim, heads = args.heads,
          kv = args.kvHeads, width = (heads + 2 * kv) * d;
  int64_t group = heads / kv;
  double scale = 1 / std::sqrt(double(d));
  AttentionRef ref;
  ref.out.assign(seq * heads * d, 0);
  ref.dqkv.assign(seq * width, 0);
  auto q = [&](int64_t i, int64_t h, int64_t c) {
    return double(qkv[i * width + h * d + c]);
  };
  auto key = [&](int64_t i, int64_t g, int64_t c) {
    return double(qkv[i * width + (heads + g) * d + c]);
  };
  auto value = [&](int64_t i, int64_t g, int64_t c) {
    return double(qkv[i * width + (heads + kv + g) * d + c]);
  };
  for (int64_t h = 0; h < heads; ++h) {
    int64_t g = h / group;
    std::vector<double> p(seq * seq, 0);
    for (int64_t i = 0; i < seq; ++i) {
      int64_t valid = args.causal ? i + 1 : seq;
      double rowMax = -INFINITY;
      for (int64_t j = 0; j < valid; ++j) {
        double s = 0;
        for (int64_t c = 0; c < d; ++c)
          s += q(i, h, c) * key(j, g, c);
        p[i * seq + j] = s * scale;
        rowMax = std::max(rowMax, s * scale);
      }
      double sum = 0;
      for (int64_t j = 0; j < valid; ++j)
        sum += p[i * seq + j] = std::exp(p[i * seq + j] - rowMax);
      for (int64_t j = 0; j < valid; ++j)
        p[i * seq + j] /= sum;
      for (int64_t c = 0; c < d; ++c) {
        double o = 0;
        for (int64_t j = 0; j < valid; ++j)
          o += p[i * seq + j] * value(j, g, c);
        ref.out[i * heads * d + h * d + c] = o;
      }
    }
    if (!dout)
      continue;
    auto dO = [&](int64_t i, int64_t c) {
      return double((*dout)[i * heads * d + h * d + c]);
    };
    for (int64_t i = 0; i < seq; ++i) {
      double rowDot = 0;
      for (int64_t c = 0; c < d; ++c)
        rowDot += dO(i, c) * (*out)[i * heads * d + h * d + c];
      for (int64_t j = 0; j < seq; ++j) {
        double pij = p[i * seq + j];
        double dp = 0;
        for (int64_t c = 0; c < d; ++c)
          dp += dO(i, c) * value(j, g, c);
        double ds = pij * (dp - rowDot);
        for (int64_t c = 0; c < d; ++c) {
          ref.dqkv[i * width + h * d + c] += scale * ds * key(j, g, c);
          ref.dqkv[j * width + (heads + g) * d + c] += scale * ds * q(i, h, c);
          ref.dqkv[j * width + (heads + kv + g) * d + c] += pij * dO(i, c);
        }
      }
    }
  }
  return ref;
}

/// Compares the q, k and v parts of dqkv, each against its own magnitude.
void expectQkvClose(const std::vector<float> &got,
                    const std::vector<double> &want, const AttentionArgs &args,
                    double tolerance, const std::string &what) {
  int64_t d = args.headDim;
  int64_t width = (args.heads + 2 * args.kvHeads) * d;
  struct Part {
    const char *name;
    int64_t begin, end;
  } parts[] = {{"dq", 0, args.heads * d},
               {"dk", args.heads * d, (args.heads + args.kvHeads) * d},
               {"dv", (args.heads + args.kvHeads) * d, width}};
  for (const Part &part : parts) {
    std::vector<float> g;
    std::vector<double> w;
    for (int64_t i = 0; i < args.seq; ++i) {
      for (int64_t c = part.begin; c < part.end; ++c) {
        g.push_back(got[i * width + c]);
        w.push_back(want[i * width + c]);
      }
    }
    double scale = maxAbs(w);
    EXPECT_GT(scale, 0.0) << what << " " << part.name;
    expectClose(g, w, 0, tolerance * scale, what + " " + part.name);
  }
}

struct AttentionCase {
  int64_t seq, heads, kvHeads, headDim;
};

TEST_F(KernelsTest, AttentionForwardAndBackwardMatchReference) {
  // GQA groups 1, 2 and 4; seq a multiple of 4 (vector softmax) or not;
  // head counts that batches of 2 or 3 heads do not divide.
  for (AttentionCase shape :
       {AttentionCase{16, 4, 2, 8}, AttentionCase{16, 4, 4, 8},
        AttentionCase{33, 4, 1, 16}, AttentionCase{40, 8, 2, 16},
        AttentionCase{37, 6, 3, 8}, AttentionCase{20, 5, 5, 8}}) {
    // 0: the default batching (all heads in one batch at these sizes);
    // otherwise at most this many heads per batch.
    for (int64_t cap : {0, 1, 2, 3}) {
      detail::setAttentionMaxHeadsPerBatch(cap);
      for (bool causal : {false, true}) {
        for (DType type : kTypes) {
          AttentionArgs args;
          args.seq = shape.seq;
          args.heads = shape.heads;
          args.kvHeads = shape.kvHeads;
          args.headDim = shape.headDim;
          args.causal = causal;
          args.type = type;
          std::string what = "seq " + std::to_string(args.seq) + " heads " +
                             std::to_string(args.heads) + " kv " +
                             std::to_string(args.kvHeads) + " d " +
                             std::to_string(args.headDim) + " cap " +
                             std::to_string(cap) + (causal ? " causal " : " ") +
                             name(type);
          checkAttention(args, what);
        }
      }
    }
  }
  detail::setAttentionMaxHeadsPerBatch(0);
}

void KernelsTest::checkAttention(const AttentionArgs &args,
                                 const std::string &what) {
  SCOPED_TRACE(what);
  DType type = args.type;
  int64_t width = (args.heads + 2 * args.kvHeads) * args.headDim;
  int64_t outCount = args.seq * args.heads * args.headDim;
  std::vector<float> qkv = randomValues(type, args.seq * width, 11);
  std::vector<float> dout = randomValues(type, outCount, 12);
  // dqkv starts as garbage: every element must be written.
  std::vector<float> garbage = randomValues(type, args.seq * width, 13, 5, 9);
  DeviceBuffer dQkv(type, qkv), dDout(type, dout),
      out(outCount * typeBytes(type)), dqkv(type, garbage),
      scratch(attentionScratchBytes(args)),
      gradScratch(attentionGradScratchBytes(args));

  ASSERT_TRUE(launchAttention(blas, args, dQkv.get(), out.get(), scratch.get(),
                              stream, error))
      << error;
  std::vector<float> outValues = out.values(type);
  AttentionRef forward = attentionReference(args, qkv, nullptr, nullptr);
  // bf16/f16 round P before the PV GEMM; f32 runs on TF32.
  double tolerance = type == DType::BF16  ? 2e-2
                     : type == DType::F16 ? 3e-3
                                          : 1e-2;
  expectClose(outValues, forward.out, 0, tolerance, what + " out");

  ASSERT_TRUE(launchAttentionGrad(blas, args, dDout.get(), dQkv.get(),
                                  out.get(), dqkv.get(), gradScratch.get(),
                                  stream, error))
      << error;
  AttentionRef backward = attentionReference(args, qkv, &dout, &outValues);
  double gradTolerance = type == DType::BF16  ? 4e-2
                         : type == DType::F16 ? 1e-2
                                              : 1e-2;
  expectQkvClose(dqkv.values(type), backward.dqkv, args, gradTolerance, what);

  // Bitwise reproducible, GQA accumulation included.
  std::vector<uint8_t> outBits = out.download(), gradBits = dqkv.download();
  ASSERT_TRUE(launchAttention(blas, args, dQkv.get(), out.get(), scratch.get(),
                              stream, error))
      << error;
  ASSERT_TRUE(launchAttentionGrad(blas, args, dDout.get(), dQkv.get(),
                                  out.get(), dqkv.get(), gradScratch.get(),
                                  stream, error))
      << error;
  EXPECT_EQ(outBits, out.download());
  EXPECT_EQ(gradBits, dqkv.download());
}

//===----------------------------------------------------------------------===//
// Fused attention (FlashAttention.cu)
//===----------------------------------------------------------------------===//

/// Row log-sum-exp of scale * q_i . k_j over the visible keys, per
/// [head][query], in double.
std::vector<double> lseReference(const AttentionArgs &args,
                                 const std::vector<float> &qkv) {
  int64_t seq = args.seq, d = args.headDim, heads = args.heads,
          kv = args.kvHeads, width = (heads + 2 * kv) * d;
  int64_t group = heads / kv;
  double scale = 1 / std::sqrt(double(d));
  std::vector<double> lse(heads * seq);
  std::vector<double> s(seq);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < seq; ++i) {
      int64_t valid = args.causal ? i + 1 : seq;
      double mx = -INFINITY;
      for (int64_t j = 0; j < valid; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c)
          dot += double(qkv[i * width + h * d + c]) *
                 qkv[j * width + (heads + h / group) * d + c];
        s[j] = dot * scale;
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < valid; ++j)
        sum += std::exp(s[j] - mx);
      lse[h * seq + i] = mx + std::log(sum);
    }
  return lse;
}

/// Largest |got - want| over the largest |want|.
double relMaxError(const std::vector<float> &got,
                   const std::vector<double> &want) {
  double err = 0;
  for (size_t i = 0; i < got.size(); ++i)
    err = std::max(err, std::fabs(double(got[i]) - want[i]));
  double scale = maxAbs(want);
  return scale > 0 ? err / scale : err;
}

/// Calls `check(args, what)` for every shape, causal and full, and type
/// (bf16 and f16 unless `types` says).
struct AttentionShape {
  int64_t seq, heads, kvHeads, headDim;
};
template <typename Check>
void forEachAttentionCase(std::initializer_list<AttentionShape> shapes,
                          std::initializer_list<DType> types, Check check) {
  for (AttentionShape c : shapes) {
    for (bool causal : {false, true}) {
      for (DType type : types) {
        AttentionArgs args;
        args.seq = c.seq;
        args.heads = c.heads;
        args.kvHeads = c.kvHeads;
        args.headDim = c.headDim;
        args.causal = causal;
        args.type = type;
        check(args, "seq " + std::to_string(c.seq) + " heads " +
                        std::to_string(c.heads) + " kv " +
                        std::to_string(c.kvHeads) + " d " +
                        std::to_string(c.headDim) +
                        (causal ? " causal " : " ") + name(type));
      }
    }
  }
}
template <typename Check>
void forEachAttentionCase(std::initializer_list<AttentionShape> shapes,
                          Check check) {
  forEachAttentionCase(shapes, {DType::BF16, DType::F16}, check);
}

TEST_F(KernelsTest, FusedAttentionMatchesUnfusedAndReference) {
  // Head dims 64 and 128; GQA groups 1, 2, 4 and 8; sequence lengths that
  // are and are not multiples of the 64-key / 128-query tiles, shorter than
  // one tile, and long enough for several pipeline stages.
  forEachAttentionCase({{128, 2, 1, 64},
                        {100, 4, 2, 64},
                        {257, 4, 4, 128},
                        {384, 8, 1, 128},
                        {33, 2, 2, 128},
                        {200, 8, 2, 64}},
                       [&](const AttentionArgs &args, const std::string &what) {
                         checkFusedAttention(args, what);
                       });
}

TEST_F(KernelsTest, FusedAttentionRejectsWhatItDoesNotTake) {
  AttentionArgs args;
  args.seq = 64;
  args.heads = 2;
  args.kvHeads = 1;
  args.headDim = 64;
  std::string reason;
  EXPECT_TRUE(fusedAttentionSupported(args, reason)) << reason;
  args.headDim = 96;
  EXPECT_FALSE(fusedAttentionSupported(args, reason));
  EXPECT_NE(reason.find("head dim 96"), std::string::npos) << reason;
  args.headDim = 64;
  args.type = DType::F32;
  EXPECT_FALSE(fusedAttentionSupported(args, reason));
  EXPECT_NE(reason.find("f32"), std::string::npos) << reason;
  args.type = DType::BF16;
  DeviceBuffer qkv(64 * 4 * 64 * 2 + 16), out(64 * 2 * 64 * 2), lse(2 * 64 * 4);
  // A misaligned qkv is refused, not read.
  EXPECT_FALSE(launchFusedAttention(args, static_cast<char *>(qkv.get()) + 2,
                                    out.get(), static_cast<float *>(lse.get()),
                                    stream, error));
  EXPECT_NE(error.find("aligned"), std::string::npos) << error;
}

void KernelsTest::checkFusedAttention(const AttentionArgs &args,
                                      const std::string &what) {
  SCOPED_TRACE(what);
  DType type = args.type;
  int64_t width = (args.heads + 2 * args.kvHeads) * args.headDim;
  int64_t outCount = args.seq * args.heads * args.headDim;
  // Fresh inputs per case; q and k span [-2, 2) so that softmax rows are
  // peaked enough for the running max to matter.
  uint64_t seed = 100 + args.seq * 7 + args.heads * 3 + args.headDim +
                  (args.causal ? 1 : 0) + (type == DType::F16 ? 50 : 0);
  std::vector<float> qkv = randomValues(type, args.seq * width, seed, -2, 2);
  std::vector<float> dout = randomValues(type, outCount, seed + 1);
  std::vector<float> garbage = randomValues(type, args.seq * width, 13, 5, 9);
  std::vector<float> outGarbage = randomValues(type, outCount, 14, 5, 9);
  DeviceBuffer dQkv(type, qkv), dDout(type, dout), out(type, outGarbage),
      unfusedOut(outCount * typeBytes(type)), dqkv(type, garbage),
      unfusedDqkv(args.seq * width * typeBytes(type)),
      recomputedDqkv(type, garbage), lse(fusedAttentionLseBytes(args)),
      scratch(attentionScratchBytes(args)),
      gradScratch(attentionGradScratchBytes(args)),
      fusedScratch(detail::fusedAttentionGradScratchBytes(
          args, static_cast<int>(args.heads / args.kvHeads)));
  float *lsePtr = static_cast<float *>(lse.get());

  // Forward: the fused output and LSE against the double reference and
  // the unfused path.
  ASSERT_TRUE(
      launchFusedAttention(args, dQkv.get(), out.get(), lsePtr, stream, error))
      << error;
  ASSERT_TRUE(launchAttention(blas, args, dQkv.get(), unfusedOut.get(),
                              scratch.get(), stream, error))
      << error;
  std::vector<float> outValues = out.values(type);
  std::vector<float> unfusedValues = unfusedOut.values(type);
  AttentionRef forward = attentionReference(args, qkv, nullptr, nullptr);
  // Stated tolerance: max |error| / max |reference| of 2e-2 (bf16) or 4e-3
  // (f16) for out, both paths round P to the input type before P V.
  double tolerance = type == DType::BF16 ? 2e-2 : 4e-3;
  EXPECT_LE(relMaxError(outValues, forward.out), tolerance) << "fused out";
  EXPECT_LE(relMaxError(unfusedValues, forward.out), tolerance)
      << "unfused out";
  std::vector<double> unfusedAsDouble(unfusedValues.begin(),
                                      unfusedValues.end());
  EXPECT_LE(relMaxError(outValues, unfusedAsDouble), 2 * tolerance)
      << "fused vs unfused out";
  std::vector<float> lseValues = lse.values(DType::F32);
  std::vector<double> lseWant = lseReference(args, qkv);
  expectClose(lseValues, lseWant, 1e-5, 1e-4, what + " lse");

  // Backward with the saved LSE, against the reference and the unfused
  // backward (each on its own forward output).
  ASSERT_TRUE(launchFusedAttentionGrad(args, dDout.get(), dQkv.get(), out.get(),
                                       lsePtr, dqkv.get(), fusedScratch.get(),
                                       stream, error))
      << error;
  ASSERT_TRUE(launchAttentionGrad(blas, args, dDout.get(), dQkv.get(),
                                  unfusedOut.get(), unfusedDqkv.get(),
                                  gradScratch.get(), stream, error))
      << error;
  std::vector<float> grad = dqkv.values(type);
  AttentionRef backward = attentionReference(args, qkv, &dout, &outValues);
  double gradTolerance = type == DType::BF16 ? 4e-2 : 1e-2;
  expectQkvClose(grad, backward.dqkv, args, gradTolerance, what + " fused");
  std::vector<float> unfusedGrad = unfusedDqkv.values(type);
  std::vector<double> unfusedGradAsDouble(unfusedGrad.begin(),
                                          unfusedGrad.end());
  expectQkvClose(grad, unfusedGradAsDouble, args, 2 * gradTolerance,
                 what + " fused vs unfused");

  // The dK/dV pass unsplit and split into every query head of a GQA group
  // (the launch above used fusedAttentionGradSplits' choice): both against
  // the reference, and against each other within f32 reassociation.
  int group = static_cast<int>(args.heads / args.kvHeads);
  if (group > 1) {
    std::vector<std::vector<float>> bySplits;
    for (int splits : {1, group}) {
      DeviceBuffer split(type, garbage);
      ASSERT_TRUE(detail::launchFusedAttentionGrad(
          args, dDout.get(), dQkv.get(), out.get(), lsePtr, split.get(),
          fusedScratch.get(), splits, stream, error))
          << error;
      bySplits.push_back(split.values(type));
      expectQkvClose(bySplits.back(), backward.dqkv, args, gradTolerance,
                     what + " dK/dV in " + std::to_string(splits) + " parts");
    }
    std::vector<double> unsplit(bySplits[0].begin(), bySplits[0].end());
    expectQkvClose(bySplits[1], unsplit, args,
                   type == DType::BF16 ? 1e-2 : 2e-3,
                   what + " split vs unsplit dK/dV");
  }
  // Parts that do not divide the group are refused.
  EXPECT_FALSE(detail::launchFusedAttentionGrad(
      args, dDout.get(), dQkv.get(), out.get(), lsePtr, dqkv.get(),
      fusedScratch.get(), group + 1, stream, error));

  // Without a saved LSE the backward recomputes it: bitwise the same.
  ASSERT_TRUE(launchFusedAttentionGrad(args, dDout.get(), dQkv.get(), out.get(),
                                       nullptr, recomputedDqkv.get(),
                                       fusedScratch.get(), stream, error))
      << error;
  std::vector<uint8_t> gradBits = dqkv.download();
  EXPECT_EQ(gradBits, recomputedDqkv.download()) << "recomputed LSE";

  // Bitwise reproducible (no atomics).
  std::vector<uint8_t> outBits = out.download();
  ASSERT_TRUE(
      launchFusedAttention(args, dQkv.get(), out.get(), lsePtr, stream, error))
      << error;
  ASSERT_TRUE(launchFusedAttentionGrad(args, dDout.get(), dQkv.get(), out.get(),
                                       lsePtr, dqkv.get(), fusedScratch.get(),
                                       stream, error))
      << error;
  EXPECT_EQ(outBits, out.download());
  EXPECT_EQ(gradBits, dqkv.download());
}

//===----------------------------------------------------------------------===//
// cuDNN attention (an option of builds that found cuDNN)
//===----------------------------------------------------------------------===//

TEST_F(KernelsTest, CudnnAttentionMatchesReferenceAndFusedLse) {
  std::string reason;
  if (!cudnnAttentionBuilt(reason))
    GTEST_SKIP() << reason;
  std::unique_ptr<CudnnAttention> cudnn = CudnnAttention::create(true, error);
  ASSERT_TRUE(cudnn) << error;
  // Head dims 64 and 128 (and 96, which Tandem's own kernels do not take),
  // GQA groups 1-8, sequences that are and are not multiples of a tile.
  forEachAttentionCase(
      {{128, 2, 1, 64},
       {100, 4, 2, 64},
       {257, 4, 4, 128},
       {384, 8, 1, 128},
       {200, 4, 2, 96}},
      [&](const AttentionArgs &args, const std::string &what) {
        SCOPED_TRACE(what);
        bool causal = args.causal;
        DType type = args.type;
        ASSERT_TRUE(cudnn->prepare(args, false, reason)) << reason;
        ASSERT_TRUE(cudnn->prepare(args, true, reason)) << reason;
        int64_t width = (args.heads + 2 * args.kvHeads) * args.headDim;
        int64_t outCount = args.seq * args.heads * args.headDim;
        uint64_t seed = 300 + args.seq * 7 + args.heads * 3 + args.headDim +
                        (causal ? 1 : 0) + (type == DType::F16 ? 50 : 0);
        std::vector<float> qkv =
            randomValues(type, args.seq * width, seed, -2, 2);
        std::vector<float> dout = randomValues(type, outCount, seed + 1);
        std::vector<float> garbage =
            randomValues(type, args.seq * width, 13, 5, 9);
        std::vector<float> outGarbage = randomValues(type, outCount, 14, 5, 9);
        int64_t workspaceBytes =
            std::max<int64_t>(std::max(cudnn->workspaceBytes(args, false),
                                       cudnn->workspaceBytes(args, true)),
                              1);
        DeviceBuffer dQkv(type, qkv), dDout(type, dout), out(type, outGarbage),
            dqkv(type, garbage), again(type, garbage),
            lse(fusedAttentionLseBytes(args)), workspace(workspaceBytes);
        float *lsePtr = static_cast<float *>(lse.get());

        // Forward: out and LSE against the double reference, with the
        // tolerances of the fused kernels' test.
        ASSERT_TRUE(cudnn->forward(args, dQkv.get(), out.get(), lsePtr,
                                   workspace.get(), stream, error))
            << error;
        std::vector<float> outValues = out.values(type);
        AttentionRef forward = attentionReference(args, qkv, nullptr, nullptr);
        double tolerance = type == DType::BF16 ? 2e-2 : 4e-3;
        EXPECT_LE(relMaxError(outValues, forward.out), tolerance) << "out";
        expectClose(lse.values(DType::F32), lseReference(args, qkv), 1e-5, 1e-4,
                    what + " lse");

        // Backward: every element of dqkv (garbage before) against the
        // reference; deterministic, so bitwise reproducible.
        ASSERT_TRUE(cudnn->backward(args, dDout.get(), dQkv.get(), out.get(),
                                    lsePtr, dqkv.get(), workspace.get(), stream,
                                    error))
            << error;
        AttentionRef backward =
            attentionReference(args, qkv, &dout, &outValues);
        double gradTolerance = type == DType::BF16 ? 4e-2 : 1e-2;
        expectQkvClose(dqkv.values(type), backward.dqkv, args, gradTolerance,
                       what + " cudnn");
        ASSERT_TRUE(cudnn->backward(args, dDout.get(), dQkv.get(), out.get(),
                                    lsePtr, again.get(), workspace.get(),
                                    stream, error))
            << error;
        EXPECT_EQ(dqkv.download(), again.download()) << "deterministic";

        // The LSE is the fused kernels' (same layout and definition): a
        // cuDNN backward given the fused forward's LSE matches too.
        if (fusedAttentionSupported(args, reason)) {
          DeviceBuffer fusedLse(fusedAttentionLseBytes(args));
          ASSERT_TRUE(launchFusedAttention(args, dQkv.get(), nullptr,
                                           static_cast<float *>(fusedLse.get()),
                                           stream, error))
              << error;
          expectClose(fusedLse.values(DType::F32), lseReference(args, qkv),
                      1e-5, 1e-4, what + " fused lse");
          ASSERT_TRUE(cudnn->backward(args, dDout.get(), dQkv.get(), out.get(),
                                      static_cast<float *>(fusedLse.get()),
                                      again.get(), workspace.get(), stream,
                                      error))
              << error;
          expectQkvClose(again.values(type), backward.dqkv, args, gradTolerance,
                         what + " cudnn on the fused LSE");
        }
      });
}

TEST(KernelsHostTest, CudnnAttentionSaysWhyItIsMissing) {
  std::string reason, error;
  if (cudnnAttentionBuilt(reason))
    GTEST_SKIP() << "this runtime was built with cuDNN "
                 << "(CudnnAttentionMatchesReferenceAndFusedLse covers it)";
  EXPECT_FALSE(reason.empty());
  EXPECT_EQ(CudnnAttention::create(true, error), nullptr);
  EXPECT_NE(error.find(reason), std::string::npos) << error;
  EXPECT_NE(error.find("TANDEM_CUDNN"), std::string::npos) << error;
  EXPECT_EQ(cudnnAttentionLibraryVersion(), 0);
}

//===----------------------------------------------------------------------===//
// Attention with query rows (AttentionArgs::queries)
//===----------------------------------------------------------------------===//

/// The last `rows` of the `total` rows of a row-major matrix.
template <typename T>
std::vector<T> lastRows(const std::vector<T> &matrix, int64_t total,
                        int64_t rows) {
  int64_t cols = static_cast<int64_t>(matrix.size()) / total;
  return std::vector<T>(matrix.end() - rows * cols, matrix.end());
}

/// The entries of the last `rows` queries of a [heads][seq] statistic, as
/// [heads][rows].
template <typename T>
std::vector<T> lastQueries(const std::vector<T> &stat, int64_t heads,
                           int64_t seq, int64_t rows) {
  std::vector<T> result;
  for (int64_t h = 0; h < heads; ++h)
    result.insert(result.end(), stat.begin() + h * seq + seq - rows,
                  stat.begin() + (h + 1) * seq);
  return result;
}

/// For each N of `queries`: the forward of `path` with the last N rows of
/// qkv as queries writes every element of its N-row output, and that
/// output is the last N rows of the double reference and of the same
/// path's full attention (bitwise for the fused kernel, whose rows do not
/// depend on the CTA they fall in; within rounding for the paths whose
/// GEMMs / engines may change with the shape). The fused and cuDNN paths'
/// LSE likewise.
void KernelsTest::checkAttentionQueries(AttentionPath path,
                                        const AttentionArgs &args,
                                        std::initializer_list<int64_t> queries,
                                        CudnnAttention *cudnn,
                                        const std::string &what) {
  SCOPED_TRACE(what);
  DType type = args.type;
  AttentionArgs full = args;
  full.queries = 0;
  int64_t seq = args.seq, heads = args.heads;
  int64_t width = (heads + 2 * args.kvHeads) * args.headDim;
  int64_t outCols = heads * args.headDim;
  uint64_t seed = 500 + seq * 7 + heads * 3 + args.headDim +
                  (args.causal ? 1 : 0) + 50 * static_cast<int>(type);
  // q and k in [-2, 2): peaked rows, so that the running max matters.
  std::vector<float> qkv = randomValues(type, seq * width, seed, -2, 2);
  DeviceBuffer dQkv(type, qkv);
  bool hasLse = path != AttentionPath::Unfused;
  std::string reason;

  // Writes `out` (and `lse`) for `a` with `path`.
  auto forward = [&](const AttentionArgs &a, void *out, float *lse) {
    switch (path) {
    case AttentionPath::Unfused: {
      DeviceBuffer scratch(attentionScratchBytes(a));
      bool ok = launchAttention(blas, a, dQkv.get(), out, scratch.get(), stream,
                                error);
      sync();
      return ok;
    }
    case AttentionPath::Fused:
      return launchFusedAttention(a, dQkv.get(), out, lse, stream, error);
    case AttentionPath::Cudnn: {
      if (!cudnn->prepare(a, false, error))
        return false;
      DeviceBuffer workspace(
          std::max<int64_t>(cudnn->workspaceBytes(a, false), 1));
      bool ok = cudnn->forward(a, dQkv.get(), out, lse, workspace.get(), stream,
                               error);
      sync();
      return ok;
    }
    }
    return false;
  };

  DeviceBuffer fullOut(seq * outCols * typeBytes(type)),
      fullLse(fusedAttentionLseBytes(full));
  ASSERT_TRUE(forward(full, fullOut.get(), static_cast<float *>(fullLse.get())))
      << error;
  std::vector<uint8_t> fullBits = fullOut.download();
  std::vector<float> fullValues = decode(type, fullBits);
  std::vector<double> fullAsDouble(fullValues.begin(), fullValues.end());
  AttentionRef reference = attentionReference(args, qkv, nullptr, nullptr);
  std::vector<double> lseWant;
  std::vector<float> fullLseValues;
  if (hasLse) {
    lseWant = lseReference(full, qkv);
    fullLseValues = fullLse.values(DType::F32);
  }
  // The tolerances of the full paths' tests (f32 runs on TF32).
  double tolerance = type == DType::BF16  ? 2e-2
                     : type == DType::F16 ? 4e-3
                                          : 1e-2;

  for (int64_t rows : queries) {
    SCOPED_TRACE("queries " + std::to_string(rows));
    AttentionArgs a = args;
    a.queries = rows;
    ASSERT_EQ(a.queryRows(), rows);
    std::vector<float> garbage = randomValues(type, rows * outCols, 14, 5, 9);
    DeviceBuffer out(type, garbage), lse(fusedAttentionLseBytes(a));
    ASSERT_EQ(lse.bytes(), heads * rows * 4);
    ASSERT_TRUE(forward(a, out.get(), static_cast<float *>(lse.get())))
        << error;
    std::vector<uint8_t> bits = out.download();
    std::vector<float> values = decode(type, bits);
    ASSERT_EQ(static_cast<int64_t>(values.size()), rows * outCols);
    EXPECT_LE(relMaxError(values, lastRows(reference.out, seq, rows)),
              tolerance)
        << "against the reference";
    if (path == AttentionPath::Fused) {
      EXPECT_EQ(bits, lastRows(fullBits, seq, rows)) << "against full";
    } else {
      EXPECT_LE(relMaxError(values, lastRows(fullAsDouble, seq, rows)),
                2 * tolerance)
          << "against full";
    }
    if (!hasLse)
      continue;
    std::vector<float> lseValues = lse.values(DType::F32);
    expectClose(lseValues, lastQueries(lseWant, heads, seq, rows), 1e-5, 1e-4,
                what + " lse");
    if (path == AttentionPath::Fused) {
      EXPECT_EQ(lseValues, lastQueries(fullLseValues, heads, seq, rows))
          << "lse against full";
    }
  }
}

TEST_F(KernelsTest, UnfusedAttentionQueriesAreTheLastRowsOfFullAttention) {
  // GQA 8/2 and 6/3; half the rows, a count no tile or vector width
  // divides, one row and all rows; heads in one batch or at most 3 a batch.
  for (int64_t cap : {0, 3}) {
    detail::setAttentionMaxHeadsPerBatch(cap);
    forEachAttentionCase(
        {{40, 8, 2, 16}, {37, 6, 3, 8}}, {DType::BF16, DType::F16, DType::F32},
        [&](const AttentionArgs &args, const std::string &what) {
          checkAttentionQueries(AttentionPath::Unfused, args,
                                {args.seq / 2, 7, 1, args.seq}, nullptr,
                                what + " cap " + std::to_string(cap));
        });
  }
  detail::setAttentionMaxHeadsPerBatch(0);
  forEachAttentionCase({{256, 8, 2, 64}}, {DType::BF16},
                       [&](const AttentionArgs &args, const std::string &what) {
                         checkAttentionQueries(AttentionPath::Unfused, args,
                                               {128, 77}, nullptr, what);
                       });
}

TEST_F(KernelsTest, FusedAttentionQueriesAreTheLastRowsOfFullAttention) {
  // Head dims 64 and 128, GQA 8/2 and 4/4; query counts that are half the
  // rows, not a multiple of the 128-query or 64-key tiles (so the first
  // query sits inside a key tile), one row, and all rows.
  forEachAttentionCase({{256, 8, 2, 64}, {200, 8, 2, 128}, {384, 4, 4, 64}},
                       {DType::BF16, DType::F16},
                       [&](const AttentionArgs &args, const std::string &what) {
                         checkAttentionQueries(
                             AttentionPath::Fused, args,
                             {args.seq / 2, 77, 1, args.seq - 1, args.seq},
                             nullptr, what);
                       });
}

TEST_F(KernelsTest, CudnnAttentionQueriesAreTheLastRowsOfFullAttention) {
  std::string reason;
  if (!cudnnAttentionBuilt(reason))
    GTEST_SKIP() << reason;
  std::unique_ptr<CudnnAttention> cudnn = CudnnAttention::create(true, error);
  ASSERT_TRUE(cudnn) << error;
  // Separate query and key lengths with a bottom-right causal mask; cuDNN
  // before 9.6 takes them only in multiples of 64, hence 77 from 9.6 on.
  bool anyLength = cudnnAttentionLibraryVersion() >= 90600;
  forEachAttentionCase(
      {{256, 8, 2, 64}, {384, 8, 2, 128}}, {DType::BF16, DType::F16},
      [&](const AttentionArgs &args, const std::string &what) {
        if (anyLength)
          checkAttentionQueries(AttentionPath::Cudnn, args,
                                {args.seq / 2, 64, 77, args.seq}, cudnn.get(),
                                what);
        else
          checkAttentionQueries(AttentionPath::Cudnn, args,
                                {args.seq / 2, 64, args.seq}, cudnn.get(),
                                what);
      });
  // The backward takes no query rows: refused with the reason.
  AttentionArgs args;
  args.seq = 256;
  args.heads = 8;
  args.kvHeads = 2;
  args.headDim = 64;
  args.queries = 128;
  EXPECT_FALSE(cudnn->prepare(args, true, reason));
  EXPECT_NE(reason.find("queries 128 applies to the attention forward only"),
            std::string::npos)
      << reason;
}

//===----------------------------------------------------------------------===//
// Opaque
//===----------------------------------------------------------------------===//

std::vector<double> opaqueExpected(const std::vector<uint8_t> &input0,
                                   DType type, int64_t count) {
  // Element j of input 0 (bf16 here), cyclically, rounded to `type`.
  std::vector<double> values(count, 0.0);
  int64_t elements = static_cast<int64_t>(input0.size()) / 2;
  for (int64_t j = 0; elements > 0 && j < count; ++j) {
    int64_t e = j % elements;
    uint32_t bits =
        (uint32_t(input0[2 * e]) | (uint32_t(input0[2 * e + 1]) << 8)) << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    values[j] = roundTo(type, v);
  }
  return values;
}

TEST_F(KernelsTest, OpaqueIsDeterministicFunctionOfInputZero) {
  std::vector<float> in0 = randomValues(DType::BF16, 1000, 21);
  std::vector<float> in1 = randomValues(DType::F32, 333, 22);
  DeviceBuffer dIn0(DType::BF16, in0), dIn1(DType::F32, in1);
  std::vector<uint8_t> in0Bytes = dIn0.download(), in1Bytes = dIn1.download();
  DeviceBuffer out0(777 * 4), out1(2048 * 2);
  const void *inputs[] = {dIn0.get(), dIn1.get()};
  int64_t inputBytes[] = {dIn0.bytes(), dIn1.bytes()};
  void *outputs[] = {out0.get(), out1.get()};
  int64_t outputBytes[] = {out0.bytes(), out1.bytes()};
  DType outputTypes[] = {DType::F32, DType::BF16};
  // Much more traffic than the outputs: the read sweep cycles over inputs.
  const int64_t declared = 64 << 20;
  ASSERT_TRUE(launchOpaque(inputs, inputBytes, 2, DType::BF16, outputs,
                           outputBytes, outputTypes, 2, declared, stream,
                           error))
      << error;
  expectClose(out0.values(DType::F32),
              opaqueExpected(in0Bytes, DType::F32, 777), 0, 0, "out0");
  expectClose(out1.values(DType::BF16),
              opaqueExpected(in0Bytes, DType::BF16, 2048), 0, 0, "out1");
  EXPECT_EQ(in0Bytes, dIn0.download()) << "inputs are read-only";
  EXPECT_EQ(in1Bytes, dIn1.download()) << "inputs are read-only";

  std::vector<uint8_t> bits0 = out0.download(), bits1 = out1.download();
  ASSERT_TRUE(launchOpaque(inputs, inputBytes, 2, DType::BF16, outputs,
                           outputBytes, outputTypes, 2, declared, stream,
                           error))
      << error;
  EXPECT_EQ(bits0, out0.download());
  EXPECT_EQ(bits1, out1.download());

  // Without inputs every output is zero (the sweep then reads the outputs).
  ASSERT_EQ(cudaMemset(out0.get(), 0xff, out0.bytes()), cudaSuccess);
  ASSERT_TRUE(launchOpaque(nullptr, nullptr, 0, DType::BF16, outputs,
                           outputBytes, outputTypes, 2, declared, stream,
                           error))
      << error;
  expectClose(out0.values(DType::F32), std::vector<double>(777, 0.0), 0, 0,
              "out0 without inputs");
}

//===----------------------------------------------------------------------===//
// Stand-in collectives
//===----------------------------------------------------------------------===//

TEST_F(KernelsTest, StandinCollectivesProduceDocumentedResults) {
  const int groupSize = 4;
  const int64_t block = 300; // Elements per rank's block.
  struct Case {
    CollectiveKind kind;
    ReduceKind reduce;
  };
  std::vector<Case> cases;
  for (CollectiveKind kind :
       {CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
        CollectiveKind::AllReduce, CollectiveKind::AllToAll,
        CollectiveKind::Permute})
    for (ReduceKind reduce :
         {ReduceKind::Sum, ReduceKind::Avg, ReduceKind::Max, ReduceKind::Min})
      cases.push_back({kind, reduce});

  // Traffic larger than the scratch, and not a multiple of 16: it cycles.
  const int64_t scratchBytes = 4096 + 16, trafficBytes = (1 << 20) + 8;
  std::vector<float> scratchInit =
      randomValues(DType::F32, scratchBytes / 4, 30);
  DeviceBuffer scratch(DType::F32, scratchInit);
  std::vector<uint8_t> scratchBits = scratch.download();

  for (const Case &c : cases) {
    for (DType type : {DType::BF16, DType::F32}) {
      for (int rank : {0, 2}) {
        for (int ctas : {0, 3}) {
          std::string what = std::string(collectiveKindName(c.kind)) +
                             " reduce " + std::to_string(int(c.reduce)) + " " +
                             name(type) + " rank " + std::to_string(rank) +
                             " ctas " + std::to_string(ctas);
          SCOPED_TRACE(what);
          int64_t inCount = block, outCount = block;
          switch (c.kind) {
          case CollectiveKind::AllGather:
            outCount = block * groupSize;
            break;
          case CollectiveKind::ReduceScatter:
            inCount = block * groupSize;
            break;
          case CollectiveKind::AllToAll:
            inCount = outCount = block * groupSize;
            break;
          default:
            break;
          }
          std::vector<float> in = randomValues(type, inCount, 31 + rank);
          DeviceBuffer dIn(type, in), dOut(outCount * typeBytes(type));
          std::vector<double> want(outCount);
          bool sum = c.reduce == ReduceKind::Sum;
          for (int64_t i = 0; i < outCount; ++i) {
            double v = 0;
            switch (c.kind) {
            case CollectiveKind::AllGather:
              v = in[i % inCount];
              break;
            case CollectiveKind::ReduceScatter:
              v = in[rank * outCount + i] * (sum ? groupSize : 1);
              break;
            case CollectiveKind::AllReduce:
              v = in[i] * (sum ? groupSize : 1);
              break;
            case CollectiveKind::AllToAll:
              v = in[rank * block + i % block];
              break;
            case CollectiveKind::Permute:
              v = in[i];
              break;
            }
            want[i] = roundTo(type, static_cast<float>(v));
          }
          ASSERT_TRUE(launchStandinCollective(
              c.kind, c.reduce, dIn.get(), inCount, dOut.get(), outCount, type,
              groupSize, rank, ctas, trafficBytes, scratch.get(), scratchBytes,
              stream, error))
              << error;
          expectClose(dOut.values(type), want, 0, 0, what);
          EXPECT_EQ(scratchBits, scratch.download())
              << "the traffic loop writes back what it read";
        }
      }
    }
  }

  // Traffic needs scratch.
  DeviceBuffer in(1024), out(1024);
  EXPECT_FALSE(launchStandinCollective(
      CollectiveKind::Permute, ReduceKind::Sum, in.get(), 256, out.get(), 256,
      DType::F32, 1, 0, 4, 1 << 20, nullptr, 0, stream, error));
  EXPECT_NE(error.find("scratch"), std::string::npos) << error;
  // In place (NCCL allows it for all-reduce).
  std::vector<float> values = randomValues(DType::F32, 256, 40);
  in.upload(encode(DType::F32, values));
  ASSERT_TRUE(launchStandinCollective(
      CollectiveKind::AllReduce, ReduceKind::Sum, in.get(), 256, in.get(), 256,
      DType::F32, 2, 1, 0, 0, nullptr, 0, stream, error))
      << error;
  std::vector<double> doubled(values.begin(), values.end());
  for (double &v : doubled)
    v *= 2;
  expectClose(in.values(DType::F32), doubled, 0, 0, "in-place all-reduce");
}

TEST_F(KernelsTest, CopyEngineCollectivesMatchTheSmEmulation) {
  // Bitwise the values of the SM-emulated collective (and so of the
  // stand-in), paced and unpaced, on the 16-byte pack path (1024-element
  // blocks) and the element path (301).
  const int groupSize = 4;
  DeviceBuffer scratch(1 << 20), slot(sizeof(uint64_t));
  for (CollectiveKind kind :
       {CollectiveKind::AllGather, CollectiveKind::ReduceScatter})
    for (ReduceKind reduce :
         {ReduceKind::Sum, ReduceKind::Avg, ReduceKind::Max, ReduceKind::Min})
      for (DType type : kTypes)
        for (int64_t block : {int64_t(301), int64_t(1024)})
          for (int rank : {0, 2}) {
            bool gather = kind == CollectiveKind::AllGather;
            std::string what = std::string(collectiveKindName(kind)) +
                               " reduce " + std::to_string(int(reduce)) + " " +
                               name(type) + " block " + std::to_string(block) +
                               " rank " + std::to_string(rank);
            SCOPED_TRACE(what);
            int64_t inCount = gather ? block : block * groupSize;
            int64_t outCount = gather ? block * groupSize : block;
            std::vector<float> in =
                randomValues(type, inCount, 50 + rank + block);
            DeviceBuffer dIn(type, in);
            int64_t outBytes = outCount * typeBytes(type);
            DeviceBuffer sm(outBytes), paced(outBytes), unpaced(outBytes);
            int64_t staging = emulatedStagingBytes(
                kind, inCount * typeBytes(type), groupSize);
            DeviceBuffer stage(staging);
            ASSERT_TRUE(launchEmulatedCollective(
                kind, reduce, dIn.get(), inCount, sm.get(), outCount, type,
                groupSize, rank, 0, staging, scratch.get(), scratch.bytes(),
                0.0, stream, error))
                << error;
            ASSERT_TRUE(launchCopyEngineCollective(
                kind, reduce, dIn.get(), inCount, paced.get(), outCount, type,
                groupSize, rank, stage.get(), staging,
                static_cast<uint64_t *>(slot.get()), 5.0, stream, error))
                << error;
            ASSERT_TRUE(launchCopyEngineCollective(
                kind, reduce, dIn.get(), inCount, unpaced.get(), outCount, type,
                groupSize, rank, stage.get(), staging, nullptr, -1.0, stream,
                error))
                << error;
            sync();
            std::vector<uint8_t> want = sm.download();
            EXPECT_EQ(paced.download(), want);
            EXPECT_EQ(unpaced.download(), want);
            // And the documented values.
            std::vector<double> expected(outCount);
            bool sum = reduce == ReduceKind::Sum;
            for (int64_t i = 0; i < outCount; ++i)
              expected[i] = roundTo(
                  type, gather ? in[i % block]
                               : static_cast<float>(in[rank * block + i] *
                                                    (sum ? groupSize : 1)));
            expectClose(paced.values(type), expected, 0, 0, what);
          }
}

TEST_F(KernelsTest, CopyEnginePermuteGivesTheSmPermutesValues) {
  // A P2P ring step on the copy engines: the input copied to the output,
  // paced and unpaced, bitwise the SM emulation's permute.
  const int groupSize = 8;
  DeviceBuffer scratch(1 << 20), slot(sizeof(uint64_t));
  for (DType type : kTypes)
    for (int64_t count : {int64_t(301), int64_t(4096)}) {
      SCOPED_TRACE(std::string(name(type)) + " " + std::to_string(count));
      std::vector<float> in = randomValues(type, count, 90 + count);
      DeviceBuffer dIn(type, in);
      int64_t bytes = count * typeBytes(type);
      DeviceBuffer sm(bytes), paced(bytes), unpaced(bytes);
      ASSERT_TRUE(launchEmulatedCollective(
          CollectiveKind::Permute, ReduceKind::Sum, dIn.get(), count, sm.get(),
          count, type, groupSize, 1, 0, 0, scratch.get(), scratch.bytes(), 0.0,
          stream, error))
          << error;
      ASSERT_TRUE(launchCopyEngineCollective(
          CollectiveKind::Permute, ReduceKind::Sum, dIn.get(), count,
          paced.get(), count, type, groupSize, 1, nullptr, 0,
          static_cast<uint64_t *>(slot.get()), 5.0, stream, error))
          << error;
      ASSERT_TRUE(launchCopyEngineCollective(
          CollectiveKind::Permute, ReduceKind::Sum, dIn.get(), count,
          unpaced.get(), count, type, groupSize, 1, nullptr, 0, nullptr, -1.0,
          stream, error))
          << error;
      sync();
      std::vector<uint8_t> want = sm.download();
      EXPECT_EQ(paced.download(), want);
      EXPECT_EQ(unpaced.download(), want);
    }
}

TEST_F(KernelsTest, CopyEngineCollectivesTakeTheirPaceAlone) {
  // An 8-rank all-gather of 8 MiB and reduce-scatter of 8 MiB paced to a
  // 500 us target, minus the launch offset the executor subtracts: alone,
  // event-timed, within 5% of the target.
  const double targetUs = 500;
  const int groupSize = 8;
  const int64_t blockBytes = 1 << 20, block = blockBytes / 2;
  DeviceBuffer offsetScratch(4 << 20);
  double offsetUs = 0;
  ASSERT_TRUE(measureEmulatedCollectiveOffset(
      stream, offsetScratch.get(), offsetScratch.bytes(), offsetUs, error))
      << error;
  DeviceBuffer in(groupSize * blockBytes), out(groupSize * blockBytes);
  DeviceBuffer stage((groupSize - 1) * blockBytes), slot(sizeof(uint64_t));
  ASSERT_TRUE(launchFill(in.get(), DType::BF16, groupSize * block, 7, 1.0f,
                         stream, error))
      << error;
  cudaEvent_t a, b;
  ASSERT_EQ(cudaEventCreate(&a), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&b), cudaSuccess);
  for (CollectiveKind kind :
       {CollectiveKind::AllGather, CollectiveKind::ReduceScatter}) {
    bool gather = kind == CollectiveKind::AllGather;
    std::vector<double> samples;
    for (int rep = 0; rep < 7; ++rep) {
      ASSERT_EQ(cudaEventRecord(a, stream), cudaSuccess);
      ASSERT_TRUE(launchCopyEngineCollective(
          kind, ReduceKind::Sum, in.get(), gather ? block : groupSize * block,
          out.get(), gather ? groupSize * block : block, DType::BF16, groupSize,
          0, stage.get(), stage.bytes(), static_cast<uint64_t *>(slot.get()),
          std::max(0.0, targetUs - offsetUs), stream, error))
          << error;
      ASSERT_EQ(cudaEventRecord(b, stream), cudaSuccess);
      ASSERT_EQ(cudaEventSynchronize(b), cudaSuccess);
      float ms = 0;
      ASSERT_EQ(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
      if (rep >= 2) // two warm-up repetitions
        samples.push_back(ms * 1000.0);
    }
    std::sort(samples.begin(), samples.end());
    double medianUs = samples[samples.size() / 2];
    EXPECT_NEAR(medianUs, targetUs, 0.05 * targetUs)
        << collectiveKindName(kind) << " alone (launch offset " << offsetUs
        << " us subtracted)";
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

//===----------------------------------------------------------------------===//
// Host-side logic (runs without a GPU)
//===----------------------------------------------------------------------===//

TEST(KernelsHostTest, CopyEngineCollectiveRejectsWhatItDoesNotTake) {
  // Every check happens before anything is enqueued, so this runs anywhere.
  std::string error;
  char dummy[64] = {};
  uint64_t *slot = reinterpret_cast<uint64_t *>(dummy);
  EXPECT_FALSE(launchCopyEngineCollective(
      CollectiveKind::AllReduce, ReduceKind::Sum, dummy, 4, dummy, 4,
      DType::F32, 2, 0, nullptr, 0, slot, 1.0, nullptr, error));
  EXPECT_NE(error.find("all_gather, reduce_scatter and permute only"),
            std::string::npos)
      << error;
  EXPECT_FALSE(launchCopyEngineCollective(
      CollectiveKind::AllGather, ReduceKind::Sum, dummy, 4, dummy, 4,
      DType::F32, 2, 0, nullptr, 0, slot, 1.0, nullptr, error));
  EXPECT_NE(error.find("expected out = groupSize * in"), std::string::npos)
      << error;
  EXPECT_FALSE(launchCopyEngineCollective(
      CollectiveKind::ReduceScatter, ReduceKind::Sum, dummy, 8, dummy, 2,
      DType::F32, 4, 0, dummy, 16, slot, 1.0, nullptr, error));
  EXPECT_NE(error.find("need 24 bytes of staging, got 16"), std::string::npos)
      << error;
  EXPECT_FALSE(launchCopyEngineCollective(
      CollectiveKind::AllGather, ReduceKind::Sum, dummy, 2, dummy, 4,
      DType::F32, 2, 0, nullptr, 0, nullptr, 1.0, nullptr, error));
  EXPECT_NE(error.find("timer slot"), std::string::npos) << error;
  EXPECT_FALSE(launchCopyEngineCollective(
      CollectiveKind::AllGather, ReduceKind::Sum, dummy, 2, dummy, 4,
      DType::F32, 2, 2, nullptr, 0, nullptr, -1.0, nullptr, error));
  EXPECT_NE(error.find("rank 2 is not in a group of 2"), std::string::npos)
      << error;
}

TEST(KernelsHostTest, OpaqueTrafficAddsUpToDeclaredBytes) {
  int64_t inputBytes[] = {2000, 1332};
  int64_t outputBytes[] = {777 * 4, 2048 * 2};
  DType outputTypes[] = {DType::F32, DType::BF16};
  // Generation: both outputs once, plus the input-0 words they read
  // (min(count, 1000 words) each).
  int64_t generate = 777 * 4 + 2 * 777 + 2048 * 2 + 2 * 1000;
  detail::OpaqueTraffic traffic = detail::planOpaqueTraffic(
      inputBytes, 2, outputBytes, outputTypes, 2, 64 << 20);
  EXPECT_EQ(traffic.generateBytes, generate);
  EXPECT_EQ(traffic.sweepBytes, ((64 << 20) - generate) / 16 * 16);
  EXPECT_LE((64 << 20) - (traffic.generateBytes + traffic.sweepBytes), 15);
  // Declared less than the outputs: each output is still written once.
  traffic = detail::planOpaqueTraffic(inputBytes, 2, outputBytes, outputTypes,
                                      2, 100);
  EXPECT_EQ(traffic.generateBytes, generate);
  EXPECT_EQ(traffic.sweepBytes, 0);
  // No inputs: outputs written once, no reads of input 0.
  traffic = detail::planOpaqueTraffic(nullptr, 0, outputBytes, outputTypes, 2,
                                      1 << 20);
  EXPECT_EQ(traffic.generateBytes, 777 * 4 + 2048 * 2);
}

TEST(KernelsHostTest, Copy2DUsesTheWidestWordAndOneWaveOfCtas) {
  using detail::copyWordBytes;
  EXPECT_EQ(copyWordBytes(0, 8192, 0, 4096, 4096), 16);
  EXPECT_EQ(copyWordBytes(8, 8192, 0, 4096, 4096), 8);
  EXPECT_EQ(copyWordBytes(0, 8192, 0, 4096, 4100), 4);
  EXPECT_EQ(copyWordBytes(0, 8192, 2, 4096, 4096), 2);
  EXPECT_EQ(copyWordBytes(0, 8191, 0, 4096, 4096), 1);
  // A 64 MiB copy of 16 KiB rows (1024 words of 16 bytes) on 132 SMs: full
  // CTAs of 256 threads across the row, one wave (8 CTAs an SM) in all.
  detail::CopyGrid big = detail::planCopy2D(1024, 4096, 132);
  EXPECT_EQ(big.threadsX, 256);
  EXPECT_EQ(big.threadsY, 1);
  EXPECT_EQ(big.blocksX, 1); // 256 threads x 4 words cover the row
  EXPECT_EQ(big.blocksY, 132 * 8);
  // Narrow rows share a CTA: 3 words a row take 32 threads, 8 rows a CTA.
  detail::CopyGrid narrow = detail::planCopy2D(3, 100, 132);
  EXPECT_EQ(narrow.threadsX, 32);
  EXPECT_EQ(narrow.threadsY, 8);
  EXPECT_EQ(narrow.blocksY, 13);
  // One wide row spreads over CTAs; never more than one wave.
  detail::CopyGrid wide = detail::planCopy2D(int64_t(1) << 30, 1, 132);
  EXPECT_EQ(wide.blocksX, 132 * 8);
  EXPECT_EQ(wide.blocksY, 1);
  // gridDim.y stays within CUDA's limit.
  EXPECT_LE(detail::planCopy2D(1, int64_t(1) << 40, 1 << 20).blocksY, 65535);
}

TEST(KernelsHostTest, ScratchSizesCoverTheirBuffers) {
  EXPECT_EQ(normGradScratchBytes(0, 64), 0);
  // (mean, rstd) per row + at most 256 partial rows of dw (one per fused
  // CTA, rows of at least 4).
  EXPECT_GE(normGradScratchBytes(37, 64), 37 * 8 + 2 * 64 * 4);
  EXPECT_EQ(normGradScratchBytes(37, 64), 512 + 10 * 64 * 4);
  EXPECT_LE(normGradScratchBytes(1 << 20, 64),
            (1 << 20) * 8 + 256 + 256 * 64 * 4);
  AttentionArgs args;
  args.seq = 16;
  args.heads = 4;
  args.kvHeads = 2;
  args.headDim = 8;
  args.type = DType::BF16;
  // All 4 heads in one batch: fp32 scores (P over them in place); backward:
  // rowDot, two score buffers, fp32 dK / dV of the 2 kv heads (GQA).
  EXPECT_EQ(attentionScratchBytes(args), 4 * 16 * 16 * 4);
  EXPECT_EQ(attentionGradScratchBytes(args),
            256 + 2 * 4 * 16 * 16 * 4 + 2 * 2 * 16 * 8 * 4);
  args.kvHeads = 4; // No GQA: dK / dV go straight to dqkv.
  EXPECT_EQ(attentionGradScratchBytes(args), 256 + 2 * 4 * 16 * 16 * 4);

  // The fused backward's dK/dV parts: the smallest divisor of the GQA
  // group that gives 512 CTAs of 64 keys, or the whole group; their f32
  // partials come after rowDot and the LSE.
  AttentionArgs gqa;
  gqa.type = DType::BF16;
  gqa.headDim = 128;
  gqa.causal = true;
  gqa.seq = 4096;
  gqa.heads = 8; // llama3-70b at TP=8: one kv head, 64 key blocks
  gqa.kvHeads = 1;
  EXPECT_EQ(fusedAttentionGradSplits(gqa), 8);
  EXPECT_EQ(fusedAttentionGradScratchBytes(gqa),
            2 * (8 * 4096 * 4) + 8 * 2 * 1 * 4096 * 128 * 4);
  gqa.heads = 64; // llama3-70b at TP=1: 8 x 64 = 512 CTAs already
  gqa.kvHeads = 8;
  EXPECT_EQ(fusedAttentionGradSplits(gqa), 1);
  EXPECT_EQ(fusedAttentionGradScratchBytes(gqa), 2 * (64 * 4096 * 4));
  gqa.heads = 32; // llama3-8b at s2048: 8 x 32 = 256 CTAs, two parts
  gqa.seq = 2048;
  EXPECT_EQ(fusedAttentionGradSplits(gqa), 2);
  gqa.heads = 12; // no GQA: nothing to split
  gqa.kvHeads = 12;
  gqa.seq = 128;
  EXPECT_EQ(fusedAttentionGradSplits(gqa), 1);

  // llama3-8b: all heads in one batch at seq 1024; ~1 GiB at seq 8192.
  args.heads = 32;
  args.kvHeads = 8;
  args.headDim = 128;
  args.seq = 1024;
  EXPECT_EQ(detail::attentionBatching(args, false).headsPerBatch(), 32);
  EXPECT_EQ(detail::attentionBatching(args, true).headsPerBatch(), 32);
  args.seq = 8192;
  for (bool backward : {false, true}) {
    detail::AttentionBatching batching =
        detail::attentionBatching(args, backward);
    EXPECT_GE(batching.headsPerBatch(), 1);
    EXPECT_LE(batching.kvPerBatch, args.kvHeads);
    EXPECT_LE(batching.groupPerBatch, args.heads / args.kvHeads);
  }
  EXPECT_LE(attentionScratchBytes(args), int64_t(1) << 30);
  EXPECT_LE(attentionGradScratchBytes(args), (int64_t(1) << 30) + (32 << 20));
  // The test cap bounds the batch, and the scratch shrinks with it.
  int64_t full = attentionGradScratchBytes(args);
  detail::setAttentionMaxHeadsPerBatch(1);
  EXPECT_EQ(detail::attentionBatching(args, true).headsPerBatch(), 1);
  EXPECT_LT(attentionGradScratchBytes(args), full);
  detail::setAttentionMaxHeadsPerBatch(0);
  // Invalid arguments need no scratch (the launch rejects them).
  args.kvHeads = 3;
  EXPECT_EQ(attentionScratchBytes(args), 0);
}

TEST(KernelsHostTest, AttentionQueriesSizeScratchAndFlops) {
  AttentionArgs args;
  args.seq = 16;
  args.heads = 4;
  args.kvHeads = 2;
  args.headDim = 8;
  args.type = DType::BF16;
  EXPECT_EQ(args.queryRows(), 16);
  int64_t fullScores = attentionScratchBytes(args);
  int64_t fullLse = fusedAttentionLseBytes(args);
  args.queries = 8;
  EXPECT_EQ(args.queryRows(), 8);
  // 8 x 16 fp32 scores per head, 8 LSE rows per head.
  EXPECT_EQ(attentionScratchBytes(args), 4 * 8 * 16 * 4);
  EXPECT_EQ(attentionScratchBytes(args) * 2, fullScores);
  EXPECT_EQ(fusedAttentionLseBytes(args), 4 * 8 * 4);
  EXPECT_EQ(fusedAttentionLseBytes(args) * 2, fullLse);
  args.queries = 16; // every row spelled out
  EXPECT_EQ(attentionScratchBytes(args), fullScores);

  // 4 * heads * headDim per visible pair; causal: N * (S - N) + N^2 / 2,
  // S^2 / 2 for the full square, as the cost model counts.
  args.queries = 0;
  EXPECT_DOUBLE_EQ(attentionForwardFlops(args), 4.0 * 16 * 16 * 8 * 4);
  args.causal = true;
  EXPECT_DOUBLE_EQ(attentionForwardFlops(args), 4.0 * (16 * 16 / 2) * 8 * 4);
  args.queries = 16;
  EXPECT_DOUBLE_EQ(attentionForwardFlops(args), 4.0 * (16 * 16 / 2) * 8 * 4);
  args.queries = 4;
  EXPECT_DOUBLE_EQ(attentionForwardFlops(args),
                   4.0 * (4 * 12 + 4 * 4 / 2) * 8 * 4);
  args.causal = false;
  EXPECT_DOUBLE_EQ(attentionForwardFlops(args), 4.0 * 4 * 16 * 8 * 4);
  args.queries = 17;
  EXPECT_EQ(attentionForwardFlops(args), 0.0);
  EXPECT_EQ(attentionScratchBytes(args), 0);

  // Out of range: refused by every path, naming the field; the backward
  // launches refuse any query rows (before touching the device).
  std::string reason, error;
  AttentionArgs fused = args;
  fused.headDim = 64;
  EXPECT_FALSE(fusedAttentionSupported(fused, reason));
  EXPECT_EQ(reason, "queries 17 outside [0, 16] (the rows of qkv)");
  fused.queries = 16;
  EXPECT_TRUE(fusedAttentionSupported(fused, reason)) << reason;
  args.queries = -1;
  BlasContext blas;
  char dummy[16] = {};
  EXPECT_FALSE(
      launchAttention(blas, args, dummy, dummy, dummy, nullptr, error));
  EXPECT_EQ(error, "launchAttention: queries -1 outside [0, 16] (the rows of "
                   "qkv)");
  args.queries = 8;
  EXPECT_FALSE(launchAttentionGrad(blas, args, dummy, dummy, dummy, dummy,
                                   dummy, nullptr, error));
  EXPECT_EQ(error, "launchAttentionGrad: queries 8 applies to the attention "
                   "forward only (the backward takes every row of qkv as a "
                   "query)");
  args.headDim = 64;
  alignas(16) char aligned[16] = {};
  EXPECT_FALSE(launchFusedAttentionGrad(args, aligned, aligned, aligned,
                                        nullptr, aligned, aligned, nullptr,
                                        error));
  EXPECT_EQ(error, "launchFusedAttentionGrad: queries 8 applies to the "
                   "attention forward only (the backward takes every row of "
                   "qkv as a query)");
}

TEST(KernelsHostTest, InvalidArgumentsAreRejectedWithMessages) {
  std::string error;
  AttentionArgs args;
  args.seq = 16;
  args.heads = 3;
  args.kvHeads = 2;
  args.headDim = 8;
  BlasContext blas;
  char dummy[16] = {};
  EXPECT_FALSE(
      launchAttention(blas, args, dummy, dummy, dummy, nullptr, error));
  EXPECT_NE(error.find("multiple"), std::string::npos) << error;

  MatmulArgs matmul;
  matmul.m = matmul.n = matmul.k = 4;
  EXPECT_FALSE(launchMatmul(blas, matmul, dummy, dummy, dummy, nullptr, error));
  EXPECT_NE(error.find("handle"), std::string::npos) << error;

  EXPECT_FALSE(launchElementwise(ElementwiseKind::SwigluGrad, dummy,
                                 DType::BF16, dummy, DType::BF16, dummy,
                                 DType::BF16, 2, 3, nullptr, error));
  EXPECT_NE(error.find("odd"), std::string::npos) << error;

  EXPECT_FALSE(launchStandinCollective(
      CollectiveKind::AllGather, ReduceKind::Sum, dummy, 4, dummy, 4,
      DType::F32, 2, 0, 0, 0, nullptr, 0, nullptr, error));
  EXPECT_NE(error.find("expected"), std::string::npos) << error;
  EXPECT_FALSE(launchStandinCollective(CollectiveKind::Permute, ReduceKind::Sum,
                                       dummy, 4, dummy, 4, DType::F32, 2, 2, 0,
                                       0, nullptr, 0, nullptr, error));
  EXPECT_NE(error.find("rank"), std::string::npos) << error;
}

} // namespace

TEST(KernelsHostTest, CopyEnginePermuteRejectsMismatchedCounts) {
  std::string error;
  char dummy[64] = {};
  uint64_t *slot = reinterpret_cast<uint64_t *>(dummy);
  EXPECT_FALSE(launchCopyEngineCollective(
      CollectiveKind::Permute, ReduceKind::Sum, dummy, 4, dummy, 8, DType::F32,
      2, 0, nullptr, 0, slot, 1.0, nullptr, error));
  EXPECT_NE(error.find("same element count"), std::string::npos) << error;
  EXPECT_FALSE(launchCopyEngineCollective(
      CollectiveKind::Permute, ReduceKind::Sum, dummy, 4, dummy, 4, DType::F32,
      2, 0, nullptr, 0, nullptr, 1.0, nullptr, error));
  EXPECT_NE(error.find("pacing needs a timer slot"), std::string::npos)
      << error;
}
