//===- SmTargets.cpp - CTA budgets and GEMM SM targets per window ---------===//
//
// The window model and its formulas are documented in
// docs/passes/assign-sm-targets.md; keep the two in step. A window is
// predicted the way the simulator's engine runs it (rates while both sides
// run, then alone), so that a window the model calls faster is faster in
// tandem-simulate too.
//
//===----------------------------------------------------------------------===//

#include "tandem/Scheduling/SmTargets.h"
#include "tandem/Engine/Window.h"
#include "tandem/Scheduling/Schedule.h"
#include "tandem/Simulator/Simulate.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

using namespace mlir;
using namespace mlir::tandem;

static std::string us(double v) { return llvm::formatv("{0:F1} us", v).str(); }

/// Whether `a` is faster than `b` by more than rounding: equal predictions
/// must tie, so that the tie-breaking rules decide them.
static bool faster(double a, double b) { return a < b * (1.0 - 1e-9); }

LogicalResult mlir::tandem::checkCommSmsCandidates(ArrayRef<int64_t> candidates,
                                                   const GpuSpec &gpu,
                                                   std::string &error) {
  if (candidates.empty()) {
    error = "comm-sms lists no CTA budget";
    return failure();
  }
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t k : candidates) {
    if (k < 1 || k >= gpu.smCount) {
      error = llvm::formatv("comm-sms candidate {0} is out of range: a CTA "
                            "budget must be in [1, {1}) on target '{2}'",
                            k, gpu.smCount, gpu.name)
                  .str();
      return failure();
    }
    if (!seen.insert(k).second) {
      error = llvm::formatv("comm-sms lists {0} twice", k).str();
      return failure();
    }
  }
  return success();
}

namespace {
/// One compute op of a window, priced alone once.
struct Item {
  ComputeOpInterface op;
  /// How the simulator treats it: Gemm follows its wave count, Compute
  /// scales with 1 / SMs, Memory ignores SMs.
  sim::TaskKind kind = sim::TaskKind::Memory;
  double aloneUs = 0;
  int64_t wavesAlone = 0;
};

/// A window's prediction for one CTA budget.
struct Evaluation {
  int64_t commSms = 0;
  sim::WindowTimeline timeline;
  SmallVector<GemmTarget> gemms;
};
} // namespace

/// Compute estimates on a given SM count, memoised: each window evaluates
/// its GEMMs for every candidate budget and target, and identical layers
/// share their estimates.
class ComputeCache {
public:
  explicit ComputeCache(const CostModel &model) : cache(model) {}
  ComputeEstimate get(ComputeOpInterface op, int64_t sms) {
    std::string error; // Pricing cannot fail: every item was priced alone.
    return *cache.get(op, error, sms);
  }
  /// An op's estimate on all SMs, or std::nullopt with `error` set.
  std::optional<ComputeEstimate> tryGet(ComputeOpInterface op,
                                        std::string &error) {
    return cache.get(op, error);
  }

private:
  ComputeEstimateCache cache;
};

