//===- tandem-run.cpp - Execute a Tandem plan on GPUs ---------------------===//
//
// Runs a plan (tandem-opt --tandem-export-plan) for warm-up and timed
// iterations and prints the median step time, the measured exposed
// communication and the simulator's prediction stored in the plan. With
// --check it also runs the unscheduled reference plan on the same inputs and
// compares every output. One thread per GPU on one node; one process per
// rank under an MPI launcher when built with MPI.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Environment.h"
#include "tandem/runtime/Executor.h"
#include "tandem/runtime/Fidelity.h"
#include "tandem/runtime/Format.h"
#include "tandem/runtime/Plan.h"
#include "tandem/runtime/RunTrace.h"
#include "tandem/runtime/ToolSupport.h"

#include <cuda_runtime_api.h>

#ifdef TANDEM_HAVE_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace tandem::runtime;

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitError = 1;
constexpr int kExitCheckFailed = 3;

void printHelp(std::FILE *out) {
  std::fputs(
      "usage: tandem-run PLAN.json [options]\n"
      "\n"
      "Executes a Tandem execution plan and reports its step time.\n"
      "\n"
      "  --warmup N              warm-up iterations (default 3)\n"
      "  --iters N               timed iterations; the median is reported "
      "(default 10)\n"
      "  --gpus N                ranks as threads on GPUs 0..N-1 of this node\n"
      "                          (default: the plan's group size)\n"
      "  --standin-collectives   single-GPU mode: run one rank's program and\n"
      "                          replace every collective by device copies of\n"
      "                          the same byte volume (NOT communication)\n"
      "  --emulate-fabric        single-GPU mode: run one rank's program on\n"
      "                          an EMULATED fabric: every collective is a\n"
      "                          local kernel on its CTA budget paced to the\n"
      "                          plan's predicted alone_us, a copy-engine one\n"
      "                          paced device copies (NOT communication)\n"
      "  --fabric-gbps G         emulation rate for collectives without\n"
      "                          alone_us: bus bytes / G GB/s (nccl-tests "
      "busbw)\n"
      "  --fabric-latency-us L   plus L us per collective (default 0)\n"
      "  --standin-rank R        the rank whose program the stand-in mode "
      "runs\n"
      "                          (default 0)\n"
      "  --check                 also run --reference and compare all outputs\n"
      "  --reference REF.json    the unscheduled reference plan for --check\n"
      "  --trace FILE            Chrome trace: measured steps of rank 0 next\n"
      "                          to the plan's predicted timeline\n"
      "  --json FILE             machine-readable report\n"
      "  --graph                 capture the step in a CUDA graph (no per-op\n"
      "                          timing)\n"
      "  --sync-each-step        synchronise after every step (debugging: an\n"
      "                          execution error then names its op)\n"
      "  --separate-buffers      one allocation per buffer instead of the\n"
      "                          planned arena (debugging, with memcheck)\n"
      "  --attention IMPL        how attention steps run: fused (default,\n"
      "                          Tandem's kernels), unfused, cudnn (cuDNN's\n"
      "                          fused attention, deterministic backward;\n"
      "                          a runtime built with cuDNN) or\n"
      "                          cudnn-nondeterministic (its atomic\n"
      "                          backward); the environment variable\n"
      "                          TANDEM_ATTENTION sets the default\n"
      "  --timeout S             abort if a step takes longer (default 300)\n"
      "  --inject-host-delay I:US  fault injection: the host waits US\n"
      "                          microseconds before enqueueing step I of the\n"
      "                          plan (not the reference); repeatable\n"
      "  --seed S                input seed (default 1)\n"
      "  --rank-seeds            inputs differ per rank (rank R's input I\n"
      "                          gets seed S + I + R * 2^32, the --check\n"
      "                          reference's alike), so that a collective\n"
      "                          that reads the wrong rank shows in --check;\n"
      "                          real collectives only (default: every rank\n"
      "                          the same inputs)\n"
      "  --device D              first GPU to use (default 0)\n"
      "\n"
      "Exit codes: 0 success, 1 runtime error, 2 usage or plan error,\n"
      "3 --check found a mismatch.\n",
      out);
}

