//===- PlanAccesses.h - The bytes each step of a plan touches ---*- C++ -*-===//
//
// The one place that turns a step into the byte ranges it reads and writes.
// validatePlan checks every range against its buffer (and, through views and
// the memory plan, its allocation); the executor issues its layout copies
// from the very same ranges, so what is validated is what is launched.
//
// Layout steps (slice, concat, ring_concat) are strided 2-D copies and are
// described row by row. Every other kind reads and writes whole operands:
// its kernel derives its extents from the operands' shapes and element
// types, which validation checks against the step's kind, so a whole-buffer
// range is exactly what it touches. No CUDA, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_PLANACCESSES_H
#define TANDEM_RUNTIME_PLANACCESSES_H

#include "tandem/runtime/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tandem {
namespace runtime {

/// Bytes of one buffer a step touches: `rows` rows of `rowBytes` bytes, the
/// first at byte `offset` of the buffer and each next one `pitch` bytes
/// further. A whole buffer is one row of its size.
struct BufferAccess {
  int64_t buffer = -1;
  bool write = false;
  int64_t offset = 0;
  int64_t rowBytes = 0;
  int64_t rows = 1;
  int64_t pitch = 0;
};

/// One strided copy of a layout step (one cudaMemcpy2DAsync): `src.rows`
/// rows of `src.rowBytes` bytes; `dst` has the same row count and width.
struct LayoutCopy {
  BufferAccess src, dst;
};

/// The copies of a slice, concat or ring_concat step, in issue order, for
/// the rank `rank` of its group. A slice is one copy: block `chunk` of every
/// interleave group (equal blocks, or proportional to Step::weights). A
/// concat is one copy per input: input k's blocks (its extent along `dim`
/// over interleave, which may differ between inputs) land after those of
/// inputs 0..k-1 in every group of the result, whose pitch is the group's
/// bytes. ring_concat places input k at the block of rank (rank - k) mod n;
/// for every rank the blocks are the same set. The
/// step's operand indices and dimension must be in range (validatePlan
/// checks them first); returns false with `error` set when a size or offset
/// overflows int64.
bool layoutCopies(const Plan &plan, const Step &step, int64_t rank,
                  std::vector<LayoutCopy> &copies, std::string &error);

/// Every range `step` reads or writes, for rank `rank`: the copies' sources
/// and destinations of a layout step, the whole operands otherwise. Same
/// preconditions and failure as layoutCopies.
bool stepAccesses(const Plan &plan, const Step &step, int64_t rank,
                  std::vector<BufferAccess> &accesses, std::string &error);

/// Checks that `access` lies inside its buffer (an index of `plan`), with
/// checked arithmetic: "" or the problem, naming the buffer and the bytes.
std::string checkAccess(const Plan &plan, const BufferAccess &access);

/// Byte just past the last byte of `access` relative to its buffer's start
/// (offset + (rows - 1) * pitch + rowBytes); false when that overflows or the
/// access has a negative field.
bool accessEnd(const BufferAccess &access, int64_t &end);

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_PLANACCESSES_H
