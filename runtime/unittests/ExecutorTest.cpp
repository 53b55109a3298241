//===- ExecutorTest.cpp - Executor modes and attention query rows ---------===//
//
// Copy-engine collectives (Step::copyEngine) through the executor: refused
// in NCCL mode without the ranks' exchange before any device work (runs
// everywhere); on a GPU, in the emulated-fabric and stand-in modes, bitwise
// the outputs of the same plan with its collectives on the SMs, and in
// NCCL mode between two ranks (threads on one GPU) the peers' data, exact.
// Attention steps with query rows (Step::queries) through each attention
// implementation: the last rows of the plan's full attention. Uneven slices
// (Step::weights) and concats of inputs of different sizes: the blocks they
// name, byte for byte. The GPU tests skip, naming the reason, where no CUDA
// device is usable.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Executor.h"
#include "tandem/runtime/CudnnAttention.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

using namespace tandem::runtime;

namespace {

/// Appends a buffer named by its index to `plan`; returns that index.
int64_t addBuffer(Plan &plan, DType type, std::vector<int64_t> shape,
                  Buffer::Role role, int64_t viewOf = -1,
                  int64_t viewOffset = 0) {
  Buffer b;
  b.name = "b" + std::to_string(plan.buffers.size());
  b.type = type;
  b.shape = std::move(shape);
  b.role = role;
  b.viewOf = viewOf;
  b.viewOffset = viewOffset;
  plan.buffers.push_back(b);
  return static_cast<int64_t>(plan.buffers.size() - 1);
}

/// x (64x32, input) -> all_gather over 4 ranks -> g (256x32) ->
/// reduce_scatter (sum) -> r (64x32); outputs g and r. One stream, so the
/// steps are ordered without events. `copyEngine` sets both collectives'
/// transport.
Plan gatherScatterPlan(DType type, bool copyEngine) {
  Plan plan;
  plan.function = "gather_scatter";
  plan.numStreams = 1;
  plan.streamNames = {"comm @tp"};
  plan.streamPriorities = {0};
  plan.groups.push_back({"tp", 4, "switch"});
  auto buffer = [&](std::vector<int64_t> shape, Buffer::Role role) {
    return addBuffer(plan, type, std::move(shape), role);
  };
  int64_t x = buffer({64, 32}, Buffer::Role::Input);
  int64_t g = buffer({256, 32}, Buffer::Role::Temp);
  int64_t r = buffer({64, 32}, Buffer::Role::Temp);
  plan.inputs = {x};
  auto collective = [&](CollectiveKind kind, int64_t in, int64_t out) {
    Step s;
    s.kind = StepKind::Collective;
    s.name = kind == CollectiveKind::AllGather ? "tandem.all_gather"
                                               : "tandem.reduce_scatter";
    s.collective = kind;
    s.group = 0;
    s.copyEngine = copyEngine;
    s.inputs = {in};
    s.outputs = {out};
    plan.steps.push_back(s);
  };
  collective(CollectiveKind::AllGather, x, g);
  collective(CollectiveKind::ReduceScatter, g, r);
  plan.outputs = {g, r};
  return plan;
}

TEST(ExecutorHostTest, NcclModeCopyEngineCollectivesNeedTheExchange) {
  Plan plan = gatherScatterPlan(DType::BF16, true);
  ASSERT_EQ(validatePlan(plan), "");
  for (bool exchange : {false, true}) {
    EXPECT_EQ(checkCollectiveMode(plan, CollectiveMode::Emulated, exchange),
              "");
    EXPECT_EQ(checkCollectiveMode(plan, CollectiveMode::Standin, exchange), "");
    EXPECT_EQ(checkCollectiveMode(gatherScatterPlan(DType::BF16, false),
                                  CollectiveMode::Nccl, exchange),
              "");
  }
  EXPECT_EQ(checkCollectiveMode(plan, CollectiveMode::Nccl, true), "");
  std::string why = checkCollectiveMode(plan, CollectiveMode::Nccl, false);
  EXPECT_NE(why.find("step 0 (tandem.all_gather): transport copy_engine: a "
                     "copy-engine collective across GPUs pulls the peers' "
                     "buffers directly, and this launcher gives no exchange"),
            std::string::npos)
      << why;
  // Executor::create refuses it before touching the device, so this holds
  // on machines without a GPU too.
  ExecutorOptions options;
  options.mode = CollectiveMode::Nccl;
  options.worldSize = 4;
  std::string error;
  EXPECT_EQ(Executor::create(plan, options, error), nullptr);
  EXPECT_EQ(error, why);
  // They need no NCCL communicator.
  EXPECT_TRUE(communicatorKeys(plan).empty());
  EXPECT_EQ(communicatorKeys(gatherScatterPlan(DType::BF16, false)).size(), 1u);
}

bool gpuPresent(std::string &reason) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    reason =
        std::string("no usable CUDA device: cudaGetDeviceCount returned ") +
        cudaGetErrorName(status);
    return false;
  }
  if (count == 0) {
    reason = "no usable CUDA device: cudaGetDeviceCount found none";
    return false;
  }
  return true;
}

