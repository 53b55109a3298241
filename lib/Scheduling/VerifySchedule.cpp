//===- VerifySchedule.cpp - Prove a scheduled function safe ---------------===//

#include "tandem/Scheduling/VerifySchedule.h"
#include "tandem/Analysis/CostModel.h"
#include "tandem/Scheduling/RowSplit.h"
#include "tandem/Scheduling/Schedule.h"
#include "tandem/Scheduling/Streams.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/ThreadPool.h"

#include <map>
#include <numeric>
#include <optional>
#include <string>

using namespace mlir;
using namespace mlir::tandem;

//===----------------------------------------------------------------------===//
// Structural hashing
//===----------------------------------------------------------------------===//

namespace {
/// Hashes every value of a single-block function by what it computes: the
/// op, its attributes except the `tandem.`-prefixed scheduling ones, its
/// result types and, recursively, its operands; arguments by position and
/// type. A blocking collective hashes as its `_start` form, and a wait's
/// result as the future of its `_start`, so converting a collective to
/// start/wait and moving ops changes no hash. Hashes are only comparable
/// within one MLIRContext (attributes and types hash by identity).
class StructuralHasher {
public:
  /// A relayout in the reference: the concat, with interleave `to`, of the
  /// `parts` parts of a value cut with interleave `from` (a sequence's
  /// gradient in token order back into the gathered layout). Keyed by that
  /// value's hash, the part count and `from`; the relayout's hash and `to`.
  using Relayouts = std::map<std::tuple<size_t, int64_t, int64_t>,
                             std::pair<size_t, int64_t>>;

  /// `relayouts`: those of the reference, when hashing a program compared
  /// with it: a part of such a value is then also the same part of the
  /// relayout (which a batch split reads directly, without the concat).
  explicit StructuralHasher(Block &block, const Relayouts *relayouts = nullptr)
      : knownRelayouts(relayouts) {
    for (BlockArgument arg : block.getArguments())
      hashes[arg] = llvm::hash_combine(llvm::StringRef("arg"),
                                       arg.getArgNumber(), arg.getType());
    for (Operation &op : block) {
      if (auto wait = dyn_cast<WaitOp>(op)) {
        hashes[wait.getResult()] = lookup(wait.getFuture());
        // Copy before inserting: the insertion may grow the map and move
        // the entry `it` points to.
        if (auto it = partOf.find(wait.getFuture()); it != partOf.end()) {
          PartInfo info = it->second;
          partOf[wait.getResult()] = info;
        }
        continue;
      }
      // The assembly of a chunk pipeline hashes like the unsplit pair it
      // replaces, once its structure proves they compute the same value.
      if (std::optional<llvm::hash_code> h = pipelineHash(&op)) {
        hashes[op.getResult(0)] = *h;
        ++pipelines;
        continue;
      }
      // Batch splitting (tandem-split-batch): parts of rows, their
      // assemblies, wgrads of row-permuted operands and summed partials.
      if (splitHash(&op)) {
        ++splits;
        continue;
      }
      llvm::hash_code opHash = localKey(&op);
      for (Value operand : op.getOperands())
        opHash = llvm::hash_combine(opHash, lookup(operand));
      for (OpResult result : op.getResults()) {
        hashes[result] = llvm::hash_combine(opHash, result.getResultNumber());
        notePermutedRelayout(result);
      }
    }
  }

  /// A value whose reference relayout cut it in token order (interleave 1)
  /// is that relayout with its rows permuted by the relayout's cut: a wgrad
  /// may read it where the reference read the relayout (contractionHash).
  void notePermutedRelayout(Value value) {
    if (!knownRelayouts)
      return;
    size_t hash = lookup(value);
    for (const auto &[key, relayout] : *knownRelayouts)
      if (std::get<0>(key) == hash && std::get<2>(key) == 1) {
        permuted[value] =
            Permutation{llvm::hash_code(relayout.first),
                        evenCut(std::get<1>(key), relayout.second)};
        return;
      }
  }

  /// The hash the generic rule gives a one-result op with these parts.
  static llvm::hash_code synthetic(StringRef name, DictionaryAttr attrs,
                                   ArrayRef<llvm::hash_code> operands,
                                   Type resultType) {
    llvm::hash_code hash =
        llvm::hash_combine(name.str(), attrs, unsigned(operands.size()));
    hash = llvm::hash_combine(hash, resultType);
    for (llvm::hash_code operand : operands)
      hash = llvm::hash_combine(hash, operand);
    return llvm::hash_combine(hash, 0u);
  }

  /// The collective behind `value` (looking through a wait), or null.
  static Operation *collectiveBehind(Value value) {
    if (auto wait = value.getDefiningOp<WaitOp>())
      value = wait.getFuture();
    Operation *def = value.getDefiningOp();
    return def && isa<CollectiveOpInterface>(def) ? def : nullptr;
  }

  static RankedTensorType withRows(Type type, int64_t rows) {
    auto t = cast<RankedTensorType>(type);
    SmallVector<int64_t> shape(t.getShape());
    shape[0] = rows;
    return RankedTensorType::get(shape, t.getElementType());
  }

  /// The unsplit all-gather (along dimension 0, on `group`) of `source`.
  llvm::hash_code gatheredHash(Value source, FlatSymbolRefAttr group,
                               int64_t size) const {
    MLIRContext *ctx = source.getContext();
    Builder b(ctx);
    DictionaryAttr attrs =
        b.getDictionaryAttr({b.getNamedAttr("dim", b.getI64IntegerAttr(0)),
                             b.getNamedAttr("group", group)});
    auto shard = cast<RankedTensorType>(source.getType());
    return synthetic("tandem.all_gather_start", attrs, {lookup(source)},
                     withRows(shard, shard.getShape()[0] * size));
  }

