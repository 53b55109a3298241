//===- Overlap.cpp - Bulk overlap and wgrad rescheduling ------------------===//

#include "tandem/Scheduling/Overlap.h"
#include "tandem/Analysis/MemoryLiveness.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tandem;

static std::string us(double v) { return llvm::formatv("{0:F1} us", v).str(); }

/// A readable name for an op in remarks: its NameLoc, else its op name.
static std::string describe(Operation *op) {
  Location loc = op->getLoc();
  if (auto name = dyn_cast<NameLoc>(loc))
    return ("'" + name.getName().getValue() + "'").str();
  return ("'" + op->getName().getStringRef() + "'").str();
}

//===----------------------------------------------------------------------===//
// Async conversion
//===----------------------------------------------------------------------===//

unsigned mlir::tandem::convertToAsyncCollectives(func::FuncOp func) {
  SmallVector<Operation *> collectives;
  func.walk([&](CollectiveOpInterface c) { collectives.push_back(c); });
  llvm::StringMap<int64_t> nextSeq;
  unsigned converted = 0;
  for (Operation *op : collectives) {
    auto collective = cast<CollectiveOpInterface>(op);
    Builder b(op->getContext());
    IntegerAttr seq =
        b.getI64IntegerAttr(nextSeq[collective.getGroupAttr().getValue()]++);
    if (collective.isAsync()) {
      op->setAttr(kSeqAttrName, seq);
      continue;
    }
    OpBuilder builder(op);
    RankedTensorType tensorType = collective.getResultTensorType();
    OperationState state(op->getLoc(),
                         (op->getName().getStringRef() + "_start").str());
    state.addOperands(op->getOperands());
    state.propertiesAttr = op->getPropertiesAsAttribute();
    state.addAttributes(op->getDiscardableAttrDictionary().getValue());
    state.addTypes(FutureType::get(op->getContext(), tensorType));
    Operation *start = builder.create(state);
    start->setAttr(kSeqAttrName, seq);
    auto wait =
        WaitOp::create(builder, op->getLoc(), tensorType, start->getResult(0));
    op->getResult(0).replaceAllUsesWith(wait.getResult());
    op->erase();
    ++converted;
  }
  return converted;
}

//===----------------------------------------------------------------------===//
// Memory budget
//===----------------------------------------------------------------------===//

