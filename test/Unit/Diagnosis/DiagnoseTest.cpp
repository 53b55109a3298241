//===- DiagnoseTest.cpp - Attributing broken overlap to its cause ---------===//
//
// Hand-built expected and measured timelines, one per cause, and the
// tandem-run trace layout read back through the runtime's writer.
//
//===----------------------------------------------------------------------===//

#include "tandem/Diagnosis/Diagnose.h"

#include "TimelineBuilder.h"

#include "tandem/runtime/Plan.h"
#include "tandem/runtime/RunTrace.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tandem::diagnosis;
namespace rt = tandem::runtime;

namespace {

/// The plan: P produces C's input; C hides under H1; H2 is short; Q waits
/// for C. C is fully hidden.
TimelineBuilder planned() {
  TimelineBuilder e("E");
  e.compute("P", 0, 100);
  e.collective("C", 100, 50, 50);
  e.compute("H1", 100, 50);
  e.compute("H2", 150, 10);
  e.add("W", 0, OpRole::Wait, 160, 0);
  e.compute("Q", 160, 100);
  return e;
}

Diagnosis run(const Timeline &e, const Timeline &m) {
  std::string error;
  std::optional<Diagnosis> d = diagnose(e, m, DiagnosisOptions(), error);
  EXPECT_TRUE(d) << error;
  return d ? *d : Diagnosis();
}

std::vector<std::string> names(const Timeline &m, const Anomaly &a) {
  std::vector<std::string> out;
  for (int64_t i : a.ops)
    out.push_back(m.ops[i].name);
  return out;
}

TEST(Diagnose, TheSameTimelineHasNoAnomaly) {
  TimelineBuilder e = planned();
  Diagnosis d = run(e.t, e.t);
  EXPECT_TRUE(d.anomalies.empty());
  ASSERT_EQ(d.collectives.size(), 1u);
  EXPECT_DOUBLE_EQ(d.collectives[0].plannedExposedUs, 0);
  ASSERT_EQ(d.collectives[0].hiddenUnder.size(), 1u);
  EXPECT_EQ(e.t.ops[d.collectives[0].hiddenUnder[0].first].name, "H1");
}

TEST(Diagnose, AWaitOnAnotherStreamStartsTheCollectiveLate) {
  TimelineBuilder e = planned(), m("M");
  m.compute("P", 0, 100);
  m.collective("C", 150, 50, 50); // starts when H1 ends
  m.compute("H1", 100, 50);
  m.compute("H2", 150, 10);
  m.add("W", 0, OpRole::Wait, 200, 0);
  m.compute("Q", 200, 100);
  Diagnosis d = run(e.t, m.t);
  ASSERT_EQ(d.anomalies.size(), 1u);
  const Anomaly &a = d.anomalies[0];
  EXPECT_EQ(a.kind, AnomalyKind::LostOverlap);
  EXPECT_EQ(a.cause, Cause::Wait);
  EXPECT_EQ(names(m.t, a), (std::vector<std::string>{"C", "H1"}));
  EXPECT_DOUBLE_EQ(a.lostUs, 40); // 10 of 50 us under H2
  EXPECT_DOUBLE_EQ(d.collectives[0].measuredExposedUs, 40);
}

TEST(Diagnose, AnExtraKernelOnTheStreamStartsItLate) {
  TimelineBuilder e = planned(), m("M");
  m.compute("P", 0, 100);
  m.collective("spin", 100, 50);
  m.collective("C", 150, 50, 50);
  m.compute("H1", 100, 50);
  m.compute("H2", 150, 10);
  m.add("W", 0, OpRole::Wait, 200, 0);
  m.compute("Q", 200, 100);
  Diagnosis d = run(e.t, m.t);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::ExtraKernel);
  EXPECT_EQ(names(m.t, d.anomalies[0]),
            (std::vector<std::string>{"C", "spin"}));
  ASSERT_EQ(d.extraOps.size(), 1u);
  EXPECT_EQ(m.t.ops[d.extraOps[0]].name, "spin");
}