  /// If `concat` reassembles a GEMM that tandem-reschedule-wgrad split along
  /// its output rows (GEMM j reads chunk j of n of one `lhs` along the
  /// dimension that gives op(lhs)'s rows, every GEMM shares the other operand
  /// and the attributes), the hash of the unsplit GEMM.
  std::optional<llvm::hash_code> rowSplitHash(ConcatOp concat) const {
    if (concat.getDim() != 0 || concat.getInterleave() != 1)
      return std::nullopt;
    MatmulOp first;
    Value source;
    for (auto [j, input] : llvm::enumerate(concat.getInputs())) {
      auto mm = input.getDefiningOp<MatmulOp>();
      if (!mm || (first && (semanticAttrs(mm) != semanticAttrs(first) ||
                            mm.getRhs() != first.getRhs())))
        return std::nullopt;
      auto slice = mm.getLhs().getDefiningOp<SliceOp>();
      int64_t rowDim = mm.getTransposeLhs() ? 1 : 0;
      if (!slice || int64_t(slice.getDim()) != rowDim || slice.getWeights() ||
          int64_t(slice.getChunk()) != int64_t(j) ||
          int64_t(slice.getChunks()) != int64_t(concat.getInputs().size()) ||
          slice.getInterleave() != 1 || (source && slice.getInput() != source))
        return std::nullopt;
      first = first ? first : mm;
      source = slice.getInput();
    }
    if (!first)
      return std::nullopt;
    // Halves of a batch split's wgrad read row-permuted operands: the
    // unsplit wgrad reads the values they permute (contractionHash).
    llvm::hash_code lhsHash = lookup(source), rhsHash = lookup(first.getRhs());
    auto l = permuted.find(source), r = permuted.find(first.getRhs());
    if (l != permuted.end() && r != permuted.end() &&
        l->second.cut == r->second.cut) {
      lhsHash = l->second.whole;
      rhsHash = r->second.whole;
    }
    return synthetic("tandem.matmul", semanticAttrs(first), {lhsHash, rhsHash},
                     concat.getType());
  }

  /// If `op` assembles a pipeline that tandem-pipeline-collective-matmul
  /// builds, the hash of the unsplit computation; std::nullopt otherwise.
  std::optional<llvm::hash_code> pipelineHash(Operation *op) const {
    auto concat = dyn_cast<ConcatOp>(op);
    auto ring = dyn_cast<RingConcatOp>(op);
    if ((!concat && !ring) || (concat ? concat.getDim() : ring.getDim()) != 0)
      return std::nullopt;
    ValueRange inputs = concat ? concat.getInputs() : ring.getInputs();
    int64_t n = inputs.size();
    Type resultType = op->getResult(0).getType();
    if (concat)
      if (std::optional<llvm::hash_code> split = rowSplitHash(concat))
        return split;

    // Inputs that are matmuls sharing everything but their row operand.
    SmallVector<Value> rowOperands;
    MatmulOp first;
    for (Value v : inputs) {
      auto mm = v.getDefiningOp<MatmulOp>();
      if (!mm || mm.getTransposeLhs() ||
          (first && (semanticAttrs(mm) != semanticAttrs(first) ||
                     mm.getRhs() != first.getRhs())))
        break;
      if (!first)
        first = mm;
      rowOperands.push_back(mm.getLhs());
    }
    bool products = int64_t(rowOperands.size()) == n;
    ValueRange pieces = products ? ValueRange(rowOperands) : inputs;

    auto groupSize = [&](FlatSymbolRefAttr group) -> int64_t {
      GroupOp g = lookupGroup(op, group);
      return g ? int64_t(g.getSize()) : -1;
    };
    auto asProduct = [&](llvm::hash_code gathered, Type gatheredType) {
      if (!products)
        return gathered;
      (void)gatheredType;
      return synthetic("tandem.matmul", semanticAttrs(first),
                       {gathered, lookup(first.getRhs())}, resultType);
    };

    if (ring) {
      // Ring: piece k is the source permuted k times by one rank.
      if (n != groupSize(ring.getGroupAttr()))
        return std::nullopt;
      Value source = pieces[0];
      for (int64_t k = 1; k < n; ++k) {
        Operation *c = collectiveBehind(pieces[k]);
        auto permute = dyn_cast_or_null<PermuteOp>(c);
        auto permuteStart = dyn_cast_or_null<PermuteStartOp>(c);
        Value in = permute        ? permute.getInput()
                   : permuteStart ? permuteStart.getInput()
                                  : Value();
        int64_t shift = permute        ? int64_t(permute.getShift())
                        : permuteStart ? int64_t(permuteStart.getShift())
                                       : 0;
        auto group = permute        ? permute.getGroupAttr()
                     : permuteStart ? permuteStart.getGroupAttr()
                                    : FlatSymbolRefAttr();
        if (!in || shift != 1 || group != ring.getGroupAttr() ||
            in != pieces[k - 1])
          return std::nullopt;
      }
      return asProduct(gatheredHash(source, ring.getGroupAttr(), n),
                       resultType);
    }

    int64_t interleave = concat.getInterleave();
    // Chunked all-gather: piece j gathers chunk j of one shard.
    Value source;
    FlatSymbolRefAttr group;
    bool gathers = true;
    for (auto [j, piece] : llvm::enumerate(pieces)) {
      Operation *c = collectiveBehind(piece);
      auto collective = dyn_cast_or_null<CollectiveOpInterface>(c);
      if (!collective ||
          collective.getCollectiveKind() != CollectiveKind::all_gather ||
          c->getAttrOfType<IntegerAttr>("dim").getInt() != 0) {
        gathers = false;
        break;
      }
      auto slice = collective.getInput().getDefiningOp<SliceOp>();
      if (!slice || slice.getDim() != 0 || slice.getWeights() ||
          slice.getChunk() != j || int64_t(slice.getChunks()) != n ||
          slice.getInterleave() != 1 ||
          (source && slice.getInput() != source) ||
          (group && collective.getGroupAttr() != group)) {
        gathers = false;
        break;
      }
      source = slice.getInput();
      group = collective.getGroupAttr();
    }
    if (gathers && source && interleave == groupSize(group))
      return asProduct(gatheredHash(source, group, interleave), resultType);

    // Chunked reduce-scatter: input j reduce-scatters the product of the
    // rows every rank's chunk j covers.
    if (products || interleave != 1)
      return std::nullopt;
    Value rows;
    MatmulOp product;
    Operation *firstRs = nullptr;
    for (auto [j, input] : llvm::enumerate(inputs)) {
      Operation *c = collectiveBehind(input);
      auto collective = dyn_cast_or_null<CollectiveOpInterface>(c);
      if (!collective ||
          collective.getCollectiveKind() != CollectiveKind::reduce_scatter ||
          c->getAttrOfType<IntegerAttr>("dim").getInt() != 0 ||
          (firstRs && semanticAttrs(c) != semanticAttrs(firstRs)))
        return std::nullopt;
      auto mm = collective.getInput().getDefiningOp<MatmulOp>();
      if (!mm || mm.getTransposeLhs() ||
          (product && (semanticAttrs(mm) != semanticAttrs(product) ||
                       mm.getRhs() != product.getRhs())))
        return std::nullopt;
      auto slice = mm.getLhs().getDefiningOp<SliceOp>();
      int64_t size = groupSize(collective.getGroupAttr());
      if (!slice || slice.getDim() != 0 || slice.getWeights() ||
          slice.getChunk() != j || int64_t(slice.getChunks()) != n ||
          int64_t(slice.getInterleave()) != size ||
          (rows && slice.getInput() != rows))
        return std::nullopt;
      rows = slice.getInput();
      product = mm;
      firstRs = c;
    }
    if (!product)
      return std::nullopt;
    Type fullProduct =
        withRows(product.getType(), product.getType().getShape()[0] * n);
    llvm::hash_code mmHash =
        synthetic("tandem.matmul", semanticAttrs(product),
                  {lookup(rows), lookup(product.getRhs())}, fullProduct);
    return synthetic("tandem.reduce_scatter_start", semanticAttrs(firstRs),
                     {mmHash}, resultType);
  }

