//===- CheckedMathTest.cpp - Overflow-checked arithmetic tests ------------===//

#include "tandem/runtime/CheckedMath.h"

#include <gtest/gtest.h>

using namespace tandem::runtime;

namespace {

TEST(CheckedMathTest, ReportsOverflowAndLeavesTheResult) {
  int64_t r = 7;
  EXPECT_TRUE(checkedAdd(INT64_MAX - 1, 1, r));
  EXPECT_EQ(r, INT64_MAX);
  EXPECT_FALSE(checkedAdd(INT64_MAX, 1, r));
  EXPECT_EQ(r, INT64_MAX);
  EXPECT_FALSE(checkedAdd(INT64_MIN, -1, r));
  EXPECT_TRUE(checkedMul(int64_t(1) << 31, int64_t(1) << 31, r));
  EXPECT_EQ(r, int64_t(1) << 62);
  // Issue 13, row 2: 2^32 * 2^32 wrapped to 0.
  EXPECT_FALSE(checkedMul(int64_t(1) << 32, int64_t(1) << 32, r));
  EXPECT_FALSE(checkedMul(INT64_MIN, -1, r));
  EXPECT_FALSE(checkedSub(INT64_MIN, 1, r));
  EXPECT_TRUE(checkedProduct({2, 3, 7}, r));
  EXPECT_EQ(r, 42);
  EXPECT_FALSE(checkedProduct({int64_t(1) << 40, int64_t(1) << 30, 0}, r));
}

// Row 7: offset + bytes wrapped below the limit.
TEST(CheckedMathTest, RangeInsideNeverFormsTheSum) {
  EXPECT_TRUE(rangeInside(0, 16, 16));
  EXPECT_TRUE(rangeInside(16, 0, 16));
  EXPECT_FALSE(rangeInside(1, 16, 16));
  EXPECT_FALSE(rangeInside(INT64_MAX - 255, 2048, 4096));
  EXPECT_FALSE(rangeInside(INT64_MAX, INT64_MAX, INT64_MAX));
  EXPECT_FALSE(rangeInside(-1, 1, 16));
  EXPECT_FALSE(rangeInside(0, -1, 16));
  EXPECT_TRUE(rangeInside(INT64_MAX, 0, INT64_MAX));
}

} // namespace
