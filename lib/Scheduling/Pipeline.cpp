//===- Pipeline.cpp - Chunked AG->GEMM and GEMM->RS pipelines -------------===//
//
// Decision model (docs/passes.md): with a collective of time c and a GEMM of
// time g split into N chunks, the first chunk's communication and the last
// chunk's compute are exposed and the N-1 steps in between overlap:
//   AG->GEMM: c_N + (N-1) * step(c_N, g_N) + g_N
//   GEMM->RS: g_N + (N-1) * step(c_N, g_N) + c_N
//   step(c, g) = max(c * comm_slowdown,
//                    g + min(c, g) * (g' * gemm_slowdown / g - 1))
// where c_N is the collective on 1/N of the payload (its latency does not
// shrink), g_N the GEMM on 1/N of the rows, and g' the same GEMM on the SMs
// the collective leaves (wave quantisation): the GEMM is slowed only while
// the collective runs beside it. A P2P ring of `size` steps computes on the
// local shard while the first transfer runs:
//   (size-1) * step(p, g_s) + g_s.
//
//===----------------------------------------------------------------------===//

#include "tandem/Scheduling/Pipeline.h"
#include "tandem/Dialect/Tandem/ScheduleAttributes.h"
#include "tandem/Engine/Engine.h"
#include "tandem/ScheduleModel/ScheduleModel.h"
#include "tandem/Scheduling/MemoryBudget.h"

#include "tandem/Analysis/MemoryLiveness.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::tandem;

StringRef mlir::tandem::stringifyPipelineMethod(PipelineMethod method) {
  switch (method) {
  case PipelineMethod::Unsplit:
    return "unsplit";
  case PipelineMethod::Chunked:
    return "chunked";
  case PipelineMethod::PeerToPeer:
    return "p2p";
  }
  llvm_unreachable("unknown method");
}

/// The engine's time for a pipeline of `n` chunks: chunk j's collective
/// (`collectiveUs` alone, the target's CTA budget) on a communication stream
/// and its GEMM (`gemm`) on the compute stream, the GEMM after its
/// collective (`collectiveFirst`: all-gather) or before it (reduce-scatter).
/// A first `localGemms` GEMMs need no collective (a P2P ring's own shard).
/// With `copyEngine` the collectives run on the copy engines: they hold no
/// SMs and contend by the copy-engine point.
/// SMs are shared as the engine's rates give them; the SM-residency rule is
/// left out, as for every window the algorithms price (the SM-target pass
/// relieves residency waits afterwards).
static double simulatePipeline(const CostModel &model, int64_t n,
                               double collectiveUs, const ComputeEstimate &gemm,
                               bool collectiveFirst, int64_t localGemms,
                               bool copyEngine) {
  sim::Problem problem = emptyProblem(model);
  problem.gemmsHoldSms = false;
  problem.streamNames = {"compute", "comm"};
  CollectiveEstimate c;
  c.timeUs = collectiveUs;
  for (int64_t j = 0; j < localGemms; ++j)
    problem.tasks.push_back(computeTask(gemm, model.gpu()));
  for (int64_t j = 0; j < n; ++j) {
    sim::Task comm =
        collectiveTask(c, copyEngine ? 0 : model.gpu().collectiveSms, "group");
    comm.copyEngine = copyEngine;
    comm.stream = 1;
    sim::Task compute = computeTask(gemm, model.gpu());
    unsigned next = problem.tasks.size();
    if (collectiveFirst) {
      compute.deps = {next};
      problem.tasks.push_back(std::move(comm));
      problem.tasks.push_back(std::move(compute));
    } else {
      comm.deps = {next};
      problem.tasks.push_back(std::move(compute));
      problem.tasks.push_back(std::move(comm));
    }
  }
  std::string error;
  std::optional<sim::Result> result = sim::simulate(problem, error);
  assert(result && "a pipeline's two streams cannot deadlock");
  return result ? result->spanUs : 0.0;
}