  /// A part of rows (RowSplit.h): which whole value, which units
  /// [begin, end) of `parts` equal units of every one of `interleave`
  /// groups (an equal part p of k is [p, p+1) of k; a part of uneven
  /// weights spans its weights' units). Kept in lowest terms (normalize), so
  /// that one range has one description however it was cut.
  struct PartInfo {
    llvm::hash_code whole;
    int64_t begin, end, parts, interleave;
  };
  /// A sum of some of the parts of a value that sums over rows: `mask` has
  /// bit u for each of `parts` units summed.
  struct PartialInfo {
    llvm::hash_code whole;
    llvm::BitVector mask;
    int64_t parts;
  };
  /// The most units a partial sum is tracked over.
  static constexpr int64_t kMaxPartialUnits = int64_t(1) << 16;
  static llvm::hash_code partialHash(const PartialInfo &info) {
    llvm::hash_code hash =
        llvm::hash_combine(llvm::StringRef("partial"), info.whole, info.parts);
    for (unsigned u : info.mask.set_bits())
      hash = llvm::hash_combine(hash, u);
    return hash;
  }
  /// Rows permuted: a concat (interleave 1) of every part of `whole` cut
  /// as `cut` describes (cutHash).
  struct Permutation {
    llvm::hash_code whole, cut;
  };
  static PartInfo normalize(PartInfo p) {
    int64_t g = std::gcd(std::gcd(p.begin, p.end), p.parts);
    if (g > 1) {
      p.begin /= g;
      p.end /= g;
      p.parts /= g;
    }
    return p;
  }
  /// `p` in units of `parts` (a multiple of p.parts).
  static PartInfo rescaled(PartInfo p, int64_t parts) {
    int64_t f = parts / p.parts;
    return PartInfo{p.whole, p.begin * f, p.end * f, parts, p.interleave};
  }
  /// The same units of one value cut with one interleave.
  static bool sameCut(const PartInfo &a, const PartInfo &b) {
    return a.whole == b.whole && a.begin == b.begin && a.end == b.end &&
           a.parts == b.parts && a.interleave == b.interleave;
  }
  /// Whether `a` and `b` are parts of one value cut with one interleave.
  static bool sameValueCut(const PartInfo &a, const PartInfo &b) {
    return a.whole == b.whole && a.interleave == b.interleave;
  }
  /// The hash of a value cut as `info` (also how slices hash).
  static llvm::hash_code partHash(const PartInfo &info) {
    return llvm::hash_combine(llvm::StringRef("part"), info.whole, info.begin,
                              info.end, info.parts, info.interleave);
  }
  /// A cut of the rows into blocks at `bounds` (units of `parts`, from 0 to
  /// `parts`) with `interleave`, in lowest terms.
  static llvm::hash_code cutHash(ArrayRef<int64_t> bounds, int64_t parts,
                                 int64_t interleave) {
    int64_t g = parts;
    for (int64_t x : bounds)
      g = std::gcd(g, x);
    llvm::hash_code hash =
        llvm::hash_combine(llvm::StringRef("cut"), parts / g, interleave);
    for (int64_t x : bounds)
      hash = llvm::hash_combine(hash, x / g);
    return hash;
  }
  static llvm::hash_code evenCut(int64_t parts, int64_t interleave) {
    SmallVector<int64_t> bounds;
    for (int64_t p = 0; p <= parts; ++p)
      bounds.push_back(p);
    return cutHash(bounds, parts, interleave);
  }
  /// The parts of `values` (each a part of one value cut with one
  /// interleave, following each other from `first`'s begin), in the units
  /// of their least common multiple; false where they are not.
  bool consecutiveParts(ValueRange values, SmallVectorImpl<PartInfo> &out) {
    out.clear();
    int64_t units = 1;
    for (Value v : values) {
      auto it = partOf.find(v);
      if (it == partOf.end() ||
          (!out.empty() && !sameValueCut(it->second, out.front())))
        return false;
      // The least common multiple, at most 2^20 (checked before it is
      // formed, so that it cannot overflow).
      int64_t g = std::gcd(units, it->second.parts);
      if (units / g > (int64_t(1) << 20) / it->second.parts)
        return false;
      units = units / g * it->second.parts;
      out.push_back(it->second);
    }
    for (PartInfo &p : out)
      p = rescaled(p, units);
    for (size_t j = 1; j < out.size(); ++j)
      if (out[j].begin != out[j - 1].end)
        return false;
    return !out.empty();
  }

