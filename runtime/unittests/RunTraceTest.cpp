//===- RunTraceTest.cpp - The trace tandem-run writes ---------------------===//
//
// CPU-only: the layout tandem-diagnose reads (names, processes, threads, the
// measured host launch times and the predicted alone times).
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/RunTrace.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

using namespace tandem::runtime;

namespace {

Plan twoStreamPlan() {
  Plan plan;
  plan.function = "step";
  plan.numStreams = 2;
  plan.streamNames = {"compute", "comm @tp"};
  Step gemm;
  gemm.kind = StepKind::Matmul;
  gemm.name = "tandem.matmul";
  gemm.label = "l0.qkv";
  gemm.predictedStartUs = 0;
  gemm.predictedDurationUs = 100;
  gemm.predictedAloneUs = 90;
  Step ag;
  ag.kind = StepKind::Collective;
  ag.name = "tandem.all_gather_start";
  ag.stream = 1;
  ag.predictedStartUs = 0;
  ag.predictedDurationUs = 50;
  plan.steps = {gemm, ag};
  plan.prediction = Prediction{};
  return plan;
}

TEST(RunTrace, NamesAStepByItsOpAndLabel) {
  Plan plan = twoStreamPlan();
  EXPECT_EQ(stepTraceName(plan.steps[0]), "tandem.matmul l0.qkv");
  EXPECT_EQ(stepTraceName(plan.steps[1]), "tandem.all_gather_start");
}

TEST(RunTrace, WritesMeasuredAndPredictedProcesses) {
  Plan plan = twoStreamPlan();
  std::vector<StepTiming> measured(2);
  measured[0] = {1.5, 120.0, 0.25};
  measured[1] = {2.0, 70.0, -1};
  std::ostringstream os;
  ASSERT_TRUE(writeRunTrace(os, plan, measured, 3));
  nlohmann::json trace = nlohmann::json::parse(os.str());
  const auto &events = trace["traceEvents"];
  std::vector<nlohmann::json> slices;
  std::vector<std::string> processes, threads;
  for (const auto &e : events) {
    if (e["ph"] == "X")
      slices.push_back(e);
    else if (e["name"] == "process_name")
      processes.push_back(e["args"]["name"]);
    else if (e["name"] == "thread_name")
      threads.push_back(e["args"]["name"]);
  }
  EXPECT_EQ(processes, (std::vector<std::string>{"measured @step rank 3",
                                                 "predicted @step"}));
  EXPECT_EQ(threads, (std::vector<std::string>{"compute", "comm @tp", "compute",
                                               "comm @tp"}));
  ASSERT_EQ(slices.size(), 4u);
  EXPECT_EQ(slices[0]["name"], "tandem.matmul l0.qkv");
  EXPECT_EQ(slices[0]["cat"], "matmul");
  EXPECT_EQ(slices[0]["pid"], 0);
  EXPECT_DOUBLE_EQ(slices[0]["ts"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(slices[0]["dur"].get<double>(), 118.5);
  EXPECT_DOUBLE_EQ(slices[0]["args"]["host_us"].get<double>(), 0.25);
  EXPECT_EQ(slices[0]["args"]["step"], 0);
  // Not recorded: no host_us.
  EXPECT_FALSE(slices[1]["args"].contains("host_us"));
  EXPECT_EQ(slices[1]["tid"], 1);
  // The prediction carries the plan's alone time where it has one.
  EXPECT_EQ(slices[2]["pid"], 1);
  EXPECT_DOUBLE_EQ(slices[2]["args"]["alone_us"].get<double>(), 90);
  EXPECT_FALSE(slices[3]["args"].contains("alone_us"));
}

TEST(RunTrace, WithoutAPredictionWritesTheMeasurementOnly) {
  Plan plan = twoStreamPlan();
  plan.prediction.reset();
  std::ostringstream os;
  ASSERT_TRUE(writeRunTrace(os, plan, {{0, 1, -1}}, 0));
  nlohmann::json trace = nlohmann::json::parse(os.str());
  int slices = 0;
  for (const auto &e : trace["traceEvents"])
    slices += e["ph"] == "X";
  // One measured step given: only it is written.
  EXPECT_EQ(slices, 1);
}

} // namespace