/// The plan's outputs after one run in `mode` as rank `rank`.
std::vector<std::vector<uint8_t>> runOnce(const Plan &plan, CollectiveMode mode,
                                          int rank) {
  ExecutorOptions options;
  options.mode = mode;
  options.rank = rank;
  // No predicted alone_us in this plan: an explicit rate.
  options.fabricGbps = 200;
  options.fabricLatencyUs = 5;
  std::string error;
  std::unique_ptr<Executor> ex = Executor::create(plan, options, error);
  EXPECT_TRUE(ex) << error;
  std::vector<std::vector<uint8_t>> outputs;
  if (!ex)
    return outputs;
  RunResult result;
  EXPECT_TRUE(ex->initialiseInputs(11, error)) << error;
  EXPECT_TRUE(ex->run(result, error)) << error;
  EXPECT_TRUE(ex->readOutputs(outputs, error)) << error;
  if (mode != CollectiveMode::Nccl &&
      std::any_of(plan.steps.begin(), plan.steps.end(),
                  [](const Step &s) { return s.copyEngine; })) {
    // The summary says which collectives are copy-engine ones.
    std::string summary = ex->emulationSummary();
    std::transform(summary.begin(), summary.end(), summary.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    EXPECT_NE(summary.find("copy-engine"), std::string::npos)
        << ex->emulationSummary();
  }
  return outputs;
}

TEST(ExecutorTest, CopyEngineStepsGiveTheSmCollectivesOutputs) {
  std::string reason;
  if (!gpuPresent(reason))
    GTEST_SKIP() << reason;
  for (DType type : {DType::BF16, DType::F32})
    for (int rank : {0, 3})
      for (CollectiveMode mode :
           {CollectiveMode::Emulated, CollectiveMode::Standin}) {
        SCOPED_TRACE(
            std::string(dtypeName(type)) + " rank " + std::to_string(rank) +
            (mode == CollectiveMode::Emulated ? " emulated" : " stand-in"));
        std::vector<std::vector<uint8_t>> sms =
            runOnce(gatherScatterPlan(type, false), mode, rank);
        std::vector<std::vector<uint8_t>> ce =
            runOnce(gatherScatterPlan(type, true), mode, rank);
        ASSERT_EQ(sms.size(), 2u);
        EXPECT_EQ(ce, sms);
      }
}

/// Two ranks' copy-engine collectives (NCCL mode, no NCCL): x (64x32 f32)
/// and y (128x32) are inputs, xc and yc their copies; all_gather x -> g
/// (128x32), reduce_scatter (sum) y -> r (64x32) and permute x by 1 -> q,
/// all with transport copy_engine. Outputs xc, yc, g, r, q. `extra` adds a
/// second all_gather of x (a plan the other rank does not run).
Plan peerPlan(bool extra = false) {
  Plan plan;
  plan.function = "peer_copy_engine";
  plan.numStreams = 1;
  plan.streamNames = {"comm @tp"};
  plan.streamPriorities = {0};
  plan.groups.push_back({"tp", 2, "full_mesh"});
  auto buffer = [&](std::vector<int64_t> shape, Buffer::Role role) {
    return addBuffer(plan, DType::F32, std::move(shape), role);
  };
  int64_t x = buffer({64, 32}, Buffer::Role::Input);
  int64_t y = buffer({128, 32}, Buffer::Role::Input);
  plan.inputs = {x, y};
  auto step = [&](Step s, int64_t in, std::vector<int64_t> shape) {
    int64_t out = buffer(std::move(shape), Buffer::Role::Temp);
    s.inputs = {in};
    s.outputs = {out};
    plan.steps.push_back(s);
    return out;
  };
  Step copy;
  copy.kind = StepKind::Elementwise;
  copy.name = "tandem.elementwise";
  copy.elementwise = ElementwiseKind::Copy;
  int64_t xc = step(copy, x, {64, 32});
  int64_t yc = step(copy, y, {128, 32});
  auto collective = [&](CollectiveKind kind, int64_t in,
                        std::vector<int64_t> shape) {
    Step s;
    s.kind = StepKind::Collective;
    s.name = std::string("tandem.") + collectiveKindName(kind);
    s.collective = kind;
    s.group = 0;
    s.copyEngine = true;
    s.shift = 1;
    return step(s, in, std::move(shape));
  };
  int64_t g = collective(CollectiveKind::AllGather, x, {128, 32});
  int64_t r = collective(CollectiveKind::ReduceScatter, y, {64, 32});
  int64_t q = collective(CollectiveKind::Permute, x, {64, 32});
  if (extra)
    collective(CollectiveKind::AllGather, x, {128, 32});
  plan.outputs = {xc, yc, g, r, q};
  return plan;
}

std::vector<uint8_t> bytesOf(const std::vector<float> &v) {
  std::vector<uint8_t> out(v.size() * sizeof(float));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

/// Runs `plan` as rank `rank` of `n` (NCCL mode, GPU 0) `iterations` times;
/// its outputs after the last run, or false with `error` set.
bool runRank(const Plan &plan, int rank, int n, RankExchange exchange,
             bool graph, int iterations,
             std::vector<std::vector<uint8_t>> &outputs, std::string &error,
             std::string &summary) {
  ExecutorOptions options;
  options.mode = CollectiveMode::Nccl;
  options.rank = rank;
  options.worldSize = n;
  options.device = 0;
  options.cudaGraph = graph;
  options.timeoutSeconds = 60;
  options.exchange = std::move(exchange);
  std::unique_ptr<Executor> ex = Executor::create(plan, options, error);
  bool ok = ex && ex->initialiseInputs(100 + 7 * rank, error);
  for (int i = 0; ok && i < iterations; ++i) {
    RunResult result;
    ok = ex->run(result, error);
  }
  ok = ok && ex->readOutputs(outputs, error);
  if (ex)
    summary = ex->emulationSummary();
  return ok;
}

/// Runs `plans[r]` as rank r of a run whose ranks are threads of this
/// process on GPU 0; each rank's outputs after the last run, or its error.
struct PeerRun {
  std::vector<std::vector<std::vector<uint8_t>>> outputs;
  std::vector<std::string> errors, summaries;
};
PeerRun runPeers(const std::vector<Plan> &plans, bool graph, int iterations) {
  int n = static_cast<int>(plans.size());
  PeerRun run;
  run.outputs.resize(n);
  run.errors.resize(n);
  run.summaries.resize(n);
  ThreadExchange exchange(n, 60);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      if (!runRank(plans[r], r, n, exchange.forRank(r), graph, iterations,
                   run.outputs[r], run.errors[r], run.summaries[r]))
        exchange.fail();
    });
  for (std::thread &t : threads)
    t.join();
  return run;
}

