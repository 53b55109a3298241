//===- EngineTest.cpp - Simulator on schedules with known answers ---------===//
//
// Hand-built problems whose spans follow from the engine's rules and the
// built-in contention table (at 24 SMs: GEMM x1.12, memory x1.13, comm
// x1.13).
//
//===----------------------------------------------------------------------===//

#include "tandem/Engine/Engine.h"

#include "gtest/gtest.h"

#include <limits>

using namespace mlir::tandem;
using namespace mlir::tandem::sim;

namespace {
Task memoryTask(const char *name, unsigned stream, double us,
                std::vector<unsigned> deps = {}) {
  Task t;
  t.name = name;
  t.kind = TaskKind::Memory;
  t.stream = stream;
  t.aloneUs = us;
  t.deps = std::move(deps);
  return t;
}

Task commTask(const char *name, unsigned stream, double us,
              const char *fabric = "tp", std::vector<unsigned> deps = {}) {
  Task t = memoryTask(name, stream, us, std::move(deps));
  t.kind = TaskKind::Collective;
  t.commSms = 24;
  t.fabric = fabric;
  return t;
}

/// 264 tiles: two waves of 10 us on 132 SMs.
Task gemmTask(const char *name, unsigned stream, int64_t smTarget = 0) {
  Task t;
  t.name = name;
  t.kind = TaskKind::Gemm;
  t.stream = stream;
  t.tiles = 264;
  t.waveUs = 10.0;
  t.aloneUs = 20.0;
  t.smTarget = smTarget;
  return t;
}

Result run(const Problem &p) {
  std::string error;
  std::optional<Result> r = simulate(p, error);
  EXPECT_TRUE(r.has_value()) << error;
  return r.value_or(Result{});
}

TEST(Engine, SerialOnOneStream) {
  Problem p;
  p.tasks = {memoryTask("a", 0, 10), commTask("b", 0, 20),
             memoryTask("c", 0, 5)};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.spanUs, 35.0);
  EXPECT_DOUBLE_EQ(r.timings[1].startUs, 10.0);
}

TEST(Engine, OverlapPaysContentionOnBothSides) {
  Problem p;
  p.tasks = {memoryTask("compute", 0, 100), commTask("comm", 1, 100)};
  Result r = run(p);
  EXPECT_NEAR(r.timings[0].endUs, 113.0, 1e-9);
  EXPECT_NEAR(r.timings[1].endUs, 113.0, 1e-9);
  EXPECT_NEAR(r.spanUs, 113.0, 1e-9);
}

TEST(Engine, DependenceChainAcrossStreams) {
  Problem p;
  p.tasks = {commTask("ag", 1, 10), memoryTask("use", 0, 20, {0})};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[1].startUs, 10.0);
  EXPECT_DOUBLE_EQ(r.spanUs, 30.0);
}

TEST(Engine, GemmLosesSmsToACollectiveAndGetsATailWave) {
  Problem p;
  p.tasks = {gemmTask("gemm", 0), commTask("comm", 1, 1000)};
  Result r = run(p);
  // 108 free SMs: ceil(264 / 108) = 3 waves of 10 us, slowed x1.12.
  EXPECT_NEAR(r.timings[0].endUs, 33.6, 1e-9);
  // The collective runs at 1/1.13 speed for 33.6 us, then alone.
  double doneEarly = 33.6 / 1130.0;
  EXPECT_NEAR(r.timings[1].endUs, 33.6 + (1.0 - doneEarly) * 1000.0, 1e-6);
}

TEST(Engine, SmTargetIsHonoured) {
  Problem p;
  p.tasks = {gemmTask("gemm", 0, /*smTarget=*/66)};
  EXPECT_DOUBLE_EQ(run(p).spanUs, 40.0); // ceil(264 / 66) = 4 waves
}

TEST(Engine, CollectivesShareTheirFabric) {
  Problem same;
  same.tasks = {commTask("a", 1, 100, "tp"), commTask("b", 2, 100, "tp")};
  EXPECT_NEAR(run(same).spanUs, 200.0, 1e-9);
  Problem different;
  different.tasks = {commTask("a", 1, 100, "tp"), commTask("b", 2, 100, "dp")};
  EXPECT_NEAR(run(different).spanUs, 100.0, 1e-9);
}

TEST(Engine, WaitIsInstantButOrdersItsStream) {
  Problem p;
  Task wait;
  wait.name = "wait";
  wait.kind = TaskKind::Wait;
  wait.stream = 0;
  wait.deps = {0};
  p.tasks = {commTask("ag", 1, 50), wait, memoryTask("after", 0, 10)};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[1].endUs, 50.0);
  EXPECT_DOUBLE_EQ(r.timings[2].startUs, 50.0);
  EXPECT_DOUBLE_EQ(r.spanUs, 60.0);
}

