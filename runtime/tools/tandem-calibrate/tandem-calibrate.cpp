//===- tandem-calibrate.cpp - Measure what the cost model is fitted to ----===//
//
// Measures on one GPU, with CUDA events (warm-up, then the median of R
// repetitions):
//  - bf16 cuBLASLt GEMMs of transformer-layer shapes at several SM targets;
//  - empty kernels queued back to back (launch overhead), what a
//    cross-stream event gate adds to a kernel's start (event latency), and
//    a full-device element-wise copy (HBM bandwidth);
//  - the RMS norm and norm backward kernels and the layout copy kernel
//    (launchCopy2D) alone, over shapes, back to back;
//  - the collective stand-in kernel (launchStandinCollective) alone on k CTAs;
//  - pairs: GEMMs (all SMs, and SM target = SMs - k) on one stream next to
//    the stand-in on k CTAs on a higher-priority stream, as NCCL runs, and
//    the same with an element-wise copy instead of the GEMMs; each side's
//    duration, the pair's span and the serial time. With --comm emulated
//    the communication side of the pairs is the emulated fabric's
//    collective kernel (launchEmulatedCollective, paced to the GEMMs' time
//    and moving --emulated-gbps of HBM traffic) instead: the contention the
//    emulated steps of `tandem-run --emulate-fabric` meet;
//  - with --comm emulated also the copy-engine emulation: the per-copy cost
//    of small device-to-device copies back to back, and pairs of GEMMs
//    (SM targets 0 and S-1) or element-wise copies next to a copy-engine
//    emulated all-gather (launchCopyEngineCollective, 8 ranks, paced to the
//    compute side's time alone): the contention the `transport:
//    copy_engine` steps of `tandem-run --emulate-fabric` meet (on one GPU
//    the driver's copies use the SMs: docs/runtime.md).
// It writes them as raw.json for tools/tandem-fit (docs/cost-model.md,
// "Calibrating", gives the format). It runs where only CUDA is installed:
// nothing here depends on LLVM or MLIR.
//
// Timing: every measured sequence is enqueued behind a host-released gate
// (a host function that waits until everything is enqueued), so the events
// time GPU work only, never the host's launch latency.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Environment.h"
#include "tandem/runtime/Format.h"
#include "tandem/runtime/Kernels.h"
#include "tandem/runtime/ToolSupport.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace tandem::runtime;

namespace {

constexpr int kExitUsage = 2;

struct Options {
  std::string out;
  bool quick = false;
  int device = 0;
  int reps = 0;              ///< 0 = default for the mode.
  bool emulated = false;     ///< --comm emulated
  double emulatedGbps = 600; ///< --emulated-gbps
};

void printHelp(std::FILE *out) {
  std::fputs(
      "usage: tandem-calibrate --out raw.json [--quick] [--device N] "
      "[--reps R]\n"
      "                        [--comm standin|emulated] [--emulated-gbps G]\n"
      "\n"
      "Measures cuBLASLt bf16 GEMMs over shapes and SM targets, launch\n"
      "overhead, HBM bandwidth, the norm, norm backward and strided copy\n"
      "kernels over shapes, the collective stand-in kernel alone, and\n"
      "GEMM / element-wise kernels overlapped with the stand-in, and writes\n"
      "them as JSON for tandem-fit (docs/cost-model.md, \"Calibrating\").\n"
      "\n"
      "  --out PATH   where to write the measurements (required)\n"
      "  --quick      a few shapes and CTA counts (seconds; for tests)\n"
      "  --device N   CUDA device ordinal (default 0)\n"
      "  --reps R     timed repetitions per measurement, median reported\n"
      "               (default 10, 3 with --quick)\n"
      "  --comm K     the communication side of the pairs: 'standin' (the\n"
      "               stand-in copy at full speed, default) or 'emulated'\n"
      "               (the emulated fabric's paced collective kernel, as\n"
      "               tandem-run --emulate-fabric runs it)\n"
      "  --emulated-gbps G  HBM traffic of the emulated collective in GB/s\n"
      "               (default 600: about an 8-rank ring all-gather or\n"
      "               reduce-scatter's reads and writes at ~400 GB/s of bus\n"
      "               bandwidth), at most half the stand-in's rate on the\n"
      "               same CTAs so that the kernel is paced; also the\n"
      "               copy-engine pairs' traffic (copy_engine_pairs, written\n"
      "               with copy_engine_latency under --comm emulated)\n"
      "  --help       print this message and exit 0\n"
      "\n"
      "Exit codes: 0 success, 1 CUDA or cuBLASLt failure, 2 bad usage.\n",
      out);
}

/// The output file, removed on failure so that no partial file is left.
std::string outputPath;

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "tandem-calibrate: error: %s\n", message.c_str());
  if (!outputPath.empty())
    std::remove(outputPath.c_str());
  std::exit(1);
}

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    die(std::string(what) + ": " + cudaGetErrorString(status));
}

void checkLaunch(bool ok, const std::string &error) {
  if (!ok)
    die(error);
}

bool parseInt(const char *text, int &out) {
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (!*text || *end || v < INT32_MIN || v > INT32_MAX)
    return false;
  out = int(v);
  return true;
}

/// Elapsed milliseconds between two completed events, in microseconds.
double elapsedUs(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, from, to), "cudaEventElapsedTime");
  return double(ms) * 1e3;
}

using Work = std::function<void(cudaStream_t)>;

struct Device {
  int ordinal = 0;
  int sms = 0;
  cudaStream_t compute = nullptr; ///< Lowest priority: GEMMs, element-wise.
  cudaStream_t comm = nullptr;    ///< Highest priority: the stand-in.
  BlasContext blas;               ///< For `compute`.
  HostGate gate;
  cudaEvent_t ev[6] = {};
  int warmup = 2, reps = 10;

