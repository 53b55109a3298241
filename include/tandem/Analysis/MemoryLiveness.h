//===- MemoryLiveness.h - Live bytes and peak memory of a step ---*- C++
//-*-===//
//
// Peak memory of a block in program order. A tensor is live from the op that
// defines it to its last use; the input of a collective `_start` stays live
// until the matching wait (the collective reads it until it completes); a
// wait's result is the future's buffer, not a new one; block arguments
// (weights, inputs) are live throughout. A reduce-scatter on the copy
// engines (`tandem.copy_engine`) also holds a staging buffer for the n-1
// peer blocks it pulls, from its start to its wait. Delaying an op extends
// lifetimes: this is what a memory budget is checked against.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_MEMORYLIVENESS_H
#define TANDEM_ANALYSIS_MEMORYLIVENESS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"

#include <cstdint>

namespace mlir {
namespace tandem {

struct PeakMemory {
  int64_t peakBytes = 0;
  /// First op at which the peak is reached (null for an empty block).
  Operation *peakOp = nullptr;
  /// Bytes of the block arguments, live throughout.
  int64_t argumentBytes = 0;
};

/// Bytes a value occupies: tensors by shape, futures by the tensor they
/// deliver, anything else 0.
int64_t getValueBytes(Value value);

/// Staging a collective needs besides its input and result: for a
/// reduce-scatter on the copy engines, the n-1 peer blocks it copies in
/// before summing (its input's bytes minus its result's); 0 otherwise.
int64_t getCopyEngineStagingBytes(Operation *op);

/// Peak live bytes over the ops of `block` in program order.
PeakMemory computePeakMemory(Block &block);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_ANALYSIS_MEMORYLIVENESS_H