TEST(Engine, DeadlockIsReportedNotHung) {
  Problem p;
  // Stream 0 waits for "x" on stream 1, which needs "late" queued behind the
  // wait on stream 0.
  Task wait;
  wait.name = "wait";
  wait.kind = TaskKind::Wait;
  wait.stream = 0;
  wait.deps = {2};
  p.tasks = {wait, memoryTask("late", 0, 5), commTask("x", 1, 5, "tp", {1})};
  std::string error;
  EXPECT_FALSE(simulate(p, error).has_value());
  EXPECT_NE(error.find("deadlocks"), std::string::npos) << error;
  EXPECT_NE(error.find("'wait'"), std::string::npos) << error;
}
// Issue 13 row 6: a duration of infinity (a rate of 0), NaN, or a denormal
// (an infinite rate) made the step infinite or NaN, and the loop never
// ended.
TEST(Engine, NonFiniteDurationIsReportedNotHung) {
  for (double us : {std::numeric_limits<double>::infinity(),
                    std::numeric_limits<double>::quiet_NaN(), 1e-320}) {
    Problem p;
    p.tasks = {memoryTask("a", 0, 10), memoryTask("bad", 1, us)};
    std::string error;
    EXPECT_FALSE(simulate(p, error).has_value()) << us;
    EXPECT_NE(error.find("'bad' has no positive, finite rate"),
              std::string::npos)
        << error;
  }
}

//===----------------------------------------------------------------------===//
// SM residency (Problem::gemmsHoldSms)
//===----------------------------------------------------------------------===//

Problem residencyProblem() {
  Problem p;
  p.gemmsHoldSms = true;
  return p;
}

TEST(EngineResidency, CollectiveIssuedAfterAGemmWaitsForIt) {
  // The GEMM is issued first and takes every SM; the collective, ready at
  // the same instant, moves no data until the GEMM ends, then runs alone.
  Problem p = residencyProblem();
  p.tasks = {gemmTask("gemm", 0), commTask("ag", 1, 50)};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[0].endUs, 20.0);
  EXPECT_DOUBLE_EQ(r.timings[1].startUs, 0.0);
  EXPECT_DOUBLE_EQ(r.timings[1].admittedUs, 20.0);
  EXPECT_DOUBLE_EQ(r.spanUs, 70.0);
}

TEST(EngineResidency, GemmsIssuedBeforeKeepTheSmsBackToBack) {
  // Two GEMMs queued on one stream before the collective: it waits for
  // both (the calibration pairs measured on the H200).
  Problem p = residencyProblem();
  p.tasks = {gemmTask("g1", 0), gemmTask("g2", 0), commTask("ag", 1, 50)};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[2].admittedUs, 40.0);
  EXPECT_DOUBLE_EQ(r.spanUs, 90.0);
}

TEST(EngineResidency, CollectiveIssuedFirstKeepsItsSms) {
  // Issued first, the collective takes its 24 SMs; the GEMM gets 108: three
  // waves of 10 us, slowed x1.12 while the collective runs.
  Problem p = residencyProblem();
  p.tasks = {commTask("ag", 1, 50), gemmTask("gemm", 0)};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[0].admittedUs, 0.0);
  EXPECT_NEAR(r.timings[1].endUs, 30.0 * 1.12, 1e-9);
  Problem off = p;
  off.gemmsHoldSms = false;
  Result same = run(off);
  EXPECT_DOUBLE_EQ(r.spanUs, same.spanUs);
}

TEST(EngineResidency, GemmWithRoomLeftDoesNotBlock) {
  // An SM target of 108 leaves the collective's 24 SMs free.
  Problem p = residencyProblem();
  p.tasks = {gemmTask("gemm", 0, /*smTarget=*/108), commTask("ag", 1, 50)};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[1].admittedUs, 0.0);
  // The GEMM: 3 waves on 108 SMs, x1.12 = 33.6 us. The collective runs at
  // 1/1.13 speed meanwhile, then alone.
  EXPECT_NEAR(r.timings[0].endUs, 33.6, 1e-9);
  double doneEarly = 33.6 / (50.0 * 1.13);
  EXPECT_NEAR(r.timings[1].endUs, 33.6 + (1.0 - doneEarly) * 50.0, 1e-9);
}

TEST(EngineResidency, CollectiveGetsInAtANonGemmKernel) {
  // GEMM, then a bandwidth-bound kernel: the collective, issued after the
  // GEMM, gets its SMs when the GEMM ends and overlaps the copy.
  Problem p = residencyProblem();
  p.tasks = {gemmTask("gemm", 0), memoryTask("copy", 0, 100),
             commTask("ag", 1, 50)};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[2].admittedUs, 20.0);
  EXPECT_NEAR(r.timings[2].endUs, 20.0 + 50.0 * 1.13, 1e-9);
}