/// What peerPlan's outputs must be on each rank, given every rank's
/// outputs (their inputs' copies xc and yc among them).
void expectPeerOutputs(
    const std::vector<std::vector<std::vector<uint8_t>>> &outputs) {
  std::vector<float> x[2], y[2];
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(outputs[r].size(), 5u);
    x[r] = toFloat(outputs[r][0], DType::F32);
    y[r] = toFloat(outputs[r][1], DType::F32);
  }
  ASSERT_NE(x[0], x[1]) << "the ranks' inputs must differ";
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    std::vector<float> gathered = x[0];
    gathered.insert(gathered.end(), x[1].begin(), x[1].end());
    EXPECT_EQ(outputs[r][2], bytesOf(gathered));
    // Sums of two floats: exactly what the double accumulation rounds to.
    std::vector<float> reduced(64 * 32);
    for (size_t i = 0; i < reduced.size(); ++i)
      reduced[i] = y[0][r * reduced.size() + i] + y[1][r * reduced.size() + i];
    EXPECT_EQ(outputs[r][3], bytesOf(reduced));
    EXPECT_EQ(outputs[r][4], bytesOf(x[1 - r]));
  }
}

TEST(ExecutorTest, CopyEngineCollectivesPullThePeersBuffers) {
  std::string reason;
  if (!gpuPresent(reason))
    GTEST_SKIP() << reason;
  Plan plan = peerPlan();
  ASSERT_EQ(validatePlan(plan), "");
  for (bool graph : {false, true}) {
    SCOPED_TRACE(graph ? "CUDA graph" : "streams");
    // Three steps: the epochs of later steps must not confuse the
    // handshakes of earlier ones.
    PeerRun run = runPeers({plan, plan}, graph, 3);
    for (int r = 0; r < 2; ++r) {
      ASSERT_EQ(run.errors[r], "") << "rank " << r;
      EXPECT_NE(run.summaries[r].find("COPY-ENGINE COLLECTIVES: 3 "
                                      "collective(s) pull the peers' buffers"),
                std::string::npos)
          << run.summaries[r];
      EXPECT_NE(run.summaries[r].find("1 peer(s) in this process"),
                std::string::npos)
          << run.summaries[r];
    }
    expectPeerOutputs(run.outputs);
  }
}

