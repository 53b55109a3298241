//===- tandem-nccl-bench.cpp - NCCL collective bandwidth on one node ------===//
//
// Measures ncclAllGather, ncclReduceScatter and ncclAllReduce (bf16, sum)
// over power-of-two sizes with one thread per GPU, and writes the median
// time, algorithm bandwidth and bus bandwidth (the nccl-tests convention)
// per collective and size as JSON for tandem-fit --collectives, which
// calibrates the cost model's collective formulas (docs/cost-model.md).
// It needs only CUDA and NCCL: nothing here depends on LLVM or MLIR.
//
// Timing: each repetition enqueues --iters collectives back to back behind
// a host-released gate (so host launch latency is not timed) between two
// CUDA events; the repetition's time per collective is the slowest rank's
// elapsed time / iters, and the reported time is the median over --reps.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Environment.h"
#include "tandem/runtime/Format.h"
#include "tandem/runtime/ToolSupport.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

using namespace tandem::runtime;

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

void printHelp(std::FILE *out) {
  std::fputs(
      "usage: tandem-nccl-bench --gpus N --out nccl.json [options]\n"
      "\n"
      "Measures NCCL all-gather, reduce-scatter and all-reduce (bf16, sum)\n"
      "with one thread per GPU over power-of-two sizes and writes the\n"
      "median time, algorithm and bus bandwidth per collective and size.\n"
      "\n"
      "  --gpus N          ranks, one per GPU: GPUs D..D+N-1 (required)\n"
      "  --out PATH        where to write the JSON (required)\n"
      "  --min-bytes SIZE  smallest size (default 1MiB)\n"
      "  --max-bytes SIZE  largest size (default 1GiB); SIZE is a power of\n"
      "                    two in bytes, optionally with B, KiB, MiB or GiB\n"
      "  --iters K         collectives per timed repetition (default 20)\n"
      "  --reps R          timed repetitions, median reported (default 5)\n"
      "  --warmup W        untimed collectives per size (default 5)\n"
      "  --ctas C[,C...]   NCCL CTA budgets (minCTAs = maxCTAs = C), one\n"
      "                    communicator each; 0 = NCCL's choice (default 0)\n"
      "  --collectives L   comma list of all_gather, reduce_scatter,\n"
      "                    all_reduce (default all three)\n"
      "  --device D        first GPU (default 0)\n"
      "  --timeout S       abort the communicators if one repetition takes\n"
      "                    longer (default 120)\n"
      "  --help            print this message and exit 0\n"
      "\n"
      "Sizes follow nccl-tests: all-gather the gathered output, reduce-\n"
      "scatter the unreduced input, all-reduce the buffer. Bus bandwidth =\n"
      "size / time * (n-1)/n for all-gather and reduce-scatter and\n"
      "* 2(n-1)/n for all-reduce (0 with one rank).\n"
      "\n"
      "Exit codes: 0 success, 1 CUDA or NCCL failure (or too few GPUs),\n"
      "2 bad usage.\n",
      out);
}

enum class Coll { AllGather, ReduceScatter, AllReduce };

const char *collName(Coll c) {
  switch (c) {
  case Coll::AllGather:
    return "all_gather";
  case Coll::ReduceScatter:
    return "reduce_scatter";
  case Coll::AllReduce:
    return "all_reduce";
  }
  return "?";
}

const char *ncclCallName(Coll c) {
  switch (c) {
  case Coll::AllGather:
    return "ncclAllGather";
  case Coll::ReduceScatter:
    return "ncclReduceScatter";
  case Coll::AllReduce:
    return "ncclAllReduce";
  }
  return "?";
}

/// The nccl-tests bus-bandwidth factor for `n` ranks.
double busFactor(Coll c, int n) {
  if (n <= 1)
    return 0.0;
  double f = double(n - 1) / double(n);
  return c == Coll::AllReduce ? 2 * f : f;
}

struct Options {
  int gpus = 0, device = 0;
  std::string out;
  int64_t minBytes = 1ll << 20, maxBytes = 1ll << 30;
  int iters = 20, reps = 5, warmup = 5;
  double timeout = 120;
  std::vector<int> ctas = {0};
  std::vector<Coll> collectives = {Coll::AllGather, Coll::ReduceScatter,
                                   Coll::AllReduce};
};

