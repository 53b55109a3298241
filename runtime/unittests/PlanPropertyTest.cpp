//===- PlanPropertyTest.cpp - Validated plans stay inside their memory ----===//
//
// Property of plan validation: for random valid plans (seeded), every byte
// range a step launches with (PlanAccesses.h) lies inside its allocation
// after memory planning (uneven slices and concats among them); and every
// mutant of such a plan (offsets, views, slice fields and weights, shapes,
// counts, near int64 overflow) that would put an access outside its
// allocation is rejected by validatePlan, before any launch. The oracle
// (checkLaunchBounds) recomputes the addresses in 128-bit arithmetic,
// independently of the validator. CPU only, well under a second.
//
//===----------------------------------------------------------------------===//

#include "PlanFuzzTarget.h"

#include "tandem/runtime/MemoryPlanner.h"
#include "tandem/runtime/PlanAccesses.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace tandem::runtime;

namespace {

/// Builds a random valid plan step by step: every step reads buffers that
/// were written (or are inputs) and writes a fresh temporary; a read across
/// streams waits for the event its writer recorded.
class PlanGenerator {
public:
  explicit PlanGenerator(uint64_t seed) : rng(seed) {}

  Plan generate() {
    plan = Plan();
    plan.function = "random";
    plan.numStreams = pick(1, 4);
    groupSize = int64_t(1) << pick(0, 2);
    plan.groups.push_back({"g", groupSize, "ring"});
    writerStep.clear();
    available.clear();
    for (int i = pick(1, 3); i > 0; --i)
      available.push_back(newBuffer(randomShape(), Buffer::Role::Input));
    for (int i = pick(2, 12); i > 0; --i)
      addStep();
    plan.numEvents = plan.steps.size();
    for (int i = pick(1, 2); i > 0; --i)
      plan.outputs.push_back(available[pick(0, available.size() - 1)]);
    return plan;
  }

  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }

private:
  std::vector<int64_t> randomShape() {
    return {groupSize * (int64_t(4) << pick(0, 3)), int64_t(2) << pick(0, 3)};
  }

  int64_t newBuffer(std::vector<int64_t> shape, Buffer::Role role) {
    Buffer b;
    b.name = "b" + std::to_string(plan.buffers.size());
    b.shape = std::move(shape);
    b.role = role;
    b.type = type;
    plan.buffers.push_back(b);
    int64_t id = plan.buffers.size() - 1;
    if (role == Buffer::Role::Input)
      plan.inputs.push_back(id);
    writerStep.push_back(-1);
    return id;
  }

  /// A readable buffer; sometimes a dim-0 view into a written temporary.
  int64_t readable() {
    int64_t b = available[pick(0, available.size() - 1)];
    if (plan.buffers[b].role != Buffer::Role::Temp || pick(0, 3) != 0)
      return b;
    // Copied: newBuffer() below may move the buffers.
    Buffer base = plan.buffers[b];
    int64_t rows = base.shape[0], cols = base.shape[1];
    int64_t viewRows = pick(1, rows);
    int64_t first = pick(0, rows - viewRows);
    int64_t v = newBuffer({viewRows, cols}, Buffer::Role::View);
    plan.buffers[v].viewOf = b;
    plan.buffers[v].viewOffset = first * cols * dtypeBytes(base.type);
    writerStep[v] = writerStep[b];
    return v;
  }

