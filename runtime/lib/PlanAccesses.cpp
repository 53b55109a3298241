//===- PlanAccesses.cpp - The bytes each step of a plan touches -----------===//

#include "tandem/runtime/PlanAccesses.h"
#include "tandem/runtime/CheckedMath.h"

namespace tandem {
namespace runtime {

namespace {

/// Rows before `dim` (outer) and bytes of one index of `dim` (inner).
bool aroundDim(const Buffer &b, int64_t dim, int64_t &outer, int64_t &inner) {
  outer = 1;
  inner = dtypeBytes(b.type);
  for (int64_t d = 0; d < static_cast<int64_t>(b.shape.size()); ++d) {
    if (d < dim && !checkedMul(outer, b.shape[d], outer))
      return false;
    if (d > dim && !checkedMul(inner, b.shape[d], inner))
      return false;
  }
  return true;
}

bool overflow(const Step &step, std::string &error) {
  error = std::string(stepKindName(step.kind)) +
          " copy sizes overflow a 64-bit integer";
  return false;
}

} // namespace

bool layoutCopies(const Plan &plan, const Step &step, int64_t rank,
                  std::vector<LayoutCopy> &copies, std::string &error) {
  copies.clear();
  if (step.inputs.empty() || step.outputs.size() != 1 || step.dim < 0) {
    error = "a layout step needs inputs, one output and a dimension >= 0";
    return false;
  }
  int64_t out = step.outputs[0];
  const Buffer &in0 = plan.buffers[step.inputs[0]];
  if (step.dim >= static_cast<int64_t>(in0.shape.size())) {
    error = "layout dimension out of range";
    return false;
  }
  int64_t outer, inner;
  if (!aroundDim(in0, step.dim, outer, inner))
    return overflow(step, error);
  int64_t d = in0.shape[step.dim];

  if (step.kind == StepKind::Slice) {
    // Dimension `dim` is `interleave` groups, each cut into `chunks` blocks
    // (equal ones, or proportional to `weights`); the result is block
    // `chunk` of every group.
    if (step.interleave < 1 || step.chunks < 1) {
      error = "slice chunks and interleave must be >= 1";
      return false;
    }
    int64_t group = d / step.interleave;
    int64_t first, block; // indices of `dim` within a group
    if (step.weights.empty()) {
      block = group / step.chunks;
      if (!checkedMul(step.chunk, block, first))
        return overflow(step, error);
    } else {
      if (static_cast<int64_t>(step.weights.size()) != step.chunks ||
          step.chunk < 0 || step.chunk >= step.chunks) {
        error = "slice weights must be one per chunk, with 0 <= chunk < chunks";
        return false;
      }
      // Block j is unit * weights[j] long, unit = group / (sum of weights).
      int64_t total = 0, before = 0;
      for (int64_t j = 0; j < step.chunks; ++j) {
        if (step.weights[j] < 1) {
          error = "slice weights must be >= 1";
          return false;
        }
        if (j == step.chunk)
          before = total;
        if (!checkedAdd(total, step.weights[j], total))
          return overflow(step, error);
      }
      int64_t unit = group / total;
      if (!checkedMul(unit, before, first) ||
          !checkedMul(unit, step.weights[step.chunk], block))
        return overflow(step, error);
    }
    LayoutCopy c;
    c.src.buffer = step.inputs[0];
    c.dst.buffer = out;
    c.dst.write = true;
    if (!checkedMul(first, inner, c.src.offset) ||
        !checkedMul(group, inner, c.src.pitch) ||
        !checkedMul(block, inner, c.src.rowBytes) ||
        !checkedMul(outer, step.interleave, c.src.rows))
      return overflow(step, error);
    c.dst.rowBytes = c.dst.pitch = c.src.rowBytes;
    c.dst.rows = c.src.rows;
    copies.push_back(c);
    return true;
  }

  // The result along `dim` is `interleave` groups (ring_concat: one); each
  // holds block g of every input (extent d_k / interleave of input k), side
  // by side in slot order. Concat: input k is slot k, and the inputs' extents
  // may differ. RingConcat: input k came from rank (rank - k) mod n and lands
  // at that rank's slot; all inputs have one shape.
  int64_t n = step.inputs.size();
  int64_t interleave = step.kind == StepKind::Concat ? step.interleave : 1;
  if (interleave < 1) {
    error = "concat interleave must be >= 1";
    return false;
  }
  int64_t r = ((rank % n) + n) % n;
  auto slotOf = [&](int64_t k) {
    return step.kind == StepKind::Concat ? k : ((r - k) % n + n) % n;
  };
  // Bytes of input k's block, and of the slot's; a group's bytes (the
  // destination's pitch) are their sum.
  std::vector<int64_t> blockBytes(n), slotBytes(n);
  int64_t groupBytes = 0, rows;
  for (int64_t k = 0; k < n; ++k) {
    const Buffer &b = plan.buffers[step.inputs[k]];
    if (step.dim >= static_cast<int64_t>(b.shape.size())) {
      error = "layout dimension out of range";
      return false;
    }
    if (!checkedMul(b.shape[step.dim] / interleave, inner, blockBytes[k]) ||
        !checkedAdd(groupBytes, blockBytes[k], groupBytes))
      return overflow(step, error);
    slotBytes[slotOf(k)] = blockBytes[k];
  }
  if (!checkedMul(outer, interleave, rows))
    return overflow(step, error);
  // Where each slot starts within a group.
  std::vector<int64_t> slotOffset(n, 0);
  for (int64_t k = 1; k < n; ++k)
    if (!checkedAdd(slotOffset[k - 1], slotBytes[k - 1], slotOffset[k]))
      return overflow(step, error);
  for (int64_t k = 0; k < n; ++k) {
    LayoutCopy c;
    c.src.buffer = step.inputs[k];
    c.src.rowBytes = c.src.pitch = blockBytes[k];
    c.src.rows = rows;
    c.dst.buffer = out;
    c.dst.write = true;
    c.dst.offset = slotOffset[slotOf(k)];
    c.dst.rowBytes = blockBytes[k];
    c.dst.pitch = groupBytes;
    c.dst.rows = rows;
    copies.push_back(c);
  }
  return true;
}

bool stepAccesses(const Plan &plan, const Step &step, int64_t rank,
                  std::vector<BufferAccess> &accesses, std::string &error) {
  accesses.clear();
  if (step.kind == StepKind::Slice || step.kind == StepKind::Concat ||
      step.kind == StepKind::RingConcat) {
    std::vector<LayoutCopy> copies;
    if (!layoutCopies(plan, step, rank, copies, error))
      return false;
    for (const LayoutCopy &c : copies) {
      accesses.push_back(c.src);
      accesses.push_back(c.dst);
    }
    return true;
  }
  auto whole = [&](int64_t b, bool write) {
    BufferAccess a;
    a.buffer = b;
    a.write = write;
    a.rowBytes = a.pitch = plan.buffers[b].bytes();
    accesses.push_back(a);
  };
  for (int64_t b : step.inputs)
    whole(b, false);
  for (int64_t b : step.outputs)
    whole(b, true);
  return true;
}

bool accessEnd(const BufferAccess &a, int64_t &end) {
  if (a.offset < 0 || a.rowBytes < 0 || a.rows < 0 || a.pitch < 0)
    return false;
  if (a.rows == 0) {
    end = a.offset;
    return true;
  }
  int64_t span;
  return checkedMul(a.rows - 1, a.pitch, span) &&
         checkedAdd(a.offset, span, span) && checkedAdd(span, a.rowBytes, end);
}

std::string checkAccess(const Plan &plan, const BufferAccess &a) {
  if (a.buffer < 0 || a.buffer >= static_cast<int64_t>(plan.buffers.size()))
    return "accesses buffer " + std::to_string(a.buffer) +
           ", which does not exist";
  const Buffer &b = plan.buffers[a.buffer];
  std::string what = std::string(a.write ? "writes" : "reads") + " buffer " +
                     std::to_string(a.buffer) + " ('" + b.name + "')";
  int64_t end;
  if (!accessEnd(a, end))
    return what + " at an offset that overflows a 64-bit integer";
  if (end > b.bytes())
    return what + " up to byte " + std::to_string(end) + " (" +
           std::to_string(a.rows) + " rows of " + std::to_string(a.rowBytes) +
           " bytes, pitch " + std::to_string(a.pitch) + ", from byte " +
           std::to_string(a.offset) + "), past its " +
           std::to_string(b.bytes()) + " bytes";
  return "";
}

} // namespace runtime
} // namespace tandem