  // GEMM operands (random bf16), sized for the largest shape.
  void *a = nullptr, *b = nullptr, *c = nullptr;
  // Element-wise copy buffers.
  void *src = nullptr, *dst = nullptr;
  int64_t copyElements = 0;
  // Stand-in buffers: a small in/out and a scratch larger than the L2, so
  // that its traffic reaches HBM.
  void *standinIn = nullptr, *standinOut = nullptr, *scratch = nullptr;
  int64_t scratchBytes = 0;
  void *tiny = nullptr;
  /// The copy-engine collective's pacing stamp (--comm emulated).
  uint64_t *ceTimer = nullptr;
};

constexpr int64_t kStandinElements = 4096;

void *deviceAlloc(int64_t bytes, const char *what) {
  void *p = nullptr;
  check(cudaMalloc(&p, size_t(bytes)), what);
  return p;
}

void fillRandom(Device &d, void *p, int64_t count, uint64_t seed) {
  std::string error;
  checkLaunch(launchFill(p, DType::BF16, count, seed, 1.0f, d.compute, error),
              error);
}

/// Median time of `work` alone on `stream`.
double timeAlone(Device &d, cudaStream_t stream, const Work &work) {
  for (int i = 0; i < d.warmup; ++i)
    work(stream);
  check(cudaStreamSynchronize(stream), "warm-up");
  std::vector<double> times;
  for (int i = 0; i < d.reps; ++i) {
    check(d.gate.close(stream), "cudaLaunchHostFunc");
    check(cudaEventRecord(d.ev[0], stream), "cudaEventRecord");
    work(stream);
    check(cudaEventRecord(d.ev[1], stream), "cudaEventRecord");
    d.gate.release();
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    times.push_back(elapsedUs(d.ev[0], d.ev[1]));
  }
  return median(times);
}

struct Overlap {
  double primaryUs = 0, copyUs = 0, spanUs = 0;
};

/// `primary` on the compute stream next to `copy` on the comm stream, both
/// released at once; medians of each side's duration and of the span.
Overlap timeOverlapped(Device &d, const Work &primary, const Work &copy) {
  for (int i = 0; i < d.warmup; ++i) {
    primary(d.compute);
    copy(d.comm);
  }
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> p, c, s;
  for (int i = 0; i < d.reps; ++i) {
    check(d.gate.close(d.compute), "cudaLaunchHostFunc");
    check(cudaEventRecord(d.ev[0], d.compute), "cudaEventRecord");
    check(cudaStreamWaitEvent(d.comm, d.ev[0], 0), "cudaStreamWaitEvent");
    check(cudaEventRecord(d.ev[2], d.comm), "cudaEventRecord");
    primary(d.compute);
    copy(d.comm);
    check(cudaEventRecord(d.ev[1], d.compute), "cudaEventRecord");
    check(cudaEventRecord(d.ev[3], d.comm), "cudaEventRecord");
    d.gate.release();
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    double primaryUs = elapsedUs(d.ev[0], d.ev[1]);
    double copyEndUs = elapsedUs(d.ev[0], d.ev[3]);
    p.push_back(primaryUs);
    c.push_back(elapsedUs(d.ev[2], d.ev[3]));
    s.push_back(std::max(primaryUs, copyEndUs));
  }
  return Overlap{median(p), median(c), median(s)};
}

Work gemmWork(Device &d, int64_t m, int64_t n, int64_t k, int smTarget,
              int count) {
  return [&d, m, n, k, smTarget, count](cudaStream_t stream) {
    MatmulArgs args;
    args.m = m;
    args.n = n;
    args.k = k;
    args.abType = DType::BF16;
    args.cType = DType::BF16;
    args.smTarget = smTarget;
    std::string error;
    for (int i = 0; i < count; ++i)
      checkLaunch(launchMatmul(d.blas, args, d.a, d.b, d.c, stream, error),
                  error);
  };
}

Work standinWork(Device &d, int ctas, int64_t bytes) {
  return [&d, ctas, bytes](cudaStream_t stream) {
    std::string error;
    // A permute writes `out` = `in` (small) and streams `bytes` through the
    // scratch buffer on exactly `ctas` CTAs.
    checkLaunch(launchStandinCollective(
                    CollectiveKind::Permute, ReduceKind::Sum, d.standinIn,
                    kStandinElements, d.standinOut, kStandinElements,
                    DType::BF16, /*groupSize=*/8, /*rank=*/0, ctas, bytes,
                    d.scratch, d.scratchBytes, stream, error),
                error);
  };
}

/// The emulated fabric's collective (a permute: `out` = `in`, small) on
/// exactly `ctas` CTAs, paced to take `paceUs`, with `bytes` of traffic
/// through the scratch spread over that time.
Work emulatedWork(Device &d, int ctas, double paceUs, int64_t bytes) {
  return [&d, ctas, paceUs, bytes](cudaStream_t stream) {
    std::string error;
    checkLaunch(launchEmulatedCollective(
                    CollectiveKind::Permute, ReduceKind::Sum, d.standinIn,
                    kStandinElements, d.standinOut, kStandinElements,
                    DType::BF16, /*groupSize=*/8, /*rank=*/0, ctas, bytes,
                    d.scratch, d.scratchBytes, paceUs, stream, error),
                error);
  };
}

