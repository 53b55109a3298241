//===- RescheduleWgrad.cpp - AG-WGRAD: wgrads into later windows ----------===//

#include "MoveSupport.h"
#include "tandem/Analysis/MemoryLiveness.h"
#include "tandem/Dialect/Tandem/ScheduleAttributes.h"
#include "tandem/Scheduling/MemoryBudget.h"
#include "tandem/Scheduling/Overlap.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::tandem;
using namespace mlir::tandem::moves;

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
/// Wgrads with fewer output rows are not split (halves this small are
/// launch-bound).
constexpr int64_t kMinSplitRows = 256;
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

/// Where a chain may be placed: after the last op outside the chain whose
/// result it reads, and no later than the first op outside it that uses its
/// results. Positions are read when the range is built: it stays valid
/// while neither the chain nor those ops move.
namespace {
struct ChainRange {
  Operation *lastDef = nullptr, *firstUser = nullptr;
  /// Whether the chain can go right before `point` (an op of the block).
  bool allows(Operation *point, const PositionIndex &pos) const {
    if (lastDef && !pos.isBefore(lastDef, point))
      return false;
    return !firstUser || firstUser == point || pos.isBefore(point, firstUser);
  }
};
} // namespace

static ChainRange chainRange(ArrayRef<Operation *> chain, Block *block,
                             const PositionIndex &pos) {
  llvm::SmallPtrSet<Operation *, 8> inChain(chain.begin(), chain.end());
  ChainRange range;
  for (Operation *op : chain) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && !inChain.contains(def) && def->getBlock() == block &&
          (!range.lastDef || pos.isBefore(range.lastDef, def)))
        range.lastDef = def;
    for (Value res : op->getResults())
      for (Operation *user : res.getUsers()) {
        Operation *top = block->findAncestorOpInBlock(*user);
        if (!top || inChain.contains(top))
          continue;
        if (!range.firstUser || pos.isBefore(top, range.firstUser))
          range.firstUser = top;
      }
  }
  return range;
}

/// The wgrad's output rows split in two: each half reads half of the rows
/// of op(lhs) (a view when lhs is not transposed, a copy otherwise) and the
/// halves are reassembled along dimension 0, which their GEMMs write in
/// place. Returns the new ops (slices, the two halves, the concat), created
/// right before `wgrad`; the wgrad itself is left in place, unused.
namespace {
struct WgradSplit {
  SmallVector<Operation *> slices;
  MatmulOp first, second;
  ConcatOp concat;
  SmallVector<Operation *> all() const {
    SmallVector<Operation *> ops(slices.begin(), slices.end());
    ops.append({first, second, concat});
    return ops;
  }
};
} // namespace

/// Whether splitWgradRows accepts `wgrad`: a 2-D GEMM with an even, static
/// number of output rows, at least kMinSplitRows.
static bool isRowSplittable(MatmulOp wgrad) {
  RankedTensorType resultType = wgrad.getType();
  if (wgrad.getLhs().getType().getRank() != 2 || resultType.getRank() != 2)
    return false;
  int64_t rows = resultType.getDimSize(0);
  return !ShapedType::isDynamic(rows) && rows % 2 == 0 && rows >= kMinSplitRows;
}

static std::optional<WgradSplit> splitWgradRows(MatmulOp wgrad) {
  if (!isRowSplittable(wgrad))
    return std::nullopt;
  RankedTensorType lhsType = wgrad.getLhs().getType();
  RankedTensorType resultType = wgrad.getType();
  // The result's rows are op(lhs)'s rows: lhs's dimension 1 when it is
  // transposed.
  int64_t dim = wgrad.getTransposeLhs() ? 1 : 0;
  OpBuilder b(wgrad);
  Location loc = wgrad.getLoc();
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  SmallVector<int64_t> half(lhsType.getShape());
  half[dim] /= 2;
  RankedTensorType halfLhs = lhsType.clone(half);
  SmallVector<int64_t> halfRows(resultType.getShape());
  halfRows[0] /= 2;
  RankedTensorType halfResult = resultType.clone(halfRows);
  WgradSplit split;
  SmallVector<Value> products;
  for (int64_t j = 0; j < 2; ++j) {
    auto slice = SliceOp::create(b, loc, halfLhs, wgrad.getLhs(), i64(dim),
                                 i64(j), i64(2), i64(1), DenseI64ArrayAttr());
    split.slices.push_back(slice);
    auto product = cast<MatmulOp>(b.clone(*wgrad));
    product->setOperand(0, slice.getResult());
    product.getResult().setType(halfResult);
    products.push_back(product.getResult());
    (j == 0 ? split.first : split.second) = product;
  }
  split.concat = ConcatOp::create(b, loc, resultType, products, i64(0), i64(1));
  return split;
}

