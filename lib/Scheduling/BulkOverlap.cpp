//===- BulkOverlap.cpp - Issue collectives early, wait late ---------------===//

#include "MoveSupport.h"
#include "tandem/Scheduling/MemoryBudget.h"
#include "tandem/Scheduling/Overlap.h"

using namespace mlir;
using namespace mlir::tandem;
using namespace mlir::tandem::moves;

static double windowComputeUs(Operation *start, Operation *wait,
                              OpTimer &timer) {
  double total = 0;
  for (Operation *it = start->getNextNode(); it && it != wait;
       it = it->getNextNode())
    if (isa<ComputeOpInterface>(it))
      total += timer.timeUs(it);
  return total;
}

//===----------------------------------------------------------------------===//
// Bulk overlap
//===----------------------------------------------------------------------===//

BulkOverlapResult mlir::tandem::bulkOverlap(func::FuncOp func, OpTimer &timer,
                                            const BulkOverlapOptions &options) {
  BulkOverlapResult result;
  if (func.isExternal())
    return result;
  Block &block = func.getBody().front();
  MemoryBudget guard(block, options.memoryBudget);
  if (options.remarks && guard.inputOver())
    options.remarks->remark(func.getLoc())
        << "the input already needs " << guard.inputPeak()
        << " bytes, over the budget of " << guard.budget()
        << "; moves may not raise the peak further";
  PositionIndex pos(block);

  SmallVector<CollectiveOpInterface> starts;
  for (Operation &op : block)
    if (auto c = dyn_cast<CollectiveOpInterface>(&op); c && c.isAsync())
      starts.push_back(c);

  // Per group, the starts processed so far whose windows may still be open.
  // Only the in-flight limit counts them: without one they are not kept
  // (a long program's windows stay open long, and keeping them made this
  // pass quadratic in the collectives).
  const bool limited = options.maxInFlight > 0;
  llvm::StringMap<SmallVector<CollectiveOpInterface>> open;
  for (CollectiveOpInterface start : starts) {
    Operation *wait = getWaitOf(start);
    if (!wait)
      continue;
    SmallVector<CollectiveOpInterface> &groupOpen =
        open[start.getGroupAttr().getValue()];
    // Windows that closed before this start stay closed: later moves only
    // move later collectives, which cannot pass this one.
    if (limited)
      llvm::erase_if(groupOpen, [&](CollectiveOpInterface s) {
        Operation *w = getWaitOf(s);
        return !w || pos.isBefore(w, start);
      });
    int64_t inFlight = 1 + groupOpen.size();

    // Hoist the start.
    Position startWas(start), waitWas(wait);
    Operation *hoistTo = start;
    unsigned hoistDistance = 0;
    std::string hoistStop = "the function entry";
    for (Operation *prev = start->getPrevNode(); prev;
         prev = prev->getPrevNode()) {
      if (llvm::any_of(start->getOperands(),
                       [&](Value v) { return v.getDefiningOp() == prev; })) {
        hoistStop = "its operand " + describe(prev);
        break;
      }
      if (auto other = dyn_cast<CollectiveOpInterface>(prev);
          other && sameGroup(other, start)) {
        hoistStop = "the previous collective on " +
                    start.getGroupAttr().getValue().str() + " " +
                    describe(prev) + " (issue order)";
        break;
      }
      if (auto s = getStartOf(prev); s && sameGroup(s, start)) {
        if (options.maxInFlight > 0 && inFlight + 1 > options.maxInFlight) {
          hoistStop = "the in-flight limit (" +
                      std::to_string(options.maxInFlight) + ") at " +
                      describe(prev);
          break;
        }
        ++inFlight;
      }
      hoistTo = prev;
      if (isa<ComputeOpInterface>(prev))
        ++hoistDistance;
    }
    if (hoistTo != start) {
      start->moveBefore(hoistTo);
      pos.moved(start);
    }

    // Sink the wait.
    int64_t waitInFlight = 1;
    if (limited)
      for (CollectiveOpInterface s : groupOpen)
        if (Operation *w = getWaitOf(s); w && pos.isBefore(wait, w))
          ++waitInFlight;
    Operation *sinkBefore = nullptr;
    unsigned sinkDistance = 0;
    std::string sinkStop = "the end of the function";
    // Without an in-flight limit only the first use (or the terminator)
    // stops the wait: found from the result's users instead of a walk of
    // everything in between, which made this pass quadratic in a long
    // program. The walk below then only counts compute ops passed, and
    // only as far as the remarks or the statistics need.
    Operation *firstUse = nullptr;
    if (!limited) {
      for (Operation *user : wait->getResult(0).getUsers())
        if (user->getBlock() == &block && pos.isBefore(wait, user) &&
            (!firstUse || pos.isBefore(user, firstUse)))
          firstUse = user;
      if (!firstUse)
        firstUse = block.getTerminator();
    }
    for (Operation *next = wait->getNextNode(); next;
         next = next->getNextNode()) {
      if (firstUse &&
          (next == firstUse || (!options.remarks && sinkDistance > 0))) {
        sinkBefore = firstUse;
        if (!firstUse->hasTrait<OpTrait::IsTerminator>())
          sinkStop = "its first use " + describe(firstUse);
        break;
      }
      if (next->hasTrait<OpTrait::IsTerminator>()) {
        sinkBefore = next;
        break;
      }
      bool uses = llvm::any_of(next->getOperands(), [&](Value v) {
        return v == wait->getResult(0);
      });
      if (uses) {
        sinkBefore = next;
        sinkStop = "its first use " + describe(next);
        break;
      }
      if (auto other = dyn_cast<CollectiveOpInterface>(next);
          other && sameGroup(other, start)) {
        if (options.maxInFlight > 0 && waitInFlight + 1 > options.maxInFlight) {
          sinkBefore = next;
          sinkStop = "the in-flight limit (" +
                     std::to_string(options.maxInFlight) + ") at " +
                     describe(next);
          break;
        }
        if (other.isAsync())
          ++waitInFlight;
      }
      if (auto s = getStartOf(next); s && sameGroup(s, start))
        --waitInFlight;
      if (isa<ComputeOpInterface>(next))
        ++sinkDistance;
    }
    if (sinkBefore && sinkBefore != wait->getNextNode()) {
      wait->moveBefore(sinkBefore);
      pos.moved(wait);
    }

    // Memory budget: undo what does not fit, the wait's move first.
    bool blocked = false;
    if (!guard.holds(block)) {
      waitWas.restore(pos);
      sinkDistance = 0;
      sinkStop = "the memory budget";
      if (!guard.holds(block)) {
        startWas.restore(pos);
        hoistDistance = 0;
        hoistStop = "the memory budget";
      }
      blocked = true;
      ++result.budgetBlocked;
    }
    if (hoistDistance > 0)
      ++result.hoisted;
    if (sinkDistance > 0)
      ++result.sunk;
    if (limited)
      groupOpen.push_back(start);

    if (options.remarks) {
      double commUs = timer.timeUs(start);
      double computeUs = windowComputeUs(start, wait, timer);
      Diagnostic &remark = options.remarks->remark(start);
      remark << "start moved above " << hoistDistance
             << " compute op(s), stopped by " << hoistStop
             << "; wait moved below " << sinkDistance
             << " compute op(s), stopped by " << sinkStop
             << "; window: " << us(computeUs) << " of compute under "
             << us(commUs) << " of communication";
      if (blocked)
        remark << " (moves limited by the memory budget of " << guard.budget()
               << " bytes)";
    }
  }
  return result;
}
