//===- tandem-fabric-bench.cpp - Emulated collectives alone vs target -----===//
//
// For each collective kind, power-of-two size and CTA budget, launches the
// emulated fabric's collective (launchEmulatedCollective) alone on one GPU
// and compares its event-timed duration with its target, as tandem-run
// --emulate-fabric would pace it: the target is latency + bus bytes / rate
// (nccl-tests' busbw convention: all-gather and reduce-scatter (n-1)/n of
// the size, all-reduce 2(n-1)/n, permute the size), the pace the target minus
// the launch offset measured the way the executor measures it; each time is
// that of --iters back-to-back launches (the host running ahead, as in a
// plan) divided by --iters, median of three repetitions. Sizes are the
// cost model's payload (all-gather output, reduce-scatter input, all-reduce
// and permute buffer). Data are random bf16. Prints a table and writes JSON.
// EMULATION: no communication happens.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Kernels.h"
#include "tandem/runtime/ToolSupport.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace tandem::runtime;

namespace {

bool cuda(cudaError_t e, const char *what) {
  if (e == cudaSuccess)
    return true;
  std::fprintf(stderr, "tandem-fabric-bench: %s: %s\n", what,
               cudaGetErrorString(e));
  return false;
}

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string p; std::getline(ss, p, ',');)
    out.push_back(p);
  return out;
}

bool parseKind(const std::string &name, CollectiveKind &kind) {
  for (CollectiveKind k :
       {CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
        CollectiveKind::AllReduce, CollectiveKind::AllToAll,
        CollectiveKind::Permute})
    if (name == collectiveKindName(k)) {
      kind = k;
      return true;
    }
  return false;
}

int64_t busBytes(CollectiveKind kind, int64_t size, int n) {
  switch (kind) {
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll:
    return size * (n - 1) / n;
  case CollectiveKind::AllReduce:
    return 2 * size * (n - 1) / n;
  case CollectiveKind::Permute:
    return size;
  }
  return size;
}

} // namespace