namespace {
/// The limit moves must respect: the budget, or the input's peak if the
/// input already exceeds it (then no move may make it worse).
struct BudgetGuard {
  BudgetGuard(Block &block, int64_t budget) : budget(budget) {
    if (budget > 0) {
      inputPeak = computePeakMemory(block).peakBytes;
      limit = std::max(budget, inputPeak);
    }
  }
  bool enabled() const { return budget > 0; }
  bool inputOver() const { return enabled() && inputPeak > budget; }
  bool holds(Block &block) const {
    return !enabled() || computePeakMemory(block).peakBytes <= limit;
  }
  int64_t budget, inputPeak = 0, limit = 0;
};

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
} // namespace

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
  BudgetGuard guard(block, options.memoryBudget);
  if (options.emitRemarks && guard.inputOver())
    mlir::emitRemark(func.getLoc())
        << "the input already needs " << guard.inputPeak
        << " bytes, over the budget of " << guard.budget
        << "; moves may not raise the peak further";
  PositionIndex pos(block);

  SmallVector<CollectiveOpInterface> starts;
  for (Operation &op : block)
    if (auto c = dyn_cast<CollectiveOpInterface>(&op); c && c.isAsync())
      starts.push_back(c);

  // Per group, the starts processed so far whose windows may still be open.
  llvm::StringMap<SmallVector<CollectiveOpInterface>> open;
  for (CollectiveOpInterface start : starts) {
    Operation *wait = getWaitOf(start);
    if (!wait)
      continue;
    SmallVector<CollectiveOpInterface> &groupOpen =
        open[start.getGroupAttr().getValue()];
    // Windows that closed before this start stay closed: later moves only
    // move later collectives, which cannot pass this one.
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
        if (inFlight + 1 > options.maxInFlight) {
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
    for (CollectiveOpInterface s : groupOpen)
      if (Operation *w = getWaitOf(s); w && pos.isBefore(wait, w))
        ++waitInFlight;
    Operation *sinkBefore = nullptr;
    unsigned sinkDistance = 0;
    std::string sinkStop = "the end of the function";
    for (Operation *next = wait->getNextNode(); next;
         next = next->getNextNode()) {
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
        if (waitInFlight + 1 > options.maxInFlight) {
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
    groupOpen.push_back(start);

    if (options.emitRemarks) {
      double commUs = timer.timeUs(start);
      double computeUs = windowComputeUs(start, wait, timer);
      auto remark = start->emitRemark();
      remark << "start moved above " << hoistDistance
             << " compute op(s), stopped by " << hoistStop
             << "; wait moved below " << sinkDistance
             << " compute op(s), stopped by " << sinkStop
             << "; window: " << us(computeUs) << " of compute under "
             << us(commUs) << " of communication";
      if (blocked)
        remark << " (moves limited by the memory budget of " << guard.budget
               << " bytes)";
    }
  }
  return result;
}

//===----------------------------------------------------------------------===//
// wgrad rescheduling (AG-WGRAD)
//===----------------------------------------------------------------------===//

namespace {
struct Window {
  CollectiveOpInterface start;
  Operation *wait;
  double capacityUs; ///< Communication time available to hide compute.
  double usedUs;     ///< Compute already placed in the window.
  int64_t commSms;
  bool isAllGather;
};

/// How many windows of each kind the search considers after a wgrad.
constexpr int64_t kSearchLimit = 64;
} // namespace

/// The ops that must move with `wgrad`: the wgrad and the chain of
/// accumulation adds fed by it. Fails (with a reason) if a result reaches
/// anything but accumulation, gradient collectives or the return.
static FailureOr<SmallVector<Operation *>> collectChain(MatmulOp wgrad,
                                                        std::string &why) {
  SmallVector<Operation *> chain{wgrad};
  for (size_t i = 0; i < chain.size(); ++i) {
    for (Operation *user : chain[i]->getResult(0).getUsers()) {
      if (llvm::is_contained(chain, user))
        continue;
      if (isa<func::ReturnOp>(user) || isa<CollectiveOpInterface>(user))
        continue;
      auto add = dyn_cast<ElementwiseOp>(user);
      if (add && add.getKind() == ElementwiseKind::add &&
          add->getBlock() == wgrad->getBlock()) {
        chain.push_back(add);
        continue;
      }
      why = "its result feeds " + describe(user) +
            ", which is neither gradient accumulation nor a gradient output";
      return failure();
    }
  }
  return chain;
}

/// Whether the chain can be placed before `point` (later in the block):
/// every operand from outside the chain is defined before `point`, and every
/// user outside the chain comes after it.
static bool canPlaceChainBefore(ArrayRef<Operation *> chain, Operation *point,
                                const PositionIndex &pos) {
  llvm::SmallPtrSet<Operation *, 8> inChain(chain.begin(), chain.end());
  Block *block = point->getBlock();
  for (Operation *op : chain) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && !inChain.contains(def) && def->getBlock() == block &&
          !pos.isBefore(def, point))
        return false;
    for (Value res : op->getResults())
      for (Operation *user : res.getUsers()) {
        Operation *top = block->findAncestorOpInBlock(*user);
        if (!top || inChain.contains(top))
          continue;
        if (top == point)
          continue; // the chain goes right before it
        if (pos.isBefore(top, point))
          return false;
      }
  }
  return true;
}