  void addStep() {
    Step s;
    s.stream = pick(0, plan.numStreams - 1);
    s.name = "op";
    int64_t x = readable();
    std::vector<int64_t> shape = plan.buffers[x].shape;
    int64_t rows = shape[0], cols = shape[1];
    std::vector<int64_t> outShape = shape;
    switch (pick(0, 7)) {
    case 0:
      s.kind = StepKind::Elementwise;
      s.elementwise = ElementwiseKind::Gelu;
      s.inputs = {x};
      break;
    case 1: {
      s.kind = StepKind::Elementwise;
      s.elementwise = ElementwiseKind::Add;
      s.inputs = {x, x};
      break;
    }
    case 2: {
      s.kind = StepKind::Matmul;
      int64_t n = int64_t(2) << pick(0, 3);
      int64_t w = newBuffer({cols, n}, Buffer::Role::Input);
      s.inputs = {x, w};
      outShape = {rows, n};
      break;
    }
    case 3: {
      s.kind = StepKind::Slice;
      s.dim = pick(0, 1);
      int64_t d = shape[s.dim];
      do {
        s.chunks = int64_t(1) << pick(0, 2);
        s.interleave = int64_t(1) << pick(0, 1);
      } while (d % (s.chunks * s.interleave) != 0);
      s.chunk = pick(0, s.chunks - 1);
      s.inputs = {x};
      outShape[s.dim] = d / s.chunks;
      // Every other slice of 2 or 4 chunks is cut unevenly where its groups
      // divide by the weights' sum, chosen without drawing from the
      // generator so that the plans stay as they were otherwise.
      std::vector<int64_t> weights;
      if (s.chunks == 2)
        weights = {1, 3};
      else if (s.chunks == 4)
        weights = {1, 2, 1, 4};
      int64_t group = d / s.interleave;
      int64_t total =
          std::accumulate(weights.begin(), weights.end(), int64_t(0));
      if (plan.steps.size() % 2 == 0 && total > 0 && group % total == 0) {
        outShape[s.dim] = s.interleave * (group / total) * weights[s.chunk];
        s.weights = std::move(weights);
      }
      break;
    }
    case 4: {
      s.kind = StepKind::Concat;
      s.dim = pick(0, 1);
      s.interleave = shape[s.dim] % 2 == 0 ? int64_t(1) << pick(0, 1) : 1;
      int64_t n = pick(1, 3);
      s.inputs.assign(n, x);
      outShape[s.dim] *= n;
      // The last of several inputs is another size along `dim` where an
      // available buffer fits (found without drawing, as above).
      for (int64_t b : available) {
        const std::vector<int64_t> &other = plan.buffers[b].shape;
        if (n < 2 || other.size() != shape.size() ||
            other[1 - s.dim] != shape[1 - s.dim] ||
            other[s.dim] == shape[s.dim] || other[s.dim] % s.interleave)
          continue;
        s.inputs.back() = b;
        outShape[s.dim] += other[s.dim] - shape[s.dim];
        break;
      }
      break;
    }
    case 5: {
      s.kind = StepKind::RingConcat;
      s.dim = pick(0, 1);
      s.group = 0;
      s.inputs.assign(groupSize, x);
      outShape[s.dim] *= groupSize;
      break;
    }
    case 6:
    case 7: {
      s.kind = StepKind::Collective;
      s.group = 0;
      s.inputs = {x};
      // Views and slices need not keep rows a multiple of the group size;
      // reduce_scatter and all_to_all need it.
      int64_t kind = pick(0, 4);
      if (rows % groupSize && (kind == 1 || kind == 3))
        kind = 2;
      switch (kind) {
      case 0:
        s.collective = CollectiveKind::AllGather;
        outShape[0] *= groupSize;
        break;
      case 1:
        s.collective = CollectiveKind::ReduceScatter;
        outShape[0] /= groupSize;
        break;
      case 2:
        s.collective = CollectiveKind::AllReduce;
        break;
      case 3:
        s.collective = CollectiveKind::AllToAll;
        break;
      default:
        s.collective = CollectiveKind::Permute;
        s.shift = pick(-3, 3);
        break;
      }
      // Every other gather or scatter on the copy engines, chosen without
      // drawing from the generator so that the plans stay as they were.
      s.copyEngine = kind <= 1 && plan.steps.size() % 2 == 1;
      break;
    }
    }
    int64_t step = plan.steps.size();
    for (int64_t b : s.inputs) {
      int64_t w = writerStep[b];
      if (w >= 0 && plan.steps[w].stream != s.stream &&
          std::find(s.waitEvents.begin(), s.waitEvents.end(), w) ==
              s.waitEvents.end())
        s.waitEvents.push_back(w); // step w recorded event w
    }
    s.recordEvent = step;
    int64_t out = newBuffer(outShape, Buffer::Role::Temp);
    s.outputs = {out};
    writerStep[out] = step;
    plan.steps.push_back(s);
    available.push_back(out);
  }