  /// Hashes `op` by the batch-split rules; false if none applies.
  bool splitHash(Operation *op) {
    if (auto slice = dyn_cast<SliceOp>(op)) {
      if (slice.getDim() != 0)
        return false;
      int64_t units = slice.getWeightSum(), start = slice.getBlockStart(),
              size = slice.getBlockUnits(), interleave = slice.getInterleave();
      PartInfo info{lookup(slice.getInput()), start, start + size, units,
                    interleave};
      // Units [s, s+u) of W of part [b, e) of K (the same interleave) are
      // units [b W + s (e-b), b W + (s+u) (e-b)) of K W: the part's rows of
      // each of the interleave's groups are W units of (e-b) each.
      if (auto it = partOf.find(slice.getInput());
          it != partOf.end() && it->second.interleave == interleave) {
        const PartInfo &outer = it->second;
        int64_t span = outer.end - outer.begin;
        // Nested cuts multiply the units; past 2^40 the slice is hashed as
        // any op (no program a split builds nests that deep).
        if (outer.parts > (int64_t(1) << 40) / units)
          return false;
        info = PartInfo{outer.whole, outer.begin * units + start * span,
                        outer.begin * units + (start + size) * span,
                        outer.parts * units, interleave};
      }
      info = normalize(info);
      if (knownRelayouts)
        if (auto it = knownRelayouts->find(
                {size_t(info.whole), info.parts, info.interleave});
            it != knownRelayouts->end())
          info = PartInfo{llvm::hash_code(it->second.first), info.begin,
                          info.end, info.parts, it->second.second};
      partOf[slice.getResult()] = info;
      hashes[slice.getResult()] = partHash(info);
      return true;
    }
    if (auto concat = dyn_cast<ConcatOp>(op))
      return concatHash(concat);
    if (contractsRows(op))
      return contractionHash(op);
    if (auto add = dyn_cast<ElementwiseOp>(op);
        add && add.getKind() == ElementwiseKind::add && partialSumHash(add))
      return true;
    if (auto attention = dyn_cast<AttentionOp>(op);
        attention && attention.getQueries())
      return prefixAttentionHash(attention);
    std::optional<RowSplitRule> rule = getRowSplitRule(op);
    if (!rule)
      return perPartHash(op);
    // Every row operand a part of the same cut, no other operand a part.
    std::optional<PartInfo> cut;
    for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i) {
      auto it = partOf.find(op->getOperand(i));
      bool row = llvm::is_contained(rule->rowOperands, i);
      if (!row) {
        if (it != partOf.end())
          return false;
        continue;
      }
      if (it == partOf.end())
        return false;
      const PartInfo &p = it->second;
      if (cut && (cut->begin != p.begin || cut->end != p.end ||
                  cut->parts != p.parts || cut->interleave != p.interleave))
        return false;
      cut = p;
    }
    if (!cut)
      return false;
    std::optional<int64_t> interleave =
        getResultInterleave(*rule, cut->interleave);
    if (!interleave ||
        (!rule->partialResults.empty() && cut->parts > kMaxPartialUnits))
      return false;
    // The unsplit op: row results have parts / (end - begin) times the
    // rows.
    int64_t span = cut->end - cut->begin;
    for (unsigned r : rule->rowResults)
      if (cast<RankedTensorType>(resultTypes(op)[r]).getDimSize(0) *
              cut->parts % span !=
          0)
        return false;
    llvm::hash_code opHash = llvm::hash_combine(
        canonicalName(op), semanticAttrs(op), op->getNumOperands());
    for (auto [r, type] : llvm::enumerate(resultTypes(op)))
      opHash = llvm::hash_combine(
          opHash, llvm::is_contained(rule->rowResults, unsigned(r))
                      ? scaleRows(type, cut->parts, span)
                      : type);
    for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
      opHash = llvm::hash_combine(
          opHash, llvm::is_contained(rule->rowOperands, i)
                      ? partOf.find(op->getOperand(i))->second.whole
                      : lookup(op->getOperand(i)));
    for (OpResult result : op->getResults()) {
      unsigned r = result.getResultNumber();
      llvm::hash_code whole = llvm::hash_combine(opHash, r);
      if (llvm::is_contained(rule->rowResults, r)) {
        PartInfo info{whole, cut->begin, cut->end, cut->parts, *interleave};
        partOf[result] = info;
        hashes[result] = partHash(info);
      } else if (llvm::is_contained(rule->partialResults, r)) {
        llvm::BitVector mask(cut->parts);
        mask.set(cut->begin, cut->end);
        PartialInfo info{whole, mask, cut->parts};
        hashes[result] = partialHash(info);
        partialOf[result] = std::move(info);
      } else {
        hashes[result] =
            llvm::hash_combine(llvm::StringRef("opaque-part"), whole,
                               cut->begin, cut->end, cut->parts);
      }
    }
    return true;
  }

  /// An op that is not row-local (attention, an opaque kernel) whose
  /// operands are all the same part of one cut, one unit of it (in lowest
  /// terms): that part of the op applied part by part, a value defined as the
  /// concat of its parts with the cut's interleave. A sequence's attention in a
  /// program and in its split hashes the same way, and so do the row users of
  /// the sequences' join.
  bool perPartHash(Operation *op) {
    if (isa<CollectiveOpInterface>(op) || op->getNumOperands() == 0 ||
        op->getNumResults() == 0)
      return false;
    std::optional<PartInfo> cut;
    for (Value operand : op->getOperands()) {
      auto it = partOf.find(operand);
      if (it == partOf.end() ||
          (cut &&
           (cut->begin != it->second.begin || cut->end != it->second.end ||
            cut->parts != it->second.parts ||
            cut->interleave != it->second.interleave)))
        return false;
      cut = it->second;
    }
    // One unit of the cut only: the op run once per unit is a function of
    // the cut, but the op on several units at once (attention over three
    // sequences of an uneven part) is not that function's value on them.
    if (cut->end - cut->begin != 1)
      return false;
    for (Type type : op->getResultTypes())
      if (auto t = dyn_cast<RankedTensorType>(type); !t || t.getRank() == 0)
        return false;
    llvm::hash_code opHash = llvm::hash_combine(
        llvm::StringRef("per-part"), localKey(op), cut->parts, cut->interleave);
    for (Value operand : op->getOperands())
      opHash = llvm::hash_combine(opHash, partOf.find(operand)->second.whole);
    for (OpResult result : op->getResults()) {
      PartInfo info{llvm::hash_combine(opHash, result.getResultNumber()),
                    cut->begin, cut->end, cut->parts, cut->interleave};
      partOf[result] = info;
      hashes[result] = partHash(info);
    }
    return true;
  }

  /// A causal split of one sequence (tandem-gen --segments): attention with
  /// `queries(N)` over equal parts 0 .. g of one cut of a value X (part 0
  /// itself, or their concat along the rows in that order), N the rows of a
  /// part, is part g of one whole: the causal attention over X's rows taken
  /// in the order of its parts. Its parts then join (concatHash) like a
  /// sequence's attention outputs. An attention without `queries` is per
  /// part (perPartHash): the IR says which of the two part 0 is.
  bool prefixAttentionHash(AttentionOp attention) {
    SmallVector<Value> leaves;
    auto concat = attention.getQkv().getDefiningOp<ConcatOp>();
    if (concat && concat.getDim() == 0 && concat.getInterleave() == 1)
      leaves.append(concat.getInputs().begin(), concat.getInputs().end());
    else
      leaves.push_back(attention.getQkv());
    SmallVector<PartInfo> parts;
    if (!consecutiveParts(leaves, parts) || parts.front().begin != 0)
      return false;
    // Equal parts: leaf j is part j of parts / size.
    int64_t size = parts.front().end;
    if (llvm::any_of(
            parts, [&](const PartInfo &p) { return p.end - p.begin != size; }))
      return false;
    auto lastRows =
        cast<RankedTensorType>(leaves.back().getType()).getDimSize(0);
    if (attention.getQueryRows() != lastRows)
      return false;
    const PartInfo &first = parts.front();
    int64_t count = first.parts / size;
    llvm::hash_code whole = llvm::hash_combine(llvm::StringRef("causal-prefix"),
                                               localKey(attention), first.whole,
                                               count, first.interleave);
    PartInfo info =
        normalize(PartInfo{whole, int64_t(leaves.size()) - 1,
                           int64_t(leaves.size()), count, first.interleave});
    partOf[attention.getResult()] = info;
    hashes[attention.getResult()] = partHash(info);
    return true;
  }

