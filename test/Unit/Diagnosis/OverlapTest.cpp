//===- OverlapTest.cpp - Interval arithmetic of the diagnosis -------------===//

#include "tandem/Diagnosis/Overlap.h"

#include <gtest/gtest.h>

using namespace tandem::diagnosis;

namespace {

TEST(Overlap, UnitesAndCovers) {
  IntervalSet u = unite({{5, 10}, {0, 3}, {2, 4}, {7, 7}, {9, 12}});
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0], std::make_pair(0.0, 4.0));
  EXPECT_EQ(u[1], std::make_pair(5.0, 12.0));
  EXPECT_DOUBLE_EQ(coveredUs(u, 3, 6), 2);
  EXPECT_DOUBLE_EQ(coveredUs(u, -5, 20), 11);
  EXPECT_DOUBLE_EQ(coveredUs(u, 4, 5), 0);
  EXPECT_DOUBLE_EQ(coveredUs(u, 6, 6), 0);
}

TEST(Overlap, PairsOnlyAcrossStreamsOfOneDevice) {
  std::vector<Span> spans = {
      {0, 10, 0, 0, true},  // 0
      {5, 20, 1, 0, true},  // 1: overlaps 0 by 5
      {12, 15, 0, 0, true}, // 2: overlaps 1 by 3
      {0, 30, 0, 1, true},  // 3: another device
      {0, 30, 2, 0, false}, // 4: does not count
      {8, 9, 0, 0, true},   // 5: same stream as 0
  };
  std::vector<OverlapPair> p = overlappingPairs(spans);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].a, 0u);
  EXPECT_EQ(p[0].b, 1u);
  EXPECT_DOUBLE_EQ(p[0].overlapUs, 5);
  EXPECT_EQ(p[1].a, 1u);
  EXPECT_EQ(p[1].b, 2u);
  EXPECT_DOUBLE_EQ(p[1].overlapUs, 3);
  EXPECT_EQ(p[2].a, 1u);
  EXPECT_EQ(p[2].b, 5u);
  std::vector<double> ov = overlappedUs(spans);
  EXPECT_DOUBLE_EQ(ov[0], 5);
  EXPECT_DOUBLE_EQ(ov[1], 8); // [5, 10) and [12, 15); [8, 9) lies inside
  EXPECT_DOUBLE_EQ(ov[3], 0);
  EXPECT_DOUBLE_EQ(ov[4], 0);
}

TEST(Overlap, IsolatedMedianOfAKind) {
  std::vector<Span> spans = {
      {0, 10, 0, 0, true},   // gemm, isolated
      {20, 32, 0, 0, true},  // gemm, isolated
      {40, 70, 0, 0, true},  // gemm, overlapped by the next
      {40, 70, 1, 0, true},  // nccl, overlapped
      {100, 140, 0, 0, true} // gemm, isolated
  };
  std::vector<std::string> keys = {"gemm", "gemm", "gemm", "nccl", "gemm"};
  std::vector<int64_t> samples;
  std::vector<double> m = isolatedMedians(spans, keys, 0.02, &samples);
  EXPECT_DOUBLE_EQ(m[0], 12); // median of 10, 12, 40
  EXPECT_DOUBLE_EQ(m[2], 12);
  EXPECT_EQ(samples[2], 3);
  EXPECT_LT(m[3], 0); // never isolated
  EXPECT_EQ(samples[3], 0);
}

TEST(Overlap, PairCostIsUnionAgainstSerial) {
  // Each 20 alone; together over [0, 30): the union beats serial.
  std::vector<Span> spans = {{0, 30, 0, 0, true}, {0, 30, 1, 0, true}};
  std::vector<OverlapPair> p = overlappingPairs(spans);
  std::vector<PairCost> c = pairCosts(spans, p, {20, 20});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_DOUBLE_EQ(c[0].combinedUs, 30);
  EXPECT_DOUBLE_EQ(c[0].serialUs, 40);
  EXPECT_DOUBLE_EQ(c[0].lostUs(), -10);
  // Over [0, 50) each: slower than running them one after the other.
  spans = {{0, 50, 0, 0, true}, {0, 50, 1, 0, true}};
  c = pairCosts(spans, overlappingPairs(spans), {20, 20});
  EXPECT_DOUBLE_EQ(c[0].lostUs(), 10);
  // An unknown alone time: that side has no excess.
  c = pairCosts(spans, overlappingPairs(spans), {20, -1});
  EXPECT_DOUBLE_EQ(c[0].serialUs, 70);
  EXPECT_DOUBLE_EQ(c[0].lostUs(), -20);
}

TEST(Overlap, ExcessIsSharedAmongPartners) {
  // A GEMM 40 us over its alone time beside two collectives, 30 and 10 us
  // of overlap: 30 and 10 us of its excess go to the pairs.
  std::vector<Span> spans = {
      {0, 100, 0, 0, true}, {0, 30, 1, 0, true}, {50, 60, 1, 0, true}};
  std::vector<OverlapPair> p = overlappingPairs(spans);
  std::vector<PairCost> c = pairCosts(spans, p, {60, 30, 10});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_DOUBLE_EQ(c[0].combinedUs, 90 + 30 - 30);
  EXPECT_DOUBLE_EQ(c[1].combinedUs, 70 + 10 - 10);
}

} // namespace