namespace {
/// The engine's time for a pipeline (simulatePipeline), memoised: the layers
/// and micro-batches of a step repeat the same pairs, so most candidates are
/// priced once per pass.
class PipelinePricer {
public:
  explicit PipelinePricer(const CostModel &model) : model(model) {}
  double us(int64_t n, double collectiveUs, const ComputeEstimate &gemm,
            bool collectiveFirst, int64_t localGemms = 0,
            bool copyEngine = false) {
    Key key{n,           collectiveUs, gemm.timeUs,      gemm.tiles,
            gemm.tileUs, gemm.floorUs, gemm.memoryBound, collectiveFirst,
            localGemms,  copyEngine};
    auto [it, inserted] = cache.try_emplace(key, 0.0);
    if (inserted)
      it->second = simulatePipeline(model, n, collectiveUs, gemm,
                                    collectiveFirst, localGemms, copyEngine);
    return it->second;
  }

private:
  using Key = std::tuple<int64_t, double, double, int64_t, double, double, bool,
                         bool, int64_t, bool>;
  const CostModel &model;
  std::map<Key, double> cache;
};
} // namespace

/// Undoes a rewrite whose new ops are the ones strictly between `before`
/// (null = block start) and `end`, after pointing uses back at `originals`.
static void undoRewrite(Block *block, Operation *before, Operation *end,
                        ArrayRef<std::pair<Value, Value>> restoredUses) {
  for (auto [from, to] : restoredUses)
    if (from && to)
      from.replaceAllUsesWith(to);
  SmallVector<Operation *> created;
  for (Operation *it = before ? before->getNextNode() : &block->front();
       it && it != end; it = it->getNextNode())
    created.push_back(it);
  for (Operation *op : llvm::reverse(created))
    op->erase();
}

static std::string fmtUs(double v) {
  return llvm::formatv("{0:F1} us", v).str();
}

namespace {
struct Candidate {
  PipelineMethod method;
  int64_t chunks;
  double timeUs;
  bool refused = false; ///< Considered but not allowed (P2P on a full mesh).
  /// Its collectives run on the copy engines (PipelineOptions::copyEngines).
  bool copyEngine = false;
};

/// Prices a matmul on a subset of its rows.
struct GemmPricer {
  GemmPricer(MatmulOp mm, const CostModel &model) : mm(mm), model(model) {
    GemmShape shape = *mm.getGemmShape();
    n = shape.n;
    k = shape.k;
    elt = mm.getLhs().getType().getElementType();
    eltBytes = (elt.getIntOrFloatBitWidth() + 7) / 8;
    outBytes = (mm.getType().getElementType().getIntOrFloatBitWidth() + 7) / 8;
  }
  ComputeEstimate estimate(int64_t rows, int64_t sms = 0) const {
    double bytes = double(rows) * k * eltBytes + double(k) * n * eltBytes +
                   double(rows) * n * outBytes;
    return model.gemm(GemmShape{1, rows, n, k}, elt, bytes, sms);
  }
  double us(int64_t rows, int64_t sms) const {
    return estimate(rows, sms).timeUs;
  }
  MatmulOp mm;
  const CostModel &model;
  int64_t n, k, eltBytes, outBytes;
  Type elt;
};
} // namespace

/// Picks the candidate to apply: the fastest allowed one unless a method is
/// forced. Returns nullptr to leave the pair alone.
static const Candidate *pick(ArrayRef<Candidate> candidates,
                             const PipelineOptions &options) {
  const Candidate *best = nullptr;
  for (const Candidate &c : candidates) {
    if (options.method) {
      if (c.method != *options.method)
        continue;
    } else if (c.refused) {
      continue;
    }
    if (!best || c.timeUs < best->timeUs * (1 - 1e-9))
      best = &c;
  }
  return best;
}

static void describeCandidates(Diagnostic &remark,
                               ArrayRef<Candidate> candidates) {
  remark << "; predicted:";
  for (const Candidate &c : candidates) {
    remark << " " << stringifyPipelineMethod(c.method);
    if (c.method == PipelineMethod::Chunked)
      remark << "x" << c.chunks;
    if (c.copyEngine)
      remark << "+ce";
    remark << " " << fmtUs(c.timeUs);
    if (c.refused)
      remark << " (full mesh: one link per step, P2P only when forced)";
  }
}