struct Options {
  std::string planPath, referencePath, tracePath, jsonPath;
  int warmup = 3, iters = 10, gpus = 0, device = 0, standinRank = 0;
  bool standin = false, check = false, graph = false, syncEach = false;
  bool emulate = false; // implies standin (one rank's program on one GPU)
  double fabricGbps = 0, fabricLatencyUs = 0;
  bool separateBuffers = false;
  bool rankSeeds = false;
  AttentionImpl attention = AttentionImpl::Fused;
  bool cudnnDeterministic = true;
  double timeout = 300;
  uint64_t seed = 1;
  std::vector<std::pair<int64_t, double>> hostDelays;
};

bool parseInt(const char *text, long long min, long long &out) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  if (errno || !end || *end || v < min)
    return false;
  out = v;
  return true;
}

bool parseAttention(const char *text, Options &o) {
  std::string v = text;
  o.cudnnDeterministic = v != "cudnn-nondeterministic";
  if (v == "fused")
    o.attention = AttentionImpl::Fused;
  else if (v == "unfused")
    o.attention = AttentionImpl::Unfused;
  else if (v == "cudnn" || v == "cudnn-nondeterministic")
    o.attention = AttentionImpl::Cudnn;
  else
    return false;
  return true;
}

int parseArgs(int argc, char **argv, Options &o) {
  if (const char *env = std::getenv("TANDEM_ATTENTION");
      env && !parseAttention(env, o)) {
    std::fprintf(stderr,
                 "tandem-run: TANDEM_ATTENTION must be fused, unfused, cudnn "
                 "or cudnn-nondeterministic, got '%s'\n",
                 env);
    return kExitUsage;
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *name) -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tandem-run: %s needs a value\n", name);
        return nullptr;
      }
      return argv[++i];
    };
    auto integer = [&](const char *name, long long min, int &out) {
      const char *v = value(name);
      long long n;
      if (!v)
        return false;
      if (!parseInt(v, min, n)) {
        std::fprintf(stderr,
                     "tandem-run: %s needs an integer >= %lld, got '%s'\n",
                     name, min, v);
        return false;
      }
      out = static_cast<int>(n);
      return true;
    };
    if (a == "--help" || a == "-h") {
      printHelp(stdout);
      std::exit(0);
    } else if (a == "--warmup") {
      if (!integer("--warmup", 0, o.warmup))
        return kExitUsage;
    } else if (a == "--iters") {
      if (!integer("--iters", 1, o.iters))
        return kExitUsage;
    } else if (a == "--gpus") {
      if (!integer("--gpus", 1, o.gpus))
        return kExitUsage;
    } else if (a == "--device") {
      if (!integer("--device", 0, o.device))
        return kExitUsage;
    } else if (a == "--standin-rank") {
      if (!integer("--standin-rank", 0, o.standinRank))
        return kExitUsage;
    } else if (a == "--seed") {
      int s;
      if (!integer("--seed", 0, s))
        return kExitUsage;
      o.seed = s;
    } else if (a == "--timeout") {
      const char *v = value("--timeout");
      if (!v)
        return kExitUsage;
      char *end = nullptr;
      o.timeout = std::strtod(v, &end);
      if (!end || *end || !(o.timeout > 0)) {
        std::fprintf(stderr,
                     "tandem-run: --timeout needs seconds > 0, got '%s'\n", v);
        return kExitUsage;
      }
    } else if (a == "--attention") {
      const char *v = value("--attention");
      if (!v)
        return kExitUsage;
      if (!parseAttention(v, o)) {
        std::fprintf(stderr,
                     "tandem-run: --attention must be fused, unfused, cudnn "
                     "or cudnn-nondeterministic, got '%s'\n",
                     v);
        return kExitUsage;
      }
    } else if (a == "--emulate-fabric") {
      o.emulate = true;
      o.standin = true;
    } else if (a == "--fabric-gbps" || a == "--fabric-latency-us") {
      const char *v = value(a.c_str());
      if (!v)
        return kExitUsage;
      char *end = nullptr;
      double x = std::strtod(v, &end);
      bool gbps = a == "--fabric-gbps";
      if (!end || *end || !(gbps ? x > 0 : x >= 0)) {
        std::fprintf(stderr, "tandem-run: %s needs a number %s, got '%s'\n",
                     a.c_str(), gbps ? "> 0" : ">= 0", v);
        return kExitUsage;
      }
      (gbps ? o.fabricGbps : o.fabricLatencyUs) = x;
    } else if (a == "--inject-host-delay") {
      const char *v = value("--inject-host-delay");
      if (!v)
        return kExitUsage;
      const char *colon = std::strchr(v, ':');
      long long step = -1;
      char *end = nullptr;
      double us = colon ? std::strtod(colon + 1, &end) : -1;
      if (!colon || !parseInt(std::string(v, colon).c_str(), 0, step) || !end ||
          *end || !(us > 0)) {
        std::fprintf(stderr,
                     "tandem-run: --inject-host-delay needs STEP:US with a "
                     "step index >= 0 and a delay > 0, got '%s'\n",
                     v);
        return kExitUsage;
      }
      o.hostDelays.emplace_back(step, us);
    } else if (a == "--standin-collectives") {
      o.standin = true;
    } else if (a == "--check") {
      o.check = true;
    } else if (a == "--graph") {
      o.graph = true;
    } else if (a == "--sync-each-step") {
      o.syncEach = true;
    } else if (a == "--separate-buffers") {
      o.separateBuffers = true;
    } else if (a == "--rank-seeds") {
      o.rankSeeds = true;
    } else if (a == "--reference") {
      const char *v = value("--reference");
      if (!v)
        return kExitUsage;
      o.referencePath = v;
    } else if (a == "--trace") {
      const char *v = value("--trace");
      if (!v)
        return kExitUsage;
      o.tracePath = v;
    } else if (a == "--json") {
      const char *v = value("--json");
      if (!v)
        return kExitUsage;
      o.jsonPath = v;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "tandem-run: unknown option '%s' (see --help)\n",
                   a.c_str());
      return kExitUsage;
    } else if (o.planPath.empty()) {
      o.planPath = a;
    } else {
      std::fprintf(stderr, "tandem-run: more than one plan given ('%s')\n",
                   a.c_str());
      return kExitUsage;
    }
  }
  if (o.planPath.empty()) {
    std::fprintf(stderr, "tandem-run: no plan given (see --help)\n");
    return kExitUsage;
  }
  if ((o.fabricGbps > 0 || o.fabricLatencyUs > 0) && !o.emulate) {
    std::fprintf(stderr, "tandem-run: --fabric-gbps and --fabric-latency-us "
                         "need --emulate-fabric\n");
    return kExitUsage;
  }
  if (o.rankSeeds && o.standin) {
    std::fprintf(stderr,
                 "tandem-run: --rank-seeds needs real collectives (one rank "
                 "per GPU): the single-GPU modes run one rank's program as if "
                 "every rank held its data\n");
    return kExitUsage;
  }
  if (o.check && o.referencePath.empty()) {
    std::fprintf(stderr, "tandem-run: --check needs --reference REF.json\n");
    return kExitUsage;
  }
  if (!o.check && !o.referencePath.empty()) {
    std::fprintf(stderr, "tandem-run: --reference is only used with --check\n");
    return kExitUsage;
  }
  return 0;
}