/// Predicts the window of `start` with CTA budget `k`. With `allSms`, every
/// GEMM keeps all SMs; otherwise each GEMM in this window only (in program
/// order) takes the target sm_count - k where that makes the window faster.
static Evaluation evaluate(CollectiveOpInterface start, ArrayRef<Item> items,
                           int64_t k, bool allSms, const CostModel &model,
                           OpTimer &timer, ComputeCache &estimates) {
  const GpuSpec &gpu = model.gpu();
  ContentionPoint c = model.contention().lookup(k);
  int64_t left = gpu.smCount - k;

  // A GEMM runs on min(target, SMs left) beside the collective and on its
  // target (all SMs without one) after it, as the simulator gives it SMs.
  auto gemmPhases = [&](const Item &item, int64_t target) {
    int64_t beside = std::min(target > 0 ? target : gpu.smCount, left);
    return sim::WindowPhases{
        estimates.get(item.op, beside).timeUs *
            sim::contentionSlowdown(sim::TaskKind::Gemm, c),
        estimates.get(item.op, target).timeUs};
  };

  Evaluation e;
  e.commSms = k;
  SmallVector<sim::WindowPhases> phases;
  SmallVector<size_t> gemmIndex; // Index into `phases` of each GEMM.
  for (const Item &item : items) {
    switch (item.kind) {
    case sim::TaskKind::Memory:
      phases.push_back(
          {item.aloneUs * sim::contentionSlowdown(item.kind, c), item.aloneUs});
      break;
    case sim::TaskKind::Compute:
      phases.push_back({item.aloneUs * double(gpu.smCount) / double(left) *
                            sim::contentionSlowdown(item.kind, c),
                        item.aloneUs});
      break;
    case sim::TaskKind::Gemm: {
      GemmTarget g;
      g.op = item.op;
      g.wavesAlone = item.wavesAlone;
      g.wavesBeside = estimates.get(item.op, left).waves;
      gemmIndex.push_back(phases.size());
      phases.push_back(gemmPhases(item, 0));
      e.gemms.push_back(g);
      break;
    }
    case sim::TaskKind::Collective:
    case sim::TaskKind::Wait:
      llvm_unreachable("a window's items are compute ops");
    }
  }
  double collectiveUs = timer.collectiveUs(start, k);
  double collectiveBesideUs =
      collectiveUs * sim::contentionSlowdown(sim::TaskKind::Collective, c);
  auto window = [&] {
    return sim::runWindow(phases, collectiveBesideUs, collectiveUs).windowUs();
  };

  // The budget is shared; given it, the targets are independent choices, so
  // each GEMM keeps the faster of its two in turn. All SMs win ties.
  SmallVector<const Item *> gemmItems;
  for (const Item &item : items)
    if (item.kind == sim::TaskKind::Gemm)
      gemmItems.push_back(&item);
  auto phasesFor = [&](unsigned i, int64_t target) {
    return gemmPhases(*gemmItems[i], target);
  };
  // Ops that start after the collective has ended with every GEMM on all
  // SMs start after it in every choice too (a target never makes an op
  // faster beside the collective, and only slower after it), so they run
  // alone: their GEMMs keep all SMs, and a target would only add its own
  // extra time to the window. Only the GEMMs before that point are tried.
  size_t beside =
      sim::runWindow(phases, collectiveBesideUs, collectiveUs).startedBeside;
  for (auto [i, g] : llvm::enumerate(e.gemms)) {
    if (allSms || gemmIndex[i] >= beside)
      continue;
    double full = window();
    phases[gemmIndex[i]] = phasesFor(i, left);
    if (faster(window(), full))
      g.smTarget = left;
    else
      phases[gemmIndex[i]] = phasesFor(i, 0);
  }
  // Each GEMM's two windows, the others as chosen.
  e.timeline = sim::runWindow(phases, collectiveBesideUs, collectiveUs);
  for (auto [i, g] : llvm::enumerate(e.gemms)) {
    if (gemmIndex[i] >= beside) {
      sim::WindowPhases full = phasesFor(i, 0), reduced = phasesFor(i, left);
      g.fullWindowUs = e.timeline.windowUs();
      g.reducedWindowUs = g.fullWindowUs + reduced.afterUs - full.afterUs;
      continue;
    }
    phases[gemmIndex[i]] = phasesFor(i, 0);
    g.fullWindowUs = window();
    phases[gemmIndex[i]] = phasesFor(i, left);
    g.reducedWindowUs = window();
    phases[gemmIndex[i]] = phasesFor(i, g.smTarget);
  }
  return e;
}