/// Compute time of the ops strictly between `from` and `to` (same block):
/// independent work that bulk overlap can run under a collective there.
/// Ops using `exclude` do not count: they depend on the collective.
static double computeBetween(Operation *from, Operation *to, OpTimer &timer,
                             Value exclude) {
  double total = 0;
  for (Operation *it = from ? from->getNextNode() : &to->getBlock()->front();
       it && it != to; it = it->getNextNode())
    if (isa<ComputeOpInterface>(it) &&
        !llvm::is_contained(it->getOperands(), exclude))
      total += timer.timeUs(it);
  return total;
}

/// Whether the matmul's layer tag ends in one of `suffixes` (".qkv", ...).
static bool layerIs(MatmulOp mm, ArrayRef<StringRef> suffixes) {
  std::optional<StringRef> layer = mm.getLayer();
  return layer && llvm::any_of(suffixes, [&](StringRef s) {
           return layer->ends_with(s);
         });
}

/// TransformerEngine's documented defaults for an AG feeding `mm`.
static std::optional<PipelineMethod> tePresetForAllGather(MatmulOp mm) {
  if ((mm.getRole() == MatmulRole::fprop && layerIs(mm, {".qkv", ".fc1"})) ||
      (mm.getRole() == MatmulRole::dgrad && layerIs(mm, {".proj", ".fc2"})))
    return PipelineMethod::PeerToPeer;
  return PipelineMethod::Unsplit;
}

/// Chunk counts to try for a dimension of `rows` rows per rank.
static SmallVector<int64_t> chunkCounts(int64_t rowsPerRank,
                                        const PipelineOptions &options) {
  SmallVector<int64_t> counts;
  for (int64_t n : {2, 4, 8})
    if ((options.chunks == 0 || options.chunks == n) && rowsPerRank % n == 0)
      counts.push_back(n);
  if (options.chunks > 0 && counts.empty() && rowsPerRank % options.chunks == 0)
    counts.push_back(options.chunks);
  return counts;
}

//===----------------------------------------------------------------------===//
// Candidates: each way to run the pair, priced by the engine
//===----------------------------------------------------------------------===//

static RankedTensorType withRows(RankedTensorType t, int64_t rows) {
  SmallVector<int64_t> shape(t.getShape());
  shape[0] = rows;
  return RankedTensorType::get(shape, t.getElementType());
}

/// Time of a layout op that copies (getLayoutBytes): the pipelines'
/// assembly ops run on the compute stream after their last GEMM.
static double layoutCopyUs(const CostModel &model, RankedTensorType result) {
  ComputeCostInputs in;
  in.elementType = result.getElementType();
  in.bytes = getLayoutBytes(/*view=*/false, result);
  in.kind = ComputeKind::memory;
  in.memoryKernel = MemoryKernel::layoutCopy;
  std::string error;
  std::optional<ComputeEstimate> e = model.compute(in, error);
  assert(e && "a copy computes nothing, so every target prices it");
  return e ? e->timeUs : 0.0;
}

/// The collective transports a pipeline's pieces may use: SMs, and with
/// `copyEngines` the copy engines too.
static SmallVector<bool, 2> copyEngineVariants(const PipelineOptions &options) {
  if (options.copyEngines && !options.transformerEnginePreset)
    return {false, true};
  return {false};
}

/// Time alone of one piece of a pipeline: on SMs (the target's CTA budget)
/// or on the copy engines, where the group allows them (else none).
static std::optional<double> collectiveUs(const CostModel &model,
                                          CollectiveKind kind, int64_t bytes,
                                          const GroupSpec &group,
                                          bool copyEngine) {
  if (!copyEngine)
    return model.collective(kind, bytes, group).timeUs;
  if (std::optional<CollectiveEstimate> e =
          model.copyEngine(kind, bytes, group))
    return e->timeUs;
  return std::nullopt;
}