bool parseInt(const std::string &text, long long min, long long &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end || v < min || v > INT32_MAX)
    return false;
  out = v;
  return true;
}

/// "1MiB", "4096", "64KiB", "1GiB", "512B": a power of two >= 2 bytes.
bool parseSize(const std::string &text, int64_t &out) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
    ++digits;
  if (digits == 0 || digits > 12)
    return false;
  int64_t v = std::stoll(text.substr(0, digits));
  std::string unit = text.substr(digits);
  int shift = 0;
  if (unit == "KiB")
    shift = 10;
  else if (unit == "MiB")
    shift = 20;
  else if (unit == "GiB")
    shift = 30;
  else if (!unit.empty() && unit != "B")
    return false;
  if (v <= 0 || v > (int64_t(1) << 40) >> shift)
    return false;
  v <<= shift;
  if (v < 2 || (v & (v - 1)) != 0)
    return false;
  out = v;
  return true;
}

std::vector<std::string> splitComma(const std::string &text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos)
      return parts;
    start = comma + 1;
  }
}

int usage(const std::string &message) {
  std::fprintf(stderr, "tandem-nccl-bench: %s\n", message.c_str());
  return kExitUsage;
}

/// Returns 0, or the exit code of a usage error (already reported).
int parseArgs(int argc, char **argv, Options &o) {
  bool haveGpus = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      printHelp(stdout);
      std::exit(0);
    }
    static const char *const kValued[] = {
        "--gpus",   "--out",     "--min-bytes",  "--max-bytes",
        "--iters",  "--reps",    "--warmup",     "--ctas",
        "--device", "--timeout", "--collectives"};
    bool valued = std::find_if(std::begin(kValued), std::end(kValued),
                               [&](const char *k) { return a == k; }) !=
                  std::end(kValued);
    if (!valued)
      return usage("unknown argument '" + a + "' (see --help)");
    if (i + 1 >= argc)
      return usage(a + " needs a value (see --help)");
    std::string v = argv[++i];
    long long n = 0;
    auto integer = [&](long long min, int &field) {
      if (!parseInt(v, min, n))
        return false;
      field = int(n);
      return true;
    };
    if (a == "--gpus") {
      if (!integer(1, o.gpus))
        return usage("--gpus needs an integer >= 1, got '" + v + "'");
      haveGpus = true;
    } else if (a == "--out") {
      o.out = v;
    } else if (a == "--min-bytes" || a == "--max-bytes") {
      if (!parseSize(v, a == "--min-bytes" ? o.minBytes : o.maxBytes))
        return usage(a +
                     " needs a power of two >= 2 bytes, optionally with B, "
                     "KiB, MiB or GiB (at most 1 TiB), got '" +
                     v + "'");
    } else if (a == "--iters") {
      if (!integer(1, o.iters))
        return usage("--iters needs an integer >= 1, got '" + v + "'");
    } else if (a == "--reps") {
      if (!integer(1, o.reps))
        return usage("--reps needs an integer >= 1, got '" + v + "'");
    } else if (a == "--warmup") {
      if (!integer(0, o.warmup))
        return usage("--warmup needs an integer >= 0, got '" + v + "'");
    } else if (a == "--device") {
      if (!integer(0, o.device))
        return usage("--device needs an integer >= 0, got '" + v + "'");
    } else if (a == "--timeout") {
      char *end = nullptr;
      o.timeout = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(o.timeout > 0))
        return usage("--timeout needs seconds > 0, got '" + v + "'");
    } else if (a == "--ctas") {
      o.ctas.clear();
      for (const std::string &part : splitComma(v)) {
        if (!parseInt(part, 0, n) || n > 1024)
          return usage("--ctas needs a comma list of integers in [0, 1024], "
                       "got '" +
                       v + "'");
        if (std::find(o.ctas.begin(), o.ctas.end(), int(n)) != o.ctas.end())
          return usage("--ctas lists " + part + " twice");
        o.ctas.push_back(int(n));
      }
    } else if (a == "--collectives") {
      o.collectives.clear();
      for (const std::string &part : splitComma(v)) {
        Coll c;
        if (part == "all_gather")
          c = Coll::AllGather;
        else if (part == "reduce_scatter")
          c = Coll::ReduceScatter;
        else if (part == "all_reduce")
          c = Coll::AllReduce;
        else
          return usage("unknown collective '" + part +
                       "' in --collectives (known: all_gather, "
                       "reduce_scatter, all_reduce)");
        if (std::find(o.collectives.begin(), o.collectives.end(), c) !=
            o.collectives.end())
          return usage("--collectives lists " + part + " twice");
        o.collectives.push_back(c);
      }
    }
  }
  if (!haveGpus)
    return usage("--gpus is required (see --help)");
  if (o.out.empty())
    return usage("--out is required (see --help)");
  if (o.minBytes > o.maxBytes)
    return usage("--min-bytes (" + std::to_string(o.minBytes) +
                 ") is larger than --max-bytes (" + std::to_string(o.maxBytes) +
                 ")");
  return 0;
}

