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
    // Dimension `dim` is `interleave` groups, each cut into `chunks` blocks;
    // the result is block `chunk` of every group.
    if (step.interleave < 1 || step.chunks < 1) {
      error = "slice chunks and interleave must be >= 1";
      return false;
    }
    int64_t group = d / step.interleave;
    int64_t block = group / step.chunks;
    LayoutCopy c;
    c.src.buffer = step.inputs[0];
    c.dst.buffer = out;
    c.dst.write = true;
    if (!checkedProduct({step.chunk, block, inner}, c.src.offset) ||
        !checkedMul(group, inner, c.src.pitch) ||
        !checkedMul(block, inner, c.src.rowBytes) ||
        !checkedMul(outer, step.interleave, c.src.rows))
      return overflow(step, error);
    c.dst.rowBytes = c.dst.pitch = c.src.rowBytes;
    c.dst.rows = c.src.rows;
    copies.push_back(c);
    return true;
  }

  // Concat: input k is block k within every group of n blocks. RingConcat:
  // input k came from rank (rank - k) mod n and lands at that rank's block.
  int64_t n = step.inputs.size();
  int64_t interleave = step.kind == StepKind::Concat ? step.interleave : 1;
  if (interleave < 1) {
    error = "concat interleave must be >= 1";
    return false;
  }
  int64_t block = d / interleave;
  int64_t r = ((rank % n) + n) % n;
  int64_t blockBytes, dstPitch, rows;
  if (!checkedMul(block, inner, blockBytes) ||
      !checkedMul(n, blockBytes, dstPitch) ||
      !checkedMul(outer, interleave, rows))
    return overflow(step, error);
  for (int64_t k = 0; k < n; ++k) {
    int64_t slot = step.kind == StepKind::Concat ? k : ((r - k) % n + n) % n;
    LayoutCopy c;
    c.src.buffer = step.inputs[k];
    c.src.rowBytes = c.src.pitch = blockBytes;
    c.src.rows = rows;
    c.dst.buffer = out;
    c.dst.write = true;
    c.dst.rowBytes = blockBytes;
    c.dst.pitch = dstPitch;
    c.dst.rows = rows;
    if (!checkedMul(slot, blockBytes, c.dst.offset))
      return overflow(step, error);
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
