//===- tandem-attention-bench.cpp - Time the attention kernels ------------===//
//
// Times Tandem's attention forward and backward (the fused kernels of
// FlashAttention.cu, and optionally the unfused cuBLASLt + softmax path and
// cuDNN's fused attention where the runtime was built with it) on
// the packed qkv layout of tandem.attention, for one or more shapes, and
// writes the medians as JSON. Inputs are random (launchFill, uniform in
// +-1), never zeros. Each measurement is one launch sequence between two CUDA
// events after warm-up; the median over --iters is reported. The backward
// time includes its D = rowsum(dO * O) pre-pass; the fused backward reads the
// LSE its forward saved, as the executor arranges.
//
// FLOPs follow the cost model (attentionForwardFlops): forward 4 * seq^2 *
// headDim * heads (half of it when causal), backward 2.5x the forward. A
// case with QUERIES = N times the forward of the last N rows as queries
// against all SEQ keys (4 * (N * (SEQ - N) + N^2 / 2) * headDim * heads
// when causal, N * SEQ pairs when not) and has no backward.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/CudnnAttention.h"
#include "tandem/runtime/Kernels.h"
#include "tandem/runtime/ToolSupport.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace tandem::runtime;

namespace {

constexpr int kExitUsage = 2;

void printHelp() {
  std::puts(
      "usage: tandem-attention-bench --case "
      "NAME:SEQ:HEADS:KV:DIM:CAUSAL[:TYPE[:QUERIES]]...\n"
      "                              [--impl IMPL[,IMPL...]] [--iters N]\n"
      "                              [--warmup N] [--json FILE] [--device D]\n"
      "\n"
      "Times attention forward and backward on each case (CAUSAL 0 or 1,\n"
      "TYPE bf16 (default) or f16; QUERIES N > 0: only the last N of the\n"
      "SEQ rows are queries, forward only) and prints one line per case and\n"
      "implementation. IMPL: fused (default), unfused, cudnn (cuDNN's fused\n"
      "attention, deterministic backward), cudnn-nondeterministic, or both\n"
      "(fused,unfused). Exit codes: 0 success, 1 CUDA error, 2 usage (also\n"
      "an implementation this build or cuDNN does not have).");
}

struct Case {
  std::string name;
  AttentionArgs args;
};

bool parseCase(const std::string &text, Case &c) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, ':');)
    parts.push_back(p);
  if (parts.size() < 6 || parts.size() > 8)
    return false;
  c.name = parts[0];
  char *end = nullptr;
  long long v[5];
  for (int i = 0; i < 5; ++i) {
    v[i] = std::strtoll(parts[i + 1].c_str(), &end, 10);
    if (!end || *end || v[i] < 0)
      return false;
  }
  c.args.seq = v[0];
  c.args.heads = v[1];
  c.args.kvHeads = v[2];
  c.args.headDim = v[3];
  c.args.causal = v[4] != 0;
  c.args.type = DType::BF16;
  if (parts.size() >= 7) {
    if (parts[6] == "f16")
      c.args.type = DType::F16;
    else if (parts[6] != "bf16")
      return false;
  }
  if (parts.size() == 8) {
    c.args.queries = std::strtoll(parts[7].c_str(), &end, 10);
    if (!end || *end || c.args.queries < 0 || c.args.queries > c.args.seq)
      return false;
  }
  return c.args.seq > 0 && c.args.heads > 0 && c.args.kvHeads > 0 &&
         c.args.headDim > 0 && c.args.heads % c.args.kvHeads == 0;
}

bool cuda(cudaError_t e, const char *what) {
  if (e == cudaSuccess)
    return true;
  std::fprintf(stderr, "tandem-attention-bench: %s: %s\n", what,
               cudaGetErrorString(e));
  return false;
}

struct Timing {
  double fwdUs = 0, bwdUs = 0;
};