TEST(EngineEventLatency, CrossStreamDependenceStartsLater) {
  // The use waits for the all-gather's event: 3 us after it ends. A
  // same-stream successor of the all-gather pays nothing.
  Problem p;
  p.eventLatencyUs = 3.0;
  p.tasks = {commTask("ag", 1, 10), memoryTask("use", 0, 20, {0}),
             commTask("next", 1, 5, "tp", {0})};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[1].startUs, 13.0);
  EXPECT_DOUBLE_EQ(r.timings[2].startUs, 10.0);
}

TEST(EngineEventLatency, NothingRunningWhileAnEventIsInFlight) {
  // Only the event is pending: the engine waits for it, no deadlock.
  Problem p;
  p.eventLatencyUs = 2.5;
  p.tasks = {memoryTask("a", 0, 10), memoryTask("b", 1, 10, {0}),
             memoryTask("c", 0, 10, {1})};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[1].startUs, 12.5);
  EXPECT_DOUBLE_EQ(r.timings[2].startUs, 25.0);
}

TEST(EngineEventLatency, EventGatedCollectiveLosesTheSmsToAGemm) {
  // A GEMM and a collective both wait for `x`: the GEMM, on x's stream,
  // starts at once and takes every SM; the collective's event arrives 2 us
  // later, so it waits for the GEMM (as measured on the H200, although the
  // collective is issued first). Without the latency it gets in first.
  Problem p = residencyProblem();
  p.eventLatencyUs = 2.0;
  p.tasks = {memoryTask("x", 0, 10), commTask("rs", 1, 50, "tp", {0}),
             gemmTask("gemm", 0)};
  p.tasks[2].deps = {0};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[2].startUs, 10.0);
  EXPECT_DOUBLE_EQ(r.timings[1].startUs, 12.0);
  EXPECT_DOUBLE_EQ(r.timings[1].admittedUs, 30.0);
  Problem none = p;
  none.eventLatencyUs = 0.0;
  EXPECT_DOUBLE_EQ(run(none).timings[1].admittedUs, 10.0);
}

TEST(EngineResidency, OffByDefault) {
  Problem p;
  p.tasks = {gemmTask("gemm", 0), commTask("ag", 1, 50)};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[1].admittedUs, 0.0);
  EXPECT_LT(r.spanUs, 70.0);
}
} // namespace

Task copyEngineTask(const char *name, unsigned stream, double us,
                    const char *fabric = "tp") {
  Task t = commTask(name, stream, us, fabric);
  t.commSms = 0;
  t.copyEngine = true;
  return t;
}

TEST(EngineCopyEngine, GemmKeepsEverySmAndPaysTheCopyEnginePoint) {
  // No SMs held: the GEMM keeps its two waves on 132 SMs; the built-in
  // copy-engine point slows a GEMM by 1.00 and the copies by 1.05.
  Problem p;
  p.tasks = {gemmTask("gemm", 0), copyEngineTask("ag", 1, 100)};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[0].endUs, 20.0);
  EXPECT_NEAR(r.timings[1].endUs, 20.0 + (1.0 - 20.0 / 105.0) * 100.0, 1e-9);
}

TEST(EngineCopyEngine, MemoryKernelPaysTheCopyEnginePoint) {
  Problem p;
  ContentionTable t = ContentionTable::defaults();
  t.setCopyEnginePoint({0, 1.0, 2.0, 1.0}, "test");
  p.contention = t;
  p.tasks = {memoryTask("norm", 0, 10), copyEngineTask("ag", 1, 100)};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[0].endUs, 20.0);
}

TEST(EngineCopyEngine, NeverWaitsForSmsHeldByAGemm) {
  // The residency rule keeps an SM collective issued after a GEMM waiting;
  // a copy-engine collective needs no SMs and starts at once.
  Problem p = residencyProblem();
  p.tasks = {gemmTask("gemm", 0), copyEngineTask("ag", 1, 50)};
  Result r = run(p);
  EXPECT_DOUBLE_EQ(r.timings[1].admittedUs, 0.0);
  EXPECT_DOUBLE_EQ(r.timings[0].endUs, 20.0);
  EXPECT_NEAR(r.timings[1].endUs, 20.0 + (1.0 - 20.0 / 52.5) * 50.0, 1e-9);
}

TEST(EngineCopyEngine, SharesItsFabricWithSmCollectives) {
  Problem p;
  p.tasks = {commTask("rs", 1, 100, "tp"), copyEngineTask("ag", 2, 100, "tp")};
  EXPECT_NEAR(run(p).spanUs, 200.0, 1e-9);
}