  std::mt19937_64 rng;
  Plan plan;
  DType type = DType::BF16;
  int64_t groupSize = 1;
  std::vector<int64_t> writerStep;
  std::vector<int64_t> available;
};

/// Whether every launch of `plan` (for every rank of its groups) lies
/// inside its allocation; "" or the first that does not.
std::string launchBounds(const Plan &plan) {
  int64_t ranks = 1;
  for (const Group &g : plan.groups)
    ranks = std::max(ranks, std::min<int64_t>(g.size, 8));
  for (int64_t r = 0; r < ranks; ++r)
    if (std::string e = checkLaunchBounds(plan, r); !e.empty())
      return e;
  return "";
}

constexpr int kPlans = 300;
constexpr int kMutantsPerPlan = 8;

TEST(PlanPropertyTest, ValidPlansLaunchInsideTheirAllocations) {
  PlanGenerator gen(20261203);
  int unevenSlices = 0, unevenConcats = 0;
  for (int i = 0; i < kPlans; ++i) {
    Plan plan = gen.generate();
    ASSERT_EQ(validatePlan(plan), "") << "generated plan " << i;
    ASSERT_EQ(planMemory(plan), "") << "plan " << i;
    ASSERT_EQ(validatePlan(plan), "") << "planned plan " << i;
    ASSERT_EQ(launchBounds(plan), "") << "plan " << i;
    for (const Step &s : plan.steps) {
      unevenSlices += !s.weights.empty();
      unevenConcats +=
          s.kind == StepKind::Concat && plan.buffers[s.inputs.front()].shape !=
                                            plan.buffers[s.inputs.back()].shape;
    }
  }
  // The uneven forms are among them (the property is not vacuous for them).
  EXPECT_GT(unevenSlices, kPlans / 20);
  EXPECT_GT(unevenConcats, kPlans / 20);
}

/// A mutation of one field that sizes or places an access.
void mutate(Plan &plan, PlanGenerator &gen) {
  const int64_t nearMax[] = {INT64_MAX,
                             INT64_MAX - 255,
                             INT64_MAX / 2,
                             int64_t(1) << 62,
                             int64_t(1) << 32,
                             int64_t(1) << 40,
                             -1,
                             0};
  auto wild = [&](int64_t sane) {
    return gen.pick(0, 1) ? nearMax[gen.pick(0, 7)]
                          : gen.pick(0, std::max<int64_t>(2 * sane, 1));
  };
  auto anyBuffer = [&]() { return gen.pick(0, plan.buffers.size() - 1); };
  auto anyStep = [&]() { return gen.pick(0, plan.steps.size() - 1); };
  switch (gen.pick(0, 9)) {
  case 0: { // a view's offset
    for (Buffer &b : plan.buffers)
      if (b.role == Buffer::Role::View) {
        b.viewOffset = wild(plan.buffers[b.viewOf].bytes());
        return;
      }
    [[fallthrough]];
  }
  case 1: { // a temporary's arena offset (kept aligned half of the time)
    Buffer &b = plan.buffers[anyBuffer()];
    int64_t o = wild(plan.arenaBytes);
    b.arenaOffset = gen.pick(0, 1) && o > 0 ? o / 256 * 256 : o;
    return;
  }
  case 2:
    plan.arenaBytes = wild(plan.arenaBytes);
    return;
  case 3: { // slice / concat fields
    Step &s = plan.steps[anyStep()];
    switch (gen.pick(0, 5)) {
    case 0:
      s.chunk = wild(s.chunks);
      return;
    case 1:
      s.chunks = wild(s.chunks);
      return;
    case 2:
      s.interleave = wild(s.interleave);
      return;
    case 3:
      s.dim = wild(1);
      return;
    case 4: // a weight (an equal slice, or another kind, gets weights first)
      if (s.weights.empty())
        s.weights.assign(std::clamp<int64_t>(s.chunks, 1, 8), 1);
      s.weights[gen.pick(0, s.weights.size() - 1)] = wild(s.weights[0] + 2);
      return;
    default:
      s.chunks = s.interleave = int64_t(1) << 32;
      return;
    }
  }
  case 4: { // a dimension
    Buffer &b = plan.buffers[anyBuffer()];
    b.shape[gen.pick(0, b.shape.size() - 1)] = wild(b.shape[0]);
    return;
  }
  case 5: // the element type
    plan.buffers[anyBuffer()].type = DType(gen.pick(0, 2));
    return;
  case 6: // a view retargeted
    for (Buffer &b : plan.buffers)
      if (b.role == Buffer::Role::View) {
        b.viewOf = anyBuffer();
        return;
      }
    [[fallthrough]];
  case 7:
    plan.groups[0].size = wild(plan.groups[0].size);
    return;
  case 8:
    if (gen.pick(0, 1))
      plan.numEvents = wild(plan.numEvents);
    else
      plan.numStreams = wild(plan.numStreams);
    return;
  default: { // an operand replaced
    Step &s = plan.steps[anyStep()];
    std::vector<int64_t> &ops =
        gen.pick(0, 1) || s.inputs.empty() ? s.outputs : s.inputs;
    ops[gen.pick(0, ops.size() - 1)] = anyBuffer();
    return;
  }
  }
}