/// Median time of `iters` runs of `launch` (after `warmup`), in us.
template <typename F>
bool timeIt(F &&launch, int warmup, int iters, cudaStream_t stream,
            double &us) {
  cudaEvent_t a, b;
  if (!cuda(cudaEventCreate(&a), "cudaEventCreate") ||
      !cuda(cudaEventCreate(&b), "cudaEventCreate"))
    return false;
  std::vector<double> samples;
  bool ok = true;
  for (int i = 0; i < warmup + iters && ok; ++i) {
    ok &= cuda(cudaEventRecord(a, stream), "cudaEventRecord");
    ok &= launch();
    ok &= cuda(cudaEventRecord(b, stream), "cudaEventRecord") &&
          cuda(cudaEventSynchronize(b), "kernel execution");
    float ms = 0;
    ok &= cuda(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    if (i >= warmup)
      samples.push_back(ms * 1000.0);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  us = median(samples);
  return ok;
}

/// `cudnn` set: cuDNN's attention (graphs prepared); else `fused` picks
/// Tandem's fused kernels or the unfused path. A case with `queries` times
/// the forward only (t.bwdUs stays 0).
bool runCase(const Case &c, bool fused, CudnnAttention *cudnn, int warmup,
             int iters, cudaStream_t stream, BlasContext &blas, Timing &t) {
  const AttentionArgs &a = c.args;
  bool backward = a.queries == 0;
  int64_t width = (a.heads + 2 * a.kvHeads) * a.headDim;
  int64_t qkvBytes = a.seq * width * dtypeBytes(a.type);
  int64_t outBytes = a.queryRows() * a.heads * a.headDim * dtypeBytes(a.type);
  // cuDNN: s1 holds the LSE, s2 the larger of the two workspaces.
  int64_t fwdScratch =
      cudnn || fused ? fusedAttentionLseBytes(a) : attentionScratchBytes(a);
  int64_t bwdScratch =
      cudnn       ? std::max<int64_t>(std::max(cudnn->workspaceBytes(a, false),
                                               cudnn->workspaceBytes(a, true)),
                                      1)
      : !backward ? 1
      : fused     ? fusedAttentionGradScratchBytes(a)
                  : attentionGradScratchBytes(a);
  void *qkv = nullptr, *out = nullptr, *dout = nullptr, *dqkv = nullptr,
       *s1 = nullptr, *s2 = nullptr;
  bool ok = cuda(cudaMalloc(&qkv, qkvBytes), "cudaMalloc") &&
            cuda(cudaMalloc(&dqkv, qkvBytes), "cudaMalloc") &&
            cuda(cudaMalloc(&out, outBytes), "cudaMalloc") &&
            cuda(cudaMalloc(&dout, outBytes), "cudaMalloc") &&
            cuda(cudaMalloc(&s1, fwdScratch), "cudaMalloc") &&
            cuda(cudaMalloc(&s2, bwdScratch), "cudaMalloc");
  std::string error;
  if (ok)
    ok = launchFill(qkv, a.type, qkvBytes / dtypeBytes(a.type), 1, 1.0f, stream,
                    error) &&
         launchFill(dout, a.type, outBytes / dtypeBytes(a.type), 2, 1.0f,
                    stream, error);
  auto fwd = [&] {
    bool r = cudnn   ? cudnn->forward(a, qkv, out, static_cast<float *>(s1), s2,
                                      stream, error)
             : fused ? launchFusedAttention(
                           a, qkv, out, static_cast<float *>(s1), stream, error)
                     : launchAttention(blas, a, qkv, out, s1, stream, error);
    if (!r)
      std::fprintf(stderr, "tandem-attention-bench: %s\n", error.c_str());
    return r;
  };
  auto bwd = [&] {
    bool r = cudnn
                 ? cudnn->backward(a, dout, qkv, out, static_cast<float *>(s1),
                                   dqkv, s2, stream, error)
             : fused ? launchFusedAttentionGrad(a, dout, qkv, out,
                                                static_cast<float *>(s1), dqkv,
                                                s2, stream, error)
                     : launchAttentionGrad(blas, a, dout, qkv, out, dqkv, s2,
                                           stream, error);
    if (!r)
      std::fprintf(stderr, "tandem-attention-bench: %s\n", error.c_str());
    return r;
  };
  ok = ok && timeIt(fwd, warmup, iters, stream, t.fwdUs) &&
       (!backward || timeIt(bwd, warmup, iters, stream, t.bwdUs));
  for (void *p : {qkv, out, dout, dqkv, s1, s2})
    if (p)
      cudaFree(p);
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<Case> cases;
  std::vector<std::string> impls = {"fused"};
  std::string jsonPath;
  int iters = 20, warmup = 5, device = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tandem-attention-bench: %s needs a value\n",
                     a.c_str());
        return nullptr;
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      printHelp();
      return 0;
    }
    const char *v = value();
    if (!v)
      return kExitUsage;
    if (a == "--case") {
      Case c;
      if (!parseCase(v, c)) {
        std::fprintf(stderr, "tandem-attention-bench: bad --case '%s'\n", v);
        return kExitUsage;
      }
      cases.push_back(c);
    } else if (a == "--impl") {
      impls.clear();
      std::stringstream ss(std::string(v) == "both" ? "fused,unfused" : v);
      for (std::string p; std::getline(ss, p, ',');) {
        if (p != "fused" && p != "unfused" && p != "cudnn" &&
            p != "cudnn-nondeterministic") {
          std::fprintf(stderr,
                       "tandem-attention-bench: bad --impl '%s' (fused, "
                       "unfused, cudnn, cudnn-nondeterministic or both)\n",
                       p.c_str());
          return kExitUsage;
        }
        impls.push_back(p);
      }
    } else if (a == "--iters" || a == "--warmup" || a == "--device") {
      int n = std::atoi(v);
      if (n < (a == "--iters" ? 1 : 0)) {
        std::fprintf(stderr, "tandem-attention-bench: bad %s '%s'\n", a.c_str(),
                     v);
        return kExitUsage;
      }
      (a == "--iters" ? iters : a == "--warmup" ? warmup : device) = n;
    } else if (a == "--json") {
      jsonPath = v;
    } else {
      std::fprintf(stderr, "tandem-attention-bench: unknown option '%s'\n",
                   a.c_str());
      return kExitUsage;
    }
  }
  if (cases.empty()) {
    std::fprintf(stderr, "tandem-attention-bench: no --case given\n");
    return kExitUsage;
  }
  if (!cuda(cudaSetDevice(device), "cudaSetDevice"))
    return 1;
  cudaDeviceProp prop;
  if (!cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties"))
    return 1;
  cudaStream_t stream;
  if (!cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            "cudaStreamCreate"))
    return 1;
  BlasContext blas;
  if (cublasLtCreate(&blas.handle) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "tandem-attention-bench: cublasLtCreate failed\n");
    return 1;
  }
  blas.workspaceBytes = 64ll << 20;
  if (!cuda(cudaMalloc(&blas.workspace, blas.workspaceBytes), "cudaMalloc"))
    return 1;

  // cuDNN handles by determinism, created on first use.
  std::unique_ptr<CudnnAttention> cudnnByMode[2];
  std::ostringstream json;
  json << "{\n \"tool\": \"tandem-attention-bench\",\n \"device\": \""
       << prop.name << "\",\n \"sm_count\": " << prop.multiProcessorCount
       << ",\n \"cudnn_version\": " << cudnnAttentionLibraryVersion()
       << ",\n \"iters\": " << iters << ",\n \"warmup\": " << warmup
       << ",\n \"results\": [";
  bool first = true;
  for (const Case &c : cases) {
    const AttentionArgs &a = c.args;
    double fwdFlops = attentionForwardFlops(a);
    bool backward = a.queries == 0;
    for (const std::string &implName : impls) {
      bool fused = implName == "fused";
      std::string reason;
      CudnnAttention *cudnn = nullptr;
      if (implName.compare(0, 5, "cudnn") == 0) {
        bool deterministic = implName == "cudnn";
        std::unique_ptr<CudnnAttention> &handle = cudnnByMode[deterministic];
        if (!handle &&
            !(handle = CudnnAttention::create(deterministic, reason))) {
          std::fprintf(stderr, "tandem-attention-bench: %s\n", reason.c_str());
          return kExitUsage;
        }
        cudnn = handle.get();
        if (!cudnn->prepare(a, false, reason) ||
            (backward && !cudnn->prepare(a, true, reason))) {
          std::fprintf(stderr, "tandem-attention-bench: %s: %s: %s\n",
                       c.name.c_str(), implName.c_str(), reason.c_str());
          return kExitUsage;
        }
      }
      if (fused && !fusedAttentionSupported(a, reason)) {
        std::fprintf(stderr, "tandem-attention-bench: %s: fused: %s\n",
                     c.name.c_str(), reason.c_str());
        return kExitUsage;
      }
      Timing t;
      if (!runCase(c, fused, cudnn, warmup, iters, stream, blas, t))
        return 1;
      if (backward)
        std::printf("%-24s %-8s fwd %9.1f us (%6.1f TF/s)  bwd %9.1f us "
                    "(%6.1f TF/s)  fwd+bwd %9.1f us\n",
                    c.name.c_str(), implName.c_str(), t.fwdUs,
                    fwdFlops / t.fwdUs * 1e-6, t.bwdUs,
                    2.5 * fwdFlops / t.bwdUs * 1e-6, t.fwdUs + t.bwdUs);
      else
        std::printf("%-24s %-8s fwd %9.1f us (%6.1f TF/s)  (last %lld rows "
                    "queries: no backward)\n",
                    c.name.c_str(), implName.c_str(), t.fwdUs,
                    fwdFlops / t.fwdUs * 1e-6,
                    static_cast<long long>(a.queries));
      json << (first ? "" : ",") << "\n  {\"case\": \"" << c.name
           << "\", \"impl\": \"" << implName << "\", \"seq\": " << a.seq;
      if (!backward)
        json << ", \"queries\": " << a.queries;
      json << ", \"heads\": " << a.heads << ", \"kv_heads\": " << a.kvHeads
           << ", \"head_dim\": " << a.headDim
           << ", \"causal\": " << (a.causal ? "true" : "false")
           << ", \"type\": \"" << dtypeName(a.type)
           << "\", \"fwd_us\": " << t.fwdUs << ", \"bwd_us\": ";
      if (backward)
        json << t.bwdUs;
      else
        json << "null";
      json << ", \"fwd_flops\": " << fwdFlops << "}";
      first = false;
    }
  }
  json << "\n ]\n}\n";
  if (!jsonPath.empty()) {
    std::ofstream out(jsonPath);
    out << json.str();
    if (!out) {
      std::fprintf(stderr, "tandem-attention-bench: cannot write '%s'\n",
                   jsonPath.c_str());
      return 1;
    }
  }
  cudaFree(blas.workspace);
  cublasLtDestroy(blas.handle);
  cudaStreamDestroy(stream);
  return 0;
}
