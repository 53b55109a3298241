//===- BatchSplit.cpp - Split a step into independent parts ---------------===//

#include "tandem/Scheduling/BatchSplit.h"
#include "MoveSupport.h"
#include "tandem/Dialect/Tandem/TandemBounds.h"
#include "tandem/Scheduling/CopyEngines.h"
#include "tandem/Scheduling/MemoryBudget.h"
#include "tandem/Scheduling/Overlap.h"
#include "tandem/Scheduling/RowSplit.h"
#include "tandem/Scheduling/Strategy.h"
#include "tandem/Simulator/Simulate.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>
#include <limits>
#include <numeric>
#include <set>

using namespace mlir;
using namespace mlir::tandem;
using namespace mlir::tandem::moves;

//===----------------------------------------------------------------------===//
// The rewrite
//===----------------------------------------------------------------------===//

namespace {
/// What an input value became in the split program.
struct Mapped {
  Value whole;                 ///< The value itself, once it exists.
  SmallVector<Value> parts;    ///< Its k parts, cut with `interleave`.
  SmallVector<Value> partials; ///< k values that add up to it.
  int64_t interleave = 1;      ///< Of `parts`, or the one to cut `whole` with.
};

/// Rewrites one function's block into k parts (op by op, in program order:
/// part 0 to k-1 of each row-local op where the op was). Part p holds
/// weights[p] of the weights' sum `units` of every group of rows (equal
/// parts: one unit each).
class Splitter {
public:
  Splitter(Block &block, ArrayRef<int64_t> partWeights)
      : block(block), k(partWeights.size()), weights(partWeights) {
    for (int64_t w : weights) {
      starts.push_back(units);
      units += w;
    }
    even = units == k;
  }
  void run();
  BatchSplitResult stats;

private:
  Mapped &get(Value v);
  Value whole(Value v, OpBuilder &b);
  ArrayRef<Value> partsOf(Value v, int64_t interleave, OpBuilder &b);
  Value permuted(Value v, int64_t interleave, OpBuilder &b);
  /// The interleave `v` is (or would be) cut with; 0 if it cannot be cut
  /// into k parts.
  int64_t cutInterleave(Value v);
  bool trySplit(Operation *op, OpBuilder &b);
  bool tryContraction(Operation *op, OpBuilder &b);
  bool trySeeThrough(Operation *op, OpBuilder &b);
  void keepWhole(Operation *op, OpBuilder &b);
  /// Replaces every concat or slice that repeats an earlier one (same
  /// operands, attributes and type) by it.
  void mergeSameLayouts();
  Location partLoc(Location loc, int64_t p);
  /// Slice `p` of `input` (interleave `interleave`) with this split's
  /// weights.
  Value slicePart(OpBuilder &b, Location loc, Value input, int64_t p,
                  int64_t interleave);

  Block &block;
  int64_t k;
  SmallVector<int64_t> weights, starts;
  int64_t units = 0;
  bool even = true;
  llvm::DenseMap<Value, Mapped> mapped;
  /// Slices of a value cut with another interleave than its parts'.
  llvm::DenseMap<std::pair<Value, int64_t>, SmallVector<Value>> recut;
  /// Row-permuted wholes (concat of the parts, interleave 1) per value.
  llvm::DenseMap<std::pair<Value, int64_t>, Value> permutedOf;
  SmallVector<Operation *> replaced;
};
} // namespace

Mapped &Splitter::get(Value v) {
  auto it = mapped.find(v);
  if (it != mapped.end())
    return it->second;
  // A block argument, or a result of an op kept whole: it is itself.
  Mapped &m = mapped[v];
  m.whole = v;
  m.interleave = 1;
  return m;
}

Value Splitter::slicePart(OpBuilder &b, Location loc, Value input, int64_t p,
                          int64_t interleave) {
  auto slice = SliceOp::create(
      b, loc, scaleRows(input.getType(), weights[p], units), input, 0, p, k,
      interleave, even ? DenseI64ArrayAttr() : b.getDenseI64ArrayAttr(weights));
  ++stats.slices;
  return slice;
}

Location Splitter::partLoc(Location loc, int64_t p) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return NameLoc::get(
        StringAttr::get(loc.getContext(),
                        name.getName().getValue() + ".p" + std::to_string(p)),
        name.getChildLoc());
  return loc;
}

static Location locOf(Value v) {
  if (Operation *def = v.getDefiningOp())
    return def->getLoc();
  return v.getLoc();
}

Value Splitter::whole(Value v, OpBuilder &b) {
  Mapped &m = get(v);
  if (m.whole)
    return m.whole;
  auto i64 = [&](int64_t x) { return b.getI64IntegerAttr(x); };
  if (!m.partials.empty()) {
    Value sum = m.partials.front();
    for (Value next : ArrayRef<Value>(m.partials).drop_front()) {
      sum = ElementwiseOp::create(b, locOf(next), v.getType(),
                                  ElementwiseKind::add, ValueRange{sum, next},
                                  StringAttr());
      ++stats.partialSums;
    }
    m.whole = sum;
    return sum;
  }
  m.whole = ConcatOp::create(b, locOf(m.parts.back()), v.getType(), m.parts,
                             i64(0), i64(m.interleave));
  ++stats.assemblies;
  return m.whole;
}