/// Unsplit, chunked native all-gathers of each allowed count, and the P2P
/// ring (refused by default on a full mesh, where each step uses one link).
/// The chunked and ring candidates pay for assembling the GEMM's output
/// (and the gathered tensor, if something else uses it): copies.
static SmallVector<Candidate>
allGatherCandidates(AllGatherOp ag, MatmulOp mm, const GroupSpec &group,
                    OpTimer &timer, PipelinePricer &pricer,
                    const PipelineOptions &options) {
  const CostModel &model = timer.costModel();
  int64_t size = group.size;
  int64_t rows = ag.getResult().getType().getShape()[0];
  int64_t rowsPerRank = rows / size;
  int64_t payload = ag.getPayloadBytes();
  GemmPricer gemm(mm, model);
  double assembly = layoutCopyUs(model, mm.getType());
  if (!ag.getResult().hasOneUse())
    assembly += layoutCopyUs(model, ag.getType());
  SmallVector<Candidate> candidates;
  candidates.push_back({PipelineMethod::Unsplit, 1,
                        timer.collectiveUs(ag, 0) + gemm.us(rows, 0)});
  for (bool ce : copyEngineVariants(options)) {
    for (int64_t n : chunkCounts(rowsPerRank, options)) {
      std::optional<double> c = collectiveUs(model, CollectiveKind::all_gather,
                                             payload / n, group, ce);
      if (!c)
        continue;
      double t = pricer.us(n, *c, gemm.estimate(rows / n),
                           /*collectiveFirst=*/true, 0, ce) +
                 assembly;
      candidates.push_back({PipelineMethod::Chunked, n, t, false, ce});
    }
    if (size > 1) {
      std::optional<double> p = collectiveUs(model, CollectiveKind::permute,
                                             payload / size, group, ce);
      if (!p)
        continue;
      double t = pricer.us(size - 1, *p, gemm.estimate(rowsPerRank),
                           /*collectiveFirst=*/true, /*localGemms=*/1, ce) +
                 assembly;
      candidates.push_back({PipelineMethod::PeerToPeer, size, t,
                            group.topology == Topology::full_mesh, ce});
    }
  }
  return candidates;
}

/// Unsplit and chunked native reduce-scatters of each allowed count. A
/// chunked candidate pays for its interleaved (strided) slices of the GEMM
/// input, which run before the first GEMM; the concat of the
/// reduce-scatters' outputs writes in place (ConcatOp::writesInPlace).
static SmallVector<Candidate>
reduceScatterCandidates(ReduceScatterOp rs, MatmulOp mm, const GroupSpec &group,
                        OpTimer &timer, PipelinePricer &pricer,
                        const PipelineOptions &options) {
  const CostModel &model = timer.costModel();
  int64_t rows = mm.getType().getShape()[0];
  int64_t payload = rs.getPayloadBytes();
  GemmPricer gemm(mm, model);
  SmallVector<Candidate> candidates;
  candidates.push_back({PipelineMethod::Unsplit, 1,
                        gemm.us(rows, 0) + timer.collectiveUs(rs, 0)});
  for (bool ce : copyEngineVariants(options))
    for (int64_t n : chunkCounts(rows / group.size, options)) {
      std::optional<double> c = collectiveUs(
          model, CollectiveKind::reduce_scatter, payload / n, group, ce);
      if (!c)
        continue;
      double layout =
          n * layoutCopyUs(model, withRows(mm.getLhs().getType(), rows / n));
      double t = pricer.us(n, *c, gemm.estimate(rows / n),
                           /*collectiveFirst=*/false, 0, ce) +
                 layout;
      candidates.push_back({PipelineMethod::Chunked, n, t, false, ce});
    }
  return candidates;
}

//===----------------------------------------------------------------------===//
// Apply: the chosen pipeline as IR, with what is needed to undo it
//===----------------------------------------------------------------------===//

namespace {
/// A rewrite in place: the new ops lie strictly between `insertedAfter`
/// (null = block start) and `end`; `restoredUses` points uses back on undo.
struct Rewrite {
  Operation *insertedAfter = nullptr, *end = nullptr;
  SmallVector<std::pair<Value, Value>> restoredUses;
  void undo(Block *block) const {
    undoRewrite(block, insertedAfter, end, restoredUses);
  }
};
} // namespace

/// Where an all-gather's pipeline goes: the gathered tensor's first use, so
/// that the assembled tensor is there for every user. Fails when the
/// matmul's other operands do not exist by then.
static Operation *allGatherInsertionPoint(AllGatherOp ag, MatmulOp mm) {
  Operation *firstUser = mm;
  for (Operation *user : ag.getResult().getUsers())
    if (Operation *top = ag->getBlock()->findAncestorOpInBlock(*user);
        top && top->isBeforeInBlock(firstUser))
      firstUser = top;
  for (Value operand : mm->getOperands().drop_front())
    if (Operation *def = operand.getDefiningOp();
        def && def->getBlock() == mm->getBlock() && firstUser != mm &&
        !def->isBeforeInBlock(firstUser))
      return nullptr;
  return firstUser;
}