namespace {
/// What splitting a wgrad's output rows in two costs, priced by the cost
/// model on the ops splitWgradRows would build (without building them).
struct SplitPrice {
  double extraUs;         ///< Slices + both halves - the unsplit GEMM.
  double halfAloneUs;     ///< One half on all SMs.
  double halfContendedUs; ///< One half beside a collective of `commSms`.
};
} // namespace

static std::optional<SplitPrice>
priceSplit(MatmulOp wgrad, const CostModel &model, int64_t commSms) {
  if (!isRowSplittable(wgrad))
    return std::nullopt;
  ComputeCostInputs whole = ComputeCostInputs::of(wgrad);
  if (!whole.gemmShape)
    return std::nullopt;
  double lhsBytes = getValueBytes(wgrad.getLhs()),
         rhsBytes = getValueBytes(wgrad.getRhs()),
         resultBytes = getValueBytes(wgrad.getResult());
  ComputeCostInputs half = whole;
  half.gemmShape->m /= 2;
  half.flops /= 2;
  half.bytes = lhsBytes / 2 + rhsBytes + resultBytes / 2;
  // The ops splitWgradRows builds, priced as they price themselves
  // (getLayoutBytes): two slices of the lhs (views along dimension 0,
  // copies along 1) and the concat of the halves, which writes in place
  // (ConcatOp::writesInPlace: fresh GEMM results only it uses).
  auto layout = [&](bool view, RankedTensorType type) {
    ComputeCostInputs in;
    in.elementType = whole.elementType;
    in.kind = ComputeKind::memory;
    in.memoryKernel = MemoryKernel::layoutCopy;
    in.bytes = getLayoutBytes(view, type);
    return in;
  };
  RankedTensorType lhsType = wgrad.getLhs().getType();
  SmallVector<int64_t> halfShape(lhsType.getShape());
  int64_t dim = wgrad.getTransposeLhs() ? 1 : 0;
  halfShape[dim] /= 2;
  std::string error;
  std::optional<ComputeEstimate>
      w = model.compute(whole, error),
      h = model.compute(half, error),
      s = model.compute(layout(dim == 0, lhsType.clone(halfShape)), error),
      cat = model.compute(layout(true, wgrad.getType()), error),
      beside = model.compute(half, error, model.gpu().smCount - commSms);
  if (!w || !h || !s || !cat || !beside)
    return std::nullopt;
  ContentionPoint c = model.contention().lookup(commSms);
  return SplitPrice{2 * s->timeUs + cat->timeUs + 2 * h->timeUs - w->timeUs,
                    h->timeUs, beside->timeUs * c.gemmSlowdown};
}