/// Ranks a plan needs: its groups' size (all groups must agree).
int planRanks(const Plan &plan, std::string &error) {
  int ranks = 1;
  for (const Group &g : plan.groups) {
    if (ranks != 1 && g.size != ranks) {
      error = "groups of different sizes (" + std::to_string(ranks) + " and " +
              std::to_string(g.size) +
              ") are not supported; every group must span all ranks";
      return 0;
    }
    ranks = static_cast<int>(g.size);
  }
  return ranks;
}

/// Whether the optimized plan computes every value exactly as the
/// reference: no chunking, no ring exchange, no SM-count target, no CTA
/// budget (each may change a kernel's reduction order).
bool expectsBitwise(const Plan &plan, std::string &why) {
  for (const Step &s : plan.steps) {
    if (s.kind == StepKind::Slice || s.kind == StepKind::Concat ||
        s.kind == StepKind::RingConcat) {
      why = "the plan splits ops into chunks";
      return false;
    }
    if (s.kind == StepKind::Collective &&
        s.collective == CollectiveKind::Permute) {
      why = "the plan decomposes collectives into ring steps";
      return false;
    }
    if (s.smTarget > 0) {
      why = "the plan sets cuBLASLt SM-count targets (other kernels)";
      return false;
    }
    if (s.commSms > 0) {
      why = "the plan sets NCCL CTA budgets (other reduction order)";
      return false;
    }
  }
  for (const Buffer &b : plan.buffers)
    if (b.role == Buffer::Role::View) {
      why = "the plan splits ops into chunks";
      return false;
    }
  return true;
}

