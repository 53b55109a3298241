//===- PlanAccessesTest.cpp - Byte ranges of plan steps -------------------===//

#include "tandem/runtime/PlanAccesses.h"

#include <gtest/gtest.h>

#include <cstdint>

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

/// Whether `access` is `rows` runs of `rowBytes` bytes, `pitch` apart,
/// from `offset`.
::testing::AssertionResult isRuns(const BufferAccess &access, int64_t offset,
                                  int64_t pitch, int64_t rowBytes,
                                  int64_t rows) {
  if (access.offset == offset && access.pitch == pitch &&
      access.rowBytes == rowBytes && access.rows == rows)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "offset " << access.offset << ", pitch " << access.pitch
         << ", row bytes " << access.rowBytes << ", rows " << access.rows
         << "; expected " << offset << ", " << pitch << ", " << rowBytes << ", "
         << rows;
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
  EXPECT_TRUE(isRuns(c.src, 2 * 8, 6 * 8, 2 * 8, 2));
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

/// The copies of `step` (rank 0) applied to `memory` (one byte vector per
/// buffer of `plan`), as the executor's launchCopy2D does them.
void applyCopies(const Plan &plan, const Step &step,
                 std::vector<std::vector<uint8_t>> &memory) {
  std::vector<LayoutCopy> copies;
  std::string error;
  ASSERT_TRUE(layoutCopies(plan, step, 0, copies, error)) << error;
  for (const LayoutCopy &c : copies) {
    ASSERT_EQ(checkAccess(plan, c.src), "");
    ASSERT_EQ(checkAccess(plan, c.dst), "");
    for (int64_t row = 0; row < c.src.rows; ++row)
      for (int64_t byte = 0; byte < c.src.rowBytes; ++byte)
        memory[c.dst.buffer][c.dst.offset + row * c.dst.pitch + byte] =
            memory[c.src.buffer][c.src.offset + row * c.src.pitch + byte];
  }
}

/// Memory for every buffer of `plan`: buffer b's byte i is (b * 61 + i) mod
/// 251, so that a byte copied from the wrong place shows.
std::vector<std::vector<uint8_t>> patterned(const Plan &plan) {
  std::vector<std::vector<uint8_t>> memory;
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    memory.emplace_back(plan.buffers[b].bytes());
    for (size_t i = 0; i < memory.back().size(); ++i)
      memory.back()[i] = static_cast<uint8_t>((b * 61 + i) % 251);
  }
  return memory;
}

TEST(PlanAccessesTest, WeightedSliceWithoutInterleave) {
  // Dimension 1 (16 bf16 columns, rows of 3) cut 1:3: chunk 0 is columns
  // 0-3, chunk 1 columns 4-15.
  Plan plan;
  int64_t in = addBuffer(plan, {3, 16});
  int64_t first = addBuffer(plan, {3, 4}), second = addBuffer(plan, {3, 12});
  Step s = layout(StepKind::Slice, {in}, first);
  s.dim = 1;
  s.chunks = 2;
  s.weights = {1, 3};
  std::vector<LayoutCopy> copies;
  std::string error;
  ASSERT_TRUE(layoutCopies(plan, s, 0, copies, error)) << error;
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_TRUE(isRuns(copies[0].src, 0, 32, 8, 3));
  EXPECT_TRUE(isRuns(copies[0].dst, 0, 8, 8, 3));
  s.chunk = 1;
  s.outputs = {second};
  ASSERT_TRUE(layoutCopies(plan, s, 0, copies, error)) << error;
  ASSERT_EQ(copies.size(), 1u);
  const LayoutCopy &c = copies[0];
  EXPECT_EQ(c.src.buffer, in);
  EXPECT_TRUE(isRuns(c.src, 4 * 2, 32, 12 * 2, 3));
  EXPECT_EQ(c.dst.buffer, second);
  EXPECT_TRUE(c.dst.write);
  EXPECT_TRUE(isRuns(c.dst, 0, 24, 24, 3));
  int64_t end;
  ASSERT_TRUE(accessEnd(c.src, end));
  EXPECT_EQ(end, 8 + 2 * 32 + 24); // the input's last byte
  EXPECT_EQ(end, plan.buffers[in].bytes());
}

