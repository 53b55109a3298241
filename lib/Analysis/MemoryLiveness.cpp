//===- MemoryLiveness.cpp - Live bytes and peak memory of a step ----------===//

#include "tandem/Analysis/MemoryLiveness.h"
#include "tandem/Dialect/Tandem/ScheduleAttributes.h"
#include "tandem/Dialect/Tandem/TandemOps.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::tandem;

int64_t mlir::tandem::getValueBytes(Value value) {
  Type type = value.getType();
  if (auto future = dyn_cast<FutureType>(type))
    return getTensorBytes(future.getValueType());
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    if (tensor.hasStaticShape() && tensor.getElementType().isIntOrFloat())
      return getTensorBytes(tensor);
  return 0;
}

int64_t mlir::tandem::getCopyEngineStagingBytes(Operation *op) {
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  if (!collective || !isCopyEngine(op) ||
      collective.getCollectiveKind() != CollectiveKind::reduce_scatter ||
      op->getNumOperands() == 0 || op->getNumResults() == 0)
    return 0;
  return std::max<int64_t>(0, getValueBytes(op->getOperand(0)) -
                                  getValueBytes(op->getResult(0)));
}

PeakMemory mlir::tandem::computePeakMemory(Block &block) {
  struct Buffer {
    int64_t bytes;
    int64_t def, end; // Positions, inclusive; -1 = before the first op.
  };
  llvm::SmallVector<Buffer> buffers;
  llvm::DenseMap<Value, unsigned> bufferOf;
  llvm::DenseMap<Operation *, int64_t> position;

  PeakMemory result;
  int64_t numOps = 0;
  for (Operation &op : block)
    position[&op] = numOps++;
  for (BlockArgument arg : block.getArguments()) {
    int64_t bytes = getValueBytes(arg);
    result.argumentBytes += bytes;
    bufferOf[arg] = buffers.size();
    buffers.push_back({bytes, -1, numOps});
  }

  for (Operation &op : block) {
    int64_t pos = position[&op];
    // How long this op keeps its operands: a collective start reads its
    // input until the wait that completes it.
    int64_t until = pos;
    if (auto collective = dyn_cast<CollectiveOpInterface>(&op);
        collective && collective.isAsync())
      for (Operation *user : op.getResult(0).getUsers())
        if (auto it = position.find(block.findAncestorOpInBlock(*user));
            it != position.end())
          until = std::max(until, it->second);
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (auto it = bufferOf.find(operand); it != bufferOf.end())
          buffers[it->second].end = std::max(buffers[it->second].end, until);
    });
    if (int64_t staging = getCopyEngineStagingBytes(&op))
      buffers.push_back({staging, pos, until});
    for (Value res : op.getResults()) {
      if (auto wait = dyn_cast<WaitOp>(&op)) {
        // The wait hands out the buffer the collective wrote.
        if (auto it = bufferOf.find(wait.getFuture()); it != bufferOf.end()) {
          unsigned buffer = it->second; // copy before the map may grow
          bufferOf[res] = buffer;
          continue;
        }
      }
      bufferOf[res] = buffers.size();
      buffers.push_back({getValueBytes(res), pos, pos});
    }
  }

  // Sweep over slots: slot 0 is before the first op, slot k + 1 is op k.
  // A buffer is live in slots def + 1 .. end + 1.
  llvm::SmallVector<int64_t> delta(numOps + 3, 0);
  for (const Buffer &b : buffers) {
    delta[b.def + 1] += b.bytes;
    delta[std::min<int64_t>(b.end, numOps) + 2] -= b.bytes;
  }
  llvm::SmallVector<Operation *> opAt;
  for (Operation &op : block)
    opAt.push_back(&op);
  int64_t live = 0;
  result.peakBytes = 0;
  for (int64_t slot = 0; slot <= numOps; ++slot) {
    live += delta[slot];
    if (slot == 0 ? numOps == 0
                  : live > result.peakBytes || result.peakOp == nullptr) {
      result.peakBytes = live;
      result.peakOp = slot == 0 ? nullptr : opAt[slot - 1];
    }
  }
  if (numOps == 0)
    result.peakBytes = result.argumentBytes;
  return result;
}