ArrayRef<Value> Splitter::partsOf(Value v, int64_t interleave, OpBuilder &b) {
  Mapped &m = get(v);
  if (!m.parts.empty() && m.interleave == interleave)
    return m.parts;
  SmallVector<Value> &cut = recut[{v, interleave}];
  if (!cut.empty())
    return cut;
  Value w = whole(v, b);
  for (int64_t p = 0; p < k; ++p)
    cut.push_back(slicePart(b, partLoc(locOf(w), p), w, p, interleave));
  // A whole value is cut once: later users share the slices.
  if (get(v).parts.empty()) {
    get(v).parts = cut;
    get(v).interleave = interleave;
  }
  return cut;
}

Value Splitter::permuted(Value v, int64_t interleave, OpBuilder &b) {
  if (interleave == 1)
    return whole(v, b);
  Value &p = permutedOf[{v, interleave}];
  if (p)
    return p;
  ArrayRef<Value> parts = partsOf(v, interleave, b);
  // Parts that are the consecutive blocks of one value (a relayout seen
  // through: a sequence's token-order gradient) concatenate back to it.
  auto first = parts.front().getDefiningOp<SliceOp>();
  if (first && first.getInput().getType() == v.getType() &&
      llvm::all_of(llvm::enumerate(parts), [&](auto part) {
        auto slice = part.value().template getDefiningOp<SliceOp>();
        return slice && slice.getInput() == first.getInput() &&
               slice.isRowBlock(part.index(), weights, 1);
      }))
    return p = first.getInput();
  p = ConcatOp::create(b, locOf(parts.back()), v.getType(), parts,
                       b.getI64IntegerAttr(0), b.getI64IntegerAttr(1));
  ++stats.assemblies;
  return p;
}

int64_t Splitter::cutInterleave(Value v) {
  Mapped &m = get(v);
  // Weight-gradient parts are added up, never cut.
  int64_t i = !m.partials.empty() && m.parts.empty() ? 0 : m.interleave;
  return i > 0 && canCutRows(v.getType(), units, i) ? i : 0;
}

bool Splitter::trySplit(Operation *op, OpBuilder &b) {
  std::optional<RowSplitRule> rule = getRowSplitRule(op);
  if (!rule)
    return false;
  int64_t interleave = 0;
  for (unsigned i : rule->rowOperands) {
    int64_t cut = cutInterleave(op->getOperand(i));
    if (cut == 0 || (interleave && cut != interleave))
      return false;
    interleave = cut;
  }
  std::optional<int64_t> resultInterleave =
      getResultInterleave(*rule, interleave);
  if (!resultInterleave)
    return false;
  for (unsigned r : rule->rowResults)
    if (!canCutRows(op->getResult(r).getType(), units, *resultInterleave))
      return false;

  SmallVector<SmallVector<Value>> rowParts;
  for (unsigned i : rule->rowOperands)
    rowParts.push_back(
        llvm::to_vector(partsOf(op->getOperand(i), interleave, b)));
  SmallVector<Value> shared(op->getNumOperands());
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
    if (!llvm::is_contained(rule->rowOperands, i))
      shared[i] = whole(op->getOperand(i), b);

  // Collected first, mapped after: inserting into `mapped` moves entries.
  SmallVector<Mapped> results(op->getNumResults());
  for (int64_t p = 0; p < k; ++p) {
    Operation *part = b.clone(*op);
    part->setLoc(partLoc(op->getLoc(), p));
    for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
      if (shared[i])
        part->setOperand(i, shared[i]);
    for (auto [j, i] : llvm::enumerate(rule->rowOperands))
      part->setOperand(i, rowParts[j][p]);
    for (unsigned r : rule->rowResults) {
      Value result = part->getResult(r);
      result.setType(scaleRows(op->getResult(r).getType(), weights[p], units));
      results[r].parts.push_back(result);
      results[r].interleave = *resultInterleave;
    }
    for (unsigned r : rule->partialResults)
      results[r].partials.push_back(part->getResult(r));
  }
  for (OpResult r : op->getResults())
    mapped[r] = std::move(results[r.getResultNumber()]);
  replaced.push_back(op);
  ++stats.splitOps;
  return true;
}

bool Splitter::tryContraction(Operation *op, OpBuilder &b) {
  if (!contractsRows(op))
    return false;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  // Copies: get() may grow the map.
  Mapped l = get(lhs);
  Mapped r = get(rhs);
  // Only worth it when a side is already in parts: otherwise the op reads
  // its operands as they are.
  if (l.parts.empty() && r.parts.empty())
    return false;
  int64_t interleave = !l.parts.empty() ? l.interleave : r.interleave;
  if (cutInterleave(lhs) != interleave || cutInterleave(rhs) != interleave)
    return false;
  // The same permutation of both operands' rows: the contraction over the
  // rows is unchanged, and concats of fresh parts move nothing.
  op->setOperand(0, permuted(lhs, interleave, b));
  op->setOperand(1, permuted(rhs, interleave, b));
  ++stats.barriers;
  return true;
}