/// Rewrites `ag` -> `mm` as `choice` before `firstUser`; the matmul's uses
/// (and the gathered tensor's other uses) move to the assembled results.
static Rewrite applyAllGather(AllGatherOp ag, MatmulOp mm, Operation *firstUser,
                              const Candidate &choice, int64_t size) {
  Rewrite rewrite;
  rewrite.insertedAfter = firstUser->getPrevNode();
  rewrite.end = firstUser;
  OpBuilder b(firstUser);
  Location loc = ag.getLoc();
  RankedTensorType shardType = ag.getInput().getType();
  RankedTensorType outType = mm.getType();
  int64_t rows = ag.getResult().getType().getShape()[0];
  int64_t rowsPerRank = rows / size;
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  SmallVector<Value> gathered, products;
  auto cloneMatmul = [&](Value lhs, int64_t r) {
    Operation *clone = b.clone(*mm);
    clone->setOperand(0, lhs);
    clone->getResult(0).setType(withRows(outType, r));
    return clone->getResult(0);
  };
  Value assembledOut, assembledIn;
  int64_t n = choice.chunks;
  if (choice.method == PipelineMethod::Chunked) {
    // All slices first: they are views, and a chunk's collective must not
    // wait behind the previous chunk's GEMM for its input.
    SmallVector<Value> pieces;
    for (int64_t j = 0; j < n; ++j)
      pieces.push_back(SliceOp::create(
          b, loc, withRows(shardType, rowsPerRank / n), ag.getInput(), i64(0),
          i64(j), i64(n), i64(1), DenseI64ArrayAttr()));
    for (int64_t j = 0; j < n; ++j) {
      Operation *chunkAg = b.clone(*ag);
      chunkAg->setOperand(0, pieces[j]);
      chunkAg->getResult(0).setType(withRows(ag.getType(), rows / n));
      gathered.push_back(chunkAg->getResult(0));
      products.push_back(cloneMatmul(chunkAg->getResult(0), rows / n));
    }
    assembledOut =
        ConcatOp::create(b, loc, outType, products, i64(0), i64(size));
    if (!ag.getResult().hasOneUse())
      assembledIn =
          ConcatOp::create(b, loc, ag.getType(), gathered, i64(0), i64(size));
  } else {
    Value current = ag.getInput();
    for (int64_t step = 0; step < size; ++step) {
      if (step > 0)
        current = PermuteOp::create(b, loc, shardType, current,
                                    ag.getGroupAttr(), i64(1));
      gathered.push_back(current);
      products.push_back(cloneMatmul(current, rowsPerRank));
    }
    assembledOut = RingConcatOp::create(b, loc, outType, products,
                                        ag.getGroupAttr(), i64(0));
    if (!ag.getResult().hasOneUse())
      assembledIn = RingConcatOp::create(b, loc, ag.getType(), gathered,
                                         ag.getGroupAttr(), i64(0));
  }
  mm.getResult().replaceAllUsesWith(assembledOut);
  if (assembledIn)
    ag.getResult().replaceAllUsesWith(assembledIn);
  rewrite.restoredUses = {{assembledOut, mm.getResult()},
                          {assembledIn, ag.getResult()}};
  return rewrite;
}