FailureOr<SmallVector<WindowDecision>>
mlir::tandem::assignSmTargets(func::FuncOp func, const CostModel &model,
                              ArrayRef<int64_t> candidates) {
  SmallVector<WindowDecision> decisions;
  if (func.isExternal())
    return decisions;
  const GpuSpec &gpu = model.gpu();
  OpTimer timer(model);

  for (Block &block : func.getBody()) {
    // The windows of this block, as intervals of op positions.
    llvm::DenseMap<Operation *, unsigned> position;
    // Compute ops and SM collectives before each position, so that a
    // window's contents are counted without walking it (windows of a long
    // program overlap, and walking each made this quadratic).
    SmallVector<unsigned> computeBefore{0}, smCommBefore{0};
    for (auto [index, op] : llvm::enumerate(block)) {
      position[&op] = index;
      computeBefore.push_back(computeBefore.back() +
                              isa<ComputeOpInterface>(&op));
      smCommBefore.push_back(
          smCommBefore.back() +
          (isa<CollectiveOpInterface>(&op) && !isCopyEngine(&op)));
    }
    struct Interval {
      CollectiveOpInterface start;
      Operation *wait;
      unsigned from, to;
    };
    SmallVector<Interval> windows;
    for (Operation &op : block) {
      auto start = dyn_cast<CollectiveOpInterface>(&op);
      // A collective on the copy engines holds no SMs: no budget to choose,
      // and the compute beside it keeps every SM.
      if (!start || !start.isAsync() || isCopyEngine(&op))
        continue;
      Operation *wait = getWaitOf(start);
      if (!wait || wait->getBlock() != &block || !op.isBeforeInBlock(wait))
        continue;
      if (!timer.group(start))
        return op.emitError()
               << "process group " << start.getGroupAttr() << " not found";
      windows.push_back({start, wait, position[&op], position[wait]});
    }
    // Another collective in flight during a window: a window that
    // intersects it, or a collective issued inside it. Intersections come
    // from one sweep over the windows sorted by start (each window's start
    // is a distinct position): a window intersects an earlier-starting one
    // iff the latest end among those is past its start, and a
    // later-starting one iff the next start is before its end.
    SmallVector<bool> intersects(windows.size(), false);
    {
      SmallVector<unsigned> order(windows.size());
      for (unsigned i = 0; i < order.size(); ++i)
        order[i] = i;
      llvm::sort(order, [&](unsigned a, unsigned b) {
        return windows[a].from < windows[b].from;
      });
      unsigned maxEnd = 0;
      for (unsigned n = 0; n < order.size(); ++n) {
        const Interval &w = windows[order[n]];
        if (n > 0 && maxEnd > w.from)
          intersects[order[n]] = true;
        if (n + 1 < order.size() && windows[order[n + 1]].from < w.to)
          intersects[order[n]] = true;
        maxEnd = std::max(maxEnd, w.to);
      }
    }
    // Estimates, shared by the windows an op falls in.
    ComputeCache estimates(model);

    for (auto [index, w] : llvm::enumerate(windows)) {
      CollectiveOpInterface start = w.start;
      Operation *wait = w.wait;
      WindowDecision d;
      d.start = start;
      d.wait = wait;
      d.defaultCommSms = gpu.collectiveSms;
      d.candidates.assign(candidates.begin(), candidates.end());

      // Strictly between the start and the wait.
      bool overlapping =
          intersects[index] || smCommBefore[w.to] > smCommBefore[w.from + 1];
      d.computeOps = computeBefore[w.to] - computeBefore[w.from + 1];
      if (d.computeOps == 0 || overlapping) {
        d.status = d.computeOps == 0 ? WindowStatus::NoCompute
                                     : WindowStatus::Overlapping;
        decisions.push_back(std::move(d));
        continue;
      }
      // A window that overlaps nothing: the windows walked here are
      // disjoint, so the walks add up to the block's length.
      SmallVector<ComputeOpInterface> computeOps;
      for (Operation *it = start->getNextNode(); it != wait;
           it = it->getNextNode())
        if (auto compute = dyn_cast<ComputeOpInterface>(it))
          computeOps.push_back(compute);

      SmallVector<Item> items;
      for (ComputeOpInterface compute : computeOps) {
        std::string error;
        std::optional<ComputeEstimate> alone = estimates.tryGet(compute, error);
        if (!alone)
          return compute->emitError() << error;
        Item item;
        item.op = compute;
        item.aloneUs = alone->timeUs;
        if (alone->tiles > 0) {
          item.kind = sim::TaskKind::Gemm;
          item.wavesAlone = alone->waves;
        } else {
          item.kind = alone->memoryBound ? sim::TaskKind::Memory
                                         : sim::TaskKind::Compute;
        }
        items.push_back(item);
      }
      d.status = WindowStatus::Decided;

      // Each GEMM's target is chosen per k (greedily: the k is shared, the
      // targets are independent given k), then the fastest k wins. Ties go
      // to the target's default budget, then to the smaller budget.
      std::optional<Evaluation> best;
      auto better = [&](const Evaluation &a, const Evaluation &b) {
        double aUs = a.timeline.windowUs(), bUs = b.timeline.windowUs();
        if (faster(aUs, bUs))
          return true;
        if (faster(bUs, aUs))
          return false;
        if ((a.commSms == d.defaultCommSms) != (b.commSms == d.defaultCommSms))
          return a.commSms == d.defaultCommSms;
        return a.commSms < b.commSms;
      };
      for (int64_t k : candidates) {
        Evaluation e = evaluate(start, items, k, /*allSms=*/false, model, timer,
                                estimates);
        if (!best || better(e, *best))
          best = std::move(e);
      }
      Evaluation defaults = evaluate(start, items, d.defaultCommSms,
                                     /*allSms=*/true, model, timer, estimates);
      d.commSms = best->commSms;
      d.windowUs = best->timeline.windowUs();
      d.computeEndUs = best->timeline.computeEndUs;
      d.collectiveEndUs = best->timeline.collectiveEndUs;
      d.defaultWindowUs = defaults.timeline.windowUs();
      d.gemms = std::move(best->gemms);
      decisions.push_back(std::move(d));
    }
  }
  return decisions;
}