bool Splitter::trySeeThrough(Operation *op, OpBuilder &b) {
  auto i64 = [&](int64_t x) { return b.getI64IntegerAttr(x); };
  // A slice with this cut's interleave into a multiple m of `units` equal
  // blocks: the rows are i groups of `units` units of m blocks each, so
  // block c is in the part whose units hold it, block c - m * start of that
  // part's m * weight. It is then no barrier: the ops that read one
  // sequence's rows wait for that part only.
  if (auto slice = dyn_cast<SliceOp>(op)) {
    int64_t chunks = slice.getChunks(), interleave = slice.getInterleave();
    if (slice.getDim() != 0 || slice.getWeights() || chunks % units != 0 ||
        get(slice.getInput()).parts.empty() ||
        cutInterleave(slice.getInput()) != interleave)
      return false;
    int64_t m = chunks / units, chunk = slice.getChunk();
    int64_t p = 0;
    while (p + 1 < k && chunk >= m * starts[p + 1])
      ++p;
    Value part = partsOf(slice.getInput(), interleave, b)[p];
    if (int64_t blocks = m * weights[p]; blocks > 1) {
      part = SliceOp::create(b, slice.getLoc(), slice.getType(), part, i64(0),
                             i64(chunk - m * starts[p]), i64(blocks),
                             i64(interleave), DenseI64ArrayAttr());
      ++stats.slices;
    }
    Mapped &result = mapped[slice.getResult()];
    result.whole = part;
    result.interleave = interleave;
    replaced.push_back(op);
    ++stats.seenThrough;
    return true;
  }
  // A concat of a multiple m of `units` equal values along the rows: its
  // part p is the concat of the m * weight inputs from m * start on with the
  // same interleave (the input itself for one), so that its row users need
  // not wait for all of them.
  auto concat = dyn_cast<ConcatOp>(op);
  if (!concat || concat.getDim() != 0)
    return false;
  int64_t n = concat.getInputs().size(), interleave = concat.getInterleave();
  if (n % units != 0 || !canCutRows(concat.getType(), units, interleave) ||
      llvm::any_of(concat.getInputs(), [&](Value input) {
        return input.getType() != concat.getInputs().front().getType();
      }))
    return false;
  // Attention reads its operands whole: a concat that only attention reads
  // (the keys of a causal prefix, a sequence's tokens for its
  // attention_grad) gains nothing from parts and stays as it is.
  if (llvm::all_of(concat->getUsers(), [](Operation *user) {
        return isa<AttentionOp, AttentionGradOp>(user);
      }))
    return false;
  int64_t m = n / units;
  Mapped result;
  result.interleave = interleave;
  for (int64_t p = 0; p < k; ++p) {
    SmallVector<Value> inputs;
    for (Value input : concat.getInputs().slice(m * starts[p], m * weights[p]))
      inputs.push_back(whole(input, b));
    if (inputs.size() == 1) {
      result.parts.push_back(inputs.front());
      continue;
    }
    result.parts.push_back(
        ConcatOp::create(b, partLoc(concat.getLoc(), p),
                         scaleRows(concat.getType(), weights[p], units), inputs,
                         i64(0), i64(interleave)));
    ++stats.assemblies;
  }
  mapped[concat.getResult()] = std::move(result);
  replaced.push_back(op);
  ++stats.seenThrough;
  return true;
}

void Splitter::keepWhole(Operation *op, OpBuilder &b) {
  // Results keep the interleave of the first operand with as many rows, so
  // that their row users are cut the way that operand was.
  int64_t inherited = 1;
  if (op->getNumResults() > 0)
    if (auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
        type && type.getRank() > 0)
      for (Value operand : op->getOperands())
        if (auto t = dyn_cast<RankedTensorType>(operand.getType());
            t && t.getRank() > 0 && t.getDimSize(0) == type.getDimSize(0)) {
          inherited = get(operand).interleave;
          break;
        }
  // A concat along the rows kept whole (a relayout) is cut with its own
  // interleave: its row users and a wgrad reading it then pair with values
  // cut that way (the gathered layout) instead of assembling those.
  if (auto concat = dyn_cast<ConcatOp>(op); concat && concat.getDim() == 0)
    inherited = concat.getInterleave();
  // A barrier waits for an assembly of parts; an op whose operands all
  // exist whole (a sequence's rows seen through) runs on its part alone.
  bool assembles = llvm::any_of(op->getOperands(), [&](Value v) {
    const Mapped &m = get(v);
    return !m.whole;
  });
  for (OpOperand &operand : op->getOpOperands())
    operand.set(whole(operand.get(), b));
  if (op->hasTrait<OpTrait::IsTerminator>())
    return;
  ++(assembles ? stats.barriers : stats.onParts);
  for (OpResult result : op->getResults()) {
    Mapped &m = mapped[result];
    m.whole = result;
    m.interleave = inherited;
  }
}

void Splitter::run() {
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    ops.push_back(&op);
  for (Operation *op : ops) {
    OpBuilder b(op);
    if (op->hasTrait<OpTrait::IsTerminator>() ||
        (!trySeeThrough(op, b) && !trySplit(op, b))) {
      if (!tryContraction(op, b))
        keepWhole(op, b);
    }
  }
  // Users come later in the block and were replaced or rewired: erase in
  // reverse so that every op is unused when it goes.
  for (Operation *op : llvm::reverse(replaced)) {
    assert(op->use_empty() && "every user was rewritten");
    op->erase();
  }
  mergeSameLayouts();
}