struct RankResult {
  bool ok = true;
  std::string error;
  std::vector<double> stepUs;
  RunResult last;
  std::vector<std::vector<uint8_t>> outputs, referenceOutputs;
  int64_t deviceBytes = 0;
  std::string attention, emulation;
};

struct Shared {
  std::vector<std::string> ids, referenceIds;
  /// Threads of one process: their exchange (copy-engine collectives).
  std::unique_ptr<ThreadExchange> exchange;
  bool underMpi = false;
};

#ifdef TANDEM_HAVE_MPI
/// ExecutorOptions::exchange across MPI processes.
bool mpiExchange(const std::string &mine, std::vector<std::string> &all,
                 std::string &error) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(size), offsets(size);
  if (MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT,
                    MPI_COMM_WORLD) != MPI_SUCCESS) {
    error = "MPI_Allgather of the record sizes failed";
    return false;
  }
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string buffer(total, '\0');
  if (MPI_Allgatherv(mine.data(), length, MPI_BYTE, buffer.data(),
                     lengths.data(), offsets.data(), MPI_BYTE,
                     MPI_COMM_WORLD) != MPI_SUCCESS) {
    error = "MPI_Allgatherv of the records failed";
    return false;
  }
  all.clear();
  for (int r = 0; r < size; ++r)
    all.push_back(buffer.substr(offsets[r], lengths[r]));
  return true;
}
#endif

bool runPlan(const Plan &plan, const Options &o, int rank, int world,
             int device, const std::vector<std::string> &ids,
             const Shared &shared, int iters, int warmup, bool timeSteps,
             RankResult &r, std::vector<std::vector<uint8_t>> &outputs) {
  ExecutorOptions eo;
  eo.device = device;
  eo.mode = o.emulate   ? CollectiveMode::Emulated
            : o.standin ? CollectiveMode::Standin
                        : CollectiveMode::Nccl;
  eo.fabricGbps = o.fabricGbps;
  eo.fabricLatencyUs = o.fabricLatencyUs;
  eo.rank = o.standin ? o.standinRank : rank;
  eo.worldSize = world;
  eo.communicatorIds = ids;
  if (eo.mode == CollectiveMode::Nccl) {
    if (shared.exchange)
      eo.exchange = shared.exchange->forRank(rank);
#ifdef TANDEM_HAVE_MPI
    if (shared.underMpi)
      eo.exchange = mpiExchange;
#endif
  }
  eo.timeSteps = timeSteps && !o.graph;
  eo.syncEachStep = o.syncEach;
  eo.separateBuffers = o.separateBuffers;
  eo.cudaGraph = o.graph;
  eo.timeoutSeconds = o.timeout;
  eo.attention = o.attention;
  eo.cudnnDeterministic = o.cudnnDeterministic;
  // The reference of --check runs as exported.
  if (iters > 0)
    eo.hostDelays = o.hostDelays;
  std::string error;
  std::unique_ptr<Executor> ex = Executor::create(plan, eo, error);
  uint64_t seed =
      o.rankSeeds ? o.seed + (static_cast<uint64_t>(rank) << 32) : o.seed;
  if (!ex || !ex->initialiseInputs(seed, error)) {
    r.ok = false;
    r.error = error;
    return false;
  }
  r.deviceBytes = std::max(r.deviceBytes, ex->deviceBytes());
  if (r.attention.empty())
    r.attention = ex->attentionSummary();
  if (r.emulation.empty())
    r.emulation = ex->emulationSummary();
  // Outputs come from the first run: later iterations overwrite them with
  // the same values, but accumulating plans must compare one step.
  for (int i = 0; i < warmup + iters; ++i) {
    RunResult res;
    if (!ex->run(res, error)) {
      r.ok = false;
      r.error = error;
      return false;
    }
    if (i == 0 && !ex->readOutputs(outputs, error)) {
      r.ok = false;
      r.error = error;
      return false;
    }
    if (i >= warmup && timeSteps) {
      r.stepUs.push_back(res.stepUs);
      r.last = res;
    }
  }
  return true;
}

void rankMain(const Plan &plan, const Plan *reference, const Options &o,
              int rank, int world, int device, const Shared &shared,
              RankResult &r) {
  bool ok = runPlan(plan, o, rank, world, device, shared.ids, shared, o.iters,
                    o.warmup, true, r, r.outputs) &&
            (!reference ||
             runPlan(*reference, o, rank, world, device, shared.referenceIds,
                     shared, 0, 1, false, r, r.referenceOutputs));
  if (!ok && shared.exchange)
    shared.exchange->fail();
}