unsigned mlir::tandem::applySmTargets(ArrayRef<WindowDecision> decisions) {
  unsigned retargeted = 0;
  for (const WindowDecision &d : decisions) {
    if (!d.decided())
      continue;
    Builder b(d.start->getContext());
    d.start->setAttr(kCommSmsAttrName, b.getI64IntegerAttr(d.commSms));
    for (const GemmTarget &g : d.gemms) {
      if (g.smTarget > 0) {
        g.op->setAttr(kSmTargetAttrName, b.getI64IntegerAttr(g.smTarget));
        ++retargeted;
      } else {
        g.op->removeAttr(kSmTargetAttrName);
      }
    }
  }
  return retargeted;
}

void mlir::tandem::explainSmTargets(ArrayRef<WindowDecision> decisions,
                                    const GpuSpec &gpu, RemarkLog &log) {
  for (const WindowDecision &d : decisions) {
    switch (d.status) {
    case WindowStatus::NoCompute:
      log.remark(d.start) << "no compute overlaps this collective; its CTA "
                             "budget is left unchanged";
      continue;
    case WindowStatus::Overlapping:
      log.remark(d.start)
          << "another collective is in flight during this window; its CTA "
             "budget and its GEMMs' SM targets are left unchanged (the model "
             "prices one collective at a time)";
      continue;
    case WindowStatus::Decided:
      break;
    }
    Diagnostic &remark = log.remark(d.start);
    remark << "CTA budget " << d.commSms << " of {";
    llvm::interleaveComma(d.candidates, remark);
    remark << "}: window " << us(d.windowUs) << " predicted (compute ends at "
           << us(d.computeEndUs) << ", collective at " << us(d.collectiveEndUs)
           << "); " << us(d.defaultWindowUs) << " with the defaults ("
           << d.defaultCommSms << " CTAs, all SMs)";

    int64_t left = gpu.smCount - d.commSms;
    for (const GemmTarget &g : d.gemms) {
      if (g.smTarget > 0) {
        log.remark(g.op) << "tandem.sm_target = " << g.smTarget << ": "
                         << g.wavesAlone << " waves on " << gpu.smCount
                         << " SMs, " << g.wavesBeside << " waves on "
                         << g.smTarget << " SMs; window "
                         << us(g.reducedWindowUs) << ", " << us(g.fullWindowUs)
                         << " with all SMs";
      } else {
        log.remark(g.op) << "keeps all SMs: " << g.wavesAlone << " waves on "
                         << gpu.smCount << " SMs, " << g.wavesBeside
                         << " waves on the " << left
                         << " SMs the collective leaves; window "
                         << us(g.fullWindowUs) << ", " << us(g.reducedWindowUs)
                         << " with tandem.sm_target = " << left;
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// SM residency relief
//===----------------------------------------------------------------------===//

FailureOr<ResidencyRelief>
mlir::tandem::relieveSmResidency(func::FuncOp func, const CostModel &model,
                                 const SimulationReport *before) {
  ResidencyRelief relief;
  const GpuSpec &gpu = model.gpu();
  if (!gpu.gemmsHoldSms || func.isExternal() || !func.getBody().hasOneBlock())
    return relief;
  std::optional<SimulationReport> own;
  if (!before) {
    FailureOr<SimulationReport> report =
        simulateFunction(func, model, /*spanOnly=*/true);
    if (failed(report))
      return failure();
    own = std::move(*report);
    before = &*own;
  }
  relief.spanBeforeUs = relief.spanAfterUs = before->spanUs;
  if (before->model.function() != func)
    return relief; // Not the function that was simulated: nothing to do.
  ArrayRef<Operation *> ops = before->model.ops();
  const std::vector<sim::Task> &tasks = before->model.problem().tasks;
  const std::vector<sim::Timing> &timing = before->result.timings;

  // Every collective that waited, and the GEMMs without room for it that
  // ran while it waited. GEMMs sorted by start: those that overlap a wait
  // started at most the longest GEMM's duration before it.
  SmallVector<size_t> gemmsByStart;
  double longestUs = 0;
  for (auto [j, g] : llvm::enumerate(tasks))
    if (g.kind == sim::TaskKind::Gemm) {
      gemmsByStart.push_back(j);
      longestUs = std::max(longestUs, timing[j].endUs - timing[j].startUs);
    }
  llvm::stable_sort(gemmsByStart, [&](size_t a, size_t b) {
    return timing[a].startUs < timing[b].startUs;
  });
  for (auto [i, t] : llvm::enumerate(tasks)) {
    double waited = timing[i].admittedUs - timing[i].startUs;
    if (t.kind != sim::TaskKind::Collective || waited <= 1e-6)
      continue;
    ResidencyWait wait;
    wait.collective = ops[i];
    wait.waitedUs = waited;
    wait.commSms = t.commSms;
    int64_t target = gpu.smCount - t.commSms;
    SmallVector<size_t> overlapping;
    auto first = llvm::partition_point(gemmsByStart, [&](size_t j) {
      return timing[j].startUs < timing[i].startUs - longestUs - 1.0;
    });
    for (auto it = first; it != gemmsByStart.end(); ++it) {
      size_t j = *it;
      if (timing[j].startUs >= timing[i].admittedUs - 1e-9)
        break;
      const sim::Task &g = tasks[j];
      if (g.smTarget > 0 && g.smTarget <= target)
        continue;
      if (timing[j].endUs > timing[i].startUs + 1e-9)
        overlapping.push_back(j);
    }
    llvm::sort(overlapping); // In program order, as the tasks are.
    for (size_t j : overlapping)
      wait.gemms.push_back(ops[j]);
    if (!wait.gemms.empty())
      relief.waits.push_back(std::move(wait));
  }

  // A wait is worth relieving only if it is longer than what the smaller
  // targets add to its GEMMs alone (the cost model's estimate).
  auto extraUs = [&](const ResidencyWait &w) {
    double extra = 0;
    for (Operation *g : w.gemms) {
      auto compute = cast<ComputeOpInterface>(g);
      std::string error;
      std::optional<ComputeEstimate> full = model.compute(compute, error);
      std::optional<ComputeEstimate> reduced =
          model.compute(compute, error, gpu.smCount - w.commSms);
      if (!full || !reduced)
        return std::numeric_limits<double>::infinity();
      extra += reduced->timeUs - full->timeUs;
    }
    return extra;
  };
  SmallVector<ResidencyWait *> worth;
  for (ResidencyWait &w : relief.waits) {
    w.extraUs = extraUs(w);
    if (w.waitedUs > w.extraUs)
      worth.push_back(&w);
    else
      w.outcome = ResidencyWait::Outcome::NotWorth;
  }
  llvm::stable_sort(worth, [](ResidencyWait *a, ResidencyWait *b) {
    return a->waitedUs > b->waitedUs;
  });

  // Applies the targets of `group` (a GEMM takes the smallest its waits
  // need); returns the previous attributes.
  Builder b(func.getContext());
  auto apply = [&](ArrayRef<ResidencyWait *> group) {
    SmallVector<std::pair<Operation *, Attribute>> previous;
    for (ResidencyWait *w : group)
      for (Operation *g : w->gemms) {
        int64_t target = gpu.smCount - w->commSms;
        auto current = g->getAttrOfType<IntegerAttr>(kSmTargetAttrName);
        if (current && current.getInt() <= target)
          continue;
        previous.push_back({g, current});
        g->setAttr(kSmTargetAttrName, b.getI64IntegerAttr(target));
      }
    return previous;
  };
  auto restore = [](ArrayRef<std::pair<Operation *, Attribute>> previous) {
    for (auto [op, attr] : llvm::reverse(previous)) {
      if (attr)
        op->setAttr(kSmTargetAttrName, attr);
      else
        op->removeAttr(kSmTargetAttrName);
    }
  };
  // Keeps `group`'s targets if the simulated step gets shorter. An attempt
  // changes only GEMMs' targets: it reruns the engine on the simulated
  // problem with those tasks' targets changed, as simulateFunction would
  // build it from the attributes (without pricing every op again).
  sim::Problem problem = before->model.problem();
  auto setTargets = [&](ArrayRef<std::pair<Operation *, Attribute>> previous) {
    for (auto [op, attr] : previous)
      problem.tasks[*before->model.taskOf(op)].smTarget =
          getSmTarget(op).value_or(0);
  };
  double best = before->spanUs;
  std::optional<double> rejectedUs; // The first attempt that did not pay.
  auto tryGroup = [&](ArrayRef<ResidencyWait *> group) -> LogicalResult {
    SmallVector<std::pair<Operation *, Attribute>> previous = apply(group);
    if (previous.empty()) {
      // Its GEMMs already have the targets (kept from an earlier group).
      for (ResidencyWait *w : group)
        w->outcome = ResidencyWait::Outcome::Relieved;
      return success();
    }
    setTargets(previous);
    std::string error;
    std::optional<sim::Result> after = sim::simulate(problem, error);
    if (!after) {
      restore(previous);
      setTargets(previous);
      return func.emitError() << error;
    }
    if (faster(after->spanUs, best)) {
      best = after->spanUs;
      for (ResidencyWait *w : group)
        w->outcome = ResidencyWait::Outcome::Relieved;
      for (auto [op, attr] : previous)
        relief.targets.push_back(
            {op, op->getAttrOfType<IntegerAttr>(kSmTargetAttrName).getInt()});
    } else {
      restore(previous);
      setTargets(previous);
      if (!rejectedUs)
        rejectedUs = after->spanUs;
      for (ResidencyWait *w : group)
        w->triedSpanUs = after->spanUs;
    }
    return success();
  };
  // All at once first. If that does not pay, the waits class by class: a
  // class is one situation repeated (every layer and micro-batch of a step
  // repeats its waits), i.e. waits of the same length on collectives of the
  // same kind, size, group and budget behind GEMMs of the same shapes. The
  // classes whose wait is largest against what the targets cost their
  // GEMMs go first. Then the longest waits one by one. Each try costs one
  // run of the engine; both lists are capped.
  constexpr size_t kClassTries = 16, kSingleTries = 4;
  if (!worth.empty()) {
    if (failed(tryGroup(worth)))
      return failure();
    if (relief.targets.empty() && worth.size() > 1) {
      using Key = std::vector<uintptr_t>;
      llvm::MapVector<Key, SmallVector<ResidencyWait *>,
                      std::map<Key, unsigned>>
          classes;
      for (ResidencyWait *w : worth) {
        auto collective = cast<CollectiveOpInterface>(w->collective);
        std::vector<uintptr_t> key = {
            uintptr_t(collective.getCollectiveKind()),
            uintptr_t(collective.getPayloadBytes()),
            uintptr_t(collective.getGroupAttr().getAsOpaquePointer()),
            uintptr_t(w->commSms), uintptr_t(std::llround(w->waitedUs * 10))};
        for (Operation *g : w->gemms) {
          key.push_back(uintptr_t(g->getName().getAsOpaquePointer()));
          for (Type t : g->getOperandTypes())
            key.push_back(uintptr_t(t.getAsOpaquePointer()));
          for (Type t : g->getResultTypes())
            key.push_back(uintptr_t(t.getAsOpaquePointer()));
        }
        classes[std::move(key)].push_back(w);
      }
      SmallVector<ArrayRef<ResidencyWait *>> order;
      for (auto &entry : classes)
        if (entry.second.size() > 1)
          order.push_back(entry.second);
      auto ratio = [](ArrayRef<ResidencyWait *> ws) {
        double waited = 0, extra = 0;
        for (ResidencyWait *w : ws) {
          waited += w->waitedUs;
          extra += w->extraUs;
        }
        return extra > 0 ? waited / extra
                         : std::numeric_limits<double>::infinity();
      };
      llvm::stable_sort(
          order, [&](ArrayRef<ResidencyWait *> a, ArrayRef<ResidencyWait *> b) {
            return ratio(a) > ratio(b);
          });
      if (order.size() > 1 ||
          (order.size() == 1 && order.front().size() < worth.size()))
        for (ArrayRef<ResidencyWait *> group :
             ArrayRef(order).take_front(std::min(kClassTries, order.size())))
          if (failed(tryGroup(group)))
            return failure();
      size_t singles = 0;
      for (ResidencyWait *w : worth) {
        if (singles == kSingleTries)
          break;
        if (w->outcome == ResidencyWait::Outcome::Relieved)
          continue;
        ++singles;
        if (failed(tryGroup({w})))
          return failure();
      }
    }
  }
  relief.applied = !relief.targets.empty();
  relief.spanAfterUs = relief.applied ? best : rejectedUs.value_or(best);
  return relief;
}

void mlir::tandem::explainResidencyRelief(const ResidencyRelief &relief,
                                          const GpuSpec &gpu, RemarkLog &log) {
  llvm::DenseMap<Operation *, double> waitedBehind;
  for (const ResidencyWait &w : relief.waits)
    if (w.outcome == ResidencyWait::Outcome::Relieved)
      for (Operation *g : w.gemms)
        waitedBehind[g] += w.waitedUs;
  for (auto [op, target] : relief.targets)
    log.remark(op) << "tandem.sm_target = " << target
                   << ": collectives issued while it held every SM waited "
                   << us(waitedBehind.lookup(op))
                   << " for SMs (SM residency); step "
                   << us(relief.spanBeforeUs) << " -> "
                   << us(relief.spanAfterUs);
  for (const ResidencyWait &w : relief.waits) {
    if (w.outcome == ResidencyWait::Outcome::Relieved)
      continue;
    Diagnostic &remark = log.remark(w.collective);
    remark << "waits " << us(w.waitedUs) << " for SMs behind " << w.gemms.size()
           << " GEMM(s) sized for all SMs (SM residency); left alone: ";
    if (w.outcome == ResidencyWait::Outcome::NotWorth)
      remark << "sizing them for " << gpu.smCount - w.commSms
             << " SMs would add " << us(w.extraUs)
             << " to them, more than the wait";
    else
      remark << "SM targets there do not shorten the step ("
             << us(relief.spanBeforeUs) << " -> " << us(w.triedSpanUs) << ")";
  }
}
