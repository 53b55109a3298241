//===- MoveSupport.h - What the algorithms that move ops share --*- C++ -*-===//
//
// Private to lib/Scheduling: remark formatting and undoing a move, shared by
// bulk overlap and wgrad rescheduling.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LIB_SCHEDULING_MOVESUPPORT_H
#define TANDEM_LIB_SCHEDULING_MOVESUPPORT_H

#include "tandem/Scheduling/Schedule.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/FormatVariadic.h"

#include <string>

namespace mlir {
namespace tandem {
namespace moves {

/// Microseconds as remarks print them.
inline std::string us(double v) {
  return llvm::formatv("{0:F1} us", v).str();
}

/// A readable name for an op in remarks: its NameLoc, else its op name.
inline std::string describe(Operation *op) {
  Location loc = op->getLoc();
  if (auto name = dyn_cast<NameLoc>(loc))
    return ("'" + name.getName().getValue() + "'").str();
  return ("'" + op->getName().getStringRef() + "'").str();
}

/// Remembers where an op was so that a move can be undone.
struct Position {
  explicit Position(Operation *op)
      : op(op), next(op->getNextNode()), block(op->getBlock()) {}
  void restore(PositionIndex &index) {
    if (next)
      op->moveBefore(next);
    else
      op->moveBefore(block, block->end());
    index.moved(op);
  }
  Operation *op, *next;
  Block *block;
};

} // namespace moves
} // namespace tandem
} // namespace mlir

#endif // TANDEM_LIB_SCHEDULING_MOVESUPPORT_H
