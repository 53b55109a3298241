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
//
// With transport copy_engine (--transports, both by default) the all-gather
// and reduce-scatter rows are also measured as copy-engine collectives
// (launchCopyEngineCollective: paced device copies, a 1-CTA pacing kernel,
// the reduce-scatter's reduction kernel), against the target of
// --ce-gbps / --ce-latency-us (default: --gbps / --latency-us), paced
// like the executor paces them (target minus the same launch offset).
// Their --iters collectives are enqueued behind a host-released gate, since
// each is 2n+1 launches and the host would otherwise pace the small ones.
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
  double gbps = 360, latencyUs = 14, ceGbps = -1, ceLatencyUs = -1;
  std::string transports = "sms,copy_engine";
  int group = 8, iters = 10, warmup = 3;
  int64_t minBytes = 1ll << 20, maxBytes = 1ll << 30;
  std::string kinds = "all_gather,reduce_scatter,all_reduce,permute";
  std::string ctasList = "24", jsonPath;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help") {
      std::puts("usage: tandem-fabric-bench [--gbps G] [--latency-us L] "
                "[--group N] [--ctas C[,C]] [--collectives K[,K]]\n"
                "       [--transports sms,copy_engine] [--ce-gbps G] "
                "[--ce-latency-us L]\n"
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
    else if (a == "--transports")
      transports = v;
    else if (a == "--ce-gbps")
      ceGbps = std::atof(v.c_str());
    else if (a == "--ce-latency-us")
      ceLatencyUs = std::atof(v.c_str());
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
  if (ceGbps < 0)
    ceGbps = gbps;
  if (ceLatencyUs < 0)
    ceLatencyUs = latencyUs;
  bool smRows = false, ceRows = false;
  for (const std::string &t : split(transports)) {
    if (t == "sms")
      smRows = true;
    else if (t == "copy_engine")
      ceRows = true;
    else {
      std::fprintf(stderr,
                   "tandem-fabric-bench: unknown transport '%s' (expected "
                   "sms or copy_engine)\n",
                   t.c_str());
      return 2;
    }
  }
  if (!(gbps > 0) || !(ceGbps > 0) || latencyUs < 0 || group < 2 || iters < 1 ||
      minBytes < 1 || maxBytes < minBytes) {
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
  // Copy-engine rows: the reduce-scatter's n-1 staged blocks and the
  // pacing stamp.
  const int64_t scratchBytes = 64ll << 20;
  const int64_t stagingBytes =
      ceRows
          ? emulatedStagingBytes(CollectiveKind::ReduceScatter, maxBytes, group)
          : 0;
  void *in = nullptr, *out = nullptr, *scratch = nullptr, *staging = nullptr;
  void *slot = nullptr;
  std::string error;
  if (!cuda(cudaMalloc(&in, maxBytes), "cudaMalloc") ||
      !cuda(cudaMalloc(&out, maxBytes), "cudaMalloc") ||
      !cuda(cudaMalloc(&scratch, scratchBytes), "cudaMalloc") ||
      (stagingBytes > 0 &&
       !cuda(cudaMalloc(&staging, stagingBytes), "cudaMalloc")) ||
      !cuda(cudaMalloc(&slot, sizeof(uint64_t)), "cudaMalloc"))
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
  // The same behind a host-released gate: everything is enqueued before
  // the GPU starts, so only GPU time is timed.
  HostGate gate;
  auto timeGated = [&](auto &&launch, double &us) {
    std::vector<double> samples;
    for (int rep = 0; rep < warmup + 3; ++rep) {
      if (!cuda(gate.close(stream), "cudaLaunchHostFunc") ||
          !cuda(cudaEventRecord(a, stream), "cudaEventRecord"))
        return false;
      bool ok = true;
      for (int i = 0; ok && i < iters; ++i)
        ok = launch();
      ok = ok && cuda(cudaEventRecord(b, stream), "cudaEventRecord");
      gate.release();
      if (!ok || !cuda(cudaEventSynchronize(b), "execution"))
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
  if (!measureEmulatedCollectiveOffset(stream, scratch, scratchBytes, offsetUs,
                                       error)) {
    std::fprintf(stderr, "tandem-fabric-bench: %s\n", error.c_str());
    return 1;
  }

  std::ostringstream json;
  json << "{\n \"tool\": \"tandem-fabric-bench\",\n \"what\": \"EMULATED "
          "fabric: each collective alone vs its target (no communication)\",\n"
       << " \"device\": \"" << prop.name << "\",\n \"group\": " << group
       << ",\n \"gbps\": " << gbps << ",\n \"latency_us\": " << latencyUs
       << ",\n \"ce_gbps\": " << ceGbps
       << ",\n \"ce_latency_us\": " << ceLatencyUs
       << ",\n \"launch_offset_us\": " << offsetUs << ",\n \"iters\": " << iters
       << ",\n \"results\": [";
  std::printf("EMULATED fabric (no communication) on %s: group %d, target = "
              "%.1f us + bus bytes / %.0f GB/s (copy engine: %.1f us + bus "
              "bytes / %.0f GB/s); launch offset %.2f us\n",
              prop.name, group, latencyUs, gbps, ceLatencyUs, ceGbps, offsetUs);
  std::printf("%-15s %-11s %5s %12s %12s %12s %8s\n", "collective", "transport",
              "ctas", "bytes", "target us", "measured us", "error");
  bool first = true;
  double worst = 0;
  // Prints and records one row (ctas < 0: none, a copy-engine row).
  auto row = [&](const std::string &kindName, const char *transport, int ctas,
                 int64_t size, double target, double measured) {
    double err = measured / target - 1;
    worst = std::max(worst, std::fabs(err));
    std::printf("%-15s %-11s %5s %12lld %12.1f %12.1f %+7.2f%%\n",
                kindName.c_str(), transport,
                ctas >= 0 ? std::to_string(ctas).c_str() : "-",
                static_cast<long long>(size), target, measured, 100 * err);
    json << (first ? "" : ",") << "\n  {\"collective\": \"" << kindName
         << "\", \"transport\": \"" << transport << "\"";
    if (ctas >= 0)
      json << ", \"ctas\": " << ctas;
    json << ", \"bytes\": " << size << ", \"target_us\": " << target
         << ", \"measured_us\": " << measured << ", \"error\": " << err << "}";
    first = false;
  };
  auto report = [&](bool ok) {
    if (!ok)
      std::fprintf(stderr, "tandem-fabric-bench: %s\n", error.c_str());
    return ok;
  };
  for (const std::string &kindName : split(kinds)) {
    CollectiveKind kind;
    if (!parseKind(kindName, kind)) {
      std::fprintf(stderr, "tandem-fabric-bench: unknown collective '%s'\n",
                   kindName.c_str());
      return 2;
    }
    bool gather = kind == CollectiveKind::AllGather;
    // Element counts and staging of the collective of `size` bytes.
    auto counts = [&](int64_t size, int64_t &inCount, int64_t &outCount) {
      inCount = outCount = size / 2; // bf16 elements
      if (gather)
        inCount /= group;
      if (kind == CollectiveKind::ReduceScatter)
        outCount /= group;
    };
    for (const std::string &c : split(ctasList)) {
      if (!smRows)
        break;
      int ctas = std::atoi(c.c_str());
      for (int64_t size = minBytes; size <= maxBytes; size *= 2) {
        int64_t inCount, outCount;
        counts(size, inCount, outCount);
        int64_t staging = emulatedStagingBytes(kind, size, group);
        double target = latencyUs + busBytes(kind, size, group) / (gbps * 1e3);
        double pace = std::max(0.0, target - offsetUs);
        double measured = 0;
        if (!timeBackToBack(
                [&] {
                  return report(launchEmulatedCollective(
                      kind, ReduceKind::Sum, in, inCount, out, outCount,
                      DType::BF16, group, 0, ctas, staging, scratch,
                      scratchBytes, pace, stream, error));
                },
                measured))
          return 1;
        row(kindName, "sms", ctas, size, target, measured);
      }
    }
    if (!ceRows || !(gather || kind == CollectiveKind::ReduceScatter))
      continue;
    for (int64_t size = minBytes; size <= maxBytes; size *= 2) {
      int64_t inCount, outCount;
      counts(size, inCount, outCount);
      double target =
          ceLatencyUs + busBytes(kind, size, group) / (ceGbps * 1e3);
      double pace = std::max(0.0, target - offsetUs);
      double measured = 0;
      if (!timeGated(
              [&] {
                return report(launchCopyEngineCollective(
                    kind, ReduceKind::Sum, in, inCount, out, outCount,
                    DType::BF16, group, 0, staging, stagingBytes,
                    static_cast<uint64_t *>(slot), pace, stream, error));
              },
              measured))
        return 1;
      row(kindName, "copy_engine", -1, size, target, measured);
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
  for (void *p : {in, out, scratch, staging, slot})
    if (p)
      cudaFree(p);
  cudaStreamDestroy(stream);
  return 0;
}