TEST(Diagnose, ALateHostLaunch) {
  TimelineBuilder e = planned(), m("M");
  m.compute("P", 0, 100).hostUs = 0;
  TimelineOp &c = m.collective("C", 150, 50, 50);
  c.hostUs = 148;
  m.compute("H1", 100, 50).hostUs = 149;
  m.compute("H2", 150, 10).hostUs = 150;
  m.add("W", 0, OpRole::Wait, 200, 0);
  m.compute("Q", 200, 100);
  Diagnosis d = run(e.t, m.t);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::LateHostLaunch);
  EXPECT_EQ(names(m.t, d.anomalies[0]), (std::vector<std::string>{"C"}));
  // Without host times nothing explains the start.
  m.t.ops[1].hostUs = -1;
  d = run(e.t, m.t);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::Wait); // H1 ends at 150
}

TEST(Diagnose, SmResidencyFromTheCollectivesEnd) {
  // H1 (a GEMM) issued before C holds the SMs: C moves data only after H1.
  TimelineBuilder e = planned(), m("M");
  m.compute("P", 0, 100);
  m.compute("H1", 100, 50);
  m.collective("C", 100, 100, 50);
  m.compute("H2", 150, 10);
  m.add("W", 0, OpRole::Wait, 200, 0);
  m.compute("Q", 200, 100);
  Diagnosis d = run(e.t, m.t);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::SmResidency);
  EXPECT_EQ(names(m.t, d.anomalies[0]), (std::vector<std::string>{"C", "H1"}));
  // Issued after C, H1 would not have kept it off the SMs: the collective
  // merely ran longer.
  std::swap(m.t.ops[1], m.t.ops[2]);
  d = run(e.t, m.t);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::SlowerCollective);
}

TEST(Diagnose, ShorterComputeUnderIt) {
  TimelineBuilder e = planned(), m("M");
  m.compute("P", 0, 100);
  m.collective("C", 100, 50, 50);
  m.compute("H1", 100, 20);
  m.compute("H2", 120, 10);
  m.add("W", 0, OpRole::Wait, 150, 0);
  m.compute("Q", 150, 100);
  Diagnosis d = run(e.t, m.t);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::ShorterCompute);
  EXPECT_DOUBLE_EQ(d.anomalies[0].lostUs, 20);
}

TEST(Diagnose, HarmfulOverlapAgainstTimesAlone) {
  TimelineBuilder e("E"), m("M");
  e.collective("C", 0, 100, 80);
  e.compute("G", 0, 100, 80);
  m.collective("C", 0, 200, 80);
  m.compute("G", 0, 200, 80);
  Diagnosis d = run(e.t, m.t);
  ASSERT_EQ(d.anomalies.size(), 1u);
  const Anomaly &a = d.anomalies[0];
  EXPECT_EQ(a.kind, AnomalyKind::HarmfulOverlap);
  EXPECT_EQ(a.cause, Cause::Contention);
  EXPECT_EQ(names(m.t, a), (std::vector<std::string>{"C", "G"}));
  // Together 200 us, serially 160 us.
  EXPECT_DOUBLE_EQ(a.lostUs, 40);
  // The plan's own pair (100 us together) beat serial: nothing to report.
  EXPECT_TRUE(run(e.t, e.t).anomalies.empty());
}

TEST(Diagnose, OneLateGemmUnderTwoCollectivesIsOneAnomaly) {
  TimelineBuilder e("E"), m("M");
  e.compute("P", 0, 100);
  e.collective("C1", 100, 40, 40);
  e.collective("C2", 140, 40, 40);
  e.compute("H", 100, 100);
  e.compute("Q", 200, 100);
  m.compute("P", 0, 100).hostUs = 0;
  m.collective("C1", 100, 40, 40).hostUs = 1;
  m.collective("C2", 140, 40, 40).hostUs = 2;
  m.compute("H", 180, 100).hostUs = 178;
  m.compute("Q", 280, 100).hostUs = 179;
  Diagnosis d = run(e.t, m.t);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::LateHostLaunch);
  EXPECT_EQ(names(m.t, d.anomalies[0]),
            (std::vector<std::string>{"C1", "C2", "H"}));
  EXPECT_DOUBLE_EQ(d.anomalies[0].lostUs, 80);
}

TEST(Diagnose, TimesAloneFromAReferenceRun) {
  // Neither timeline knows the pair's times alone; the serial reference
  // run measured them.
  TimelineBuilder e("E"), m("M"), ref("R");
  e.collective("C", 0, 100);
  e.compute("G", 0, 100);
  m.collective("C", 0, 200);
  m.compute("G", 0, 200);
  ref.compute("G", 0, 80);
  ref.collective("C", 80, 80);
  EXPECT_TRUE(run(e.t, m.t).anomalies.empty());
  DiagnosisOptions o;
  o.aloneReference = &ref.t;
  std::string error;
  std::optional<Diagnosis> d = diagnose(e.t, m.t, o, error);
  ASSERT_TRUE(d) << error;
  ASSERT_EQ(d->anomalies.size(), 1u);
  EXPECT_EQ(d->anomalies[0].kind, AnomalyKind::HarmfulOverlap);
  EXPECT_DOUBLE_EQ(d->anomalies[0].lostUs, 40);
}

