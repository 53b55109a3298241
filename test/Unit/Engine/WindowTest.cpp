//===- WindowTest.cpp - The closed form against the engine ----------------===//
//
// runWindow (Window.h) must give what the engine gives for a collective and
// a stream of compute ops that start together: random windows of memory and
// compute-bound tasks beside one collective, timed both ways.
//
//===----------------------------------------------------------------------===//

#include "tandem/Engine/Window.h"
#include "tandem/Engine/Engine.h"

#include "gtest/gtest.h"

#include <random>

using namespace mlir::tandem;
using namespace mlir::tandem::sim;

namespace {
TEST(Window, OneOpEndsBeforeTheCollective) {
  // 10 us beside a collective of 30 us beside / 20 us alone: a third of the
  // collective is done at 10 us, the rest takes 2/3 * 20 us alone.
  WindowTimeline t = runWindow({{10, 8}}, 30, 20);
  EXPECT_DOUBLE_EQ(t.computeEndUs, 10);
  EXPECT_DOUBLE_EQ(t.collectiveEndUs, 10 + 20.0 * 2 / 3);
  EXPECT_EQ(t.startedBeside, 1u);
}

TEST(Window, CollectiveEndsDuringAnOp) {
  // The collective (12 us beside) ends 12 us into an op of 20 us beside;
  // its remaining 40% runs at its alone time of 15 us. The next op starts
  // after the collective and takes its alone time.
  WindowTimeline t = runWindow({{20, 15}, {7, 5}}, 12, 10);
  EXPECT_DOUBLE_EQ(t.collectiveEndUs, 12);
  EXPECT_DOUBLE_EQ(t.computeEndUs, 12 + 0.4 * 15 + 5);
  EXPECT_EQ(t.startedBeside, 1u);
  EXPECT_DOUBLE_EQ(t.windowUs(), t.computeEndUs);
}

TEST(Window, NoOps) {
  WindowTimeline t = runWindow({}, 12, 10);
  EXPECT_DOUBLE_EQ(t.computeEndUs, 0);
  EXPECT_DOUBLE_EQ(t.collectiveEndUs, 10);
}

TEST(Window, AgreesWithTheEngine) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> us(1.0, 60.0);
  std::uniform_int_distribution<int> count(0, 6), kind(0, 1);
  Problem base;
  ContentionPoint c = base.contention.lookup(24);
  for (int trial = 0; trial < 200; ++trial) {
    Problem p;
    Task comm;
    comm.name = "comm";
    comm.kind = TaskKind::Collective;
    comm.stream = 1;
    comm.aloneUs = us(rng);
    comm.commSms = 24;
    comm.fabric = "tp";
    p.tasks.push_back(comm);
    std::vector<WindowPhases> phases;
    int n = count(rng);
    for (int i = 0; i < n; ++i) {
      Task t;
      t.name = "op" + std::to_string(i);
      t.kind = kind(rng) ? TaskKind::Memory : TaskKind::Compute;
      t.stream = 0;
      t.aloneUs = us(rng);
      p.tasks.push_back(t);
      // A compute-bound op gets the SMs the collective leaves.
      double besideUs =
          t.kind == TaskKind::Compute
              ? t.aloneUs * double(p.smCount) / double(p.smCount - 24)
              : t.aloneUs;
      phases.push_back({besideUs * contentionSlowdown(t.kind, c), t.aloneUs});
    }
    std::string error;
    std::optional<Result> r = simulate(p, error);
    ASSERT_TRUE(r) << error;
    double computeEnd = 0;
    for (size_t i = 1; i < r->timings.size(); ++i)
      computeEnd = std::max(computeEnd, r->timings[i].endUs);
    WindowTimeline t = runWindow(
        phases,
        comm.aloneUs * (n ? contentionSlowdown(TaskKind::Collective, c) : 1.0),
        comm.aloneUs);
    EXPECT_NEAR(t.collectiveEndUs, r->timings[0].endUs, 1e-6)
        << "trial " << trial;
    EXPECT_NEAR(t.computeEndUs, computeEnd, 1e-6) << "trial " << trial;
    EXPECT_NEAR(t.windowUs(), r->spanUs, 1e-6) << "trial " << trial;
  }
}
} // namespace
