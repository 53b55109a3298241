//===- NoiseFloorTest.cpp - Run-to-run spread from clean runs -------------===//
//
// Hand-built clean runs of one step: the spread they measure per op, the
// candidates it puts within noise (by their loss, or by the deviation that
// decided their cause), the anomalies beyond it, and the runs refused.
//
//===----------------------------------------------------------------------===//

#include "tandem/Diagnosis/NoiseFloor.h"

#include "TimelineBuilder.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace tandem::diagnosis;

namespace {

/// P produces C's input; C (50 us alone) hides under H1 and H2 from
/// `cStart` on; the compute stream then waits for C (W) and runs Q. The
/// expected timeline is run("E", 50): C fully hidden. H1 `h1` us long,
/// C `c` us long.
TimelineBuilder run(const std::string &origin, double h1, double c = 50,
                    double cStart = 100) {
  TimelineBuilder t(origin);
  t.compute("P", 0, 100);
  t.collective("C", cStart, c, 50);
  t.compute("H1", 100, h1);
  t.compute("H2", 100 + h1, 10);
  double wait = std::max(cStart + c, 110 + h1);
  t.add("W", 0, OpRole::Wait, wait, 0);
  t.compute("Q", wait, 100);
  return t;
}

constexpr int64_t kC = 1, kH1 = 2;

NoiseFloor floorOf(const Timeline &e, std::vector<const Timeline *> clean,
                   double margin = 1.5) {
  std::string error;
  std::optional<NoiseFloor> f =
      measureNoiseFloor(e, clean, DiagnosisOptions(), margin, error);
  EXPECT_TRUE(f) << error;
  return f ? *f : NoiseFloor();
}

Diagnosis diagnoseWith(const Timeline &e, const Timeline &m,
                       const NoiseFloor *noise) {
  DiagnosisOptions o;
  o.noise = noise;
  std::string error;
  std::optional<Diagnosis> d = diagnose(e, m, o, error);
  EXPECT_TRUE(d) << error;
  return d ? *d : Diagnosis();
}

std::vector<std::string> names(const Timeline &m,
                               const std::vector<int64_t> &ops) {
  std::vector<std::string> out;
  for (int64_t i : ops)
    out.push_back(m.ops[i].name);
  return out;
}

TEST(NoiseFloor, TheLargestDeviationOfEachQuantityPerOp) {
  TimelineBuilder e = run("E", 50), a = run("A", 25), b = run("B", 35);
  NoiseFloor f = floorOf(e.t, {&a.t, &b.t});
  EXPECT_EQ(f.runs, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(f.expectedOrigin, "E");
  ASSERT_EQ(f.ops.size(), e.t.ops.size());
  // H1 ran 25 and 15 us shorter; C was exposed 15 and 5 us (planned 0).
  EXPECT_DOUBLE_EQ(f.ops[kH1].durUs, 25);
  EXPECT_DOUBLE_EQ(f.ops[kC].exposedUs, 15);
  EXPECT_DOUBLE_EQ(f.ops[kC].durUs, 0);
  EXPECT_DOUBLE_EQ(f.ops[kC].startUs, 0);
  double spread = -1;
  EXPECT_DOUBLE_EQ(f.bandUs(NoiseQuantity::Exposed, kC, -1, &spread), 22.5);
  EXPECT_DOUBLE_EQ(spread, 15);
  EXPECT_DOUBLE_EQ(floorOf(e.t, {&a.t}, 2).bandUs(NoiseQuantity::Duration, kH1),
                   50);
  // The expected timeline itself has no spread.
  NoiseFloor self = floorOf(e.t, {&e.t});
  for (const OpSpread &s : self.ops)
    EXPECT_TRUE(s.durUs == 0 && s.startUs == 0 && s.exposedUs == 0);
}

TEST(NoiseFloor, ALossWithinTheBandIsNotAnAnomaly) {
  TimelineBuilder e = run("E", 50), m = run("M", 20);
  // Alone, H1 30 us shorter exposes C 20 us: shorter compute.
  Diagnosis d = diagnoseWith(e.t, m.t, nullptr);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::ShorterCompute);
  EXPECT_FALSE(d.withNoiseFloor);
  EXPECT_TRUE(d.withinNoise.empty());
  EXPECT_DOUBLE_EQ(d.collectives[0].exposedBandUs, -1);

  // A clean run exposed C 15 us: the band 22.5 us holds the 20.
  TimelineBuilder a = run("A", 25);
  NoiseFloor f = floorOf(e.t, {&a.t});
  d = diagnoseWith(e.t, m.t, &f);
  EXPECT_TRUE(d.anomalies.empty());
  EXPECT_TRUE(d.withNoiseFloor);
  EXPECT_EQ(d.noiseRuns, (std::vector<std::string>{"A"}));
  EXPECT_DOUBLE_EQ(d.noiseMargin, 1.5);
  EXPECT_DOUBLE_EQ(d.collectives[0].exposedBandUs, 22.5);
  ASSERT_EQ(d.withinNoise.size(), 1u);
  const WithinNoise &w = d.withinNoise[0];
  EXPECT_EQ(w.anomaly.cause, Cause::ShorterCompute);
  EXPECT_EQ(names(m.t, w.anomaly.ops), (std::vector<std::string>{"C", "H1"}));
  EXPECT_EQ(w.quantity, NoiseQuantity::Exposed);
  EXPECT_EQ(names(m.t, w.ops), (std::vector<std::string>{"C"}));
  EXPECT_DOUBLE_EQ(w.deviationUs, 20);
  EXPECT_DOUBLE_EQ(w.bandUs, 22.5);
  EXPECT_DOUBLE_EQ(w.spreadUs, 15);

  // A quieter clean run (C exposed 5 us) sets a band of 7.5 us: reported.
  TimelineBuilder b = run("B", 35);
  f = floorOf(e.t, {&b.t});
  d = diagnoseWith(e.t, m.t, &f);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::ShorterCompute);
  EXPECT_DOUBLE_EQ(d.anomalies[0].lostUs, 20);
  EXPECT_TRUE(d.withinNoise.empty());
}