TEST(Diagnose, CollectivesDelayedBehindOneJoinItsAnomaly) {
  TimelineBuilder e("E"), m("M");
  e.compute("P", 0, 100);
  e.collective("C1", 100, 50, 50);
  e.collective("C2", 150, 50, 50);
  e.compute("H", 100, 75);
  e.compute("Q", 200, 10);
  m.compute("P", 0, 100);
  m.collective("spin", 100, 50);
  m.collective("C1", 150, 50, 50);
  m.collective("C2", 200, 50, 50);
  m.compute("H", 100, 75);
  m.compute("Q", 250, 10);
  Diagnosis d = run(e.t, m.t);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::ExtraKernel);
  EXPECT_EQ(names(m.t, d.anomalies[0]),
            (std::vector<std::string>{"C1", "spin", "C2"}));
  // C1 exposed 25 instead of 0, C2 50 instead of 25.
  EXPECT_DOUBLE_EQ(d.anomalies[0].lostUs, 50);
}

TEST(Diagnose, RefusesAnotherFunction) {
  TimelineBuilder e = planned(), m = planned();
  m.t.function = "other";
  std::string error;
  EXPECT_FALSE(diagnose(e.t, m.t, DiagnosisOptions(), error));
  EXPECT_EQ(error, "E is of function 'step' but E of 'other'");
}

/// A plan as tandem-opt exports it, with its prediction.
rt::Plan plan() {
  rt::Plan p;
  p.function = "step";
  p.numStreams = 2;
  p.streamNames = {"compute", "comm @tp"};
  auto step = [&](rt::StepKind kind, const char *op, const char *label,
                  int64_t stream, double start, double dur) {
    rt::Step s;
    s.kind = kind;
    s.name = op;
    s.label = label;
    s.stream = stream;
    s.predictedStartUs = start;
    s.predictedDurationUs = dur;
    s.predictedAloneUs = dur;
    p.steps.push_back(s);
  };
  step(rt::StepKind::Matmul, "tandem.matmul", "l0.qkv", 0, 0, 100);
  step(rt::StepKind::Collective, "tandem.all_gather_start", "", 1, 100, 50);
  step(rt::StepKind::Matmul, "tandem.matmul", "l0.fc1", 0, 100, 60);
  step(rt::StepKind::Sync, "tandem.wait", "", 0, 160, 0);
  step(rt::StepKind::Matmul, "tandem.matmul", "l0.fc2", 0, 160, 60);
  p.prediction = rt::Prediction{};
  return p;
}

TEST(Diagnose, ReadsTandemRunsTraceAgainstThePlan) {
  rt::Plan p = plan();
  std::vector<rt::StepTiming> t;
  for (const rt::Step &s : p.steps)
    t.push_back({s.predictedStartUs, s.predictedStartUs + s.predictedDurationUs,
                 s.predictedStartUs});
  std::ostringstream os;
  ASSERT_TRUE(rt::writeRunTrace(os, p, t, 0));
  std::string error;
  std::optional<Timeline> measured =
      parseTimeline(os.str(), "run.json", TimelineSource::Measured, "", error);
  ASSERT_TRUE(measured) << error;
  EXPECT_EQ(measured->origin, "run.json (process 'measured @step rank 0')");
  ASSERT_EQ(measured->ops.size(), 5u);
  EXPECT_EQ(measured->ops[2].name, "tandem.matmul l0.fc1");
  EXPECT_EQ(measured->ops[1].opClass, "all_gather");
  EXPECT_EQ(measured->ops[3].role, OpRole::Wait);
  // Alone times from the prediction beside it, host times from the run.
  EXPECT_DOUBLE_EQ(measured->ops[2].aloneUs, 60);
  EXPECT_DOUBLE_EQ(measured->ops[2].hostUs, 100);
  std::optional<Timeline> expected = timelineOfPlan(p, "plan.json", error);
  ASSERT_TRUE(expected) << error;
  EXPECT_TRUE(run(*expected, *measured).anomalies.empty());
  // The trace's own prediction is the same expected timeline.
  std::optional<Timeline> predicted =
      parseTimeline(os.str(), "run.json", TimelineSource::Predicted, "", error);
  ASSERT_TRUE(predicted) << error;
  EXPECT_EQ(predicted->ops.size(), 5u);

  // The host enqueues l0.fc1 (planned under the all-gather) 60 us late.
  t[2] = {160, 220, 158};
  t[3] = {220, 220, 221};
  t[4] = {220, 280, 222};
  os.str("");
  ASSERT_TRUE(rt::writeRunTrace(os, p, t, 0));
  measured =
      parseTimeline(os.str(), "run.json", TimelineSource::Measured, "", error);
  ASSERT_TRUE(measured) << error;
  Diagnosis d = run(*expected, *measured);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::LateHostLaunch);
  EXPECT_EQ(names(*measured, d.anomalies[0]),
            (std::vector<std::string>{"tandem.all_gather_start",
                                      "tandem.matmul l0.fc1"}));
  EXPECT_DOUBLE_EQ(d.anomalies[0].lostUs, 50);
}

