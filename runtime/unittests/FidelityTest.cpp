//===- FidelityTest.cpp - Measured against predicted, per op class --------===//
//
// CPU-only.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Fidelity.h"

#include <gtest/gtest.h>

using namespace tandem::runtime;

namespace {

Step step(StepKind kind, double predicted, double alone = -1) {
  Step s;
  s.kind = kind;
  s.predictedDurationUs = predicted;
  s.predictedAloneUs = alone;
  return s;
}

Step collective(CollectiveKind kind, double predicted) {
  Step s = step(StepKind::Collective, predicted, predicted * 0.9);
  s.collective = kind;
  return s;
}

TEST(Fidelity, GroupsByClassInOrderOfFirstAppearance) {
  Plan plan;
  plan.steps = {step(StepKind::Matmul, 100, 90),
                collective(CollectiveKind::AllGather, 40),
                step(StepKind::Sync, -1),
                step(StepKind::Matmul, 50, 45),
                step(StepKind::Concat, 5),
                step(StepKind::Slice, 3),
                collective(CollectiveKind::ReduceScatter, 20),
                step(StepKind::AttentionGrad, 70)};
  std::string error;
  std::vector<ClassFidelity> c =
      compareByClass(plan, {120, 44, 0, 60, 4, 3, 30, 140}, error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[0].opClass, "gemm");
  EXPECT_EQ(c[0].steps, 2);
  EXPECT_DOUBLE_EQ(c[0].measuredUs, 180);
  EXPECT_DOUBLE_EQ(c[0].predictedUs, 150);
  EXPECT_DOUBLE_EQ(c[0].predictedAloneUs, 135);
  EXPECT_DOUBLE_EQ(c[0].ratio(), 1.2);
  EXPECT_EQ(c[1].opClass, "all_gather");
  EXPECT_DOUBLE_EQ(c[1].ratio(), 1.1);
  EXPECT_EQ(c[2].opClass, "layout");
  EXPECT_EQ(c[2].steps, 2);
  EXPECT_DOUBLE_EQ(c[2].measuredUs, 7);
  EXPECT_EQ(c[3].opClass, "reduce_scatter");
  EXPECT_EQ(c[4].opClass, "attention_grad");
  EXPECT_DOUBLE_EQ(c[4].ratio(), 2.0);
}

TEST(Fidelity, StepsWithoutPredictionAreCountedNotCompared) {
  Plan plan;
  plan.steps = {step(StepKind::Norm, -1), step(StepKind::Norm, 10)};
  std::string error;
  std::vector<ClassFidelity> c = compareByClass(plan, {8, 12}, error);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].steps, 2);
  EXPECT_EQ(c[0].predictedSteps, 1);
  EXPECT_DOUBLE_EQ(c[0].measuredUs, 12);
  EXPECT_DOUBLE_EQ(c[0].ratio(), 1.2);
}

TEST(Fidelity, RejectsAMeasurementOfTheWrongLength) {
  Plan plan;
  plan.steps = {step(StepKind::Matmul, 1)};
  std::string error;
  EXPECT_TRUE(compareByClass(plan, {}, error).empty());
  EXPECT_NE(error.find("one measured duration per step"), std::string::npos);
}

TEST(Fidelity, ClassOfAnOpNameFollowsTheStepRule) {
  EXPECT_EQ(opClassOfOpName("tandem.matmul"), "gemm");
  EXPECT_EQ(opClassOfOpName("tandem.attention_grad"), "attention_grad");
  EXPECT_EQ(opClassOfOpName("tandem.all_gather_start"), "all_gather");
  EXPECT_EQ(opClassOfOpName("tandem.reduce_scatter"), "reduce_scatter");
  EXPECT_EQ(opClassOfOpName("tandem.permute_start"), "permute");
  EXPECT_EQ(opClassOfOpName("tandem.ring_concat"), "layout");
  EXPECT_EQ(opClassOfOpName("tandem.opaque"), "opaque");
  EXPECT_EQ(opClassOfOpName("tandem.wait"), std::nullopt);
  EXPECT_EQ(opClassOfOpName("tandem.collective"), std::nullopt);
  EXPECT_EQ(opClassOfOpName("matmul"), std::nullopt);
  EXPECT_EQ(opClassOfOpName("tandem._start"), std::nullopt);
}

} // namespace
