//===- AvoidOverlap.cpp - Keep apart what a diagnosis found harmful -------===//

#include "tandem/Scheduling/AvoidOverlap.h"
#include "tandem/Dialect/Tandem/ScheduleAttributes.h"
#include "tandem/Scheduling/MemoryBudget.h"
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
                                                      int64_t memoryBudget,
                                                      RemarkLog *remarks) {
  AvoidOverlapResult result;
  if (func.getBody().empty())
    return result;
  Block &block = func.getBody().front();
  llvm::MapVector<int64_t, SmallVector<Operation *>> byPair;
  for (Operation &op : block)
    for (int64_t id : getAvoidOverlap(&op))
      byPair[id].push_back(&op);
  if (byPair.empty())
    return result;
  MemoryBudget budget(block, memoryBudget);
  // Moves `op` before `point`, undone (false) if the budget breaks.
  auto moveWithin = [&](Operation *op, Operation *point) {
    Operation *oldNext = op->getNextNode();
    op->moveBefore(point);
    if (budget.holds(block))
      return true;
    op->moveBefore(oldNext);
    return false;
  };

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
          if (orderedBefore(y, a)) {
            ++result.apart;
            if (remarks)
              remarks->remark(a)
                  << "harmful overlap #" << id << " with " << describe(y)
                  << " avoided: the collective's operands come after it on "
                     "the compute stream";
            continue;
          }
          // Issued before a start it does not gate: it moves below the wait.
          Operation *after = wait->getNextNode();
          bool legal = after && canMoveBefore(y, after);
          if (legal && moveWithin(y, after)) {
            ++result.separated;
            if (remarks)
              remarks->remark(a)
                  << "harmful overlap #" << id << " with " << describe(y)
                  << " avoided: it moved below the wait (the diagnosis "
                     "measured the pair slower together than serially)";
            continue;
          }
          ++result.kept;
          if (remarks)
            remarks->remark(a)
                << "harmful overlap #" << id << " with " << describe(y)
                << " kept: it is issued before the start, which it does not "
                   "gate, and "
                << (legal ? "moving it below the wait would exceed the "
                            "memory budget"
                          : "a use of its result comes before the wait");
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
        bool legal = canMoveBefore(wait, y);
        if (!legal || !moveWithin(wait, y)) {
          ++result.kept;
          if (remarks)
            remarks->remark(a)
                << "harmful overlap #" << id << " with " << describe(y)
                << " kept: "
                << (legal ? "moving the wait above it would exceed the "
                            "memory budget"
                          : "the wait cannot move above it");
          continue;
        }
        unsigned before = 0;
        for (Operation *it = a->getNextNode(); it != wait;
             it = it->getNextNode())
          before += isa<ComputeOpInterface>(it);
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