/// Time during which no compute step runs on any stream.
double exposedCommunication(const Plan &plan, const RunResult &r) {
  std::vector<std::pair<double, double>> busy;
  for (size_t i = 0; i < plan.steps.size() && i < r.steps.size(); ++i) {
    StepKind k = plan.steps[i].kind;
    if (k == StepKind::Collective || k == StepKind::Sync)
      continue;
    busy.push_back({r.steps[i].startUs, r.steps[i].endUs});
  }
  std::sort(busy.begin(), busy.end());
  double covered = 0, end = 0;
  for (auto [b, e] : busy) {
    b = std::max(b, end);
    if (e > b) {
      covered += e - b;
      end = e;
    }
  }
  double commTotal = 0;
  for (size_t i = 0; i < plan.steps.size() && i < r.steps.size(); ++i)
    if (plan.steps[i].kind == StepKind::Collective)
      commTotal += r.steps[i].endUs - r.steps[i].startUs;
  if (commTotal == 0)
    return 0;
  return std::max(0.0, r.stepUs - covered);
}

struct Comparison {
  std::string name;
  bool bitwise = false, ok = false;
  double relL2 = 0, maxAbs = 0;
  int64_t nonFinite = 0;
};

std::vector<Comparison> compare(const Plan &plan, const Plan &reference,
                                const RankResult &r, bool wantBitwise,
                                std::string &error) {
  std::vector<Comparison> out;
  if (plan.outputs.size() != reference.outputs.size()) {
    error = "the plans have " + std::to_string(plan.outputs.size()) + " and " +
            std::to_string(reference.outputs.size()) + " outputs";
    return out;
  }
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const Buffer &a = plan.buffers[plan.outputs[i]];
    const Buffer &b = reference.buffers[reference.outputs[i]];
    if (a.shape != b.shape || a.type != b.type) {
      error = "output " + std::to_string(i) +
              " differs in shape or element type between the plans";
      return {};
    }
    Comparison c;
    c.name = "output " + std::to_string(i);
    c.bitwise = r.outputs[i] == r.referenceOutputs[i];
    std::vector<float> x = toFloat(r.outputs[i], a.type);
    std::vector<float> y = toFloat(r.referenceOutputs[i], b.type);
    double diff2 = 0, ref2 = 0;
    for (size_t k = 0; k < x.size(); ++k) {
      if (!std::isfinite(x[k]) || !std::isfinite(y[k])) {
        if (!(std::isfinite(x[k]) == std::isfinite(y[k])))
          ++c.nonFinite;
        continue;
      }
      double d = static_cast<double>(x[k]) - y[k];
      diff2 += d * d;
      ref2 += static_cast<double>(y[k]) * y[k];
      c.maxAbs = std::max(c.maxAbs, std::fabs(d));
    }
    c.relL2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
    // f32 matmuls run as TF32 (10-bit mantissa), like bf16's 8 and f16's
    // 11: the bounds allow a few roundings' worth of drift per output.
    double tol = a.type == DType::F32   ? 1e-3
                 : a.type == DType::F16 ? 5e-3
                                        : 1e-2;
    c.ok = wantBitwise ? c.bitwise : (c.nonFinite == 0 && c.relL2 <= tol);
    out.push_back(c);
  }
  return out;
}

bool writeTrace(const std::string &path, const Plan &plan, const RunResult &r,
                int rank) {
  std::ofstream out(path);
  return out && writeRunTrace(out, plan, r.steps, rank);
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (int rc = parseArgs(argc, argv, o))
    return rc;

  int mpiRank = 0, mpiSize = 1;
  bool underMpi = false;
#ifdef TANDEM_HAVE_MPI
  underMpi = std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") ||
             std::getenv("PMIX_RANK");
  if (underMpi) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpiRank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpiSize);
  }