TEST(NoiseFloor, TheDurationThatDecidedASlowerCollective) {
  TimelineBuilder e = run("E", 50);
  // C ran 30 us longer: 20 us of it exposed.
  TimelineBuilder m = run("M", 50, 80);
  Diagnosis d = diagnoseWith(e.t, m.t, nullptr);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::SlowerCollective);
  // In a clean run C ran 30 us longer too, but longer compute hid it: its
  // exposure has no spread, its duration 30 us.
  TimelineBuilder a = run("A", 80, 80);
  NoiseFloor f = floorOf(e.t, {&a.t});
  EXPECT_DOUBLE_EQ(f.ops[kC].exposedUs, 0);
  d = diagnoseWith(e.t, m.t, &f);
  EXPECT_TRUE(d.anomalies.empty());
  ASSERT_EQ(d.withinNoise.size(), 1u);
  EXPECT_EQ(d.withinNoise[0].anomaly.cause, Cause::SlowerCollective);
  EXPECT_EQ(d.withinNoise[0].quantity, NoiseQuantity::Duration);
  EXPECT_DOUBLE_EQ(d.withinNoise[0].deviationUs, 30);
  EXPECT_DOUBLE_EQ(d.withinNoise[0].bandUs, 45);
}

TEST(NoiseFloor, TheStartDelayThatDecidedAWait) {
  TimelineBuilder e = run("E", 50);
  // C waits for H1: it starts 50 us late, 40 us of it exposed.
  TimelineBuilder m = run("M", 50, 50, 150);
  Diagnosis d = diagnoseWith(e.t, m.t, nullptr);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::Wait);
  // A clean run started C 40 us late, under longer compute (60 us band).
  TimelineBuilder a = run("A", 90, 50, 140);
  NoiseFloor f = floorOf(e.t, {&a.t});
  EXPECT_DOUBLE_EQ(f.ops[kC].startUs, 40);
  d = diagnoseWith(e.t, m.t, &f);
  EXPECT_TRUE(d.anomalies.empty());
  ASSERT_EQ(d.withinNoise.size(), 1u);
  EXPECT_EQ(d.withinNoise[0].anomaly.cause, Cause::Wait);
  EXPECT_EQ(d.withinNoise[0].quantity, NoiseQuantity::Start);
  EXPECT_DOUBLE_EQ(d.withinNoise[0].deviationUs, 50);
  // One started 30 us late: a 45 us band, and the wait is an anomaly.
  TimelineBuilder b = run("B", 90, 50, 130);
  f = floorOf(e.t, {&b.t});
  d = diagnoseWith(e.t, m.t, &f);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::Wait);
  EXPECT_EQ(names(m.t, d.anomalies[0].ops),
            (std::vector<std::string>{"C", "H1"}));
}

