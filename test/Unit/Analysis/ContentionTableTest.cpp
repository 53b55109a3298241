//===- ContentionTableTest.cpp - Contention table lookup -----------------===//

#include "tandem/Engine/Contention.h"

#include "gtest/gtest.h"

using namespace mlir::tandem;

namespace {
TEST(ContentionTable, DefaultsComeFromTheH200Probe) {
  ContentionTable t = ContentionTable::defaults();
  ASSERT_EQ(t.points().size(), 4u);
  EXPECT_EQ(t.points()[2].commSms, 24);
  EXPECT_DOUBLE_EQ(t.points()[2].gemmSlowdown, 1.12);
}

TEST(ContentionTable, InterpolatesAndClamps) {
  ContentionTable t = ContentionTable::defaults();
  EXPECT_NEAR(t.lookup(20).gemmSlowdown, 1.115, 1e-12); // between 16 and 24
  EXPECT_DOUBLE_EQ(t.lookup(4).gemmSlowdown, 1.00);     // below the table
  EXPECT_DOUBLE_EQ(t.lookup(64).gemmSlowdown, 1.10);    // above the table
  EXPECT_DOUBLE_EQ(t.lookup(24).commSlowdown, 1.13);
}
} // namespace