TEST(ExecutorTest, CopyEngineRanksWithDifferentPlansFailClearly) {
  std::string reason;
  if (!gpuPresent(reason))
    GTEST_SKIP() << reason;
  PeerRun run = runPeers({peerPlan(), peerPlan(true)}, false, 1);
  for (int r = 0; r < 2; ++r)
    EXPECT_NE(run.errors[r].find("record disagrees with this rank's"),
              std::string::npos)
        << "rank " << r << ": " << run.errors[r];
}

/// A RankExchange between processes through files in `dir`: call k of
/// rank r writes `dir/k.r` (renamed into place once whole) and waits for
/// every rank's.
RankExchange fileExchange(const std::string &dir, int rank, int n) {
  auto calls = std::make_shared<int>(0);
  return [dir, rank, n, calls](const std::string &mine,
                               std::vector<std::string> &all,
                               std::string &error) {
    std::string prefix = dir + "/" + std::to_string((*calls)++) + ".";
    std::string path = prefix + std::to_string(rank);
    {
      std::ofstream out(path + ".tmp", std::ios::binary);
      out << mine;
      if (!out) {
        error = "cannot write " + path;
        return false;
      }
    }
    std::rename((path + ".tmp").c_str(), path.c_str());
    all.assign(n, "");
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (int p = 0; p < n; ++p) {
      std::ifstream in;
      while (
          !(in = std::ifstream(prefix + std::to_string(p), std::ios::binary))) {
        if (std::chrono::steady_clock::now() > deadline) {
          error = "rank " + std::to_string(p) + " wrote no record in 60 s";
          return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      std::ostringstream text;
      text << in.rdbuf();
      all[p] = text.str();
    }
    return true;
  };
}

void writeOutputs(const std::string &path,
                  const std::vector<std::vector<uint8_t>> &outputs) {
  std::ofstream out(path, std::ios::binary);
  for (const std::vector<uint8_t> &o : outputs) {
    uint64_t size = o.size();
    out.write(reinterpret_cast<const char *>(&size), sizeof(size));
    out.write(reinterpret_cast<const char *>(o.data()), o.size());
  }
}

std::vector<std::vector<uint8_t>> readOutputsFile(const std::string &path) {
  std::vector<std::vector<uint8_t>> outputs;
  std::ifstream in(path, std::ios::binary);
  uint64_t size = 0;
  while (in.read(reinterpret_cast<char *>(&size), sizeof(size))) {
    std::vector<uint8_t> o(size);
    in.read(reinterpret_cast<char *>(o.data()), size);
    outputs.push_back(std::move(o));
  }
  return outputs;
}

constexpr const char *kPeerDirVariable = "TANDEM_TEST_CE_PEER_DIR";

// Rank 1 of CopyEngineCollectivesAcrossProcesses, in the process that test
// starts (this binary again, with only this test).
TEST(ExecutorTest, CopyEngineCollectivesAcrossProcessesPeer) {
  const char *dir = std::getenv(kPeerDirVariable);
  if (!dir)
    GTEST_SKIP() << "rank 1 of CopyEngineCollectivesAcrossProcesses: runs "
                    "only in the process that test starts";
  std::vector<std::vector<uint8_t>> outputs;
  std::string error, summary;
  bool ok = runRank(peerPlan(), 1, 2, fileExchange(dir, 1, 2), false, 3,
                    outputs, error, summary);
  std::ofstream(std::string(dir) + "/summary.1") << (ok ? summary : error);
  writeOutputs(std::string(dir) + "/outputs.1", outputs);
  EXPECT_TRUE(ok) << error;
}

TEST(ExecutorTest, CopyEngineCollectivesAcrossProcesses) {
  std::string reason;
  if (!gpuPresent(reason))
    GTEST_SKIP() << reason;
  char pattern[] = "/tmp/tandem-ce-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  std::string dir = pattern;
  // Rank 1: this binary again, running only the peer test, which CUDA IPC
  // then maps (a process of its own, so the handles are another
  // process's, on the same GPU here).
  std::string self = "/proc/self/exe";
  std::string filter =
      "--gtest_filter=ExecutorTest.CopyEngineCollectivesAcrossProcessesPeer";
  std::string env = std::string(kPeerDirVariable) + "=" + dir;
  std::vector<char *> argv = {self.data(), filter.data(), nullptr};
  std::vector<char *> envp;
  for (char **e = environ; *e; ++e)
    envp.push_back(*e);
  envp.push_back(env.data());
  envp.push_back(nullptr);
  pid_t child = 0;
  ASSERT_EQ(posix_spawn(&child, self.c_str(), nullptr, nullptr, argv.data(),
                        envp.data()),
            0);
  std::vector<std::vector<std::vector<uint8_t>>> outputs(2);
  std::string error, summary;
  bool ok = runRank(peerPlan(), 0, 2, fileExchange(dir, 0, 2), false, 3,
                    outputs[0], error, summary);
  int status = 0;
  waitpid(child, &status, 0);
  std::ifstream peerSummary(dir + "/summary.1");
  std::ostringstream peerText;
  peerText << peerSummary.rdbuf();
  ASSERT_TRUE(ok) << error << "; rank 1: " << peerText.str();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "rank 1: " << peerText.str();
  EXPECT_NE(summary.find("1 in other processes by CUDA IPC"), std::string::npos)
      << summary;
  outputs[1] = readOutputsFile(dir + "/outputs.1");
  expectPeerOutputs(outputs);
  std::filesystem::remove_all(dir);
}

/// x (16x24 bf16, input) -> copy -> xc; three slices of xc along dimension
/// 1, as 2 interleave groups of 12 columns each cut 1:2:3 (units of 2
/// columns: s0 is 4 columns, s1 8, s2 12); concat(s0, s1, s2) with
/// interleave 2 -> y, which is xc again, and concat(s2, s0) without
/// interleave -> z (16x16). Outputs xc, y and z.
Plan unevenLayoutPlan() {
  Plan plan;
  plan.function = "uneven_layout";
  plan.numStreams = 1;
  plan.streamNames = {"compute"};
  plan.streamPriorities = {0};
  auto buffer = [&](std::vector<int64_t> shape, Buffer::Role role) {
    return addBuffer(plan, DType::BF16, std::move(shape), role);
  };
  int64_t x = buffer({16, 24}, Buffer::Role::Input);
  plan.inputs = {x};
  int64_t xc = buffer({16, 24}, Buffer::Role::Temp);
  Step copy;
  copy.kind = StepKind::Elementwise;
  copy.name = "tandem.elementwise";
  copy.elementwise = ElementwiseKind::Copy;
  copy.inputs = {x};
  copy.outputs = {xc};
  plan.steps.push_back(copy);
  std::vector<int64_t> parts;
  for (int64_t chunk = 0; chunk < 3; ++chunk) {
    parts.push_back(buffer({16, 4 * (chunk + 1)}, Buffer::Role::Temp));
    Step s;
    s.kind = StepKind::Slice;
    s.name = "tandem.slice";
    s.dim = 1;
    s.chunk = chunk;
    s.chunks = 3;
    s.interleave = 2;
    s.weights = {1, 2, 3};
    s.inputs = {xc};
    s.outputs = {parts.back()};
    plan.steps.push_back(s);
  }
  auto concat = [&](std::vector<int64_t> inputs, int64_t interleave,
                    int64_t cols) {
    int64_t out = buffer({16, cols}, Buffer::Role::Temp);
    Step c;
    c.kind = StepKind::Concat;
    c.name = "tandem.concat";
    c.dim = 1;
    c.interleave = interleave;
    c.inputs = std::move(inputs);
    c.outputs = {out};
    plan.steps.push_back(c);
    return out;
  };
  int64_t y = concat(parts, 2, 24);
  int64_t z = concat({parts[2], parts[0]}, 1, 16);
  plan.outputs = {xc, y, z};
  return plan;
}

TEST(ExecutorTest, UnevenSlicesAndConcatsMoveTheBlocksTheyName) {
  Plan plan = unevenLayoutPlan();
  ASSERT_EQ(validatePlan(plan), "");
  std::string reason;
  if (!gpuPresent(reason))
    GTEST_SKIP() << reason;
  std::vector<std::vector<uint8_t>> outputs =
      runOnce(plan, CollectiveMode::Standin, 0);
  ASSERT_EQ(outputs.size(), 3u);
  const std::vector<uint8_t> &x = outputs[0];
  ASSERT_EQ(x.size(), 16u * 24 * 2);
  ASSERT_NE(std::count(x.begin(), x.end(), 0), std::ptrdiff_t(x.size()));
  // The slices concatenated as they were cut: x again.
  EXPECT_EQ(outputs[1], x);
  // z's row r: columns 6-11 and 18-23 of x's (s2), then 0-1 and 12-13 (s0).
  std::vector<uint8_t> z;
  auto columns = [&](int64_t row, int64_t first, int64_t count) {
    z.insert(z.end(), x.begin() + (row * 24 + first) * 2,
             x.begin() + (row * 24 + first + count) * 2);
  };
  for (int64_t row = 0; row < 16; ++row) {
    columns(row, 6, 6);
    columns(row, 18, 6);
    columns(row, 0, 2);
    columns(row, 12, 2);
  }
  EXPECT_EQ(outputs[2], z);
}

/// Causal attention of 8 heads (2 KV heads) of 64 from `in` to `out`,
/// with `queries` query rows (0: all).
Step causalAttentionStep(int64_t in, int64_t out, int64_t queries) {
  Step s;
  s.kind = StepKind::Attention;
  s.name = "tandem.attention";
  s.heads = 8;
  s.kvHeads = 2;
  s.headDim = 64;
  s.causal = true;
  s.queries = queries;
  s.inputs = {in};
  s.outputs = {out};
  return s;
}

/// qkv (256 rows, 8 heads / 2 kv heads of 64, causal) -> full attention
/// (out), and the attention of the last 128 and the last 77 rows as
/// queries; outputs all three.
Plan attentionQueriesPlan() {
  Plan plan;
  plan.function = "prefix_attention";
  plan.numStreams = 1;
  plan.streamNames = {"compute"};
  plan.streamPriorities = {0};
  auto buffer = [&](std::vector<int64_t> shape, Buffer::Role role) {
    return addBuffer(plan, DType::BF16, std::move(shape), role);
  };
  int64_t qkv = buffer({256, (8 + 2 * 2) * 64}, Buffer::Role::Input);
  plan.inputs = {qkv};
  for (int64_t queries : {0, 128, 77}) {
    int64_t out =
        buffer({queries > 0 ? queries : 256, 8 * 64}, Buffer::Role::Temp);
    plan.steps.push_back(causalAttentionStep(qkv, out, queries));
    plan.outputs.push_back(out);
  }
  return plan;
}

TEST(ExecutorTest, AttentionQueriesGiveTheLastRowsOfFullAttention) {
  std::string reason;
  if (!gpuPresent(reason))
    GTEST_SKIP() << reason;
  Plan plan = attentionQueriesPlan();
  ASSERT_EQ(validatePlan(plan), "");
  std::vector<AttentionImpl> impls = {AttentionImpl::Fused,
                                      AttentionImpl::Unfused};
  if (cudnnAttentionBuilt(reason))
    impls.push_back(AttentionImpl::Cudnn);
  for (AttentionImpl impl : impls) {
    const char *implName = impl == AttentionImpl::Fused     ? "fused"
                           : impl == AttentionImpl::Unfused ? "unfused"
                                                            : "cuDNN";
    SCOPED_TRACE(implName);
    ExecutorOptions options;
    options.mode = CollectiveMode::Standin;
    options.attention = impl;
    std::string error;
    std::unique_ptr<Executor> ex = Executor::create(plan, options, error);
    ASSERT_TRUE(ex) << error;
    // Every step runs with the implementation asked for (cuDNN before 9.6
    // takes query lengths in multiples of 64 only).
    std::string summary = ex->attentionSummary();
    if (impl != AttentionImpl::Cudnn ||
        cudnnAttentionLibraryVersion() >= 90600) {
      EXPECT_EQ(summary.find(std::string(implName) + " 3 step(s)"), 0u)
          << summary;
    }
    RunResult result;
    ASSERT_TRUE(ex->initialiseInputs(11, error)) << error;
    ASSERT_TRUE(ex->run(result, error)) << error;
    std::vector<std::vector<uint8_t>> outputs;
    ASSERT_TRUE(ex->readOutputs(outputs, error)) << error;
    ASSERT_EQ(outputs.size(), 3u);
    const std::vector<uint8_t> &full = outputs[0];
    std::vector<float> fullValues = toFloat(full, DType::BF16);
    double scale = 0;
    for (float v : fullValues)
      scale = std::max(scale, std::fabs(double(v)));
    ASSERT_GT(scale, 0.0);
    for (size_t k = 1; k < 3; ++k) {
      const std::vector<uint8_t> &part = outputs[k];
      ASSERT_LE(part.size(), full.size());
      std::vector<uint8_t> tail(full.end() - part.size(), full.end());
      if (impl == AttentionImpl::Fused) {
        EXPECT_EQ(part, tail) << "output " << k;
        continue;
      }
      // GEMMs and engines may differ with the shape: within rounding.
      std::vector<float> got = toFloat(part, DType::BF16),
                         want = toFloat(tail, DType::BF16);
      double err = 0;
      for (size_t i = 0; i < got.size(); ++i)
        err = std::max(err, std::fabs(double(got[i]) - want[i]));
      EXPECT_LE(err, 4e-2 * scale) << "output " << k;
    }
  }
}

/// One causal sequence of 256 rows in two segments of 128 (tandem-gen
/// --segments 2, split): segment 0's forward reads the first 128 rows of
/// qkv (a view), segment 1's all 256 with the last 128 as queries; their
/// outputs are the two halves of one buffer (views), which the backward
/// reads. With `segmented` false, one full forward writes that buffer.
Plan attentionSegmentsPlan(bool segmented) {
  Plan plan;
  plan.function = segmented ? "segments" : "whole";
  plan.numStreams = 1;
  plan.streamNames = {"compute"};
  plan.streamPriorities = {0};
  auto buffer = [&](std::vector<int64_t> shape, Buffer::Role role,
                    int64_t viewOf = -1, int64_t viewOffset = 0) {
    return addBuffer(plan, DType::BF16, std::move(shape), role, viewOf,
                     viewOffset);
  };
  const int64_t cols = (8 + 2 * 2) * 64, outCols = 8 * 64;
  int64_t qkv = buffer({256, cols}, Buffer::Role::Input);
  int64_t dout = buffer({256, outCols}, Buffer::Role::Input);
  plan.inputs = {qkv, dout};
  int64_t out = buffer({256, outCols}, Buffer::Role::Temp);
  auto attention = [&](int64_t in, int64_t result, int64_t queries) {
    plan.steps.push_back(causalAttentionStep(in, result, queries));
  };
  if (segmented) {
    int64_t prefix = buffer({128, cols}, Buffer::Role::View, qkv, 0);
    int64_t out0 = buffer({128, outCols}, Buffer::Role::View, out, 0);
    int64_t out1 =
        buffer({128, outCols}, Buffer::Role::View, out, 128 * outCols * 2);
    attention(prefix, out0, 128);
    attention(qkv, out1, 128);
  } else {
    attention(qkv, out, 0);
  }
  int64_t dqkv = buffer({256, cols}, Buffer::Role::Temp);
  Step g;
  g.kind = StepKind::AttentionGrad;
  g.name = "tandem.attention_grad";
  g.heads = 8;
  g.kvHeads = 2;
  g.headDim = 64;
  g.causal = true;
  g.inputs = {dout, qkv, out};
  g.outputs = {dqkv};
  plan.steps.push_back(g);
  plan.outputs = {out, dqkv};
  return plan;
}

TEST(ExecutorTest, AttentionQueriesSegmentsKeepTheSequenceStatistics) {
  Plan segments = attentionSegmentsPlan(true),
       whole = attentionSegmentsPlan(false);
  ASSERT_EQ(validatePlan(segments), "");
  ASSERT_EQ(validatePlan(whole), "");
  std::string reason;
  if (!gpuPresent(reason))
    GTEST_SKIP() << reason;
  std::vector<AttentionImpl> impls = {AttentionImpl::Fused};
  if (cudnnAttentionBuilt(reason))
    impls.push_back(AttentionImpl::Cudnn);
  for (AttentionImpl impl : impls) {
    SCOPED_TRACE(impl == AttentionImpl::Fused ? "fused" : "cuDNN");
    ExecutorOptions options;
    options.mode = CollectiveMode::Standin;
    options.attention = impl;
    std::vector<std::vector<uint8_t>> outputs[2];
    for (int k = 0; k < 2; ++k) {
      std::string error;
      std::unique_ptr<Executor> ex =
          Executor::create(k ? whole : segments, options, error);
      ASSERT_TRUE(ex) << error;
      // The segments' forwards write the backward's statistics, which it
      // reads instead of recomputing them (the whole step: its forward's).
      EXPECT_NE(ex->attentionSummary().find(
                    k ? "1 backward step(s) reuse their forward's LSE"
                      : "1 backward step(s) read the LSE their causal "
                        "segments' forwards wrote"),
                std::string::npos)
          << ex->attentionSummary();
      RunResult result;
      ASSERT_TRUE(ex->initialiseInputs(7, error)) << error;
      ASSERT_TRUE(ex->run(result, error)) << error;
      ASSERT_TRUE(ex->readOutputs(outputs[k], error)) << error;
      ASSERT_EQ(outputs[k].size(), 2u);
    }
    // The same attention and the same gradient, within rounding.
    for (size_t o = 0; o < 2; ++o) {
      std::vector<float> got = toFloat(outputs[0][o], DType::BF16),
                         want = toFloat(outputs[1][o], DType::BF16);
      ASSERT_EQ(got.size(), want.size());
      double scale = 0, err = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        scale = std::max(scale, std::fabs(double(want[i])));
        err = std::max(err, std::fabs(double(got[i]) - want[i]));
      }
      ASSERT_GT(scale, 0.0);
      EXPECT_LE(err, 2e-2 * scale) << "output " << o;
    }
  }
}

} // namespace
