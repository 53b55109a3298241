//===- Schedule.cpp - Shared pieces of the scheduling algorithms ----------===//

#include "tandem/Scheduling/Schedule.h"

using namespace mlir;
using namespace mlir::tandem;

const GroupSpec *OpTimer::group(CollectiveOpInterface op) {
  return groups.lookup(op);
}

double OpTimer::collectiveUs(CollectiveOpInterface op, int64_t ctas) {
  const GroupSpec *g = group(op);
  if (!g)
    return 0.0;
  return collectives.get(op, *g, ctas).timeUs;
}

std::optional<double> OpTimer::timeUs(Operation *op, std::string &error) {
  if (auto compute = dyn_cast<ComputeOpInterface>(op)) {
    std::optional<ComputeEstimate> e =
        model.compute(compute, error, getSmTarget(op).value_or(0));
    if (!e)
      return std::nullopt;
    return e->timeUs;
  }
  if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
    if (!group(collective)) {
      error = ("process group " + collective.getGroupAttr().getValue() +
               " not found")
                  .str();
      return std::nullopt;
    }
    return collectiveUs(collective, getCommSms(op).value_or(0));
  }
  return 0.0;
}

double OpTimer::timeUs(Operation *op) {
  std::string error;
  return timeUs(op, error).value_or(0.0);
}

Operation *mlir::tandem::getWaitOf(CollectiveOpInterface start) {
  if (!start.isAsync())
    return nullptr;
  for (Operation *user : start->getResult(0).getUsers())
    if (isa<WaitOp>(user))
      return user;
  return nullptr;
}

CollectiveOpInterface mlir::tandem::getStartOf(Operation *wait) {
  auto w = dyn_cast<WaitOp>(wait);
  if (!w)
    return {};
  return w.getFuture().getDefiningOp<CollectiveOpInterface>();
}

bool mlir::tandem::sameGroup(CollectiveOpInterface a, CollectiveOpInterface b) {
  return a.getGroupAttr() == b.getGroupAttr();
}

bool mlir::tandem::canMoveBefore(Operation *op, Operation *point) {
  if (op == point)
    return true;
  Block *block = op->getBlock();
  if (point->getBlock() != block)
    return false;
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  bool hoist = point->isBeforeInBlock(op);
  Operation *from = hoist ? point : op->getNextNode();
  Operation *to = hoist ? op : point; // exclusive
  for (Operation *it = from; it && it != to; it = it->getNextNode()) {
    if (hoist) {
      // Every operand must be defined before the new position.
      for (Value operand : op->getOperands())
        if (operand.getDefiningOp() == it)
          return false;
    } else {
      // No user may end up before the op.
      for (Value res : op->getResults())
        for (Operation *user : res.getUsers())
          if (block->findAncestorOpInBlock(*user) == it)
            return false;
    }
    if (auto other = dyn_cast<CollectiveOpInterface>(it))
      if (collective && sameGroup(collective, other))
        return false;
  }
  return true;
}

PositionIndex::PositionIndex(Block &block) : block(block) { renumber(); }

void PositionIndex::renumber() {
  positions.clear();
  double next = 0;
  for (Operation &op : block)
    positions[&op] = (next += 1024.0);
}

void PositionIndex::moved(Operation *op) {
  Operation *prev = op->getPrevNode(), *next = op->getNextNode();
  double lo = prev ? of(prev) : of(&block.front()) - 2048.0;
  double hi = next ? of(next) : lo + 2048.0;
  if (!prev && next)
    lo = hi - 2048.0;
  double mid = lo + (hi - lo) / 2;
  if (!(mid > lo && mid < hi)) {
    renumber();
    return;
  }
  positions[op] = mid;
}