/// The copy-engine emulated all-gather of `ranks` ranks whose output is
/// `bytes` (bf16, in `ceIn`/`ceOut`), paced to take `paceUs`.
Work copyEngineWork(Device &d, void *ceIn, void *ceOut, int ranks,
                    int64_t bytes, double paceUs) {
  return [&d, ceIn, ceOut, ranks, bytes, paceUs](cudaStream_t stream) {
    std::string error;
    checkLaunch(launchCopyEngineCollective(
                    CollectiveKind::AllGather, ReduceKind::Sum, ceIn,
                    bytes / 2 / ranks, ceOut, bytes / 2, DType::BF16, ranks,
                    /*rank=*/0, nullptr, 0, d.ceTimer, paceUs, stream, error),
                error);
  };
}

/// `count` full-device element-wise copies of `elements` bf16 values.
Work copyWork(Device &d, int64_t elements, int count) {
  return [&d, elements, count](cudaStream_t stream) {
    const int64_t cols = 4096;
    std::string error;
    for (int i = 0; i < count; ++i)
      checkLaunch(launchElementwise(ElementwiseKind::Copy, d.src, DType::BF16,
                                    nullptr, DType::BF16, d.dst, DType::BF16,
                                    elements / cols, cols, stream, error),
                  error);
  };
}

//===----------------------------------------------------------------------===//
// JSON output
//===----------------------------------------------------------------------===//

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

struct Shape {
  int64_t m, n, k;
};

} // namespace