/// Rewrites `mm` -> `rs` as `n` chunked native reduce-scatters before `rs`.
static Rewrite applyReduceScatter(ReduceScatterOp rs, MatmulOp mm, int64_t n,
                                  int64_t size) {
  Rewrite rewrite;
  rewrite.insertedAfter = rs->getPrevNode();
  rewrite.end = rs;
  OpBuilder b(rs);
  Location loc = rs.getLoc();
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  int64_t rows = mm.getType().getShape()[0];
  RankedTensorType lhsType = mm.getLhs().getType();
  SmallVector<Value> pieces, lhsChunks;
  for (int64_t j = 0; j < n; ++j)
    lhsChunks.push_back(SliceOp::create(b, loc, withRows(lhsType, rows / n),
                                        mm.getLhs(), i64(0), i64(j), i64(n),
                                        i64(size), DenseI64ArrayAttr()));
  for (int64_t j = 0; j < n; ++j) {
    Operation *product = b.clone(*mm);
    product->setOperand(0, lhsChunks[j]);
    product->getResult(0).setType(withRows(mm.getType(), rows / n));
    Operation *chunkRs = b.clone(*rs);
    chunkRs->setOperand(0, product->getResult(0));
    chunkRs->getResult(0).setType(withRows(rs.getType(), rows / n / size));
    pieces.push_back(chunkRs->getResult(0));
  }
  Value assembled =
      ConcatOp::create(b, loc, rs.getType(), pieces, i64(0), i64(1));
  rs.getResult().replaceAllUsesWith(assembled);
  rewrite.restoredUses = {{assembled, rs.getResult()}};
  return rewrite;
}

/// Marks the collectives a rewrite created as copy-engine collectives.
static void markCopyEngine(Block *block, const Rewrite &rewrite) {
  for (Operation *it = rewrite.insertedAfter
                           ? rewrite.insertedAfter->getNextNode()
                           : &block->front();
       it && it != rewrite.end; it = it->getNextNode())
    if (isa<CollectiveOpInterface>(it))
      it->setDiscardableAttr(kCopyEngineAttrName,
                             UnitAttr::get(it->getContext()));
}

//===----------------------------------------------------------------------===//
// Per pair: match -> candidates -> decision -> apply (or undo) -> explain
//===----------------------------------------------------------------------===//

/// The pair id a diagnosis gave both `collective` and `mm`
/// (`tandem.avoid_overlap`, AvoidOverlap.h), if any: their overlap was
/// measured slower than running them one after the other, and a pipeline
/// would run every chunk of one beside a chunk of the other.
static std::optional<int64_t> harmfulPair(Operation *collective,
                                          Operation *mm) {
  ArrayRef<int64_t> theirs = getAvoidOverlap(mm);
  for (int64_t id : getAvoidOverlap(collective))
    if (llvm::is_contained(theirs, id))
      return id;
  return std::nullopt;
}