/// One measured (CTA budget, collective, size): per-rank, per-repetition
/// time of one collective in microseconds.
struct Case {
  int ctas = 0;
  Coll coll = Coll::AllGather;
  int64_t bytes = 0; ///< Total size in the nccl-tests sense.
  int64_t count = 0; ///< NCCL's count argument: elements each rank sends
                     ///< (AG), receives (RS) or reduces (AR).
  std::vector<std::vector<double>> rankRepUs;
};

std::atomic<bool> abortAll{false};
/// Ranks whose device setup succeeded: communicator creation blocks until
/// every rank joins, so no rank starts it while another has already failed.
std::atomic<int> ranksReady{0};

struct Rank {
  int rank = 0, device = 0;
  std::string error;
};

/// Runs one rank: communicators for every CTA budget, then every case in
/// the shared order (every rank issues the same collectives in the same
/// order, as NCCL requires).
void rankMain(const Options &o, int world, const std::vector<ncclUniqueId> &ids,
              std::vector<Case> &cases, Rank &r) {
  auto fail = [&](const std::string &what) {
    if (r.error.empty())
      r.error = what;
    abortAll.store(true);
  };
  auto cuda = [&](cudaError_t e, const char *what) {
    if (e == cudaSuccess)
      return true;
    fail(std::string(what) + ": " + cudaGetErrorName(e) + " (" +
         cudaGetErrorString(e) + ")");
    return false;
  };
  if (!cuda(cudaSetDevice(r.device), "cudaSetDevice"))
    return;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  void *send = nullptr, *recv = nullptr;
  std::vector<ncclComm_t> comms(o.ctas.size(), nullptr);
  HostGate gate;
  auto cleanup = [&](bool abort) {
    for (ncclComm_t c : comms)
      if (c)
        abort ? ncclCommAbort(c) : ncclCommDestroy(c);
    if (send)
      cudaFree(send);
    if (recv)
      cudaFree(recv);
    if (start)
      cudaEventDestroy(start);
    if (stop)
      cudaEventDestroy(stop);
    if (stream)
      cudaStreamDestroy(stream);
  };
  if (!cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            "cudaStreamCreate") ||
      !cuda(cudaEventCreate(&start), "cudaEventCreate") ||
      !cuda(cudaEventCreate(&stop), "cudaEventCreate") ||
      !cuda(
          cudaMalloc(&send, size_t(o.maxBytes)),
          ("cudaMalloc of " + std::to_string(o.maxBytes) + " bytes").c_str()) ||
      !cuda(
          cudaMalloc(&recv, size_t(o.maxBytes)),
          ("cudaMalloc of " + std::to_string(o.maxBytes) + " bytes").c_str()) ||
      // 0x3c3c is a small positive bf16 (~0.0115): sums stay finite.
      !cuda(cudaMemset(send, 0x3c, size_t(o.maxBytes)), "cudaMemset") ||
      !cuda(cudaMemset(recv, 0x3c, size_t(o.maxBytes)), "cudaMemset")) {
    cleanup(false);
    return;
  }
  ranksReady.fetch_add(1);
  while (ranksReady.load() < world) {
    if (abortAll.load()) {
      fail("aborted because another rank failed");
      cleanup(false);
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  for (size_t k = 0; k < o.ctas.size(); ++k) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    if (o.ctas[k] > 0) {
      config.minCTAs = o.ctas[k];
      config.maxCTAs = o.ctas[k];
    }
    ncclResult_t res =
        ncclCommInitRankConfig(&comms[k], world, ids[k], r.rank, &config);
    if (res != ncclSuccess) {
      comms[k] = nullptr;
      fail("ncclCommInitRankConfig (rank " + std::to_string(r.rank) + " of " +
           std::to_string(world) + ", " + std::to_string(o.ctas[k]) +
           " CTAs): " + ncclGetErrorString(res) + ": " +
           ncclGetLastError(nullptr));
      cleanup(true);
      return;
    }
  }

  auto issue = [&](const Case &c, ncclComm_t comm) {
    ncclResult_t res = ncclSuccess;
    switch (c.coll) {
    case Coll::AllGather:
      res = ncclAllGather(send, recv, size_t(c.count), ncclBfloat16, comm,
                          stream);
      break;
    case Coll::ReduceScatter:
      res = ncclReduceScatter(send, recv, size_t(c.count), ncclBfloat16,
                              ncclSum, comm, stream);
      break;
    case Coll::AllReduce:
      res = ncclAllReduce(send, recv, size_t(c.count), ncclBfloat16, ncclSum,
                          comm, stream);
      break;
    }
    if (res != ncclSuccess)
      fail(std::string(ncclCallName(c.coll)) + " of " +
           std::to_string(c.bytes) + " bytes: " + ncclGetErrorString(res) +
           ": " + ncclGetLastError(comm));
    return res == ncclSuccess;
  };
  // Waits for the stream; aborts on another rank's failure, an NCCL
  // asynchronous error or the timeout, so that no rank hangs.
  auto drain = [&](ncclComm_t comm, const Case &c) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration<double>(o.timeout);
    while (true) {
      cudaError_t e = cudaStreamQuery(stream);
      if (e == cudaSuccess)
        return true;
      if (e != cudaErrorNotReady)
        return cuda(e, "while running");
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm, &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        fail(std::string("NCCL asynchronous error during ") + collName(c.coll) +
             " of " + std::to_string(c.bytes) +
             " bytes: " + ncclGetErrorString(async));
        return false;
      }
      if (abortAll.load()) {
        fail("aborted because another rank failed");
        return false;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        fail(std::string(collName(c.coll)) + " of " + std::to_string(c.bytes) +
             " bytes did not complete within " + std::to_string(o.timeout) +
             " s (--timeout); communicators aborted");
        return false;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  };

  for (Case &c : cases) {
    size_t k = std::find(o.ctas.begin(), o.ctas.end(), c.ctas) - o.ctas.begin();
    ncclComm_t comm = comms[k];
    for (int i = 0; i < o.warmup; ++i)
      if (!issue(c, comm)) {
        cleanup(true);
        return;
      }
    if (!drain(comm, c)) {
      cleanup(true);
      return;
    }
    std::vector<double> &times = c.rankRepUs[r.rank];
    for (int rep = 0; rep < o.reps; ++rep) {
      bool ok = cuda(gate.close(stream), "cudaLaunchHostFunc") &&
                cuda(cudaEventRecord(start, stream), "cudaEventRecord");
      for (int i = 0; ok && i < o.iters; ++i)
        ok = issue(c, comm);
      ok = ok && cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
      gate.release();
      if (!ok || !drain(comm, c)) {
        cleanup(true);
        return;
      }
      float ms = 0;
      if (!cuda(cudaEventElapsedTime(&ms, start, stop),
                "cudaEventElapsedTime")) {
        cleanup(true);
        return;
      }
      times.push_back(double(ms) * 1e3 / o.iters);
    }
  }
  cleanup(false);
}