TEST(Diagnose, PlanWithoutPredictionIsRefused) {
  rt::Plan p = plan();
  for (rt::Step &s : p.steps)
    s.predictedStartUs = -1;
  std::string error;
  EXPECT_FALSE(timelineOfPlan(p, "plan.json", error));
  EXPECT_NE(error.find("plan.json: the plan carries no predicted timeline"),
            std::string::npos);
}

} // namespace

namespace {
/// C hides under H, D under Q. In the run the host enqueues H 900 us late:
/// the GPU sits idle from C's end until H starts; D, the first collective
/// on its stream after that gap, runs 300 us instead of 50 beside Q. With
/// `busyGap`, B runs on D's stream after the gap first.
std::pair<TimelineBuilder, TimelineBuilder> idleGapRun(bool busyGap) {
  TimelineBuilder e("E"), m("M");
  e.compute("P", 0, 100, 100);
  e.collective("C", 100, 50, 50);
  e.compute("H", 100, 100, 100);
  if (busyGap)
    e.collective("B", 150, 10, 10);
  e.collective("D", 200, 50, 50);
  e.compute("Q", 200, 100, 100);
  m.compute("P", 0, 100, 100).hostUs = 0;
  m.collective("C", 100, 50, 50).hostUs = 1;
  m.compute("H", 1000, 100, 100).hostUs = 1000;
  if (busyGap)
    m.collective("B", 1000, 10, 10).hostUs = 1000;
  m.collective("D", 1100, 300, 50).hostUs = 1001;
  m.compute("Q", 1100, 100, 100).hostUs = 1002;
  return {e, m};
}
} // namespace

TEST(Diagnose, AnOpFirstAfterALateLaunchsIdleGapIsItsConsequence) {
  auto [e, m] = idleGapRun(/*busyGap=*/false);
  Diagnosis d = run(e.t, m.t);
  ASSERT_EQ(d.anomalies.size(), 1u);
  EXPECT_EQ(d.anomalies[0].cause, Cause::LateHostLaunch);
  ASSERT_EQ(d.anomalies[0].consequences.size(), 1u);
  // D beside Q, slower than both alone: a harmful overlap, linked to the
  // late launch by the idle gap alone (D and Q overlapped in the plan too).
  const Anomaly &c = d.anomalies[0].consequences[0];
  EXPECT_EQ(c.cause, Cause::Contention);
  EXPECT_EQ(names(m.t, c), (std::vector<std::string>{"D", "Q"}));
  EXPECT_NE(c.detail.find("after the GPU sat idle"), std::string::npos)
      << c.detail;
}

TEST(Diagnose, AnOpAfterOtherWorkOnItsStreamStaysARootCause) {
  // B ran on D's stream after the gap: D was not the first to run on an
  // idle GPU, and nothing links its slowness to the late launch.
  auto [e, m] = idleGapRun(/*busyGap=*/true);
  Diagnosis d = run(e.t, m.t);
  bool dIsRoot = false;
  for (const Anomaly &a : d.anomalies)
    dIsRoot |= a.cause == Cause::Contention &&
               names(m.t, a) == std::vector<std::string>{"D", "Q"};
  EXPECT_TRUE(dIsRoot);
}
