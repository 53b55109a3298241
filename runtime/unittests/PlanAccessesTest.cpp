//===- PlanAccessesTest.cpp - Byte ranges of plan steps -------------------===//

#include "tandem/runtime/PlanAccesses.h"

#include <gtest/gtest.h>

using namespace tandem::runtime;

namespace {

int64_t addBuffer(Plan &plan, std::vector<int64_t> shape) {
  Buffer b;
  b.name = "b" + std::to_string(plan.buffers.size());
  b.shape = std::move(shape);
  plan.buffers.push_back(b);
  return plan.buffers.size() - 1;
}

Step layout(StepKind kind, std::vector<int64_t> inputs, int64_t output) {
  Step s;
  s.kind = kind;
  s.inputs = std::move(inputs);
  s.outputs = {output};
  return s;
}

TEST(PlanAccessesTest, SliceIsOneStridedCopy) {
  // 2 interleave groups of 6 rows, 3 chunks each: chunk 1 is rows 2-3 of
  // every group. Rows are 4 bf16 = 8 bytes.
  Plan plan;
  int64_t in = addBuffer(plan, {12, 4});
  int64_t out = addBuffer(plan, {4, 4});
  Step s = layout(StepKind::Slice, {in}, out);
  s.chunk = 1;
  s.chunks = 3;
  s.interleave = 2;
  std::vector<LayoutCopy> copies;
  std::string error;
  ASSERT_TRUE(layoutCopies(plan, s, 0, copies, error)) << error;
  ASSERT_EQ(copies.size(), 1u);
  const LayoutCopy &c = copies[0];
  EXPECT_EQ(c.src.buffer, in);
  EXPECT_EQ(c.src.offset, 2 * 8);
  EXPECT_EQ(c.src.pitch, 6 * 8);
  EXPECT_EQ(c.src.rowBytes, 2 * 8);
  EXPECT_EQ(c.src.rows, 2);
  EXPECT_EQ(c.dst.buffer, out);
  EXPECT_TRUE(c.dst.write);
  EXPECT_EQ(c.dst.offset, 0);
  EXPECT_EQ(c.dst.pitch, 2 * 8);
  for (const BufferAccess *a : {&c.src, &c.dst})
    EXPECT_EQ(checkAccess(plan, *a), "");
  int64_t end;
  ASSERT_TRUE(accessEnd(c.src, end));
  EXPECT_EQ(end, 16 + 48 + 16);
}

TEST(PlanAccessesTest, RingConcatPlacesEachRanksBlock) {
  Plan plan;
  plan.groups.push_back({"tp", 3, "ring"});
  int64_t a = addBuffer(plan, {2, 4}), b = addBuffer(plan, {2, 4}),
          c = addBuffer(plan, {2, 4});
  int64_t out = addBuffer(plan, {6, 4});
  Step s = layout(StepKind::RingConcat, {a, b, c}, out);
  s.group = 0;
  std::vector<LayoutCopy> copies;
  std::string error;
  ASSERT_TRUE(layoutCopies(plan, s, 4, copies, error)) << error; // rank 1
  ASSERT_EQ(copies.size(), 3u);
  // Input k came from rank (1 - k) mod 3.
  EXPECT_EQ(copies[0].dst.offset, 1 * 16);
  EXPECT_EQ(copies[1].dst.offset, 0 * 16);
  EXPECT_EQ(copies[2].dst.offset, 2 * 16);
  for (const LayoutCopy &copy : copies) {
    EXPECT_EQ(copy.dst.pitch, 48);
    EXPECT_EQ(checkAccess(plan, copy.dst), "");
  }
}

TEST(PlanAccessesTest, OtherStepsTouchWholeOperands) {
  Plan plan;
  int64_t x = addBuffer(plan, {8, 8}), y = addBuffer(plan, {8, 8});
  Step s;
  s.kind = StepKind::Elementwise;
  s.inputs = {x};
  s.outputs = {y};
  std::vector<BufferAccess> accesses;
  std::string error;
  ASSERT_TRUE(stepAccesses(plan, s, 0, accesses, error)) << error;
  ASSERT_EQ(accesses.size(), 2u);
  EXPECT_EQ(accesses[0].rowBytes, 128);
  EXPECT_FALSE(accesses[0].write);
  EXPECT_TRUE(accesses[1].write);
}

TEST(PlanAccessesTest, CheckAccessRejectsRangesPastTheBuffer) {
  Plan plan;
  addBuffer(plan, {8, 8}); // 128 bytes
  BufferAccess a;
  a.buffer = 0;
  a.rowBytes = 16;
  a.rows = 8;
  a.pitch = 16;
  EXPECT_EQ(checkAccess(plan, a), "");
  a.offset = 1;
  EXPECT_EQ(checkAccess(plan, a),
            "reads buffer 0 ('b0') up to byte 129 (8 rows of 16 bytes, pitch "
            "16, from byte 1), past its 128 bytes");
  a.offset = 0;
  a.pitch = INT64_MAX / 4;
  EXPECT_EQ(checkAccess(plan, a), "reads buffer 0 ('b0') at an offset that "
                                  "overflows a 64-bit integer");
  a.buffer = 3;
  EXPECT_EQ(checkAccess(plan, a), "accesses buffer 3, which does not exist");
}

TEST(PlanAccessesTest, OverflowingLayoutSizesFail) {
  Plan plan;
  int64_t in = addBuffer(plan, {8, 8});
  int64_t out = addBuffer(plan, {4, 8});
  Step s = layout(StepKind::Slice, {in}, out);
  s.chunks = 2;
  s.chunk = INT64_MAX;
  std::vector<LayoutCopy> copies;
  std::string error;
  EXPECT_FALSE(layoutCopies(plan, s, 0, copies, error));
  EXPECT_EQ(error, "slice copy sizes overflow a 64-bit integer");
}

} // namespace