/// Whether `plan` can be fed to the oracle (indices it follows in range).
bool oracleApplies(const Plan &plan) {
  int64_t n = plan.buffers.size();
  for (const Buffer &b : plan.buffers)
    if (b.role == Buffer::Role::View && (b.viewOf < 0 || b.viewOf >= n))
      return false;
  for (const Step &s : plan.steps) {
    if (s.kind == StepKind::RingConcat &&
        (s.group < 0 || s.group >= static_cast<int64_t>(plan.groups.size())))
      return false;
    if ((s.kind == StepKind::Slice || s.kind == StepKind::Concat ||
         s.kind == StepKind::RingConcat) &&
        (s.dim < 0 ||
         s.dim >= static_cast<int64_t>(plan.buffers[s.inputs[0]].shape.size())))
      return false;
  }
  return true;
}

TEST(PlanPropertyTest, MutantsThatLeaveTheirAllocationsAreRejected) {
  PlanGenerator gen(4242);
  int violating = 0, accepted = 0;
  for (int i = 0; i < kPlans; ++i) {
    Plan plan = gen.generate();
    ASSERT_EQ(planMemory(plan), "");
    for (int m = 0; m < kMutantsPerPlan; ++m) {
      Plan mutant = plan;
      mutate(mutant, gen);
      std::string verdict = validatePlan(mutant);
      // Out of bounds by the oracle: validation must have said no. (Counted,
      // so that the property is not vacuous.)
      if (oracleApplies(mutant) && !launchBounds(mutant).empty()) {
        ++violating;
        EXPECT_NE(verdict, "")
            << "plan " << i << " mutant " << m << ": " << launchBounds(mutant);
      }
      if (!verdict.empty())
        continue;
      ++accepted;
      // Accepted: what the executor would launch stays inside its memory,
      // with the stated memory plan and with one planned afresh.
      EXPECT_EQ(launchBounds(mutant), "") << "plan " << i << " mutant " << m;
      Plan replanned = mutant;
      ASSERT_EQ(planMemory(replanned), "");
      EXPECT_EQ(validatePlan(replanned), "");
      EXPECT_EQ(launchBounds(replanned), "") << "plan " << i << " mutant " << m;
    }
  }
  EXPECT_GT(violating, kPlans / 4);
  EXPECT_GT(accepted, 0);
}

} // namespace