  /// A concat of consecutive parts of one value: of every part with the
  /// parts' interleave it is that value; with interleave 1 (and another
  /// cut) it is its rows permuted by the cut (the parts' bounds); of some
  /// of them, with their interleave, it is the part they span.
  bool concatHash(ConcatOp concat) {
    if (concat.getDim() != 0)
      return false;
    SmallVector<PartInfo> parts;
    if (!consecutiveParts(concat.getInputs(), parts))
      return false;
    const PartInfo &first = parts.front();
    int64_t units = first.parts;
    if (first.begin != 0 || parts.back().end != units) {
      if (int64_t(concat.getInterleave()) != first.interleave)
        return false;
      PartInfo info = normalize(PartInfo{
          first.whole, first.begin, parts.back().end, units, first.interleave});
      partOf[concat.getResult()] = info;
      hashes[concat.getResult()] = partHash(info);
      return true;
    }
    if (int64_t(concat.getInterleave()) == first.interleave) {
      hashes[concat.getResult()] = first.whole;
      return true;
    }
    bool equal = llvm::all_of(parts, [&](const PartInfo &p) {
      return (p.end - p.begin) * int64_t(parts.size()) == units;
    });
    int64_t n = parts.size();
    if (concat.getInterleave() != 1) {
      // A relayout: hashed as any op, and remembered (see Relayouts).
      llvm::hash_code hash = localKey(concat);
      for (Value input : concat.getInputs())
        hash = llvm::hash_combine(hash, lookup(input));
      hash = llvm::hash_combine(hash, 0u);
      hashes[concat.getResult()] = hash;
      if (equal)
        relayouts[{size_t(first.whole), n, first.interleave}] = {
            size_t(hash), int64_t(concat.getInterleave())};
      return true;
    }
    SmallVector<int64_t> bounds{0};
    for (const PartInfo &p : parts)
      bounds.push_back(p.end);
    Permutation perm{first.whole, cutHash(bounds, units, first.interleave)};
    permuted[concat.getResult()] = perm;
    hashes[concat.getResult()] =
        llvm::hash_combine(llvm::StringRef("permuted"), perm.whole, perm.cut);
    return true;
  }

  /// A wgrad whose operands are the same row permutation of two values
  /// computes the wgrad of those values.
  bool contractionHash(Operation *op) {
    auto l = permuted.find(op->getOperand(0));
    auto r = permuted.find(op->getOperand(1));
    if (l == permuted.end() || r == permuted.end() ||
        l->second.cut != r->second.cut)
      return false;
    llvm::hash_code opHash = localKey(op);
    opHash = llvm::hash_combine(opHash, l->second.whole);
    opHash = llvm::hash_combine(opHash, r->second.whole);
    hashes[op->getResult(0)] = llvm::hash_combine(opHash, 0u);
    return true;
  }

  /// `mask` of `parts` units in units of `to` (a multiple of `parts`).
  static llvm::BitVector refined(const llvm::BitVector &mask, int64_t parts,
                                 int64_t to) {
    int64_t f = to / parts;
    llvm::BitVector out(to);
    for (unsigned u : mask.set_bits())
      out.set(u * f, (u + 1) * f);
    return out;
  }

  /// The sum of disjoint partials of one value; all of them are the value.
  bool partialSumHash(ElementwiseOp add) {
    auto a = partialOf.find(add.getInputs()[0]);
    auto b = partialOf.find(add.getInputs()[1]);
    if (a == partialOf.end() || b == partialOf.end() ||
        a->second.whole != b->second.whole)
      return false;
    if (a->second.parts > kMaxPartialUnits ||
        b->second.parts > kMaxPartialUnits)
      return false;
    int64_t units = std::lcm(a->second.parts, b->second.parts);
    if (units > kMaxPartialUnits)
      return false;
    llvm::BitVector am = refined(a->second.mask, a->second.parts, units);
    llvm::BitVector bm = refined(b->second.mask, b->second.parts, units);
    if (am.anyCommon(bm))
      return false;
    am |= bm;
    PartialInfo sum{a->second.whole, std::move(am), units};
    if (sum.mask.all()) {
      hashes[add.getResult()] = sum.whole;
      return true;
    }
    hashes[add.getResult()] = partialHash(sum);
    partialOf[add.getResult()] = std::move(sum);
    return true;
  }

  llvm::hash_code lookup(Value value) const {
    auto it = hashes.find(value);
    // Values defined outside the block (none in a verified single-block
    // function) hash by identity.
    if (it == hashes.end())
      return llvm::hash_value(value.getAsOpaquePointer());
    return it->second;
  }

  /// The name a collective is compared under: its `_start` form.
  static std::string canonicalName(Operation *op) {
    std::string name = op->getName().getStringRef().str();
    if (auto collective = dyn_cast<CollectiveOpInterface>(op))
      if (!collective.isAsync())
        name += "_start";
    return name;
  }

  /// The attributes that take part in the comparison.
  static DictionaryAttr semanticAttrs(Operation *op) {
    SmallVector<NamedAttribute> kept;
    for (NamedAttribute attr : op->getAttrDictionary())
      if (!attr.getName().strref().starts_with("tandem."))
        kept.push_back(attr);
    return DictionaryAttr::get(op->getContext(), kept);
  }

  /// Result types with futures replaced by the tensor they deliver.
  static SmallVector<Type> resultTypes(Operation *op) {
    SmallVector<Type> types;
    for (Type type : op->getResultTypes()) {
      if (auto future = dyn_cast<FutureType>(type))
        type = future.getValueType();
      types.push_back(type);
    }
    return types;
  }

  /// Everything about `op` except its operands.
  static llvm::hash_code localKey(Operation *op) {
    llvm::hash_code hash = llvm::hash_combine(
        canonicalName(op), semanticAttrs(op), op->getNumOperands());
    for (Type type : resultTypes(op))
      hash = llvm::hash_combine(hash, type);
    return hash;
  }

  /// The relayouts this program has (see Relayouts).
  Relayouts relayouts;
  /// Pipeline assemblies recognised (their values hash like unsplit pairs).
  unsigned pipelines = 0;
  /// Ops hashed by the batch-split rules.
  unsigned splits = 0;

private:
  const Relayouts *knownRelayouts = nullptr;
  llvm::DenseMap<Value, llvm::hash_code> hashes;
  llvm::DenseMap<Value, PartInfo> partOf;
  llvm::DenseMap<Value, Permutation> permuted;
  llvm::DenseMap<Value, PartialInfo> partialOf;
};
} // namespace