static bool tryAllGather(AllGatherOp ag, OpTimer &timer, PipelinePricer &pricer,
                         const PipelineOptions &options, bool &changed,
                         bool &budgetBlocked) {
  changed = false;
  auto keep = [&](const Twine &why) {
    if (options.remarks)
      options.remarks->remark(ag) << "all-gather left unsplit: " << why;
    return true;
  };
  // Match: a matmul that takes the gathered rows.
  if (ag.getDim() != 0)
    return keep("only gathers along dimension 0 are pipelined");
  MatmulOp mm;
  for (Operation *user : ag.getResult().getUsers())
    if (auto m = dyn_cast<MatmulOp>(user); m && m.getLhs() == ag.getResult() &&
                                           !m.getTransposeLhs() &&
                                           m->getBlock() == ag->getBlock()) {
      mm = m;
      break;
    }
  if (!mm)
    return keep("no matmul takes the gathered tensor as its row operand");
  if (std::optional<int64_t> id = harmfulPair(ag, mm))
    return keep("a diagnosis measured its overlap with the matmul slower than "
                "the two serially (harmful overlap #" +
                Twine(*id) + "); a pipeline would overlap their chunks");
  const GroupSpec *group = timer.group(ag);
  if (!group)
    return false;

  SmallVector<Candidate> candidates =
      allGatherCandidates(ag, mm, *group, timer, pricer, options);

  // Decision. Compute between the input's producer and the matmul that does
  // not need the gathered tensor lets bulk overlap issue the collective
  // early and hide it there without splitting anything.
  const CostModel &model = timer.costModel();
  ContentionPoint cs = model.contention().lookup(model.gpu().collectiveSms);
  PipelineOptions effective = options;
  if (options.transformerEnginePreset)
    effective.method = tePresetForAllGather(mm);
  double cFull = timer.collectiveUs(ag, 0);
  double independent =
      computeBetween(ag.getInput().getDefiningOp(), mm, timer, ag.getResult());
  if (!effective.method && independent >= cFull * cs.commSlowdown)
    return keep("bulk overlap can hide its " + fmtUs(cFull) + " under " +
                fmtUs(independent) + " of independent compute around it");
  const Candidate *choice = pick(candidates, effective);
  if (!choice || choice->method == PipelineMethod::Unsplit) {
    if (options.remarks) {
      Diagnostic &remark = options.remarks->remark(ag)
                           << "all-gather left unsplit: ";
      if (options.transformerEnginePreset)
        remark << "TransformerEngine's preset ring-exchanges only the "
                  "all-gathers before qkv/fc1 fprop and proj/fc2 dgrad; "
                  "this one gets bulk overlap";
      else
        remark << "no pipeline is predicted faster";
      if (!choice && options.method)
        remark << " (method " << stringifyPipelineMethod(*options.method)
               << " does not apply)";
      describeCandidates(remark, candidates);
    }
    return true;
  }
  Operation *firstUser = allGatherInsertionPoint(ag, mm);
  if (!firstUser)
    return keep("another user of the gathered tensor comes before the "
                "matmul's other operands exist");

  // Apply, then hold it to the memory budget. The replaced ops are still in
  // the block with unused results: they count only at their own position,
  // so the measure errs on the safe side.
  MemoryBudget budget(*ag->getBlock(), options.memoryBudget);
  Rewrite rewrite = applyAllGather(ag, mm, firstUser, *choice, group->size);
  if (std::optional<int64_t> peak = budget.exceeded(*ag->getBlock())) {
    rewrite.undo(ag->getBlock());
    budgetBlocked = true;
    return keep("the pipeline would raise peak memory to " +
                std::to_string(*peak) + " bytes, over the limit of " +
                std::to_string(budget.limit()));
  }

  if (choice->copyEngine)
    markCopyEngine(ag->getBlock(), rewrite);

  // Explain.
  if (options.remarks) {
    Diagnostic &remark =
        options.remarks->remark(ag)
        << "all-gather -> matmul pipelined as "
        << (choice->method == PipelineMethod::Chunked
                ? std::to_string(choice->chunks) + " chunked native all-gathers"
                : std::to_string(group->size) + " P2P ring steps")
        << (choice->copyEngine ? " on the copy engines" : "");
    describeCandidates(remark, candidates);
  }
  mm.erase();
  if (ag.getResult().use_empty())
    ag.erase();
  changed = true;
  return true;
}