/// Wgrads the main phase left in windows that their other compute already
/// covers hold spare compute: split such a wgrad's output rows in two and
/// move one half into a later window that still has room (exposed
/// communication), when the compute-stream time it saves exceeds what the
/// split costs. Of the nearest such wgrads before the window, the one that
/// saves the most net is split.
template <typename ContendedFn, typename WindowOfFn, typename ForgetFn>
static void splitWgradsToFill(Block &block, SmallVectorImpl<Window> &windows,
                              ArrayRef<MatmulOp> wgrads, OpTimer &timer,
                              const MemoryBudget &guard, PositionIndex &pos,
                              ContendedFn contendedUs, WindowOfFn windowOf,
                              ForgetFn forget, RemarkLog *remarks,
                              RescheduleResult &result) {
  const CostModel &model = timer.costModel();
  // Rooms smaller than one extra launch cannot pay for a split.
  const double minRoomUs = model.gpu().launchOverheadUs;
  // Donors priced per window, among the kSearchLimit nearest.
  constexpr int kPricedDonors = 4;
  SmallVector<MatmulOp> donors(wgrads.begin(), wgrads.end());
  llvm::sort(donors,
             [&](MatmulOp a, MatmulOp b) { return pos.isBefore(a, b); });
  // Each donor's window, found once: splits below only remove donors and
  // move ops into later windows, so a remaining donor's window stays put.
  SmallVector<Window *> homes;
  homes.reserve(donors.size());
  for (MatmulOp donor : donors)
    homes.push_back(windowOf(donor));
  // Each donor's accumulation chain (std::nullopt: it cannot move), found
  // once: splits move chains but do not change which ops they hold.
  llvm::DenseMap<Operation *, std::optional<SmallVector<Operation *>>> chains;
  auto erase = [&](const WgradSplit &split) {
    for (Operation *op : llvm::reverse(split.all())) {
      pos.erased(op);
      forget(op);
      op->erase();
    }
  };
  struct Offer {
    MatmulOp *slot = nullptr; ///< The donor's entry in `donors`.
    Window *home = nullptr;
    SmallVector<Operation *> chain;
    double saved = 0, extra = 0, moved = 0;
    double net() const { return saved - extra; }
  };

  for (Window &w : windows) {
    double room = w.capacityUs - w.usedUs;
    if (room < minRoomUs)
      continue;
    auto end = llvm::partition_point(
        donors, [&](MatmulOp d) { return !d || pos.isBefore(d, w.start); });
    std::optional<Offer> best, bestRejected;
    int priced = 0;
    int64_t looked = 0;
    for (auto it = std::make_reverse_iterator(end);
         it != donors.rend() && priced < kPricedDonors && looked < kSearchLimit;
         ++it) {
      MatmulOp donor = *it;
      if (!donor)
        continue;
      ++looked;
      Window *home = homes[std::distance(it, donors.rend()) - 1];
      if (!home || home == &w)
        continue;
      double whole = contendedUs(donor, home->commSms);
      if (home->usedUs - whole / 2 < home->capacityUs)
        continue; // its window needs all of it
      std::string why;
      auto [cached, inserted] = chains.try_emplace(donor);
      if (inserted) {
        FailureOr<SmallVector<Operation *>> chain = collectChain(donor, why);
        if (succeeded(chain))
          cached->second = std::move(*chain);
      }
      const std::optional<SmallVector<Operation *>> &chain = cached->second;
      if (!chain || !chainRange(*chain, &block, pos).allows(w.wait, pos))
        continue;
      std::optional<SplitPrice> price = priceSplit(donor, model, w.commSms);
      if (!price)
        continue;
      ++priced;
      // The compute stream saves: the half (alone a, contended c beside the
      // collective) fills the idle room R; if it fits (c <= R), a leaves
      // the stream elsewhere, else it does R * a / c of its work during R.
      // The split adds the slices' copies and the halves' extra launch and
      // wave quantisation.
      Offer offer;
      offer.slot = &*it;
      offer.home = home;
      offer.chain = *chain;
      offer.extra = price->extraUs;
      offer.moved = price->halfContendedUs;
      offer.saved = offer.moved <= room
                        ? price->halfAloneUs
                        : room * price->halfAloneUs / offer.moved;
      std::optional<Offer> &slot = offer.net() > 0 ? best : bestRejected;
      if (!slot || offer.net() > slot->net())
        slot = std::move(offer);
    }
    if (!best) {
      if (remarks && bestRejected)
        remarks->remark(w.start)
            << us(room) << " of this window stays exposed: splitting "
            << describe(*bestRejected->slot) << " would save "
            << us(bestRejected->saved) << " of compute-stream time and cost "
            << us(bestRejected->extra);
      continue;
    }

    MatmulOp donor = *best->slot;
    WgradSplit split = *splitWgradRows(donor);
    for (Operation *op : split.all())
      pos.moved(op);
    // The halves replace the wgrad; the second half, the concat and the
    // accumulation chain move into the window.
    donor.getResult().replaceAllUsesWith(split.concat.getResult());
    SmallVector<Operation *> moving{split.second, split.concat};
    moving.append(best->chain.begin() + 1, best->chain.end());
    SmallVector<Position> was;
    for (Operation *op : moving)
      was.emplace_back(op);
    for (Operation *op : moving) {
      op->moveBefore(w.wait);
      pos.moved(op);
    }
    // Out of the block (and so of the liveness) while the budget is
    // checked; erased once the split stands.
    donor->remove();
    if (!guard.holds(block)) {
      block.getOperations().insert(Block::iterator(split.slices.front()),
                                   donor.getOperation());
      for (Position &p : llvm::reverse(was))
        p.restore(pos);
      split.concat.getResult().replaceAllUsesWith(donor.getResult());
      erase(split);
      if (remarks)
        remarks->remark(donor)
            << "wgrad not split: the memory budget (" << guard.budget()
            << " bytes) leaves no room in the window of " << describe(w.start);
      continue;
    }
    Window *home = best->home;
    home->usedUs += contendedUs(split.first, home->commSms) -
                    contendedUs(donor, home->commSms);
    w.usedUs += best->moved;
    ++result.split;
    if (remarks)
      remarks->remark(split.first)
          << "wgrad split in two along its output rows: one half stays "
             "under "
          << describe(home->start) << ", the other fills the " << us(room)
          << " left in the window of " << describe(w.start) << " ("
          << us(best->moved) << " of GEMM under contention; saves "
          << us(best->saved) << " of compute-stream time, the split costs "
          << us(best->extra) << ")";
    pos.erased(donor);
    forget(donor);
    chains.erase(donor);
    donor->erase();
    *best->slot = MatmulOp();
  }
}