int main(int argc, char **argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *name) -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr,
                     "tandem-calibrate: %s needs a value (see --help)\n", name);
        std::exit(kExitUsage);
      }
      return argv[++i];
    };
    if (arg == "--out") {
      opt.out = value("--out");
    } else if (arg == "--quick") {
      opt.quick = true;
    } else if (arg == "--device") {
      if (!parseInt(value("--device"), opt.device) || opt.device < 0) {
        std::fprintf(stderr,
                     "tandem-calibrate: --device must be a "
                     "non-negative integer, got '%s'\n",
                     argv[i]);
        return kExitUsage;
      }
    } else if (arg == "--reps") {
      if (!parseInt(value("--reps"), opt.reps) || opt.reps < 1) {
        std::fprintf(stderr,
                     "tandem-calibrate: --reps must be a positive integer, "
                     "got '%s'\n",
                     argv[i]);
        return kExitUsage;
      }
    } else if (arg == "--comm") {
      std::string kind = value("--comm");
      if (kind != "standin" && kind != "emulated") {
        std::fprintf(stderr,
                     "tandem-calibrate: --comm must be 'standin' or "
                     "'emulated', got '%s'\n",
                     kind.c_str());
        return kExitUsage;
      }
      opt.emulated = kind == "emulated";
    } else if (arg == "--emulated-gbps") {
      const char *text = value("--emulated-gbps");
      char *end = nullptr;
      double v = std::strtod(text, &end);
      if (!*text || *end || !(v >= 1.0 && v <= 1e5)) {
        std::fprintf(stderr,
                     "tandem-calibrate: --emulated-gbps must be a number in "
                     "[1, 100000], got '%s'\n",
                     text);
        return kExitUsage;
      }
      opt.emulatedGbps = v;
    } else if (arg == "--help" || arg == "-h") {
      printHelp(stdout);
      return 0;
    } else {
      std::fprintf(stderr,
                   "tandem-calibrate: unknown argument '%s' (see --help)\n",
                   arg.c_str());
      return kExitUsage;
    }
  }
  if (opt.out.empty()) {
    std::fprintf(stderr, "tandem-calibrate: --out is required (see --help)\n");
    return kExitUsage;
  }
  // Open the output first: a bad path should fail before minutes of work.
  std::FILE *out = std::fopen(opt.out.c_str(), "w");
  if (!out)
    die("cannot write '" + opt.out + "': " + std::strerror(errno));
  outputPath = opt.out;

  Environment env = queryEnvironment();
  if (env.deviceCount == 0)
    die("no CUDA device: " + env.deviceStatus.message);
  if (opt.device >= env.deviceCount)
    die("--device " + std::to_string(opt.device) + " but only " +
        std::to_string(env.deviceCount) + " device(s) are visible");
  const DeviceInfo &info = env.devices[opt.device];
  if (!info.status.ok())
    die("CUDA device " + std::to_string(opt.device) +
        " unusable: " + info.status.message);

  Device d;
  d.ordinal = opt.device;
  d.sms = info.smCount;
  d.warmup = opt.quick ? 1 : 2;
  d.reps = opt.reps ? opt.reps : (opt.quick ? 3 : 10);
  check(cudaSetDevice(d.ordinal), "cudaSetDevice");
  int leastPriority = 0, greatestPriority = 0;
  check(cudaDeviceGetStreamPriorityRange(&leastPriority, &greatestPriority),
        "cudaDeviceGetStreamPriorityRange");
  check(cudaStreamCreateWithPriority(&d.compute, cudaStreamNonBlocking,
                                     leastPriority),
        "cudaStreamCreateWithPriority");
  check(cudaStreamCreateWithPriority(&d.comm, cudaStreamNonBlocking,
                                     greatestPriority),
        "cudaStreamCreateWithPriority");
  for (cudaEvent_t &e : d.ev)
    check(cudaEventCreate(&e), "cudaEventCreate");
  if (cublasLtCreate(&d.blas.handle) != CUBLAS_STATUS_SUCCESS)
    die("cublasLtCreate failed");
  d.blas.workspaceBytes = 32ll << 20; // cuBLASLt's recommendation for Hopper
  d.blas.workspace = deviceAlloc(d.blas.workspaceBytes, "cudaMalloc workspace");

  // What is measured. SM targets and CTA counts follow the device's SM
  // count; the shapes are those of TP transformer layers (hidden 8192 with
  // TP 4-8: qkv, attention projection, MLP up and down, an untiled MLP)
  // plus the 8192^3 square of shared/data/h200-probe.md.
  std::vector<int> ctas =
      opt.quick ? std::vector<int>{16, 32} : std::vector<int>{8, 16, 24, 32};
  ctas.erase(std::remove_if(ctas.begin(), ctas.end(),
                            [&](int k) { return k >= d.sms; }),
             ctas.end());
  if (ctas.empty())
    die("the device has too few SMs (" + std::to_string(d.sms) +
        ") for the stand-in's CTA counts");
  std::vector<int> targets = {0};
  for (int cut :
       opt.quick ? std::vector<int>{16} : std::vector<int>{8, 16, 24, 32})
    if (d.sms - cut >= 1)
      targets.push_back(d.sms - cut);
  if (std::find(targets.begin(), targets.end(), d.sms / 2) == targets.end())
    targets.push_back(d.sms / 2);
  std::vector<Shape> shapes;
  if (opt.quick) {
    shapes = {{2048, 3072, 8192}, {4096, 8192, 1536}};
  } else {
    for (int64_t m : {1024, 2048, 4096, 8192})
      for (Shape nk :
           {Shape{0, 3072, 8192}, Shape{0, 8192, 1536}, Shape{0, 7168, 8192},
            Shape{0, 8192, 7168}, Shape{0, 28672, 8192}})
        shapes.push_back({m, nk.n, nk.k});
    shapes.push_back({8192, 8192, 8192});
  }
  std::vector<Shape> pairShapes = opt.quick
                                      ? std::vector<Shape>{{2048, 3072, 8192}}
                                      : std::vector<Shape>{{8192, 8192, 8192},
                                                           {4096, 8192, 7168},
                                                           {2048, 3072, 8192}};
  // Each side of a pair runs about this long alone.
  const double pairUs = opt.quick ? 1000.0 : 5000.0;
  const int64_t copyBytes = opt.quick ? (256ll << 20) : (1ll << 30);

  // Copy-engine pairs (--comm emulated): GEMM shapes and element-wise copy
  // sizes (elements each way) next to a copy-engine all-gather of 8 ranks.
  std::vector<Shape> ceShapes =
      opt.emulated ? std::vector<Shape>{{8192, 8192, 8192}, {4096, 8192, 8192}}
                   : std::vector<Shape>{};
  const int ceRanks = 8;

  int64_t maxA = 0, maxB = 0, maxC = 0;
  for (const std::vector<Shape> *list : {&shapes, &pairShapes, &ceShapes})
    for (const Shape &s : *list) {
      maxA = std::max(maxA, s.m * s.k);
      maxB = std::max(maxB, s.k * s.n);
      maxC = std::max(maxC, s.m * s.n);
    }
  d.a = deviceAlloc(2 * maxA, "cudaMalloc A");
  d.b = deviceAlloc(2 * maxB, "cudaMalloc B");
  d.c = deviceAlloc(2 * maxC, "cudaMalloc C");
  // Random data: constant data multiplies ~13% faster on an H200
  // (docs/cost-model.md), and training data is not constant.
  fillRandom(d, d.a, maxA, 1);
  fillRandom(d, d.b, maxB, 2);
  d.copyElements = (1ll << 30) / 4; // 512 MiB each way: 1 GiB of traffic
  d.src = deviceAlloc(2 * d.copyElements, "cudaMalloc copy source");
  d.dst = deviceAlloc(2 * d.copyElements, "cudaMalloc copy destination");
  fillRandom(d, d.src, d.copyElements, 3);
  d.scratchBytes = 1ll << 30;
  d.scratch = deviceAlloc(d.scratchBytes, "cudaMalloc stand-in scratch");
  d.standinIn = deviceAlloc(2 * kStandinElements, "cudaMalloc stand-in input");
  d.standinOut =
      deviceAlloc(2 * kStandinElements, "cudaMalloc stand-in output");
  fillRandom(d, d.standinIn, kStandinElements, 4);
  d.tiny = deviceAlloc(64, "cudaMalloc");
  if (opt.emulated)
    d.ceTimer = static_cast<uint64_t *>(
        deviceAlloc(sizeof(uint64_t), "cudaMalloc pacing stamp"));
  check(cudaDeviceSynchronize(), "initialisation");

  std::string json =
      "{\n  \"version\": 1,\n  \"tool\": \"tandem-calibrate\",\n";
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  json += "  \"date\": " + jsonQuote(date) + ",\n";
  json += "  \"device\": {\"name\": " + jsonQuote(info.name) +
          ", \"sms\": " + std::to_string(d.sms) + ", \"compute_capability\": " +
          jsonQuote(std::to_string(info.computeMajor) + "." +
                    std::to_string(info.computeMinor)) +
          ", \"memory_bytes\": " + std::to_string(info.totalMemoryBytes) +
          ", \"cuda_runtime\": " +
          jsonQuote(formatCudaVersion(env.cudaRuntimeVersion)) +
          ", \"cuda_driver\": " +
          jsonQuote(formatCudaVersion(env.cudaDriverVersion)) +
          ", \"cublaslt\": " +
          jsonQuote(formatVersion(decodeCublasLtVersion(env.cublasLtVersion))) +
          "},\n";
  json += std::string("  \"comm_kernel\": ") +
          (opt.emulated ? "\"emulated\"" : "\"standin\"") + ",\n";
  json += "  \"settings\": {\"quick\": " +
          std::string(opt.quick ? "true" : "false") +
          (opt.emulated ? ", \"emulated_gbps\": " + num(opt.emulatedGbps)
                        : std::string()) +
          ", \"reps\": " + std::to_string(d.reps) +
          ", \"warmup\": " + std::to_string(d.warmup) +
          ", \"pair_target_us\": " + num(pairUs) + "},\n";

  // Launch overhead: empty (one-element) kernels queued back to back.
  {
    const int kernels = 200;
    double us = timeAlone(d, d.compute, [&](cudaStream_t s) {
      std::string error;
      for (int i = 0; i < kernels; ++i)
        checkLaunch(launchFill(d.tiny, DType::BF16, 1, 0, 1.0f, s, error),
                    error);
    });
    json += "  \"launch\": {\"kernels\": " + std::to_string(kernels) +
            ", \"us\": " + num(us) + "},\n";
    std::fprintf(stderr, "launch: %.3f us per kernel\n", us / kernels);
  }

  // Cross-stream event latency: 50 x (a 1/16 copy, then an empty kernel
  // queued behind it), on one stream, against the same with the empty
  // kernel on the comm stream gated by the copy's event (and the compute
  // stream gated back on it, as the executor joins its streams). The
  // difference per pair is what an event gate adds.
  {
    const int pairs = 50;
    cudaEvent_t gate[2 * pairs];
    for (cudaEvent_t &e : gate)
      check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
            "cudaEventCreate");
    Work copy = copyWork(d, d.copyElements / 16, 1);
    auto tiny = [&](cudaStream_t st) {
      std::string error;
      checkLaunch(launchFill(d.tiny, DType::BF16, 1, 0, 1.0f, st, error),
                  error);
    };
    double sameUs = timeAlone(d, d.compute, [&](cudaStream_t st) {
      for (int i = 0; i < pairs; ++i) {
        copy(st);
        tiny(st);
      }
    });
    double crossUs = timeAlone(d, d.compute, [&](cudaStream_t st) {
      for (int i = 0; i < pairs; ++i) {
        copy(st);
        check(cudaEventRecord(gate[2 * i], st), "cudaEventRecord");
        check(cudaStreamWaitEvent(d.comm, gate[2 * i], 0),
              "cudaStreamWaitEvent");
        tiny(d.comm);
        check(cudaEventRecord(gate[2 * i + 1], d.comm), "cudaEventRecord");
        check(cudaStreamWaitEvent(st, gate[2 * i + 1], 0),
              "cudaStreamWaitEvent");
      }
    });
    for (cudaEvent_t e : gate)
      cudaEventDestroy(e);
    // Each cross pair has two gates (there and back); the engine charges
    // one per cross-stream dependence.
    double perGateUs = std::max(0.0, (crossUs - sameUs) / (2.0 * pairs));
    json += "  \"event_latency\": {\"pairs\": " + std::to_string(pairs) +
            ", \"same_stream_us\": " + num(sameUs) +
            ", \"cross_stream_us\": " + num(crossUs) +
            ", \"per_gate_us\": " + num(perGateUs) + "},\n";
    std::fprintf(stderr, "event latency: %.2f us per cross-stream gate\n",
                 perGateUs);
  }

  // HBM: a full-device element-wise copy; bytes = read + written.
  json += "  \"hbm\": [";
  {
    bool first = true;
    for (int64_t elements : {d.copyElements / 4, d.copyElements}) {
      double us = timeAlone(d, d.compute, copyWork(d, elements, 1));
      int64_t bytes = 4 * elements;
      json += std::string(first ? "\n" : ",\n") +
              "    {\"bytes\": " + std::to_string(bytes) +
              ", \"us\": " + num(us) + "}";
      first = false;
      std::fprintf(stderr, "hbm: %lld bytes in %.1f us (%.0f GB/s)\n",
                   (long long)bytes, us, bytes / us / 1e3);
    }
  }
  json += "\n  ],\n";

  // The norm kernels and the layout copy kernel alone: `count` kernels back
  // to back (as a step's queue runs them), each on its own slice of a pool
  // larger than the L2 where the shape allows, so that their traffic
  // reaches HBM; `us` is per kernel. `bytes` is what the cost model counts
  // for the op (docs/cost-model.md): norm x + w + y, norm_grad dy + x + w +
  // dx + dw (bf16 throughout), a copy its rows read and written.
  {
    const int count = opt.quick ? 10 : 20;
    const int64_t poolBytes = opt.quick ? (128ll << 20) : (512ll << 20);
    void *poolA = deviceAlloc(poolBytes, "cudaMalloc norm/copy pool");
    void *poolB = deviceAlloc(poolBytes, "cudaMalloc norm/copy pool");
    void *poolC = deviceAlloc(poolBytes, "cudaMalloc norm/copy pool");
    fillRandom(d, poolA, poolBytes / 2, 5);
    fillRandom(d, poolB, poolBytes / 2, 6);
    // Slot i of a pool for footprints of `bytes` (rounded up to 256 bytes):
    // the pool holds `slots(bytes)` of them, used round-robin.
    auto slots = [&](int64_t bytes) {
      return std::max<int64_t>(
          1, std::min<int64_t>(count, poolBytes / ((bytes + 255) / 256 * 256)));
    };
    auto at = [&](void *pool, int64_t bytes, int i) {
      return static_cast<char *>(pool) +
             (i % slots(bytes)) * ((bytes + 255) / 256 * 256);
    };

    std::vector<int64_t> normRows =
        opt.quick ? std::vector<int64_t>{512, 2048}
                  : std::vector<int64_t>{512, 2048, 4096, 16384};
    std::vector<int64_t> normCols =
        opt.quick ? std::vector<int64_t>{8192}
                  : std::vector<int64_t>{4096, 8192, 12288};
    int64_t maxRows = normRows.back(), maxCols = normCols.back();
    void *w = deviceAlloc(2 * maxCols, "cudaMalloc norm weight");
    void *dw = deviceAlloc(2 * maxCols, "cudaMalloc norm weight grad");
    fillRandom(d, w, maxCols, 7);
    void *scratch = deviceAlloc(normGradScratchBytes(maxRows, maxCols),
                                "cudaMalloc norm_grad scratch");
    json += "  \"norm\": [";
    bool first = true;
    for (int64_t rows : normRows)
      for (int64_t cols : normCols) {
        const int64_t tensor = 2 * rows * cols;
        if (tensor > poolBytes)
          continue;
        for (bool grad : {false, true}) {
          double us = timeAlone(d, d.compute, [&](cudaStream_t st) {
            std::string error;
            for (int i = 0; i < count; ++i) {
              bool ok =
                  grad
                      ? launchNormGrad(NormKind::Rms, at(poolB, tensor, i),
                                       at(poolA, tensor, i), DType::BF16, w,
                                       DType::BF16, at(poolC, tensor, i), dw,
                                       rows, cols, scratch, st, error)
                      : launchNorm(NormKind::Rms, at(poolA, tensor, i),
                                   DType::BF16, w, DType::BF16,
                                   at(poolC, tensor, i), rows, cols, st, error);
              checkLaunch(ok, error);
            }
          });
          us /= count;
          int64_t bytes =
              grad ? 3 * tensor + 2 * 2 * cols : 2 * tensor + 2 * cols;
          json += std::string(first ? "\n" : ",\n") +
                  "    {\"kind\": " + (grad ? "\"norm_grad\"" : "\"norm\"") +
                  ", \"norm\": \"rms\", \"dtype\": \"bf16\", \"rows\": " +
                  std::to_string(rows) + ", \"cols\": " + std::to_string(cols) +
                  ", \"bytes\": " + std::to_string(bytes) +
                  ", \"count\": " + std::to_string(count) +
                  ", \"us\": " + num(us) + "}";
          first = false;
          std::fprintf(stderr, "%s %lldx%lld: %.2f us (%.0f GB/s)\n",
                       grad ? "norm_grad" : "norm", (long long)rows,
                       (long long)cols, us, bytes / us / 1e3);
        }
      }
    json += "\n  ],\n";
    check(cudaFree(w), "cudaFree");
    check(cudaFree(dw), "cudaFree");
    check(cudaFree(scratch), "cudaFree");

    // launchCopy2D as the plans' layout copies use it: contiguous blocks
    // (ring_concat, concats of shared values), interleaved concats (the
    // destination's pitch n times the row) and interleaved slices (the
    // source's).
    struct CopyCase {
      int64_t rows, rowBytes, srcPitch, dstPitch;
    };
    std::vector<CopyCase> copies =
        opt.quick
            ? std::vector<CopyCase>{{1024, 16384, 16384, 16384},
                                    {2048, 7168, 7168, 57344}}
            : std::vector<CopyCase>{
                  {256, 16384, 16384, 16384},   {4096, 16384, 16384, 16384},
                  {16384, 16384, 16384, 16384}, {1024, 7168, 7168, 57344},
                  {8192, 7168, 7168, 57344},    {2048, 4096, 16384, 4096},
                  {16384, 4096, 16384, 4096},   {8192, 2048, 2048, 16384}};
    json += "  \"strided_copy\": [";
    first = true;
    for (const CopyCase &c : copies) {
      int64_t srcSpan = c.rows * c.srcPitch, dstSpan = c.rows * c.dstPitch;
      int64_t span = std::max(srcSpan, dstSpan);
      if (span > poolBytes)
        continue;
      double us = timeAlone(d, d.compute, [&](cudaStream_t st) {
        std::string error;
        for (int i = 0; i < count; ++i)
          checkLaunch(launchCopy2D(at(poolC, span, i), c.dstPitch,
                                   at(poolA, span, i), c.srcPitch, c.rowBytes,
                                   c.rows, st, error),
                      error);
      });
      us /= count;
      int64_t bytes = 2 * c.rows * c.rowBytes;
      json += std::string(first ? "\n" : ",\n") +
              "    {\"rows\": " + std::to_string(c.rows) +
              ", \"row_bytes\": " + std::to_string(c.rowBytes) +
              ", \"src_pitch\": " + std::to_string(c.srcPitch) +
              ", \"dst_pitch\": " + std::to_string(c.dstPitch) +
              ", \"bytes\": " + std::to_string(bytes) +
              ", \"count\": " + std::to_string(count) + ", \"us\": " + num(us) +
              "}";
      first = false;
      std::fprintf(stderr,
                   "copy %lld rows of %lld bytes (pitches %lld, %lld): %.2f us "
                   "(%.0f GB/s)\n",
                   (long long)c.rows, (long long)c.rowBytes,
                   (long long)c.srcPitch, (long long)c.dstPitch, us,
                   bytes / us / 1e3);
    }
    json += "\n  ],\n";
    check(cudaFree(poolA), "cudaFree");
    check(cudaFree(poolB), "cudaFree");
    check(cudaFree(poolC), "cudaFree");
  }

  // Single GEMMs.
  json += "  \"gemm\": [";
  {
    bool first = true;
    for (const Shape &s : shapes)
      for (int t : targets) {
        double us = timeAlone(d, d.compute, gemmWork(d, s.m, s.n, s.k, t, 1));
        json += std::string(first ? "\n" : ",\n") +
                "    {\"m\": " + std::to_string(s.m) +
                ", \"n\": " + std::to_string(s.n) +
                ", \"k\": " + std::to_string(s.k) +
                ", \"sm_target\": " + std::to_string(t) +
                ", \"us\": " + num(us) + "}";
        first = false;
        std::fprintf(stderr, "gemm %lldx%lldx%lld target %d: %.1f us\n",
                     (long long)s.m, (long long)s.n, (long long)s.k, t, us);
      }
  }
  json += "\n  ],\n";

  // The stand-in alone: gives its bandwidth on k CTAs, used to size pairs.
  std::vector<double> copyBytesPerUs;
  json += "  \"standalone_copy\": [";
  for (size_t i = 0; i < ctas.size(); ++i) {
    double us = timeAlone(d, d.comm, standinWork(d, ctas[i], copyBytes));
    copyBytesPerUs.push_back(double(copyBytes) / us);
    json += std::string(i ? ",\n" : "\n") +
            "    {\"ctas\": " + std::to_string(ctas[i]) +
            ", \"bytes\": " + std::to_string(copyBytes) +
            ", \"us\": " + num(us) + "}";
    std::fprintf(stderr, "stand-in %d CTAs: %.1f us (%.0f GB/s)\n", ctas[i], us,
                 copyBytes / us / 1e3);
  }
  json += "\n  ],\n";

  // Stand-in bytes that take about `us` alone on k CTAs (whole MiB).
  auto bytesFor = [&](size_t ci, double us) {
    int64_t mib = int64_t(std::llround(copyBytesPerUs[ci] * us / (1 << 20)));
    return std::max<int64_t>(1, mib) << 20;
  };
  // The pairs' communication side for `us` of GEMMs on k = ctas[ci] CTAs:
  // its bytes, and the kernel.
  // The emulated kernel moves --emulated-gbps, but at most half what the
  // stand-in moves on the same CTAs, so that it is paced (takes `us`
  // alone) rather than limited by its CTAs.
  auto commBytes = [&](size_t ci, double us) -> int64_t {
    if (opt.emulated) {
      double bytesPerUs =
          std::min(opt.emulatedGbps * 1e3, 0.5 * copyBytesPerUs[ci]);
      return std::max<int64_t>(16, int64_t(bytesPerUs * us) / 16 * 16);
    }
    return bytesFor(ci, us);
  };
  auto commWork = [&](size_t ci, double us) -> Work {
    int64_t bytes = commBytes(ci, us);
    if (opt.emulated)
      return emulatedWork(d, ctas[ci], us, bytes);
    return standinWork(d, ctas[ci], bytes);
  };

  // GEMM + stand-in pairs. The GEMM count and the stand-in's bytes are
  // chosen once per (shape, k) from the all-SM GEMM, so the two SM targets
  // do the same work and their spans compare directly.
  json += "  \"pairs\": [";
  {
    bool first = true;
    for (const Shape &s : pairShapes) {
      double gemmUs = timeAlone(d, d.compute, gemmWork(d, s.m, s.n, s.k, 0, 1));
      int count = std::max(1, int(std::lround(pairUs / gemmUs)));
      for (size_t ci = 0; ci < ctas.size(); ++ci) {
        int k = ctas[ci];
        int64_t bytes = commBytes(ci, count * gemmUs);
        Work copy = commWork(ci, count * gemmUs);
        double copyAlone = timeAlone(d, d.comm, copy);
        for (int target : {0, d.sms - k}) {
          Work gemms = gemmWork(d, s.m, s.n, s.k, target, count);
          double gemmAlone = timeAlone(d, d.compute, gemms);
          Overlap o = timeOverlapped(d, gemms, copy);
          double serial = timeAlone(d, d.compute, [&](cudaStream_t st) {
            gemms(st);
            copy(st);
          });
          json += std::string(first ? "\n" : ",\n") +
                  "    {\"m\": " + std::to_string(s.m) +
                  ", \"n\": " + std::to_string(s.n) +
                  ", \"k\": " + std::to_string(s.k) +
                  ", \"gemm_count\": " + std::to_string(count) +
                  ", \"gemm_sm_target\": " + std::to_string(target) +
                  ", \"comm_ctas\": " + std::to_string(k) +
                  ", \"bytes\": " + std::to_string(bytes) +
                  ", \"gemm_alone_us\": " + num(gemmAlone) +
                  ", \"copy_alone_us\": " + num(copyAlone) +
                  ", \"gemm_overlapped_us\": " + num(o.primaryUs) +
                  ", \"copy_overlapped_us\": " + num(o.copyUs) +
                  ", \"span_us\": " + num(o.spanUs) +
                  ", \"serial_us\": " + num(serial) + "}";
          first = false;
          std::fprintf(stderr,
                       "pair %lldx%lldx%lld x%d target %d, %d CTAs: span "
                       "%.1f us, serial %.1f us\n",
                       (long long)s.m, (long long)s.n, (long long)s.k, count,
                       target, k, o.spanUs, serial);
        }
      }
    }
  }
  json += "\n  ],\n";

  // Element-wise copy + stand-in pairs: the memory_slowdown column.
  json += "  \"memory_pairs\": [";
  {
    const int64_t elements = d.copyElements;
    const int64_t memBytes = 4 * elements;
    double memUs = timeAlone(d, d.compute, copyWork(d, elements, 1));
    int count = std::max(1, int(std::lround(pairUs / memUs)));
    Work mem = copyWork(d, elements, count);
    double memAlone = timeAlone(d, d.compute, mem);
    for (size_t ci = 0; ci < ctas.size(); ++ci) {
      int64_t bytes = commBytes(ci, count * memUs);
      Work copy = commWork(ci, count * memUs);
      double copyAlone = timeAlone(d, d.comm, copy);
      Overlap o = timeOverlapped(d, mem, copy);
      double serial = timeAlone(d, d.compute, [&](cudaStream_t st) {
        mem(st);
        copy(st);
      });
      json += std::string(ci ? ",\n" : "\n") +
              "    {\"comm_ctas\": " + std::to_string(ctas[ci]) +
              ", \"bytes\": " + std::to_string(bytes) +
              ", \"mem_bytes\": " + std::to_string(memBytes) +
              ", \"mem_count\": " + std::to_string(count) +
              ", \"mem_alone_us\": " + num(memAlone) +
              ", \"copy_alone_us\": " + num(copyAlone) +
              ", \"mem_overlapped_us\": " + num(o.primaryUs) +
              ", \"copy_overlapped_us\": " + num(o.copyUs) +
              ", \"span_us\": " + num(o.spanUs) +
              ", \"serial_us\": " + num(serial) + "}";
      std::fprintf(stderr,
                   "memory pair x%d, %d CTAs: span %.1f us, serial %.1f us\n",
                   count, ctas[ci], o.spanUs, serial);
    }
  }
  json += "\n  ]";

  if (opt.emulated) {
    // The copy engines' per-copy cost: 4 KiB device-to-device copies back
    // to back on one stream; `us` is per copy (issue and completion).
    const int copies = 200;
    const int64_t copyBytes = 4096;
    double us = timeAlone(d, d.compute, [&](cudaStream_t st) {
      for (int i = 0; i < copies; ++i)
        check(cudaMemcpyAsync(d.dst, d.src, copyBytes, cudaMemcpyDeviceToDevice,
                              st),
              "cudaMemcpyAsync");
    });
    json +=
        ",\n  \"copy_engine_latency\": {\"copies\": " + std::to_string(copies) +
        ", \"bytes\": " + std::to_string(copyBytes) +
        ", \"us\": " + num(us / copies) + "}";
    std::fprintf(stderr, "copy engine: %.3f us per %lld-byte copy\n",
                 us / copies, (long long)copyBytes);

    // Compute next to a copy-engine emulated all-gather paced to the
    // compute side's time alone, moving --emulated-gbps of HBM traffic
    // (its copies read and write its output bytes once each).
    auto ceBytesFor = [&](double paceUs) {
      const int64_t grain = int64_t(ceRanks) * 256;
      int64_t bytes = int64_t(opt.emulatedGbps * 1e3 * paceUs / 2);
      return std::max<int64_t>(grain, bytes / grain * grain);
    };
    json += ",\n  \"copy_engine_pairs\": [";
    bool first = true;
    // One pair: `compute` (count kernels, `computeUs` alone in total) and
    // the collective; `what` holds the entry's side-specific fields.
    auto pair = [&](const std::string &what, const std::string &label,
                    const Work &compute, int count, double computeUs) {
      int64_t bytes = ceBytesFor(computeUs);
      void *ceIn = deviceAlloc(bytes / ceRanks, "cudaMalloc copy-engine in");
      void *ceOut = deviceAlloc(bytes, "cudaMalloc copy-engine out");
      fillRandom(d, ceIn, bytes / ceRanks / 2, 8);
      Work ce = copyEngineWork(d, ceIn, ceOut, ceRanks, bytes, computeUs);
      double computeAlone = timeAlone(d, d.compute, compute);
      double ceAlone = timeAlone(d, d.comm, ce);
      Overlap o = timeOverlapped(d, compute, ce);
      double serial = timeAlone(d, d.compute, [&](cudaStream_t st) {
        compute(st);
        ce(st);
      });
      json += std::string(first ? "\n" : ",\n") + "    {" + what +
              ", \"count\": " + std::to_string(count) +
              ", \"ranks\": " + std::to_string(ceRanks) +
              ", \"bytes\": " + std::to_string(bytes) +
              ", \"compute_alone_us\": " + num(computeAlone) +
              ", \"ce_alone_us\": " + num(ceAlone) +
              ", \"compute_overlapped_us\": " + num(o.primaryUs) +
              ", \"ce_overlapped_us\": " + num(o.copyUs) +
              ", \"span_us\": " + num(o.spanUs) +
              ", \"serial_us\": " + num(serial) + "}";
      first = false;
      std::fprintf(stderr,
                   "copy-engine pair %s x%d, %lld bytes gathered: span %.1f "
                   "us, serial %.1f us\n",
                   label.c_str(), count, (long long)bytes, o.spanUs, serial);
      check(cudaFree(ceIn), "cudaFree");
      check(cudaFree(ceOut), "cudaFree");
    };
    // GEMMs on every SM, and with one SM left free (SM target S-1) for the
    // collective's 1-CTA pacing kernels: a GEMM whose CTAs fill every SM
    // holds them off until its CTAs retire. The same work for both.
    for (const Shape &s : ceShapes) {
      double gemmUs = timeAlone(d, d.compute, gemmWork(d, s.m, s.n, s.k, 0, 1));
      int count = std::max(1, int(std::lround(pairUs / gemmUs)));
      for (int target : {0, d.sms - 1})
        pair("\"side\": \"gemm\", \"m\": " + std::to_string(s.m) + ", \"n\": " +
                 std::to_string(s.n) + ", \"k\": " + std::to_string(s.k) +
                 ", \"gemm_sm_target\": " + std::to_string(target),
             "gemm " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                 std::to_string(s.k) + " target " + std::to_string(target),
             gemmWork(d, s.m, s.n, s.k, target, count), count, count * gemmUs);
    }
    for (int64_t elements : {d.copyElements / 4, d.copyElements}) {
      double memUs = timeAlone(d, d.compute, copyWork(d, elements, 1));
      int count = std::max(1, int(std::lround(pairUs / memUs)));
      int64_t memBytes = 4 * elements;
      pair("\"side\": \"memory\", \"mem_bytes\": " + std::to_string(memBytes),
           "memory " + std::to_string(memBytes) + " bytes",
           copyWork(d, elements, count), count, count * memUs);
    }
    json += "\n  ]";
  }
  json += "\n}\n";

  if (std::fputs(json.c_str(), out) < 0 || std::fclose(out) != 0)
    die("cannot write '" + opt.out + "': " + std::strerror(errno));
  std::fprintf(stderr, "wrote %s\n", opt.out.c_str());
  return 0;
}