TEST(NoiseFloor, TheLongerGateThatDecidedALongerKernel) {
  // K, a kernel of C's stream that waits for nothing, runs before C.
  auto step = [](const std::string &origin, double kStart, double kDur) {
    TimelineBuilder t(origin);
    t.compute("P", 0, 100);
    t.add("K", 1, OpRole::Compute, kStart, kDur);
    double c = std::max(110.0, kStart + kDur);
    t.collective("C", c, 50, 50);
    t.compute("H1", 100, 70);
    t.add("W", 0, OpRole::Wait, std::max(170.0, c + 50), 0);
    t.compute("Q", std::max(170.0, c + 50), 100);
    return t;
  };
  TimelineBuilder e = step("E", 90, 20);
  // K runs 40 us longer: C starts 40 us late, 30 us of it exposed.
  TimelineBuilder m = step("M", 90, 60);
  Diagnosis d = diagnoseWith(e.t, m.t, nullptr);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::LongerKernel);
  EXPECT_EQ(names(m.t, d.anomalies[0].ops),
            (std::vector<std::string>{"C", "K"}));
  // In a clean run K ran 40 us longer too but started 40 us earlier: C
  // kept its start and its cover, K's duration has a 60 us band.
  TimelineBuilder a = step("A", 50, 60);
  NoiseFloor f = floorOf(e.t, {&a.t});
  EXPECT_DOUBLE_EQ(f.ops[kC].startUs, 0);
  EXPECT_DOUBLE_EQ(f.ops[kC].exposedUs, 0);
  d = diagnoseWith(e.t, m.t, &f);
  EXPECT_TRUE(d.anomalies.empty());
  ASSERT_EQ(d.withinNoise.size(), 1u);
  EXPECT_EQ(d.withinNoise[0].anomaly.cause, Cause::LongerKernel);
  EXPECT_EQ(d.withinNoise[0].quantity, NoiseQuantity::Duration);
  EXPECT_EQ(names(m.t, d.withinNoise[0].ops), (std::vector<std::string>{"K"}));
  EXPECT_DOUBLE_EQ(d.withinNoise[0].deviationUs, 40);
  EXPECT_DOUBLE_EQ(d.withinNoise[0].bandUs, 60);
}

TEST(NoiseFloor, DeviationsAreMeasuredMinusExpected) {
  TimelineBuilder e = run("E", 50), m = run("M", 25, 50, 150);
  std::string error;
  std::optional<Deviations> dv =
      measureDeviations(e.t, m.t, DiagnosisOptions(), error);
  ASSERT_TRUE(dv) << error;
  // C started 50 us late against H1 and was exposed 50 us (H1 and H2 end
  // at 135); H1 ran 25 us shorter.
  EXPECT_DOUBLE_EQ(dv->ops[kC].startUs, 50);
  EXPECT_DOUBLE_EQ(dv->ops[kC].exposedUs, 50);
  EXPECT_DOUBLE_EQ(dv->ops[kH1].durUs, -25);
  EXPECT_DOUBLE_EQ(dv->ops[kH1].startUs, 0);
}

