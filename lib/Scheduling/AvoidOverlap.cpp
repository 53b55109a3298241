//===- AvoidOverlap.cpp - Keep apart what a diagnosis found harmful -------===//

#include "tandem/Scheduling/AvoidOverlap.h"
#include "tandem/Dialect/Tandem/ScheduleAttributes.h"
#include "tandem/Scheduling/Schedule.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::tandem;

/// The op as remarks name it: its name and layer tag.
static std::string describe(Operation *op) {
  std::string s = "'" + op->getName().getStringRef().str();
  if (auto layer = op->getAttrOfType<StringAttr>("layer"))
    s += " " + layer.str();
  return s + "'";
}

/// Whether `compute`, issued before `start` on the compute stream, is
/// ordered before the collective: it produces one of the collective's
/// operands, or an op the compute stream issues after it does (the
/// collective waits for its operands, which come after `compute` on that
/// stream).
static bool orderedBefore(Operation *compute, Operation *start) {
  for (Value operand : start->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (!def || def->getBlock() != start->getBlock())
      continue;
    if (def == compute)
      return true;
    if (compute->isBeforeInBlock(def) && isa<ComputeOpInterface, WaitOp>(def))
      return true;
  }
  return false;
}

AvoidOverlapResult mlir::tandem::avoidHarmfulOverlaps(func::FuncOp func,
                                                      RemarkLog *remarks) {
  AvoidOverlapResult result;
  if (func.getBody().empty())
    return result;
  llvm::MapVector<int64_t, SmallVector<Operation *>> byPair;
  for (Operation &op : func.getBody().front())
    for (int64_t id : getAvoidOverlap(&op))
      byPair[id].push_back(&op);

  for (auto &[id, ops] : byPair) {
    for (Operation *a : ops) {
      auto collective = dyn_cast<CollectiveOpInterface>(a);
      if (!collective)
        continue;
      for (Operation *y : ops) {
        if (y == a)
          continue;
        if (isa<CollectiveOpInterface>(y)) {
          // Each pair of collectives once, from its first.
          if (y->isBeforeInBlock(a))
            continue;
          ++result.kept;
          if (remarks)
            remarks->remark(a)
                << "harmful overlap #" << id << " with " << describe(y)
                << " kept: two collectives are not separated by this phase";
          continue;
        }
        if (!isa<ComputeOpInterface>(y))
          continue;
        Operation *wait = getWaitOf(collective);
        if (!wait) {
          ++result.apart;
          if (remarks)
            remarks->remark(a)
                << "harmful overlap #" << id << " with " << describe(y)
                << " avoided: the collective is blocking";
          continue;
        }
        if (y->isBeforeInBlock(a)) {
          bool ordered = orderedBefore(y, a);
          ordered ? ++result.apart : ++result.kept;
          if (remarks)
            remarks->remark(a)
                << "harmful overlap #" << id << " with " << describe(y)
                << (ordered ? " avoided: the collective's operands come "
                              "after it on the compute stream"
                            : " kept: it is issued before the start, "
                              "which it does not gate; moving it is not "
                              "implemented");
          continue;
        }
        if (wait->isBeforeInBlock(y)) {
          ++result.apart;
          if (remarks)
            remarks->remark(a)
                << "harmful overlap #" << id << " with " << describe(y)
                << " avoided: it is issued after the wait";
          continue;
        }
        // In the window: the wait moves up to just before it.
        if (!canMoveBefore(wait, y)) {
          ++result.kept;
          if (remarks)
            remarks->remark(a)
                << "harmful overlap #" << id << " with " << describe(y)
                << " kept: the wait cannot move above it";
          continue;
        }
        unsigned before = 0;
        for (Operation *it = a->getNextNode(); it != y; it = it->getNextNode())
          before += isa<ComputeOpInterface>(it);
        wait->moveBefore(y);
        ++result.separated;
        if (remarks)
          remarks->remark(a)
              << "harmful overlap #" << id << " with " << describe(y)
              << " avoided: wait moved above it (the diagnosis measured the "
                 "pair slower together than serially); "
              << before << " compute op(s) stay in the window";
      }
    }
  }
  return result;
}