/// Candidates: the window of every async collective, in program order of
/// its start, with the communication time it can hide compute under (its
/// time beside compute, times the fill limit). Their used time is counted
/// by the caller.
static SmallVector<Window> collectWindows(Block &block, OpTimer &timer,
                                          const RescheduleOptions &options) {
  const CostModel &model = timer.costModel();
  SmallVector<Window> windows;
  for (Operation &op : block) {
    auto start = dyn_cast<CollectiveOpInterface>(&op);
    if (!start || !start.isAsync())
      continue;
    Operation *wait = getWaitOf(start);
    if (!wait)
      continue;
    int64_t k = getCommSms(&op).value_or(model.gpu().collectiveSms);
    ContentionPoint c = model.contention().lookup(k);
    windows.push_back(
        {start, wait, options.fillLimit * timer.timeUs(start) * c.commSlowdown,
         0.0, k, start.getCollectiveKind() == CollectiveKind::all_gather});
  }
  return windows;
}

/// Apply: moves `chain` (a wgrad and its accumulation) before `wait`, or
/// puts it back where it was and returns false when that breaks the memory
/// budget.
static bool moveChainBefore(ArrayRef<Operation *> chain, Operation *wait,
                            Block &block, const MemoryBudget &budget,
                            PositionIndex &pos) {
  SmallVector<Position> was;
  for (Operation *op : chain)
    was.emplace_back(op);
  for (Operation *op : chain) {
    op->moveBefore(wait);
    pos.moved(op);
  }
  if (budget.holds(block))
    return true;
  for (Position &p : llvm::reverse(was))
    p.restore(pos);
  return false;
}

RescheduleResult
mlir::tandem::rescheduleWgrad(func::FuncOp func, OpTimer &timer,
                              const RescheduleOptions &options) {
  RescheduleResult result;
  if (func.isExternal())
    return result;
  Block &block = func.getBody().front();
  MemoryBudget guard(block, options.memoryBudget);
  result.inputOverBudget = guard.inputOver();
  if (options.remarks && guard.inputOver())
    options.remarks->remark(func.getLoc())
        << "the input already needs " << guard.inputPeak()
        << " bytes, over the budget of " << guard.budget()
        << "; moves may not raise the peak further";
  const CostModel &model = timer.costModel();
  const GpuSpec &gpu = model.gpu();
  PositionIndex pos(block);

  SmallVector<Window> windows = collectWindows(block, timer, options);
  // Compute already in a window uses its capacity. Estimates are cached per
  // op: ops erased below are forgotten first.
  ComputeEstimateCache estimates(model);
  auto contendedUs = [&](Operation *op, int64_t k) {
    ContentionPoint c = model.contention().lookup(k);
    auto compute = dyn_cast<ComputeOpInterface>(op);
    if (!compute)
      return 0.0;
    bool memory = compute.getComputeKind() == ComputeKind::memory;
    std::string error;
    std::optional<ComputeEstimate> e =
        estimates.get(compute, error, memory ? 0 : gpu.smCount - k);
    if (!e)
      return 0.0;
    return e->timeUs * (memory ? c.memorySlowdown : c.gemmSlowdown);
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
      if (options.remarks)
        options.remarks->remark(wgrad) << "wgrad left in place: " << why;
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
    ChainRange range = chainRange(*chain, &block, pos);
    for (Window *w : candidates) {
      // Fill, do not overfill: a window takes more compute only while its
      // collective is not yet covered. A GEMM longer than the room left
      // still hides the rest of the collective; its excess runs as it would
      // have anyway.
      double need = contendedUs(wgrad, w->commSms);
      if (w == current || w->usedUs >= w->capacityUs)
        continue;
      if (!range.allows(w->wait, pos)) {
        lastReason = "a later op needs its result before the windows with room";
        continue;
      }
      if (!moveChainBefore(*chain, w->wait, block, guard, pos)) {
        lastReason = "the memory budget (" + std::to_string(guard.budget()) +
                     " bytes) leaves no room in a later window";
        continue;
      }
      w->usedUs += need;
      if (current)
        current->usedUs -= contendedUs(wgrad, current->commSms);
      ++result.moved;
      moved = true;
      if (options.remarks)
        options.remarks->remark(wgrad)
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
  if (options.splitToFill)
    splitWgradsToFill(
        block, windows, wgrads, timer, guard, pos, contendedUs, windowOf,
        [&](Operation *op) { estimates.forget(op); }, options.remarks, result);
  return result;
}