/// The future of a wait's result (which hashes like it); the value itself
/// otherwise.
static Value throughWait(Value value) {
  if (auto wait = value.getDefiningOp<WaitOp>())
    return wait.getFuture();
  return value;
}

static std::string describe(Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    os << "function argument #" << arg.getArgNumber();
    return text;
  }
  auto result = cast<OpResult>(value);
  Operation *op = result.getOwner();
  os << "'" << op->getName() << "'";
  if (op->getNumResults() > 1)
    os << " result #" << result.getResultNumber();
  return text;
}

namespace {
/// Where two values with different hashes first differ: walking down from
/// them through operands whose hashes differ, the first pair of values that
/// differ by themselves (op, attributes, result types or argument).
struct Divergence {
  Value scheduled, reference;
  std::string what;
};
} // namespace

static Divergence findDivergence(Value scheduled, Value reference,
                                 const StructuralHasher &sh,
                                 const StructuralHasher &rh) {
  while (true) {
    scheduled = throughWait(scheduled);
    reference = throughWait(reference);
    Divergence d{scheduled, reference, ""};
    auto sArg = dyn_cast<BlockArgument>(scheduled);
    auto rArg = dyn_cast<BlockArgument>(reference);
    if (sArg || rArg) {
      d.what = "here it is " + describe(scheduled) + ", in the reference " +
               describe(reference);
      return d;
    }
    auto sRes = cast<OpResult>(scheduled), rRes = cast<OpResult>(reference);
    Operation *s = sRes.getOwner(), *r = rRes.getOwner();
    std::string sName = StructuralHasher::canonicalName(s);
    std::string rName = StructuralHasher::canonicalName(r);
    if (sName != rName) {
      d.what = "here it is " + describe(scheduled) + ", in the reference " +
               describe(reference);
      return d;
    }
    DictionaryAttr sAttrs = StructuralHasher::semanticAttrs(s);
    DictionaryAttr rAttrs = StructuralHasher::semanticAttrs(r);
    if (sAttrs != rAttrs) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "'" << s->getName() << "' has attributes " << sAttrs
         << ", in the reference " << rAttrs;
      d.what = text;
      return d;
    }
    if (StructuralHasher::resultTypes(s) != StructuralHasher::resultTypes(r) ||
        s->getNumOperands() != r->getNumOperands() ||
        sRes.getResultNumber() != rRes.getResultNumber()) {
      d.what = "'" + s->getName().getStringRef().str() +
               "' has other operands or result types than in the reference";
      return d;
    }
    std::optional<unsigned> differing;
    for (unsigned i = 0, e = s->getNumOperands(); i < e; ++i)
      if (sh.lookup(s->getOperand(i)) != rh.lookup(r->getOperand(i))) {
        differing = i;
        break;
      }
    if (!differing) {
      d.what = "'" + s->getName().getStringRef().str() +
               "' differs from the reference";
      return d;
    }
    scheduled = s->getOperand(*differing);
    reference = r->getOperand(*differing);
  }
}

static Location locationOf(Value value) {
  if (Operation *op = value.getDefiningOp())
    return op->getLoc();
  return value.getLoc();
}

//===----------------------------------------------------------------------===//
// The verifier
//===----------------------------------------------------------------------===//

namespace {
class ScheduleVerifier {
public:
  ScheduleVerifier(func::FuncOp func, func::FuncOp reference,
                   const VerifyScheduleOptions &options)
      : func(func), reference(reference), options(options) {}

  LogicalResult run();

private:
  bool checkAttributes();
  void checkCollectiveProtocol();
  void checkOrdering();
  void checkIssueOrder();
  /// `scheduled` / `ref`: the two functions' hashes if already computed.
  void compareWithReference(std::optional<StructuralHasher> &scheduled,
                            std::optional<StructuralHasher> &ref);

  /// An error at `op`; the verifier fails.
  InFlightDiagnostic error(Operation *op) {
    failed = true;
    return op->emitError();
  }

  func::FuncOp func;
  func::FuncOp reference;
  const VerifyScheduleOptions &options;
  Block *block = nullptr;
  StreamMap streams;
  bool explicitSync = false;
  bool failed = false;
  unsigned crossStreamUses = 0;
  unsigned collectives = 0;
};
} // namespace

/// Checks the scheduling attributes' types and ranges. False if the ordering
/// checks cannot run.
bool ScheduleVerifier::checkAttributes() {
  FailureOr<StreamMap> map = computeStreams(func);
  if (::mlir::failed(map)) {
    failed = true;
    return false;
  }
  streams = std::move(*map);
  block = &func.getBody().front();
  explicitSync = hasStreamAttributes(func);

  // Types and ranges (an event or an explicit stream beyond the declared
  // count included) are the dialect's verifier's; what remains is what
  // depends on the streams computed for ops without an explicit one, and
  // events recorded twice.
  std::optional<int64_t> numStreams;
  if (auto attr = func->getAttrOfType<IntegerAttr>(kNumStreamsAttrName))
    numStreams = attr.getInt();

  bool usable = !failed;
  llvm::DenseMap<int64_t, Operation *> recorder;
  for (Operation &op : *block) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    int64_t stream = streams.lookup(&op);
    if (numStreams && stream >= *numStreams)
      error(&op) << "runs on stream " << stream << ", but '@"
                 << func.getSymName() << "' declares '" << kNumStreamsAttrName
                 << "' = " << *numStreams;

    if (std::optional<int64_t> event = getRecordEvent(&op)) {
      auto [it, inserted] = recorder.try_emplace(*event, &op);
      if (!inserted) {
        (error(&op) << "records event " << *event
                    << ", which another op records already")
                .attachNote(it->second->getLoc())
            << "event " << *event << " is recorded here first";
        usable = false;
      }
    }
  }
  return usable;
}

/// (b) Each `_start` is completed by one wait later in its block. The dialect
/// verifier and SSA dominance already guarantee this for verified IR; the
/// check stands for callers that run the verifier between rewrites.
void ScheduleVerifier::checkCollectiveProtocol() {
  for (Operation &op : *block) {
    auto collective = dyn_cast<CollectiveOpInterface>(&op);
    if (!collective || !collective.isAsync())
      continue;
    Operation *wait = getWaitOf(collective);
    if (!wait) {
      error(&op) << "'" << op.getName()
                 << "' is never waited on: its result is never delivered and "
                    "its input stays in use";
      continue;
    }
    if (wait->getBlock() != block || !op.isBeforeInBlock(wait))
      (error(wait) << "waits for a collective that is not issued before it "
                      "in its block")
              .attachNote(op.getLoc())
          << "the collective is issued here";
  }
}