std::string num(double v, const char *format = "%.3f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string envOrNull(const char *name) {
  const char *v = std::getenv(name);
  return v ? jsonQuote(v) : "null";
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (int rc = parseArgs(argc, argv, o))
    return rc;

  // Open the output first: a bad path should fail before any GPU work.
  std::FILE *out = std::fopen(o.out.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "tandem-nccl-bench: error: cannot write '%s': %s\n",
                 o.out.c_str(), std::strerror(errno));
    return kExitError;
  }
  auto die = [&](const std::string &message) {
    std::fprintf(stderr, "tandem-nccl-bench: error: %s\n", message.c_str());
    std::fclose(out);
    std::remove(o.out.c_str());
    return kExitError;
  };

  Environment env = queryEnvironment();
  if (env.deviceCount == 0)
    return die("no CUDA device: " + env.deviceStatus.message);
  if (o.device + o.gpus > env.deviceCount)
    return die("--gpus " + std::to_string(o.gpus) + " from --device " +
               std::to_string(o.device) + " needs GPUs " +
               std::to_string(o.device) + ".." +
               std::to_string(o.device + o.gpus - 1) + " but " +
               std::to_string(env.deviceCount) + " are visible");
  if (!env.ncclStatus.ok())
    return die("NCCL unusable: " + env.ncclStatus.message);
  for (int d = o.device; d < o.device + o.gpus; ++d)
    if (!env.devices[d].status.ok())
      return die("CUDA device " + std::to_string(d) +
                 " unusable: " + env.devices[d].status.message);

  std::vector<ncclUniqueId> ids(o.ctas.size());
  for (ncclUniqueId &id : ids) {
    ncclResult_t res = ncclGetUniqueId(&id);
    if (res != ncclSuccess)
      return die(std::string("ncclGetUniqueId: ") + ncclGetErrorString(res) +
                 ": " + ncclGetLastError(nullptr));
  }

  std::vector<Case> cases;
  for (int ctas : o.ctas)
    for (Coll coll : o.collectives)
      for (int64_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= 2) {
        Case c;
        c.ctas = ctas;
        c.coll = coll;
        // bf16 elements per rank block; with a rank count that does not
        // divide the size, the size is rounded down to a multiple of it.
        int64_t block = bytes / 2 / o.gpus;
        if (block == 0)
          continue;
        c.bytes = block * 2 * o.gpus;
        c.count = coll == Coll::AllReduce ? block * o.gpus : block;
        c.rankRepUs.assign(o.gpus, {});
        cases.push_back(std::move(c));
      }
  if (cases.empty())
    return die("every size is smaller than one bf16 element per rank: raise "
               "--max-bytes");

  std::vector<Rank> ranks(o.gpus);
  std::vector<std::thread> threads;
  for (int r = 0; r < o.gpus; ++r) {
    ranks[r].rank = r;
    ranks[r].device = o.device + r;
    threads.emplace_back([&, r] { rankMain(o, o.gpus, ids, cases, ranks[r]); });
  }
  for (std::thread &t : threads)
    t.join();
  std::string errors;
  for (const Rank &r : ranks)
    if (!r.error.empty() && r.error != "aborted because another rank failed")
      errors += (errors.empty() ? "" : "; ") + std::string("rank ") +
                std::to_string(r.rank) + " (GPU " + std::to_string(r.device) +
                "): " + r.error;
  if (errors.empty())
    for (const Rank &r : ranks)
      if (!r.error.empty())
        errors = "rank " + std::to_string(r.rank) + ": " + r.error;
  if (!errors.empty())
    return die(errors);

  const char *algo = std::getenv("NCCL_ALGO");
  std::string json = "{\n  \"format\": \"tandem-nccl-bench\",\n"
                     "  \"version\": 1,\n";
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  json += "  \"date\": " + jsonQuote(date) + ",\n";
  json += "  \"nccl_version\": " +
          jsonQuote(formatVersion(decodeNcclVersion(env.ncclVersion))) +
          ",\n  \"cuda_runtime\": " +
          jsonQuote(formatCudaVersion(env.cudaRuntimeVersion)) +
          ",\n  \"cuda_driver\": " +
          jsonQuote(formatCudaVersion(env.cudaDriverVersion)) + ",\n";
  json += "  \"ranks\": " + std::to_string(o.gpus) + ",\n  \"devices\": [";
  for (int d = o.device; d < o.device + o.gpus; ++d) {
    const DeviceInfo &info = env.devices[d];
    json += std::string(d == o.device ? "\n" : ",\n") +
            "    {\"index\": " + std::to_string(d) +
            ", \"name\": " + jsonQuote(info.name) +
            ", \"sms\": " + std::to_string(info.smCount) + "}";
  }
  json += "\n  ],\n";
  json += "  \"dtype\": \"bf16\",\n  \"reduce_op\": \"sum\",\n";
  json += "  \"settings\": {\"iters\": " + std::to_string(o.iters) +
          ", \"reps\": " + std::to_string(o.reps) +
          ", \"warmup\": " + std::to_string(o.warmup) + "},\n";
  json += "  \"nccl_env\": {\"NCCL_ALGO\": " + envOrNull("NCCL_ALGO") +
          ", \"NCCL_PROTO\": " + envOrNull("NCCL_PROTO") +
          ", \"NCCL_NVLS_ENABLE\": " + envOrNull("NCCL_NVLS_ENABLE") +
          ", \"NCCL_MIN_NCHANNELS\": " + envOrNull("NCCL_MIN_NCHANNELS") +
          ", \"NCCL_MAX_NCHANNELS\": " + envOrNull("NCCL_MAX_NCHANNELS") +
          "},\n";
  json +=
      "  \"convention\": {\"bytes\": \"nccl-tests size: all_gather the "
      "gathered output, reduce_scatter the unreduced input, all_reduce the "
      "buffer\", \"time_us\": \"median over reps of the slowest rank's "
      "elapsed time / iters, collectives back to back\", \"algbw_gbps\": "
      "\"bytes / time_us / 1e3\", \"busbw_gbps\": \"algbw_gbps * (n-1)/n for "
      "all_gather and reduce_scatter, * 2(n-1)/n for all_reduce (nccl-tests; "
      "0 for n = 1)\", \"ctas\": \"minCTAs = maxCTAs of the communicator; 0 "
      "= NCCL's choice\", \"algorithm\": \"NCCL_ALGO when set, else 'auto': "
      "NCCL's API does not report the algorithm it picks (NCCL_DEBUG=INFO "
      "NCCL_DEBUG_SUBSYS=TUNING logs it)\"},\n";
  json += "  \"results\": [";
  bool first = true;
  for (const Case &c : cases) {
    std::vector<double> slowest(o.reps, 0.0);
    for (int r = 0; r < o.gpus; ++r)
      for (int rep = 0; rep < o.reps; ++rep)
        slowest[rep] = std::max(slowest[rep], c.rankRepUs[r][rep]);
    double us = median(slowest);
    double algbw = double(c.bytes) / us / 1e3;
    double busbw = algbw * busFactor(c.coll, o.gpus);
    json += std::string(first ? "\n" : ",\n") + "    {\"collective\": \"" +
            collName(c.coll) + "\", \"bytes\": " + std::to_string(c.bytes) +
            ", \"count\": " + std::to_string(c.count) +
            ", \"ctas\": " + std::to_string(c.ctas) +
            ", \"algorithm\": " + jsonQuote(algo ? algo : "auto") +
            ", \"time_us\": " + num(us) + ", \"algbw_gbps\": " + num(algbw) +
            ", \"busbw_gbps\": " + num(busbw) + "}";
    first = false;
    std::fprintf(stderr,
                 "%-14s %12lld B  ctas %3d  %10.2f us  algbw %8.2f GB/s  "
                 "busbw %8.2f GB/s\n",
                 collName(c.coll), static_cast<long long>(c.bytes), c.ctas, us,
                 algbw, busbw);
  }
  json += "\n  ]\n}\n";
  if (std::fputs(json.c_str(), out) < 0 || std::fclose(out) != 0) {
    std::fprintf(stderr, "tandem-nccl-bench: error: writing '%s' failed\n",
                 o.out.c_str());
    std::remove(o.out.c_str());
    return kExitError;
  }
  std::fprintf(stderr, "wrote %s\n", o.out.c_str());
  return 0;
}