RescheduleResult
mlir::tandem::rescheduleWgrad(func::FuncOp func, OpTimer &timer,
                              const RescheduleOptions &options) {
  RescheduleResult result;
  if (func.isExternal())
    return result;
  Block &block = func.getBody().front();
  BudgetGuard guard(block, options.memoryBudget);
  result.inputOverBudget = guard.inputOver();
  if (options.emitRemarks && guard.inputOver())
    mlir::emitRemark(func.getLoc())
        << "the input already needs " << guard.inputPeak
        << " bytes, over the budget of " << guard.budget
        << "; moves may not raise the peak further";
  const CostModel &model = timer.costModel();
  const GpuSpec &gpu = model.gpu();
  PositionIndex pos(block);

  SmallVector<Window> windows;
  for (Operation &op : block) {
    auto start = dyn_cast<CollectiveOpInterface>(&op);
    if (!start || !start.isAsync())
      continue;
    Operation *wait = getWaitOf(start);
    if (!wait)
      continue;
    int64_t k = gpu.collectiveSms;
    if (auto attr = op.getAttrOfType<IntegerAttr>(kCommSmsAttrName))
      k = attr.getInt();
    ContentionPoint c = model.contention().lookup(k);
    windows.push_back(
        {start, wait, options.fillLimit * timer.timeUs(start) * c.commSlowdown,
         0.0, k, start.getCollectiveKind() == CollectiveKind::all_gather});
  }
  // Compute already in a window uses its capacity.
  auto contendedUs = [&](Operation *op, int64_t k) {
    ContentionPoint c = model.contention().lookup(k);
    if (auto compute = dyn_cast<ComputeOpInterface>(op)) {
      if (compute.getComputeKind() == ComputeKind::memory)
        return timer.computeUs(compute, 0) * c.memorySlowdown;
      return timer.computeUs(compute, gpu.smCount - k) * c.gemmSlowdown;
    }
    return 0.0;
  };
  for (Window &w : windows)
    for (Operation *it = w.start->getNextNode(); it && it != w.wait;
         it = it->getNextNode())
      w.usedUs += contendedUs(it, w.commSms);

  // Windows are in program order of their starts, which no move below
  // changes (only compute moves). The first window starting after `op`:
  auto firstAfter = [&](Operation *op) {
    return llvm::partition_point(
        windows, [&](const Window &w) { return pos.isBefore(w.start, op); });
  };
  // The window around `op`, looking back over the windows started before it
  // (a bounded look-back keeps this linear; windows longer than that are
  // not considered).
  auto windowOf = [&](Operation *op) -> Window * {
    auto it = firstAfter(op);
    for (int64_t back = 0; it != windows.begin() && back < kSearchLimit;
         ++back) {
      --it;
      if (pos.isBefore(op, it->wait))
        return &*it;
    }
    return nullptr;
  };

  SmallVector<MatmulOp> wgrads;
  for (Operation &op : block)
    if (auto mm = dyn_cast<MatmulOp>(&op);
        mm && mm.getRole() == MatmulRole::wgrad)
      wgrads.push_back(mm);

  for (MatmulOp wgrad : wgrads) {
    auto keep = [&](const std::string &why) {
      ++result.kept;
      if (options.emitRemarks)
        wgrad->emitRemark() << "wgrad left in place: " << why;
    };
    // A wgrad that its window needs (without it the collective would not be
    // covered) stays; one in a window filled without it may move on.
    Window *current = windowOf(wgrad);
    if (current && current->usedUs - contendedUs(wgrad, current->commSms) <
                       current->capacityUs) {
      keep("it already runs under " + describe(current->start) + " (" +
           us(current->usedUs) + " of compute for " + us(current->capacityUs) +
           ")");
      continue;
    }
    std::string why;
    FailureOr<SmallVector<Operation *>> chain = collectChain(wgrad, why);
    if (failed(chain)) {
      keep(why);
      continue;
    }
    // Later windows: all-gathers first, then any collective; the next
    // kSearchLimit of each kind (windows far ahead would hold the wgrad's
    // inputs live for long anyway).
    SmallVector<Window *> candidates;
    for (bool allGathers : {true, false}) {
      int64_t found = 0;
      for (auto it = firstAfter(wgrad);
           it != windows.end() && found < kSearchLimit; ++it)
        if (it->isAllGather == allGathers) {
          candidates.push_back(&*it);
          ++found;
        }
    }
    if (candidates.empty()) {
      keep("no collective window follows it");
      continue;
    }
    bool moved = false;
    std::string lastReason = "every later window is full";
    for (Window *w : candidates) {
      // Fill, do not overfill: a window takes more compute only while its
      // collective is not yet covered. A GEMM longer than the room left
      // still hides the rest of the collective; its excess runs as it would
      // have anyway.
      double need = contendedUs(wgrad, w->commSms);
      if (w == current || w->usedUs >= w->capacityUs)
        continue;
      if (!canPlaceChainBefore(*chain, w->wait, pos)) {
        lastReason = "a later op needs its result before the windows with room";
        continue;
      }
      SmallVector<Position> was;
      for (Operation *op : *chain)
        was.emplace_back(op);
      for (Operation *op : *chain) {
        op->moveBefore(w->wait);
        pos.moved(op);
      }
      if (!guard.holds(block)) {
        for (Position &p : llvm::reverse(was))
          p.restore(pos);
        lastReason = "the memory budget (" + std::to_string(guard.budget) +
                     " bytes) leaves no room in a later window";
        continue;
      }
      w->usedUs += need;
      if (current)
        current->usedUs -= contendedUs(wgrad, current->commSms);
      ++result.moved;
      moved = true;
      if (options.emitRemarks)
        wgrad->emitRemark()
            << "wgrad moved into the window of " << describe(w->start) << " ("
            << stringifyCollectiveKind(w->start.getCollectiveKind()) << " on "
            << w->start.getGroupAttr() << "): " << us(need)
            << " of GEMM under contention, window now " << us(w->usedUs)
            << " of " << us(w->capacityUs);
      break;
    }
    if (!moved)
      keep(lastReason);
  }
  return result;
}