/// (a) Every cross-stream use is ordered after its producer; waited events
/// were recorded before; (c) consecutive collectives of one group on
/// different streams are ordered.
void ScheduleVerifier::checkOrdering() {
  StreamClocks::Options clockOptions;
  clockOptions.waitCompletesCollective = true;
  clockOptions.implicitDataSync = !explicitSync;
  StreamClocks clocks(streams, clockOptions);
  llvm::DenseMap<Attribute, Operation *> lastCollectiveOf;

  for (Operation &op : *block) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    int64_t stream = streams.lookup(&op);
    clocks.enter(&op);

    if (auto events = op.getAttrOfType<DenseI64ArrayAttr>(kWaitEventsAttrName))
      for (int64_t event : events.asArrayRef()) {
        if (clocks.waitEvent(event))
          continue;
        InFlightDiagnostic diag = error(&op) << "waits for event " << event
                                             << ", which no earlier op records";
        for (Operation &other : *block)
          if (auto rec = other.getAttrOfType<IntegerAttr>(kRecordEventAttrName);
              rec && rec.getInt() == event) {
            diag.attachNote(other.getLoc())
                << "event " << event << " is recorded only here, later";
            break;
          }
      }

    for (OpOperand &operand : op.getOpOperands()) {
      Operation *def = operand.get().getDefiningOp();
      if (!def || def->getBlock() != block)
        continue;
      int64_t defStream = streams.lookup(def);
      if (defStream == stream)
        continue;
      ++crossStreamUses;
      if (clocks.happensBefore(def))
        continue;
      InFlightDiagnostic diag = error(&op);
      if (isa<WaitOp>(def))
        diag << "'" << op.getName() << "' on stream " << stream
             << " uses the result of a tandem.wait on stream " << defStream
             << " with no event ordering them: the wait synchronises only "
                "stream "
             << defStream;
      else
        diag << "'" << op.getName() << "' on stream " << stream
             << " uses operand #" << operand.getOperandNumber()
             << ", produced on stream " << defStream
             << ", with no event ordering them";
      diag.attachNote(def->getLoc())
          << "produced here: it needs '" << kRecordEventAttrName
          << "' and the user '" << kWaitEventsAttrName
          << "' (tandem-assign-streams adds both)";
    }

    if (auto collective = dyn_cast<CollectiveOpInterface>(&op)) {
      ++collectives;
      Operation *&last = lastCollectiveOf[collective.getGroupAttr()];
      if (last && streams.lookup(last) != stream && !clocks.happensBefore(last))
        (error(&op) << "collectives on " << collective.getGroupAttr()
                    << " may run out of their issue order: this one, on "
                       "stream "
                    << stream
                    << ", is not ordered after the previous one, on stream "
                    << streams.lookup(last))
                .attachNote(last->getLoc())
            << "the previous collective on " << collective.getGroupAttr();
      last = &op;
    }

    int64_t event = -1;
    if (auto rec = op.getAttrOfType<IntegerAttr>(kRecordEventAttrName))
      event = rec.getInt();
    clocks.finish(event);
  }
}

/// (c) `tandem.seq` strictly increases in program order on every group.
void ScheduleVerifier::checkIssueOrder() {
  struct GroupState {
    Operation *maxOp = nullptr;
    int64_t maxSeq = 0;
    Operation *firstUnstamped = nullptr;
    unsigned unstamped = 0;
  };
  llvm::MapVector<Attribute, GroupState> groups;
  for (Operation &op : *block) {
    auto collective = dyn_cast<CollectiveOpInterface>(&op);
    if (!collective)
      continue;
    GroupState &g = groups[collective.getGroupAttr()];
    auto seq = op.getAttrOfType<IntegerAttr>(kSeqAttrName);
    if (!seq) {
      if (!g.unstamped++)
        g.firstUnstamped = &op;
      continue;
    }
    int64_t value = seq.getInt();
    if (g.maxOp && value <= g.maxSeq) {
      InFlightDiagnostic diag = error(&op);
      if (value == g.maxSeq)
        diag << "two collectives on " << collective.getGroupAttr()
             << " carry seq " << value;
      else
        diag << "collectives on " << collective.getGroupAttr()
             << " are issued out of their original order: seq " << g.maxSeq
             << " before seq " << value;
      diag.attachNote(g.maxOp->getLoc())
          << "seq " << g.maxSeq << " is issued here";
      continue;
    }
    g.maxOp = &op;
    g.maxSeq = value;
  }
  // With a reference, compareWithReference checks the order of every
  // collective, stamped or not.
  if (!options.remarks || reference)
    return;
  for (auto &[group, g] : groups)
    if (g.unstamped)
      g.firstUnstamped->emitRemark()
          << g.unstamped << " collective(s) on " << group << " carry no '"
          << kSeqAttrName
          << "': their order cannot be checked against the input (run "
             "tandem-async-collectives, or pass a reference)";
}