TEST(PlanAccessesTest, WeightedSliceOfInterleavedGroups) {
  // 16 rows of 4 bf16 (8 bytes) as 2 groups of 8 rows, each cut 1:3 (units
  // of 2 rows): chunk 0 is rows 0-1 and 8-9, chunk 1 rows 2-7 and 10-15.
  Plan plan;
  int64_t in = addBuffer(plan, {16, 4});
  int64_t first = addBuffer(plan, {4, 4}), second = addBuffer(plan, {12, 4});
  Step s = layout(StepKind::Slice, {in}, first);
  s.chunks = 2;
  s.interleave = 2;
  s.weights = {1, 3};
  std::vector<LayoutCopy> copies;
  std::string error;
  ASSERT_TRUE(layoutCopies(plan, s, 0, copies, error)) << error;
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_TRUE(isRuns(copies[0].src, 0, 8 * 8, 2 * 8, 2));
  EXPECT_TRUE(isRuns(copies[0].dst, 0, 2 * 8, 2 * 8, 2));
  s.chunk = 1;
  s.outputs = {second};
  ASSERT_TRUE(layoutCopies(plan, s, 0, copies, error)) << error;
  ASSERT_EQ(copies.size(), 1u);
  const LayoutCopy &c = copies[0];
  EXPECT_TRUE(isRuns(c.src, 2 * 8, 8 * 8, 6 * 8, 2));
  EXPECT_EQ(c.dst.buffer, second);
  EXPECT_TRUE(isRuns(c.dst, 0, 6 * 8, 6 * 8, 2));
  for (const BufferAccess *a : {&c.src, &c.dst})
    EXPECT_EQ(checkAccess(plan, *a), "");
  // The bytes: chunk 1 holds input rows 2-7 then 10-15.
  std::vector<std::vector<uint8_t>> memory = patterned(plan);
  applyCopies(plan, s, memory);
  const std::vector<uint8_t> &x = memory[in], &y = memory[second];
  std::vector<uint8_t> expect(x.begin() + 2 * 8, x.begin() + 8 * 8);
  expect.insert(expect.end(), x.begin() + 10 * 8, x.end());
  EXPECT_EQ(y, expect);
}

TEST(PlanAccessesTest, WeightedSliceFieldsOutOfRangeFail) {
  Plan plan;
  int64_t in = addBuffer(plan, {16, 4});
  int64_t out = addBuffer(plan, {4, 4});
  Step s = layout(StepKind::Slice, {in}, out);
  s.chunks = 2;
  s.weights = {1, 3, 4};
  std::vector<LayoutCopy> copies;
  std::string error;
  EXPECT_FALSE(layoutCopies(plan, s, 0, copies, error));
  EXPECT_EQ(error,
            "slice weights must be one per chunk, with 0 <= chunk < chunks");
  s.weights = {1, 0};
  EXPECT_FALSE(layoutCopies(plan, s, 0, copies, error));
  EXPECT_EQ(error, "slice weights must be >= 1");
  s.weights = {INT64_MAX, 1};
  EXPECT_FALSE(layoutCopies(plan, s, 0, copies, error));
  EXPECT_EQ(error, "slice copy sizes overflow a 64-bit integer");
}

TEST(PlanAccessesTest, UnevenConcatWithoutInterleave) {
  // Columns: [3x2] and [3x6] bf16 side by side in [3x8] (16-byte rows).
  Plan plan;
  int64_t a = addBuffer(plan, {3, 2}), b = addBuffer(plan, {3, 6});
  int64_t out = addBuffer(plan, {3, 8});
  Step s = layout(StepKind::Concat, {a, b}, out);
  s.dim = 1;
  std::vector<LayoutCopy> copies;
  std::string error;
  ASSERT_TRUE(layoutCopies(plan, s, 0, copies, error)) << error;
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0].src.buffer, a);
  EXPECT_TRUE(isRuns(copies[0].src, 0, 4, 4, 3));
  EXPECT_EQ(copies[0].dst.buffer, out);
  EXPECT_TRUE(isRuns(copies[0].dst, 0, 16, 4, 3));
  EXPECT_EQ(copies[1].src.buffer, b);
  EXPECT_TRUE(isRuns(copies[1].src, 0, 12, 12, 3));
  EXPECT_TRUE(isRuns(copies[1].dst, 4, 16, 12, 3));
  int64_t end;
  ASSERT_TRUE(accessEnd(copies[1].dst, end));
  EXPECT_EQ(end, plan.buffers[out].bytes());
  // Along dimension 0 the inputs are two contiguous runs of 16-byte rows.
  plan.buffers[a].shape = {2, 8};
  plan.buffers[b].shape = {6, 8};
  plan.buffers[out].shape = {8, 8};
  s.dim = 0;
  ASSERT_TRUE(layoutCopies(plan, s, 0, copies, error)) << error;
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0].src.rowBytes, 32);
  EXPECT_EQ(copies[0].src.rows, 1);
  EXPECT_EQ(copies[0].dst.offset, 0);
  EXPECT_EQ(copies[0].dst.pitch, 128);
  EXPECT_EQ(copies[1].src.rowBytes, 96);
  EXPECT_EQ(copies[1].src.rows, 1);
  EXPECT_EQ(copies[1].dst.offset, 32);
  EXPECT_EQ(copies[1].dst.pitch, 128);
  EXPECT_EQ(copies[1].dst.rowBytes, 96);
}