void Splitter::mergeSameLayouts() {
  // The split and the input may assemble the same rows twice (a wgrad's
  // row-permuted operand and the input's own concat of the same parts, in
  // token order for attention_grad): the later copy reads the earlier's
  // operands, so the earlier one dominates its users. One concat, not two,
  // also lets the parts be written in place (ConcatOp::writesInPlace).
  llvm::DenseMap<std::pair<Attribute, ArrayRef<Value>>, Operation *> seen;
  SmallVector<Operation *> merged;
  SmallVector<SmallVector<Value>> operandLists;
  operandLists.reserve(block.getOperations().size());
  for (Operation &op : block) {
    if (!isa<ConcatOp, SliceOp>(op))
      continue;
    operandLists.emplace_back(op.getOperands());
    auto key = std::make_pair(
        Attribute(ArrayAttr::get(op.getContext(),
                                 {op.getAttrDictionary(),
                                  TypeAttr::get(op.getResult(0).getType())})),
        ArrayRef<Value>(operandLists.back()));
    auto [it, inserted] = seen.try_emplace(key, &op);
    if (inserted)
      continue;
    op.getResult(0).replaceAllUsesWith(it->second->getResult(0));
    merged.push_back(&op);
  }
  for (Operation *op : merged)
    op->erase();
  stats.merged += merged.size();
}

//===----------------------------------------------------------------------===//
// Ordering the parts: a list scheduler over the cost model
//===----------------------------------------------------------------------===//

/// Orders `block`'s ops (see BatchSplit.h). Collectives are modelled on one
/// FIFO stream per group, compute on one stream, both uncontended.
static void listSchedule(Block &block, OpTimer &timer, int64_t parts) {
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    if (!op.hasTrait<OpTrait::IsTerminator>())
      ops.push_back(&op);
  size_t n = ops.size();
  llvm::DenseMap<Operation *, unsigned> index;
  for (auto [i, op] : llvm::enumerate(ops))
    index[op] = i;

  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> dur(n), rank(n, inf), finish(n, 0), readyAt(n, 0);
  std::vector<unsigned> missing(n, 0);
  std::vector<SmallVector<unsigned>> users(n);
  std::vector<bool> isComm(n), done(n, false);
  for (auto [i, op] : llvm::enumerate(ops)) {
    dur[i] = timer.timeUs(op);
    isComm[i] = isa<CollectiveOpInterface>(op);
    llvm::SmallPtrSet<Operation *, 4> preds;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp();
          def && index.count(def) && preds.insert(def).second) {
        users[index[def]].push_back(i);
        ++missing[i];
      }
  }
  // Rank: compute time from the op to the nearest collective downstream.
  for (size_t j = n; j-- > 0;) {
    if (isComm[j])
      continue;
    double best = inf;
    for (unsigned u : users[j])
      best = std::min(best, isComm[u] ? 0.0 : rank[u]);
    rank[j] = best == inf ? inf : best + dur[j];
  }

  // Compute ops whose inputs are ready, by (ready time, rank, position);
  // those that can start when the compute stream frees move to
  // `available`, by (rank, position).
  std::set<std::tuple<double, double, unsigned>> waiting;
  std::set<std::pair<double, unsigned>> available;
  // Collectives whose input is ready, by input position.
  std::set<unsigned> readyComm;
  for (size_t i = 0; i < n; ++i)
    if (missing[i] == 0) {
      if (isComm[i])
        readyComm.insert(i);
      else
        waiting.insert({readyAt[i], rank[i], unsigned(i)});
    }
  llvm::StringMap<double> commFree;
  double computeFree = 0;
  // Highest position scheduled: a collective is not issued more than
  // `slack` ops ahead of it (the parts of one input op and their slices), so
  // that a collective the input issues late (a wgrad's re-gather) is not
  // moved early by the readiness of its input alone.
  unsigned frontier = 0;
  const unsigned slack = 4 * parts + 2;
  SmallVector<unsigned> order;
  order.reserve(n);

  auto complete = [&](unsigned i, double end) {
    finish[i] = end;
    done[i] = true;
    order.push_back(i);
    // Gap fillers (ops that feed no collective) run early by design: they
    // do not move the frontier. Nor does an op that runs more than `slack`
    // ahead of it (a backward op whose inputs the forward already holds,
    // e.g. the token-order concat of a sequence's attention outputs): the
    // collectives near it in the input stay where the input has them.
    if ((isComm[i] || rank[i] != inf) && i <= frontier + slack)
      frontier = std::max(frontier, i);
    for (unsigned u : users[i]) {
      readyAt[u] = std::max(readyAt[u], end);
      if (--missing[u] == 0) {
        if (isComm[u])
          readyComm.insert(u);
        else
          waiting.insert({readyAt[u], rank[u], u});
      }
    }
  };
  // Collectives whose input is ready, not ahead of the frontier, in input
  // order (every rank computes the same order): the first of the ready
  // ones while it is within the slack (the later ones are further ahead).
  auto issueCollectives = [&] {
    while (!readyComm.empty() && *readyComm.begin() <= frontier + slack) {
      unsigned i = *readyComm.begin();
      readyComm.erase(readyComm.begin());
      auto c = cast<CollectiveOpInterface>(ops[i]);
      StringRef group = c.getGroupAttr().getValue();
      double &free = commFree[group];
      double start = std::max(readyAt[i], free);
      free = start + dur[i];
      complete(i, free);
    }
  };

  while (order.size() < n) {
    issueCollectives();
    if (available.empty() && waiting.empty()) {
      // Only collectives ahead of the frontier remain ready: take the next.
      assert(!readyComm.empty() && "the block is acyclic");
      frontier = *readyComm.begin() - slack;
      continue;
    }
    while (!waiting.empty() && std::get<0>(*waiting.begin()) <= computeFree) {
      auto [at, r, i] = *waiting.begin();
      waiting.erase(waiting.begin());
      available.insert({r, i});
    }
    // Among the ops that can start first (when the compute stream frees,
    // or else at the earliest ready time): the nearest to a collective, then
    // input order. So an op that feeds no collective (a wgrad, rank
    // infinite) runs only while every op on the way to a collective waits
    // (for a collective's result). The wgrad may outlast the gap; its
    // excess is compute the step runs anyway, and idling until the gap ends
    // would only push it to the end of the step, where no collective is
    // left to hide under and AG-WGRAD finds no later window to move it
    // into.
    unsigned pick;
    double start;
    if (!available.empty()) {
      pick = available.begin()->second;
      start = computeFree;
      available.erase(available.begin());
    } else {
      pick = std::get<2>(*waiting.begin());
      start = std::get<0>(*waiting.begin());
      waiting.erase(waiting.begin());
    }
    double end = start + dur[pick];
    computeFree = end;
    complete(pick, end);
  }

  Operation *terminator = block.getTerminator();
  for (unsigned i : order)
    ops[i]->moveBefore(terminator);
  // Free ops (views, in-place concats) sit right before their first user:
  // placed early they would only make the stream wait, for the collective
  // they read, sooner than a real consumer needs it. (Positions from an
  // index that follows the moves: Operation::isBeforeInBlock renumbers the
  // block after each move.)
  PositionIndex pos(block);
  for (unsigned i : llvm::reverse(order)) {
    Operation *op = ops[i];
    if (dur[i] != 0 || isComm[i] || op->use_empty())
      continue;
    Operation *first = nullptr;
    for (Operation *user : op->getUsers())
      if (!first || pos.isBefore(user, first))
        first = user;
    if (first && op->getNextNode() != first) {
      op->moveBefore(first);
      pos.moved(op);
    }
  }
}