/// (d) Same signature, same returned values, same compute ops, same
/// collectives in the same order on every group.
void ScheduleVerifier::compareWithReference(
    std::optional<StructuralHasher> &scheduled,
    std::optional<StructuralHasher> &ref) {
  if (reference.isExternal() || !reference.getBody().hasOneBlock()) {
    error(func) << "the reference of '@" << func.getSymName()
                << "' must have a body of one block";
    return;
  }
  if (func.getFunctionType() != reference.getFunctionType()) {
    error(func) << "'@" << func.getSymName() << "' has type "
                << func.getFunctionType() << ", its reference "
                << reference.getFunctionType();
    return;
  }
  Block &refBlock = reference.getBody().front();
  if (!scheduled)
    scheduled.emplace(*block);
  if (!ref)
    ref.emplace(refBlock);
  // A batch split reads the parts of the reference's relayouts directly:
  // hash the program again knowing them.
  if (!ref->relayouts.empty())
    scheduled.emplace(*block, &ref->relayouts);
  const StructuralHasher &sh = *scheduled, &rh = *ref;

  // Returned values, in order (the signature check made the counts equal).
  Operation *ret = block->getTerminator();
  Operation *refRet = refBlock.getTerminator();
  bool valuesMatch = true;
  if (ret->getNumOperands() == refRet->getNumOperands()) {
    for (unsigned i = 0, e = ret->getNumOperands(); i < e; ++i) {
      if (sh.lookup(ret->getOperand(i)) == rh.lookup(refRet->getOperand(i)))
        continue;
      valuesMatch = false;
      Divergence d =
          findDivergence(ret->getOperand(i), refRet->getOperand(i), sh, rh);
      InFlightDiagnostic diag = error(ret) << "returned value #" << i
                                           << " differs from the reference";
      diag.attachNote(locationOf(d.scheduled))
          << "first difference: " << d.what;
      diag.attachNote(locationOf(d.reference))
          << "the reference computes it here";
      break;
    }
  }

  // Chunk pipelines replace one GEMM and one collective by several: their
  // values were proven equal above, but op counts and collective sequences
  // no longer line up one to one, so those two checks only apply without
  // pipelines.
  if (sh.pipelines > 0) {
    if (valuesMatch && options.remarks)
      mlir::emitRemark(func.getLoc())
          << sh.pipelines
          << " chunk pipeline(s) recognised; returned values "
             "match the reference, op counts and per-group "
             "collective sequences are not compared";
    return;
  }
  // Batch splitting replaces ops by parts in the same way: beyond the
  // returned values, the per-group order is checked by (c) alone.
  if (sh.splits > rh.splits) {
    if (valuesMatch && options.remarks)
      mlir::emitRemark(func.getLoc())
          << sh.splits
          << " op(s) recognised as parts of a batch split; returned values "
             "match the reference, op counts and per-group collective "
             "sequences are not compared";
    return;
  }

  // Compute ops of each kind.
  std::map<std::string, std::pair<unsigned, unsigned>> counts;
  for (Operation &op : *block)
    if (isa<ComputeOpInterface>(op))
      ++counts[op.getName().getStringRef().str()].first;
  for (Operation &op : refBlock)
    if (isa<ComputeOpInterface>(op))
      ++counts[op.getName().getStringRef().str()].second;
  for (auto &[name, count] : counts)
    if (count.first != count.second)
      error(func) << "'@" << func.getSymName() << "' has " << count.first
                  << " '" << name << "' op(s), its reference " << count.second;

  // Each group's collectives, in issue order. Swapping two collectives of a
  // group changes no value, so this is checked on its own; after a value
  // mismatch, the collectives downstream of it would only repeat it.
  if (!valuesMatch)
    return;
  using Sequence = SmallVector<Operation *>;
  llvm::MapVector<StringRef, std::pair<Sequence, Sequence>> sequences;
  for (Operation &op : *block)
    if (auto c = dyn_cast<CollectiveOpInterface>(op))
      sequences[c.getGroupAttr().getValue()].first.push_back(&op);
  for (Operation &op : refBlock)
    if (auto c = dyn_cast<CollectiveOpInterface>(op))
      sequences[c.getGroupAttr().getValue()].second.push_back(&op);
  for (auto &[group, seqs] : sequences) {
    auto &[mine, theirs] = seqs;
    if (mine.size() != theirs.size()) {
      error(func) << "'@" << func.getSymName() << "' issues " << mine.size()
                  << " collective(s) on @" << group << ", its reference "
                  << theirs.size();
      continue;
    }
    // A schedule allowed to reorder a group's collectives (the batch
    // split interleaves micro-batches; one function runs on every rank, so
    // every rank issues the new order, which (c) checks) must issue the
    // same collectives.
    if (options.allowReorderedCollectives) {
      auto hashesOf = [](const Sequence &ops, const StructuralHasher &h) {
        SmallVector<size_t> v;
        for (Operation *op : ops)
          v.push_back(size_t(h.lookup(op->getResult(0))));
        return v;
      };
      SmallVector<size_t> a = hashesOf(mine, sh), b = hashesOf(theirs, rh);
      bool sameOrder = a == b;
      llvm::sort(a);
      llvm::sort(b);
      if (a != b) {
        error(func) << "'@" << func.getSymName() << "' issues other "
                    << "collectives on @" << group << " than its reference "
                    << "(compared in any order)";
        continue;
      }
      if (!sameOrder && options.remarks)
        mlir::emitRemark(func.getLoc())
            << "the collectives on @" << group
            << " are the reference's, issued in another order (allowed)";
      continue;
    }
    for (auto [i, pair] : llvm::enumerate(llvm::zip_equal(mine, theirs))) {
      auto [s, r] = pair;
      if (sh.lookup(s->getResult(0)) == rh.lookup(r->getResult(0)))
        continue;
      (error(s) << "collective #" << i << " on @" << group
                << " differs from the reference's: the group's issue order "
                   "or the collective's value changed")
              .attachNote(r->getLoc())
          << "collective #" << i << " on @" << group << " in the reference";
      break;
    }
  }
}

LogicalResult ScheduleVerifier::run() {
  if (func.isExternal())
    return success();
  // The structural hashes that the comparison with the reference needs only
  // read the two functions, as the checks below do: with threads, they are
  // computed on the context's pool while the checks run here (the checks'
  // diagnostics stay on this thread, in their order).
  std::optional<StructuralHasher> scheduledHashes, referenceHashes;
  MLIRContext *ctx = func.getContext();
  std::optional<llvm::ThreadPoolTaskGroup> hashing;
  if (reference && ctx->isMultithreadingEnabled() &&
      func.getBody().hasOneBlock() && !reference.isExternal() &&
      reference.getBody().hasOneBlock()) {
    hashing.emplace(ctx->getThreadPool());
    hashing->async([&] { scheduledHashes.emplace(func.getBody().front()); });
    hashing->async(
        [&] { referenceHashes.emplace(reference.getBody().front()); });
  }
  llvm::scope_exit joinHashing([&] {
    if (hashing)
      hashing->wait();
  });
  bool attributesUsable = checkAttributes();
  if (!block)
    return failure();
  checkCollectiveProtocol();
  if (attributesUsable)
    checkOrdering();
  checkIssueOrder();
  if (reference) {
    if (hashing)
      hashing->wait();
    compareWithReference(scheduledHashes, referenceHashes);
  }
  if (failed)
    return failure();

  if (options.remarks) {
    InFlightDiagnostic remark = mlir::emitRemark(func.getLoc());
    remark << "schedule verified";
    if (!explicitSync)
      remark << " on the simulator's default streams (no stream attributes: "
                "every use is ordered after its producer)";
    remark << ": " << streams.numStreams() << " stream(s), " << crossStreamUses
           << " cross-stream use(s), " << collectives << " collective(s); ";
    if (reference)
      remark << "values match the reference";
    else
      remark << "values not compared (no reference)";
  }
  return success();
}

LogicalResult
mlir::tandem::verifySchedule(func::FuncOp func, func::FuncOp reference,
                             const VerifyScheduleOptions &options) {
  return ScheduleVerifier(func, reference, options).run();
}