TEST(PlanAccessesTest, UnevenConcatOfInterleavedGroups) {
  // Rows (4 bf16 = 8 bytes): inputs of 2, 4 and 6 rows, 2 groups, so
  // blocks of 1, 2 and 3 rows; a group of the 12-row result is 6 rows.
  Plan plan;
  int64_t a = addBuffer(plan, {2, 4}), b = addBuffer(plan, {4, 4}),
          c = addBuffer(plan, {6, 4});
  int64_t out = addBuffer(plan, {12, 4});
  Step s = layout(StepKind::Concat, {a, b, c}, out);
  s.interleave = 2;
  std::vector<LayoutCopy> copies;
  std::string error;
  ASSERT_TRUE(layoutCopies(plan, s, 0, copies, error)) << error;
  ASSERT_EQ(copies.size(), 3u);
  const int64_t blockRows[] = {1, 2, 3}, firstRow[] = {0, 1, 3};
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE("input " + std::to_string(k));
    const LayoutCopy &copy = copies[k];
    EXPECT_EQ(copy.src.buffer, s.inputs[k]);
    EXPECT_TRUE(isRuns(copy.src, 0, blockRows[k] * 8, blockRows[k] * 8, 2));
    EXPECT_EQ(copy.dst.buffer, out);
    EXPECT_TRUE(copy.dst.write);
    EXPECT_TRUE(isRuns(copy.dst, firstRow[k] * 8, 6 * 8, blockRows[k] * 8, 2));
    EXPECT_EQ(checkAccess(plan, copy.src), "");
    EXPECT_EQ(checkAccess(plan, copy.dst), "");
  }
  // The bytes: result rows are a0 b0 b1 c0 c1 c2 | a1 b2 b3 c3 c4 c5.
  std::vector<std::vector<uint8_t>> memory = patterned(plan);
  applyCopies(plan, s, memory);
  std::vector<uint8_t> expect;
  auto rows = [&](int64_t buffer, int64_t from, int64_t count) {
    expect.insert(expect.end(), memory[buffer].begin() + from * 8,
                  memory[buffer].begin() + (from + count) * 8);
  };
  for (int64_t g = 0; g < 2; ++g) {
    rows(a, g * 1, 1);
    rows(b, g * 2, 2);
    rows(c, g * 3, 3);
  }
  EXPECT_EQ(memory[out], expect);
}

TEST(PlanAccessesTest, WeightedSlicesConcatBackToTheirInput) {
  // x [6x24] f32 cut along dimension 1 into 2 groups of 12 columns, each
  // 1:2:3 (units of 2 columns); concatenating the three slices with the same
  // interleave gives x back, byte for byte.
  Plan plan;
  int64_t x = addBuffer(plan, {6, 24});
  plan.buffers[x].type = DType::F32;
  std::vector<int64_t> parts;
  for (int64_t cols : {4, 8, 12}) {
    parts.push_back(addBuffer(plan, {6, cols}));
    plan.buffers.back().type = DType::F32;
  }
  int64_t y = addBuffer(plan, {6, 24});
  plan.buffers[y].type = DType::F32;
  std::vector<std::vector<uint8_t>> memory = patterned(plan);
  for (int64_t k = 0; k < 3; ++k) {
    Step s = layout(StepKind::Slice, {x}, parts[k]);
    s.dim = 1;
    s.chunk = k;
    s.chunks = 3;
    s.interleave = 2;
    s.weights = {1, 2, 3};
    applyCopies(plan, s, memory);
  }
  Step concat = layout(StepKind::Concat, parts, y);
  concat.dim = 1;
  concat.interleave = 2;
  applyCopies(plan, concat, memory);
  EXPECT_EQ(memory[y], memory[x]);
  EXPECT_NE(memory[y], patterned(plan)[y]); // the copies wrote it
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