//===----------------------------------------------------------------------===//
// Choosing the part count
//===----------------------------------------------------------------------===//

/// Why `func` cannot be split, or an empty string.
static std::string notSplittable(func::FuncOp func) {
  if (func.isExternal())
    return "it has no body";
  if (!func.getBody().hasOneBlock())
    return "it has more than one block";
  for (Operation &op : func.getBody().front()) {
    if (auto c = dyn_cast<CollectiveOpInterface>(op); c && c.isAsync())
      return "it already has asynchronous collectives (split before "
             "tandem-async-collectives)";
    for (NamedAttribute attr : op.getAttrs())
      if (attr.getName().strref().starts_with("tandem."))
        return "it is already scheduled (" + attr.getName().str() + " on " +
               describe(&op) + ")";
  }
  return "";
}

/// Splits `func`'s body into parts of `weights` and orders it.
static BatchSplitResult rewrite(func::FuncOp func, ArrayRef<int64_t> weights,
                                OpTimer &timer) {
  Splitter splitter(func.getBody().front(), weights);
  splitter.run();
  int64_t parts = weights.size();
  listSchedule(func.getBody().front(), timer, parts);
  splitter.stats.parts = parts;
  splitter.stats.weights.assign(weights.begin(), weights.end());
  return splitter.stats;
}

/// The row-local ops of `block` whose row operands divide into `units`.
static unsigned countSplittable(Block &block, int64_t units) {
  unsigned n = 0;
  for (Operation &op : block)
    if (std::optional<RowSplitRule> rule = getRowSplitRule(&op))
      if (llvm::all_of(rule->rowOperands, [&](unsigned i) {
            return canCutRows(op.getOperand(i).getType(), units, 1);
          }))
        ++n;
  return n;
}

//===----------------------------------------------------------------------===//
// Wave-aware part sizes
//===----------------------------------------------------------------------===//

/// The units uneven parts are made of: the blocks of the program's row
/// slices (its sequences or causal segments, `slice dim 0 chunk c of n`),
/// so that every part holds whole ones and their attention runs on one
/// part; `fine` where the program has none (its rows are cut freely); 0
/// where their least common multiple passes kMaxWeightSum (no uneven
/// parts).
static int64_t layoutUnits(Block &block, int64_t fine) {
  int64_t units = 0;
  for (auto slice : block.getOps<SliceOp>()) {
    int64_t chunks = slice.getChunks();
    if (slice.getDim() != 0 || slice.getWeights() || chunks <= 1)
      continue;
    if (!units) {
      units = chunks;
      continue;
    }
    int64_t g = std::gcd(units, chunks);
    if (units / g > kMaxWeightSum / chunks)
      return 0;
    units = units / g * chunks;
  }
  return units ? units : fine;
}

/// Every way to write `units` as `k` weights in [lo, hi], at most `limit`
/// (in lexicographic order).
static void compositions(int64_t units, int64_t k, int64_t lo, int64_t hi,
                         size_t limit,
                         SmallVectorImpl<SmallVector<int64_t>> &out) {
  SmallVector<int64_t> w;
  std::function<void(int64_t)> rec = [&](int64_t left) {
    if (out.size() >= limit)
      return;
    int64_t rest = k - 1 - int64_t(w.size());
    if (rest == 0) {
      if (left >= lo && left <= hi) {
        w.push_back(left);
        out.push_back(w);
        w.pop_back();
      }
      return;
    }
    // Leave the others room for at least lo and at most hi each.
    for (int64_t x = std::max(lo, left - rest * hi);
         x <= std::min(hi, left - rest * lo); ++x) {
      w.push_back(x);
      rec(left - x);
      w.pop_back();
    }
  };
  rec(units);
}