TEST(NoiseFloor, APairLossWithinTheBand) {
  auto pair = [](const std::string &origin, double dur) {
    TimelineBuilder t(origin);
    t.collective("C", 0, dur, 80);
    t.compute("G", 0, dur, 80);
    return t;
  };
  // Together 200 us against 160 serially: 40 us lost.
  TimelineBuilder e = pair("E", 100), m = pair("M", 200);
  TimelineBuilder a = pair("A", 190), b = pair("B", 170);
  NoiseFloor f = floorOf(e.t, {&a.t, &b.t});
  // A lost 30 us on the pair, B 10.
  EXPECT_DOUBLE_EQ(f.bandUs(NoiseQuantity::PairLoss, 1, 0), 45);
  Diagnosis d = diagnoseWith(e.t, m.t, &f);
  EXPECT_TRUE(d.anomalies.empty());
  ASSERT_EQ(d.withinNoise.size(), 1u);
  EXPECT_EQ(d.withinNoise[0].anomaly.kind, AnomalyKind::HarmfulOverlap);
  EXPECT_EQ(d.withinNoise[0].quantity, NoiseQuantity::PairLoss);
  EXPECT_EQ(names(m.t, d.withinNoise[0].ops),
            (std::vector<std::string>{"C", "G"}));
  EXPECT_DOUBLE_EQ(d.withinNoise[0].deviationUs, 40);
  f = floorOf(e.t, {&b.t});
  d = diagnoseWith(e.t, m.t, &f);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::Contention);
}

TEST(NoiseFloor, AnExtraKernelBeyondTheBandIsStillFound) {
  TimelineBuilder e = run("E", 50), a = run("A", 25);
  NoiseFloor f = floorOf(e.t, {&a.t});
  // A kernel the plan does not have runs before C on its stream: C starts
  // 50 us late. Its exposed time (40 us) is beyond its band (22.5 us), and
  // its start had no spread.
  TimelineBuilder m("M");
  m.compute("P", 0, 100);
  m.collective("spin", 100, 50);
  m.collective("C", 150, 50, 50);
  m.compute("H1", 100, 50);
  m.compute("H2", 150, 10);
  m.add("W", 0, OpRole::Wait, 200, 0);
  m.compute("Q", 200, 100);
  Diagnosis d = diagnoseWith(e.t, m.t, &f);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::ExtraKernel);
  EXPECT_EQ(names(m.t, d.anomalies[0].ops),
            (std::vector<std::string>{"C", "spin"}));
  EXPECT_TRUE(d.withinNoise.empty());
}

TEST(NoiseFloor, RefusesRunsOfAnotherStepOrWithOtherOps) {
  TimelineBuilder e = run("E", 50);
  std::string error;
  auto refuse = [&](const Timeline &clean) {
    error.clear();
    EXPECT_FALSE(
        measureNoiseFloor(e.t, {&clean}, DiagnosisOptions(), 1.5, error));
    return error;
  };
  TimelineBuilder other = run("A", 50);
  other.t.function = "other";
  EXPECT_EQ(refuse(other.t), "A is of function 'other' but E of 'step'");

  TimelineBuilder lacking("A");
  lacking.compute("P", 0, 100);
  lacking.collective("C", 100, 50, 50);
  lacking.compute("H1", 100, 50);
  lacking.add("W", 0, OpRole::Wait, 160, 0);
  lacking.compute("Q", 160, 100);
  EXPECT_EQ(refuse(lacking.t),
            "A has no op 'H2' (occurrence 1) of the expected timeline E; a "
            "clean run of the same plan runs every op of it");

  TimelineBuilder extra = run("A", 50);
  extra.compute("spin", 300, 10);
  EXPECT_EQ(refuse(extra.t),
            "A has op 'spin' (occurrence 1), which the expected timeline E "
            "does not have; a clean run of the same plan runs no other op");

  TimelineBuilder role = run("A", 50);
  role.t.ops[kC].role = OpRole::Compute;
  EXPECT_EQ(refuse(role.t), "'C' (occurrence 1) is a collective in E but a "
                            "compute op in A");

  TimelineBuilder foreign("A");
  foreign.compute("X", 0, 10);
  EXPECT_NE(refuse(foreign.t).find("they are not timelines of the same step"),
            std::string::npos)
      << error;
}

TEST(NoiseFloor, IsValidForItsExpectedTimelineOnly) {
  TimelineBuilder e = run("E", 50), a = run("A", 25), other = run("F", 50);
  NoiseFloor f = floorOf(e.t, {&a.t});
  DiagnosisOptions o;
  o.noise = &f;
  std::string error;
  EXPECT_FALSE(diagnose(other.t, a.t, o, error));
  EXPECT_EQ(error, "the noise floor was measured against E (6 ops), not "
                   "against F (6 ops)");
}

} // namespace
