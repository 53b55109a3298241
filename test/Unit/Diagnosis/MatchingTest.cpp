//===- MatchingTest.cpp - The same op in two timelines --------------------===//

#include "tandem/Diagnosis/Matching.h"

#include "TimelineBuilder.h"

#include <gtest/gtest.h>

using namespace tandem::diagnosis;

namespace {

TEST(Matching, ByNameAndOccurrence) {
  TimelineBuilder e("E"), m("M");
  e.compute("tandem.matmul l0.fc1", 0, 10);
  e.collective("tandem.all_gather_start", 0, 5);
  e.compute("tandem.matmul l0.fc1", 10, 10);
  e.compute("tandem.norm l0.ln1", 20, 1);
  m.compute("tandem.matmul l0.fc1", 0, 11);
  m.compute("injected", 11, 3);
  m.collective("tandem.all_gather_start", 0, 5);
  m.compute("tandem.matmul l0.fc1", 14, 10);
  std::string error;
  std::optional<Matching> r = matchOps(e.t, m.t, 0.5, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->matched, 3);
  EXPECT_EQ(r->measuredOf, (std::vector<int64_t>{0, 2, 3, -1}));
  EXPECT_EQ(r->expectedOf, (std::vector<int64_t>{0, -1, 1, 2}));
}

TEST(Matching, RefusesARoleMismatch) {
  TimelineBuilder e("E"), m("M");
  e.collective("x", 0, 5);
  m.compute("x", 0, 5);
  std::string error;
  EXPECT_FALSE(matchOps(e.t, m.t, 0.5, error));
  EXPECT_EQ(error, "'x' (occurrence 1) is a collective in E but a compute op "
                   "in M");
}

TEST(Matching, RefusesTimelinesOfAnotherStep) {
  TimelineBuilder e("E"), m("M");
  e.compute("a", 0, 1);
  e.compute("b", 1, 1);
  e.compute("c", 2, 1);
  m.compute("a", 0, 1);
  std::string error;
  EXPECT_FALSE(matchOps(e.t, m.t, 0.5, error));
  EXPECT_EQ(error, "only 1 of the 3 ops of E have a namesake in M (the first "
                   "without one: 'b'); they are not timelines of the same "
                   "step");
  EXPECT_TRUE(matchOps(e.t, m.t, 0.3, error));
}

} // namespace