int main(int argc, char **argv) {
  double gbps = 360, latencyUs = 14;
  int group = 8, iters = 10, warmup = 3;
  int64_t minBytes = 1ll << 20, maxBytes = 1ll << 30;
  std::string kinds = "all_gather,reduce_scatter,all_reduce,permute";
  std::string ctasList = "24", jsonPath;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help") {
      std::puts("usage: tandem-fabric-bench [--gbps G] [--latency-us L] "
                "[--group N] [--ctas C[,C]] [--collectives K[,K]]\n"
                "       [--min-bytes B] [--max-bytes B] [--iters N] "
                "[--warmup N] [--json FILE]");
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "tandem-fabric-bench: %s needs a value\n",
                   a.c_str());
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--gbps")
      gbps = std::atof(v.c_str());
    else if (a == "--latency-us")
      latencyUs = std::atof(v.c_str());
    else if (a == "--group")
      group = std::atoi(v.c_str());
    else if (a == "--ctas")
      ctasList = v;
    else if (a == "--collectives")
      kinds = v;
    else if (a == "--min-bytes")
      minBytes = std::atoll(v.c_str());
    else if (a == "--max-bytes")
      maxBytes = std::atoll(v.c_str());
    else if (a == "--iters")
      iters = std::atoi(v.c_str());
    else if (a == "--warmup")
      warmup = std::atoi(v.c_str());
    else if (a == "--json")
      jsonPath = v;
    else {
      std::fprintf(stderr, "tandem-fabric-bench: unknown option '%s'\n",
                   a.c_str());
      return 2;
    }
  }
  if (!(gbps > 0) || latencyUs < 0 || group < 2 || iters < 1 || minBytes < 1 ||
      maxBytes < minBytes) {
    std::fprintf(stderr, "tandem-fabric-bench: bad arguments\n");
    return 2;
  }
  cudaStream_t stream;
  cudaDeviceProp prop;
  if (!cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties") ||
      !cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            "cudaStreamCreate"))
    return 1;
  // Buffers for the largest case: in and out of maxBytes, 64 MiB of
  // staging scratch (the executor's per-stream size).
  const int64_t scratchBytes = 64ll << 20;
  void *in = nullptr, *out = nullptr, *scratch = nullptr;
  std::string error;
  if (!cuda(cudaMalloc(&in, maxBytes), "cudaMalloc") ||
      !cuda(cudaMalloc(&out, maxBytes), "cudaMalloc") ||
      !cuda(cudaMalloc(&scratch, scratchBytes), "cudaMalloc"))
    return 1;
  if (!launchFill(in, DType::BF16, maxBytes / 2, 3, 1.0f, stream, error) ||
      !launchFill(scratch, DType::BF16, scratchBytes / 2, 4, 1.0f, stream,
                  error)) {
    std::fprintf(stderr, "tandem-fabric-bench: %s\n", error.c_str());
    return 1;
  }
  cudaEvent_t a, b;
  if (!cuda(cudaEventCreate(&a), "cudaEventCreate") ||
      !cuda(cudaEventCreate(&b), "cudaEventCreate"))
    return 1;
  // Per-collective time of `iters` back-to-back launches between two events
  // (the host runs ahead, as in a plan), median over `reps` repetitions
  // after one warm-up repetition.
  auto timeBackToBack = [&](auto &&launch, double &us) {
    std::vector<double> samples;
    for (int rep = 0; rep < warmup + 3; ++rep) {
      if (!cuda(cudaEventRecord(a, stream), "cudaEventRecord"))
        return false;
      for (int i = 0; i < iters; ++i)
        if (!launch())
          return false;
      if (!cuda(cudaEventRecord(b, stream), "cudaEventRecord") ||
          !cuda(cudaEventSynchronize(b), "kernel execution"))
        return false;
      float ms = 0;
      if (!cuda(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime"))
        return false;
      if (rep >= warmup)
        samples.push_back(ms * 1000.0 / iters);
    }
    us = median(samples);
    return true;
  };
  double offsetUs = 0;
  if (!measureEmulatedCollectiveOffset(stream, scratch, scratchBytes,
                                       offsetUs, error)) {
    std::fprintf(stderr, "tandem-fabric-bench: %s\n", error.c_str());
    return 1;
  }


  std::ostringstream json;
  json << "{\n \"tool\": \"tandem-fabric-bench\",\n \"what\": \"EMULATED "
          "fabric: each collective alone vs its target (no communication)\",\n"
       << " \"device\": \"" << prop.name << "\",\n \"group\": " << group
       << ",\n \"gbps\": " << gbps << ",\n \"latency_us\": " << latencyUs
       << ",\n \"launch_offset_us\": " << offsetUs << ",\n \"iters\": "
       << iters << ",\n \"results\": [";
  std::printf("EMULATED fabric (no communication) on %s: group %d, target = "
              "%.1f us + bus bytes / %.0f GB/s; launch offset %.2f us\n",
              prop.name, group, latencyUs, gbps, offsetUs);
  std::printf("%-15s %5s %12s %12s %12s %8s\n", "collective", "ctas", "bytes",
              "target us", "measured us", "error");
  bool first = true;
  double worst = 0;
  for (const std::string &kindName : split(kinds)) {
    CollectiveKind kind;
    if (!parseKind(kindName, kind)) {
      std::fprintf(stderr, "tandem-fabric-bench: unknown collective '%s'\n",
                   kindName.c_str());
      return 2;
    }
    for (const std::string &c : split(ctasList)) {
      int ctas = std::atoi(c.c_str());
      for (int64_t size = minBytes; size <= maxBytes; size *= 2) {
        int64_t count = size / 2; // bf16 elements
        int64_t inCount = count, outCount = count;
        if (kind == CollectiveKind::AllGather)
          inCount = count / group;
        if (kind == CollectiveKind::ReduceScatter)
          outCount = count / group;
        double target = latencyUs + busBytes(kind, size, group) / (gbps * 1e3);
        double pace = std::max(0.0, target - offsetUs);
        int64_t staging = emulatedStagingBytes(kind, size, group);
        double measured = 0;
        if (!timeBackToBack(
                [&] {
                  bool ok = launchEmulatedCollective(
                      kind, ReduceKind::Sum, in, inCount, out, outCount,
                      DType::BF16, group, 0, ctas, staging, scratch,
                      scratchBytes, pace, stream, error);
                  if (!ok)
                    std::fprintf(stderr, "tandem-fabric-bench: %s\n",
                                 error.c_str());
                  return ok;
                },
                measured))
          return 1;

        double err = measured / target - 1;
        worst = std::max(worst, std::fabs(err));
        std::printf("%-15s %5d %12lld %12.1f %12.1f %+7.2f%%\n",
                    kindName.c_str(), ctas, static_cast<long long>(size),
                    target, measured, 100 * err);
        json << (first ? "" : ",") << "\n  {\"collective\": \"" << kindName
             << "\", \"ctas\": " << ctas << ", \"bytes\": " << size
             << ", \"target_us\": " << target << ", \"measured_us\": "
             << measured << ", \"error\": " << err << "}";
        first = false;
      }
    }
  }
  json << "\n ],\n \"max_abs_error\": " << worst << "\n}\n";
  std::printf("max |error| %.2f%%\n", 100 * worst);
  if (!jsonPath.empty()) {
    std::ofstream f(jsonPath);
    f << json.str();
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  for (void *p : {in, out, scratch})
    cudaFree(p);
  cudaStreamDestroy(stream);
  return 0;
}