static void tryReduceScatter(ReduceScatterOp rs, OpTimer &timer,
                             PipelinePricer &pricer,
                             const PipelineOptions &options, bool &changed,
                             bool &budgetBlocked) {
  changed = false;
  auto keep = [&](const Twine &why) {
    if (options.remarks)
      options.remarks->remark(rs) << "reduce-scatter left unsplit: " << why;
  };
  // Match: the scatter of a matmul's rows, the matmul's only use.
  if (rs.getDim() != 0)
    return keep("only scatters along dimension 0 are pipelined");
  auto mm = rs.getInput().getDefiningOp<MatmulOp>();
  if (!mm || mm.getTransposeLhs() || mm->getBlock() != rs->getBlock())
    return keep("its input is not produced by a matmul with untransposed rows");
  if (!mm.getResult().hasOneUse())
    return keep("the matmul's result has other users");
  if (std::optional<int64_t> id = harmfulPair(rs, mm))
    return keep("a diagnosis measured its overlap with the matmul slower than "
                "the two serially (harmful overlap #" +
                Twine(*id) + "); a pipeline would overlap their chunks");
  const GroupSpec *group = timer.group(rs);
  if (!group)
    return;
  if (options.method == PipelineMethod::PeerToPeer)
    return keep("P2P reduce-scatter pipelines are not implemented; only "
                "chunked native reduce-scatters");

  SmallVector<Candidate> candidates =
      reduceScatterCandidates(rs, mm, *group, timer, pricer, options);

  // Decision. Compute between the matmul and the scattered tensor's first
  // use that does not need it lets bulk overlap hide the collective.
  const CostModel &model = timer.costModel();
  ContentionPoint cs = model.contention().lookup(model.gpu().collectiveSms);
  PipelineOptions effective = options;
  Operation *firstUse = nullptr;
  for (Operation *user : rs.getResult().getUsers())
    if (Operation *top = rs->getBlock()->findAncestorOpInBlock(*user);
        top && (!firstUse || top->isBeforeInBlock(firstUse)))
      firstUse = top;
  double cFull = timer.collectiveUs(rs, 0);
  double independent =
      firstUse ? computeBetween(mm, firstUse, timer, rs.getResult()) : 0.0;
  if (!options.method && !options.transformerEnginePreset &&
      independent >= cFull * cs.commSlowdown)
    return keep("bulk overlap can hide its " + fmtUs(cFull) + " under " +
                fmtUs(independent) + " of independent compute after it");
  if (options.transformerEnginePreset) {
    // TE pipelines the reduce-scatter after proj/fc2 fprop, in 4 chunks
    // where the rows allow (else the largest count that divides them).
    bool te =
        mm.getRole() == MatmulRole::fprop && layerIs(mm, {".proj", ".fc2"});
    effective.method = te ? PipelineMethod::Chunked : PipelineMethod::Unsplit;
    const Candidate *teChoice = nullptr;
    for (const Candidate &c : candidates)
      if (c.method == PipelineMethod::Chunked && c.chunks <= 4)
        teChoice = &c;
    if (te && teChoice) {
      Candidate unsplit = candidates.front(), preset = *teChoice;
      candidates = SmallVector<Candidate>{unsplit, preset};
    }
  }
  const Candidate *choice = pick(candidates, effective);
  if (!choice || choice->method == PipelineMethod::Unsplit) {
    if (options.remarks) {
      Diagnostic &remark = options.remarks->remark(rs)
                           << "reduce-scatter left unsplit: ";
      if (options.transformerEnginePreset)
        remark << "TransformerEngine's preset pipelines only the "
                  "reduce-scatters after proj/fc2 fprop; this one gets bulk "
                  "overlap";
      else
        remark << "no pipeline is predicted faster";
      describeCandidates(remark, candidates);
    }
    return;
  }

  // Apply, then hold it to the memory budget.
  MemoryBudget budget(*rs->getBlock(), options.memoryBudget);
  Rewrite rewrite = applyReduceScatter(rs, mm, choice->chunks, group->size);
  if (std::optional<int64_t> peak = budget.exceeded(*rs->getBlock())) {
    rewrite.undo(rs->getBlock());
    budgetBlocked = true;
    return keep("the pipeline would raise peak memory to " +
                std::to_string(*peak) + " bytes, over the limit of " +
                std::to_string(budget.limit()));
  }

  if (choice->copyEngine)
    markCopyEngine(rs->getBlock(), rewrite);

  // Explain.
  if (options.remarks) {
    Diagnostic &remark = options.remarks->remark(rs)
                         << "matmul -> reduce-scatter pipelined as "
                         << choice->chunks << " chunked native reduce-scatters"
                         << (choice->copyEngine ? " on the copy engines" : "");
    describeCandidates(remark, candidates);
  }
  rs.erase();
  mm.erase();
  changed = true;
}

PipelineResult
mlir::tandem::pipelineCollectiveMatmuls(func::FuncOp func, OpTimer &timer,
                                        const PipelineOptions &options) {
  PipelineResult result;
  if (func.isExternal())
    return result;
  PipelinePricer pricer(timer.costModel());
  SmallVector<AllGatherOp> ags;
  SmallVector<ReduceScatterOp> rss;
  func.walk([&](Operation *op) {
    if (auto ag = dyn_cast<AllGatherOp>(op))
      ags.push_back(ag);
    else if (auto rs = dyn_cast<ReduceScatterOp>(op))
      rss.push_back(rs);
  });
  for (AllGatherOp ag : ags) {
    bool changed = false, blocked = false;
    tryAllGather(ag, timer, pricer, options, changed, blocked);
    changed ? ++result.allGathers : ++result.kept;
    result.budgetBlocked += blocked;
  }
  for (ReduceScatterOp rs : rss) {
    bool changed = false, blocked = false;
    tryReduceScatter(rs, timer, pricer, options, changed, blocked);
    changed ? ++result.reduceScatters : ++result.kept;
    result.budgetBlocked += blocked;
  }
  return result;
}