namespace {
/// The row-local GEMMs (fprop and dgrad: the ops whose rows the parts
/// divide) of a block, and their parts' times on the SMs a native
/// collective beside them leaves free, each priced once per GEMM shape and
/// part size.
class PartGemms {
public:
  PartGemms(Block &block, int64_t units, const CostModel &model)
      : units(units), model(model),
        freeSms(std::max<int64_t>(1, model.gpu().smCount -
                                         model.gpu().collectiveSms)) {
    for (auto mm : block.getOps<MatmulOp>()) {
      if (mm.getTransposeLhs() || !canCutRows(mm.getLhs().getType(), units, 1))
        continue;
      ComputeCostInputs in = ComputeCostInputs::of(mm);
      if (!in.gemmShape)
        continue;
      auto alike = llvm::find_if(shapes, [&](const ComputeCostInputs &s) {
        const GemmShape &a = *s.gemmShape, &b = *in.gemmShape;
        return a.batch == b.batch && a.m == b.m && a.n == b.n && a.k == b.k &&
               s.elementType == in.elementType && s.flops == in.flops &&
               s.bytes == in.bytes && s.measuredScale == in.measuredScale;
      });
      order.push_back(alike - shapes.begin());
      if (alike == shapes.end())
        shapes.push_back(in);
    }
  }

  /// The GEMMs' time cut into parts of `weights` (summing to `units`):
  /// what wave quantisation costs a split of these sizes. Infinity where a
  /// GEMM cannot be priced. (Summed GEMM by GEMM in program order.)
  double timeUs(ArrayRef<int64_t> weights) {
    double total = 0;
    for (unsigned shape : order)
      for (int64_t w : weights) {
        std::optional<double> us = partUs(shape, w);
        if (!us)
          return std::numeric_limits<double>::infinity();
        total += *us;
      }
    return total;
  }

private:
  /// The part of `w` units of a GEMM of shape `shape`.
  std::optional<double> partUs(unsigned shape, int64_t w) {
    auto [it, inserted] = memo.try_emplace({shape, w});
    if (!inserted)
      return it->second;
    const ComputeCostInputs &whole = shapes[shape];
    ComputeCostInputs part = whole;
    part.gemmShape->m = whole.gemmShape->m / units * w;
    part.flops = whole.flops / units * w;
    part.bytes = whole.bytes / units * w;
    std::string error;
    std::optional<ComputeEstimate> e = model.compute(part, error, freeSms);
    std::optional<double> us;
    if (e)
      us = e->timeUs;
    return memo[{shape, w}] = us;
  }

  int64_t units;
  const CostModel &model;
  int64_t freeSms;
  /// Distinct GEMMs, and each row-local GEMM's index among them.
  SmallVector<ComputeCostInputs> shapes;
  SmallVector<unsigned> order;
  llvm::DenseMap<std::pair<unsigned, int64_t>, std::optional<double>> memo;
};
} // namespace

/// The uneven parts (whole layout units) whose GEMMs fill the waves best,
/// if they beat equal parts: `k` parts of `units`.
static std::optional<SmallVector<int64_t>>
waveAwareWeights(Block &block, int64_t k, int64_t units, const CostModel &model,
                 double &unevenUs, double &evenUs) {
  if (units <= k || units % k != 0)
    return std::nullopt;
  // Near-equal parts only (half to one and a half of an equal share): the
  // parts hide each other's collectives, which lopsided ones do not; the
  // simulation judges the one chosen here.
  int64_t share = units / k;
  SmallVector<SmallVector<int64_t>> all;
  compositions(units, k, (share + 1) / 2, share * 3 / 2, /*limit=*/1024, all);
  SmallVector<int64_t> equal(k, share);
  PartGemms gemms(block, units, model);
  evenUs = gemms.timeUs(equal);
  std::optional<SmallVector<int64_t>> best;
  unevenUs = std::numeric_limits<double>::infinity();
  for (const SmallVector<int64_t> &w : all) {
    if (w == equal)
      continue;
    double us = gemms.timeUs(w);
    if (us < unevenUs) {
      unevenUs = us;
      best = w;
    }
  }
  if (!best || !(unevenUs < evenUs * (1 - 1e-6)))
    return std::nullopt;
  return best;
}

/// "[1, 3]".
static std::string weightsText(ArrayRef<int64_t> weights) {
  std::string text = "[";
  for (auto [i, w] : llvm::enumerate(weights))
    text += (i ? ", " : "") + std::to_string(w);
  return text + "]";
}