#endif

  std::string error;
  std::optional<Plan> plan = readPlanFile(o.planPath, error);
  if (!plan) {
    std::fprintf(stderr, "tandem-run: %s\n", error.c_str());
    return kExitUsage;
  }
  for (const auto &[step, us] : o.hostDelays) {
    (void)us;
    if (step >= static_cast<int64_t>(plan->steps.size())) {
      std::fprintf(stderr,
                   "tandem-run: --inject-host-delay: step %lld is past the "
                   "plan's %zu steps\n",
                   static_cast<long long>(step), plan->steps.size());
      return kExitUsage;
    }
  }
  std::optional<Plan> reference;
  if (o.check) {
    reference = readPlanFile(o.referencePath, error);
    if (!reference) {
      std::fprintf(stderr, "tandem-run: %s\n", error.c_str());
      return kExitUsage;
    }
    if (reference->inputs.size() != plan->inputs.size()) {
      std::fprintf(stderr,
                   "tandem-run: --check: the plans have %zu and %zu inputs\n",
                   plan->inputs.size(), reference->inputs.size());
      return kExitUsage;
    }
    for (size_t i = 0; i < plan->inputs.size(); ++i) {
      const Buffer &a = plan->buffers[plan->inputs[i]];
      const Buffer &b = reference->buffers[reference->inputs[i]];
      if (a.shape != b.shape || a.type != b.type) {
        std::fprintf(stderr,
                     "tandem-run: --check: input %zu differs in shape or "
                     "element type between the plans\n",
                     i);
        return kExitUsage;
      }
    }
  }

  int64_t copyEngineSteps =
      std::count_if(plan->steps.begin(), plan->steps.end(),
                    [](const Step &s) { return s.copyEngine; });

  int ranks = planRanks(*plan, error);
  if (!ranks) {
    std::fprintf(stderr, "tandem-run: %s\n", error.c_str());
    return kExitUsage;
  }
  int world = o.standin ? 1 : (underMpi ? mpiSize : (o.gpus ? o.gpus : ranks));
  if (!o.standin && world != ranks) {
    std::fprintf(stderr,
                 "tandem-run: the plan's groups have %d ranks but the run has "
                 "%d; run one rank per GPU (--gpus %d, or mpirun -n %d), or "
                 "use --standin-collectives to run one rank's program on one "
                 "GPU\n",
                 ranks, world, ranks, ranks);
    return kExitUsage;
  }
  int devices = 0;
  if (Status s = countDevices(devices); !s.ok()) {
    std::fprintf(stderr, "tandem-run: %s\n", s.message.c_str());
    return kExitError;
  }
  int localRanks = underMpi || o.standin ? 1 : world;
  if (!underMpi && o.device + localRanks > devices) {
    std::fprintf(stderr,
                 "tandem-run: %d rank(s) need GPUs %d..%d but this node has "
                 "%d GPU(s); use --standin-collectives to run one rank's "
                 "program on one GPU\n",
                 localRanks, o.device, o.device + localRanks - 1, devices);
    return kExitError;
  }

  // Communicator ids: made by rank 0, shared with the other threads or
  // broadcast over MPI.
  Shared shared;
  if (!o.standin) {
    auto makeIds = [&](const Plan &p, std::vector<std::string> &ids) {
      ids.clear();
      for (size_t k = 0; k < communicatorKeys(p).size(); ++k) {
        std::string id(kCommIdBytes, '\0');
        if (mpiRank == 0 && !newCommunicatorId(id, error))
          return false;
#ifdef TANDEM_HAVE_MPI
        if (underMpi)
          MPI_Bcast(id.data(), kCommIdBytes, MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
        ids.push_back(id);
      }
      return true;
    };
    if (!makeIds(*plan, shared.ids) ||
        (reference && !makeIds(*reference, shared.referenceIds))) {
      std::fprintf(stderr, "tandem-run: %s\n", error.c_str());
      return kExitError;
    }
  }

  // Copy-engine collectives exchange the ranks' buffer addresses: over MPI
  // between processes, in memory between this process's threads.
  shared.underMpi = underMpi;
  if (!underMpi && !o.standin) // --emulate-fabric sets standin too
    shared.exchange = std::make_unique<ThreadExchange>(localRanks, o.timeout);
  std::vector<RankResult> results(localRanks);
  if (underMpi) {
    // One process per rank: ranks on one node take consecutive GPUs.
    const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    int device = (local ? std::atoi(local) : mpiRank) % devices;
    rankMain(*plan, reference ? &*reference : nullptr, o, mpiRank, world,
             device, shared, results[0]);
  } else {
    std::vector<std::thread> threads;
    for (int r = 0; r < localRanks; ++r)
      threads.emplace_back([&, r] {
        rankMain(*plan, reference ? &*reference : nullptr, o, r, world,
                 o.device + r, shared, results[r]);
      });
    for (std::thread &t : threads)
      t.join();
  }
  for (size_t r = 0; r < results.size(); ++r)
    if (!results[r].ok) {
      std::fprintf(stderr, "tandem-run: rank %d: %s\n",
                   underMpi ? mpiRank : static_cast<int>(r),
                   results[r].error.c_str());
#ifdef TANDEM_HAVE_MPI
      if (underMpi)
        MPI_Abort(MPI_COMM_WORLD, kExitError);
#endif
      return kExitError;
    }

  const RankResult &r0 = results[0];
  double med = median(r0.stepUs);
  double exposed = exposedCommunication(*plan, r0.last);
  // Measured against predicted per op class, from the last timed iteration
  // (per-step timing: not with --graph).
  std::vector<ClassFidelity> classes;
  if (plan->prediction && r0.last.steps.size() == plan->steps.size()) {
    std::vector<double> measured;
    for (const StepTiming &t : r0.last.steps)
      measured.push_back(t.endUs - t.startUs);
    std::string classError;
    classes = compareByClass(*plan, measured, classError);
  }
  bool print = !underMpi || mpiRank == 0;
  if (print) {
    std::printf("plan %s: @%s, %zu steps on %lld stream(s), %d rank(s)%s\n",
                o.planPath.c_str(), plan->function.c_str(), plan->steps.size(),
                static_cast<long long>(plan->numStreams), o.standin ? 1 : world,
                o.emulate
                    ? (copyEngineSteps
                           ? " [SINGLE-GPU EMULATED FABRIC: collectives are "
                             "paced local kernels, copy-engine ones paced "
                             "device copies (COPY-ENGINE EMULATION), not "
                             "communication]"
                           : " [SINGLE-GPU EMULATED FABRIC: collectives are "
                             "paced local kernels, not communication]")
                : o.standin ? " [SINGLE-GPU STAND-IN: collectives are device "
                              "copies, not communication]"
                            : "");
    std::printf("  step time (median of %d)  %10.3f ms%s\n", o.iters,
                med / 1000.0, o.graph ? " (CUDA graph)" : "");
    if (!o.graph)
      std::printf("  exposed communication    %10.3f ms%s\n", exposed / 1000.0,
                  o.emulate   ? " (of the EMULATED fabric)"
                  : o.standin ? " (of the stand-in copies)"
                              : "");
    if (!r0.emulation.empty())
      std::printf("  fabric                   %s\n", r0.emulation.c_str());
    if (plan->prediction) {
      const Prediction &p = *plan->prediction;
      std::printf("  predicted span           %10.3f ms (simulator, target %s);"
                  " measured/predicted %.3f\n",
                  p.spanUs / 1000.0, p.target.c_str(),
                  p.spanUs > 0 ? med / p.spanUs : 0.0);
      std::printf("  predicted exposed comm   %10.3f ms\n",
                  p.exposedCommUs / 1000.0);
      std::printf("  bound max(comp, comm)    %10.3f ms (predicted); "
                  "measured/bound %.3f\n",
                  p.boundUs / 1000.0, p.boundUs > 0 ? med / p.boundUs : 0.0);
    }
    if (!r0.attention.empty())
      std::printf("  attention                %s\n", r0.attention.c_str());
    std::printf("  device memory            %10.3f GiB\n",
                r0.deviceBytes / double(1ll << 30));
    if (!classes.empty()) {
      std::printf("  per op class (sums of step durations, last iteration; "
                  "predicted = in the simulated schedule)%s\n",
                  o.emulate   ? (copyEngineSteps
                                     ? "; collectives: EMULATED fabric, "
                                       "copy-engine ones COPY-ENGINE EMULATION"
                                     : "; collectives: EMULATED fabric")
                  : o.standin ? "; collectives: stand-in copies"
                              : "");
      std::printf("    %-15s %6s %12s %12s %12s %9s\n", "class", "steps",
                  "measured ms", "predicted ms", "alone ms", "meas/pred");
      for (const ClassFidelity &c : classes)
        std::printf("    %-15s %6lld %12.3f %12.3f %12.3f %9.3f\n",
                    c.opClass.c_str(), static_cast<long long>(c.steps),
                    c.measuredUs / 1000.0, c.predictedUs / 1000.0,
                    c.predictedAloneUs / 1000.0, c.ratio());
    } else if (plan->prediction && o.graph) {
      std::printf("  per op class             not measured: --graph times "
                  "only the whole step\n");
    }
  }

  int rc = 0;
  std::string checkText;
  if (o.check) {
    std::string why;
    bool bitwise = expectsBitwise(*plan, why);
    bool allOk = true;
    std::ostringstream report;
    for (size_t r = 0; r < results.size(); ++r) {
      std::string cmpError;
      std::vector<Comparison> cmp =
          compare(*plan, *reference, results[r], bitwise, cmpError);
      if (!cmpError.empty()) {
        std::fprintf(stderr, "tandem-run: --check: %s\n", cmpError.c_str());
        return kExitUsage;
      }
      for (const Comparison &c : cmp) {
        allOk &= c.ok;
        if (!c.ok || print)
          report << "  check rank " << (underMpi ? mpiRank : int(r)) << " "
                 << c.name << ": " << (c.ok ? "ok" : "MISMATCH")
                 << (c.bitwise ? " (bitwise equal)" : "") << " rel_l2 "
                 << c.relL2 << " max_abs " << c.maxAbs
                 << (c.nonFinite ? " non-finite mismatches " +
                                       std::to_string(c.nonFinite)
                                 : "")
                 << "\n";
      }
    }
    checkText = report.str();
    std::printf("%s", checkText.c_str());
    std::printf("  check: %s (%s)\n", allOk ? "PASSED" : "FAILED",
                bitwise ? "bitwise: the plan only reorders and overlaps"
                        : ("tolerance rel_l2 <= 1e-2 bf16 / 5e-3 f16 / "
                           "1e-3 f32 (TF32): " +
                           why)
                              .c_str());
    if (!allOk)
      rc = kExitCheckFailed;
  }

  if (print && !o.tracePath.empty()) {
    if (o.graph)
      std::fprintf(stderr, "tandem-run: --trace needs per-op timing, which "
                           "--graph disables; no trace written\n");
    else if (!writeTrace(o.tracePath, *plan, r0.last, underMpi ? mpiRank : 0)) {
      std::fprintf(stderr, "tandem-run: cannot write trace '%s'\n",
                   o.tracePath.c_str());
      rc = rc ? rc : kExitError;
    }
  }
  if (print && !o.jsonPath.empty()) {
    std::ofstream out(o.jsonPath);
    out << "{\n \"plan\": " << jsonQuote(o.planPath) << ",\n"
        << " \"mode\": \""
        << (o.emulate   ? "emulated-fabric"
            : o.standin ? "standin"
                        : "nccl")
        << "\",\n"
        << " \"fabric\": " << jsonQuote(r0.emulation) << ",\n"
        << " \"ranks\": " << (o.standin ? 1 : world) << ",\n"
        << " \"attention\": " << jsonQuote(r0.attention) << ",\n"
        << " \"median_step_us\": " << med << ",\n"
        << " \"exposed_comm_us\": " << exposed << ",\n"
        << " \"step_us\": [";
    for (size_t i = 0; i < r0.stepUs.size(); ++i)
      out << (i ? ", " : "") << r0.stepUs[i];
    out << "],\n";
    if (plan->prediction)
      out << " \"predicted_span_us\": " << plan->prediction->spanUs << ",\n"
          << " \"predicted_exposed_comm_us\": "
          << plan->prediction->exposedCommUs << ",\n"
          << " \"bound_us\": " << plan->prediction->boundUs << ",\n"
          << " \"measured_over_predicted\": "
          << (plan->prediction->spanUs > 0 ? med / plan->prediction->spanUs
                                           : 0.0)
          << ",\n";
    out << " \"op_classes\": [";
    for (size_t i = 0; i < classes.size(); ++i) {
      const ClassFidelity &c = classes[i];
      out << (i ? ",\n  " : "\n  ") << "{\"class\": " << jsonQuote(c.opClass)
          << ", \"steps\": " << c.steps
          << ", \"predicted_steps\": " << c.predictedSteps
          << ", \"measured_us\": " << c.measuredUs
          << ", \"predicted_us\": " << c.predictedUs
          << ", \"predicted_alone_us\": " << c.predictedAloneUs
          << ", \"measured_over_predicted\": " << c.ratio() << "}";
    }
    out << (classes.empty() ? "],\n" : "\n ],\n");
    out << " \"check\": "
        << (o.check ? (rc == 0 ? "\"passed\"" : "\"failed\"") : "null")
        << "\n}\n";
  }
#ifdef TANDEM_HAVE_MPI
  if (underMpi)
    MPI_Finalize();
#endif
  return rc;
}