FailureOr<BatchSplitResult>
mlir::tandem::splitBatch(func::FuncOp func, OpTimer &timer,
                         const BatchSplitOptions &options) {
  BatchSplitResult result;
  result.notApplicable = notSplittable(func);
  // Forced weights in lowest terms ([2, 2] is two equal parts): the fewer
  // units, the more layouts they divide.
  SmallVector<int64_t> forcedWeights(options.weights);
  if (!forcedWeights.empty()) {
    int64_t g = 0;
    for (int64_t w : forcedWeights)
      g = std::gcd(g, w);
    for (int64_t &w : forcedWeights)
      w /= g;
    if (llvm::all_of(forcedWeights, [](int64_t w) { return w == 1; }))
      forcedWeights.clear();
  }
  int64_t forcedParts =
      options.weights.empty() ? options.parts : int64_t(options.weights.size());
  if (!result.notApplicable.empty() || forcedParts == 1) {
    if (options.remarks && forcedParts != 1)
      options.remarks->remark(func.getLoc())
          << "batch split: '@" << func.getSymName()
          << "' left alone: " << result.notApplicable;
    return result;
  }
  Block &input = func.getBody().front();
  int64_t forcedUnits = 0;
  for (int64_t w : forcedWeights)
    forcedUnits += w;
  SmallVector<int64_t> counts;
  if (forcedParts > 1) {
    if (countSplittable(input,
                        forcedWeights.empty() ? forcedParts : forcedUnits) > 0)
      counts.push_back(forcedParts);
  } else {
    for (int64_t k : kSplitPartCandidates)
      if (countSplittable(input, k) > 0)
        counts.push_back(k);
  }
  if (counts.empty()) {
    result.notApplicable =
        "no row-local op has rows that divide into " +
        (forcedWeights.empty()
             ? std::to_string(forcedParts > 1 ? forcedParts
                                              : kSplitPartCandidates[0]) +
                   " parts"
             : "parts of weights " + weightsText(forcedWeights));
    if (options.remarks)
      options.remarks->remark(func.getLoc())
          << "batch split: '@" << func.getSymName()
          << "' left alone: " << result.notApplicable;
    return result;
  }

  // Causal attention over a whole sequence (not a slice of one, not a
  // causal segment): a barrier between the parts whatever the split.
  unsigned wholeSequenceAttentions = 0;
  for (Operation &op : input)
    if (auto attention = dyn_cast<AttentionOp>(op);
        attention && attention.getCausal() && !attention.getQueries() &&
        !attention.getQkv().getDefiningOp<SliceOp>())
      ++wholeSequenceAttentions;

  const CostModel &model = timer.costModel();

  // The candidates: equal parts of every count, and for 2 and 4 parts the
  // uneven sizes (whole units of the layout) whose GEMMs fill the waves
  // best on the SMs a collective leaves free, where those beat equal parts
  // (TokenWeave's idea; the simulation below decides).
  struct Try {
    SmallVector<int64_t> weights; ///< One each: equal parts.
    bool reordered = false;
  };
  SmallVector<Try> tries;
  if (forcedParts <= 1)
    tries.push_back({{1}, true});
  std::string waveNote;
  for (int64_t k : counts) {
    if (!forcedWeights.empty()) {
      tries.push_back({forcedWeights, false});
      continue;
    }
    tries.push_back({SmallVector<int64_t>(k, 1), false});
    if (forcedParts > 1 || k > 4 || !options.waveAware)
      continue;
    int64_t units = layoutUnits(input, /*fine=*/4 * k);
    if (units == 0) {
      waveNote += llvm::formatv("; no uneven {0} parts: the program's row "
                                "slices have no common unit count up to {1}",
                                k, kMaxWeightSum)
                      .str();
      continue;
    }
    // Uneven parts must not leave an op whole that equal parts split.
    if (countSplittable(input, units) < countSplittable(input, k)) {
      waveNote += llvm::formatv("; no uneven {0} parts: {1} units would leave "
                                "ops whole that {0} equal parts split",
                                k, units)
                      .str();
      continue;
    }
    if (units <= k || units % k != 0) {
      waveNote += llvm::formatv("; no uneven {0} parts: the layout has {1} "
                                "unit(s) (sequences or causal segments)",
                                k, units)
                      .str();
      continue;
    }
    double unevenUs = 0, evenUs = 0;
    if (std::optional<SmallVector<int64_t>> w =
            waveAwareWeights(input, k, units, model, unevenUs, evenUs)) {
      tries.push_back({*w, false});
      waveNote +=
          llvm::formatv("; parts {0} of {1} units fill the GEMM "
                        "waves better than equal parts (row-local "
                        "GEMMs {2} against {3})",
                        weightsText(*w), units, us(unevenUs), us(evenUs))
              .str();
    } else {
      waveNote += llvm::formatv("; {0} equal parts fill the GEMM waves at "
                                "least as well as any near-equal grouping of "
                                "{1} units",
                                k, units)
                      .str();
    }
  }

  MemoryBudget guard(input, options.memoryBudget);
  // Each candidate (and the input, k = 1) is built in the function itself
  // from a saved copy of its body (no symbol is inserted: `auto` runs this
  // on several candidates in parallel), judged after async collectives and
  // bulk overlap, the phases every strategy runs next (and the copy-engine
  // assignment when the strategy has it).
  Region saved;
  {
    IRMapping mapping;
    func.getBody().cloneInto(&saved, mapping);
  }
  auto restore = [&] {
    Region body;
    IRMapping mapping;
    saved.cloneInto(&body, mapping);
    func.getBody().takeBody(body);
  };
  // A candidate: parts of `weights`, or (one part, `reordered`) the input's
  // own independent chains (micro-batches) interleaved by the list
  // scheduler.
  auto build = [&](const Try &t) -> BatchSplitResult {
    if (t.weights.size() > 1)
      return rewrite(func, t.weights, timer);
    if (t.reordered)
      listSchedule(func.getBody().front(), timer, 1);
    BatchSplitResult r;
    r.reordered = t.reordered;
    return r;
  };
  auto judge = [&](const Try &t) -> FailureOr<BatchSplitCandidate> {
    restore();
    BatchSplitCandidate c;
    c.parts = t.weights.size();
    if (llvm::any_of(t.weights, [&](int64_t w) { return w != t.weights[0]; }))
      c.weights = t.weights;
    c.reordered = t.reordered;
    build(t);
    if (std::optional<int64_t> over = guard.exceeded(func.getBody().front())) {
      c.overBudget = true;
      c.peakBytes = *over;
    }
    convertToAsyncCollectives(func);
    BulkOverlapOptions bulk;
    bulk.maxInFlight = options.maxInFlight;
    bulk.memoryBudget = options.memoryBudget;
    bulkOverlap(func, timer, bulk);
    if (options.judgeWithBudgets) {
      OverlapOptions phases;
      phases.memoryBudget = options.memoryBudget;
      phases.maxInFlight = options.maxInFlight;
      phases.copyEngines = options.copyEngines;
      assignCtaBudgets(func, timer, phases);
    } else if (options.copyEngines) {
      CopyEngineOptions ce;
      ce.memoryBudget = options.memoryBudget;
      if (failed(assignCopyEngines(func, model, ce)))
        return failure();
    }
    FailureOr<SimulationReport> report =
        simulateFunction(func, model, /*spanOnly=*/true);
    if (failed(report))
      return failure();
    c.spanUs = report->spanUs;
    return c;
  };
  llvm::scope_exit restoreOnExit(restore);

  FailureOr<BatchSplitCandidate> unsplit = judge({{1}, false});
  if (failed(unsplit))
    return failure();
  result.candidates.push_back(*unsplit);
  for (const Try &t : tries) {
    FailureOr<BatchSplitCandidate> c = judge(t);
    if (failed(c))
      return failure();
    result.candidates.push_back(*c);
  }
  const BatchSplitCandidate *best = &result.candidates.front();
  // A forced split is applied (within the budget); otherwise the fastest
  // candidate within the budget.
  for (const BatchSplitCandidate &c : result.candidates)
    if (!c.overBudget &&
        (forcedParts > 1 ? c.parts == forcedParts
                         : c.spanUs < best->spanUs * (1 - 1e-9)))
      best = &c;

  int64_t chosen = best->parts;
  Try applied{best->weights.empty() ? SmallVector<int64_t>(chosen, 1)
                                    : best->weights,
              best->reordered};
  restoreOnExit.release();
  restore();
  {
    BatchSplitResult r = build(applied);
    r.candidates = std::move(result.candidates);
    result = std::move(r);
  }
  if (!options.remarks)
    return result;

  auto describeCandidate = [](const BatchSplitCandidate &c) {
    if (c.parts == 1)
      return std::string(c.reordered ? "1 part reordered" : "1 part");
    if (!c.weights.empty())
      return std::to_string(c.parts) + " parts " + weightsText(c.weights);
    return std::to_string(c.parts) + " parts";
  };
  Diagnostic &remark = options.remarks->remark(func.getLoc());
  remark << "batch split: '@" << func.getSymName() << "' ";
  if (result.parts > 1)
    remark << "split into " << result.parts << " parts"
           << (best->weights.empty()
                   ? std::string()
                   : " of sizes " + weightsText(best->weights))
           << ": " << result.splitOps << " op(s) run as parts, "
           << result.barriers
           << " take assembled operands (not row-local: attention, opaque "
              "kernels, wgrad contractions), "
           << result.onParts
           << " run whole on one part (a sequence's or a causal segment's "
              "attention), "
           << result.seenThrough
           << " slice(s)/concat(s) of sequences seen through, "
           << result.assemblies << " concat(s), " << result.slices
           << " slice(s), " << result.partialSums
           << " weight-gradient addition(s)";
  if (result.parts > 1 && result.merged > 0)
    remark << ", " << result.merged
           << " repeated concat(s)/slice(s) merged into the first";
  else if (result.reordered)
    remark << "left unsplit, its ops reordered by the list scheduler "
              "(independent chains such as micro-batches interleaved)";
  else if (result.parts == 1)
    remark << "left unsplit";
  remark << "; predicted span with bulk overlap:";
  for (const BatchSplitCandidate &c : result.candidates) {
    remark << " " << describeCandidate(c) << " " << us(c.spanUs);
    if (c.overBudget)
      remark << " (peak " << c.peakBytes << " bytes, over the memory budget "
             << guard.budget() << ")";
    remark << ";";
  }
  remark << " chose " << chosen
         << (best->weights.empty() ? std::string()
                                   : " " + weightsText(best->weights))
         << (best->reordered && chosen == 1 ? " reordered" : "");
  if (chosen == 1 && !best->reordered)
    remark << (forcedParts > 1 ? " (the split is over the memory budget)"
                               : " (no split is faster)");
  else if (!forcedWeights.empty())
    remark << " (weights=" << weightsText(options.weights) << ")";
  else if (forcedParts > 1)
    remark << " (parts=" << forcedParts << ")";
  remark << waveNote;
  if (wholeSequenceAttentions > 0)
    remark << "; " << wholeSequenceAttentions
           << " causal attention(s) over a whole sequence stay barriers "
              "between the parts (a sequence laid out in causal segments, "
              "tandem-gen --segments, splits there too)";
  return result;
}
