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
#include "tandem/Scheduling/Schedule.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

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
/// How the simulator treats a compute op (Simulate.cpp): a GEMM follows its
/// wave count, compute-bound work scales with 1 / SMs, bandwidth-bound work
/// ignores SMs.
enum class Kind { Gemm, Compute, Memory };

/// One compute op of a window, priced alone once.
struct Item {
  ComputeOpInterface op;
  Kind kind = Kind::Memory;
  double aloneUs = 0;
  int64_t wavesAlone = 0;
};

/// An op's time while the collective runs and once it has ended.
struct Phases {
  double besideUs = 0, afterUs = 0;
};

/// When the compute sequence and the collective end, from the start.
struct Timeline {
  double computeEndUs = 0, collectiveEndUs = 0;
  double windowUs() const { return std::max(computeEndUs, collectiveEndUs); }
};

/// A window's prediction for one CTA budget.
struct Evaluation {
  int64_t commSms = 0;
  Timeline timeline;
  SmallVector<GemmTarget> gemms;
};
} // namespace

/// Runs the window as the simulator's engine would: the collective and the
/// compute ops (one after another) start together; while both run, each op
/// progresses at 1 / besideUs and the collective at 1 / collectiveBesideUs;
/// once one side is done, the other continues at its alone rate.
static Timeline runWindow(ArrayRef<Phases> ops, double collectiveBesideUs,
                          double collectiveAloneUs) {
  Timeline t;
  double now = 0, collectiveLeft = 1.0; // Fraction of the collective's work.
  bool collectiveDone = false;
  for (const Phases &op : ops) {
    if (collectiveDone) {
      now += op.afterUs;
      continue;
    }
    double opUs = op.besideUs,
           collectiveUs = collectiveLeft * collectiveBesideUs;
    if (opUs < collectiveUs) {
      now += opUs;
      collectiveLeft -= opUs / collectiveBesideUs;
      continue;
    }
    now += collectiveUs;
    t.collectiveEndUs = now;
    collectiveDone = true;
    now += (1.0 - collectiveUs / opUs) * op.afterUs;
  }
  t.computeEndUs = now;
  if (!collectiveDone)
    t.collectiveEndUs = now + collectiveLeft * collectiveAloneUs;
  return t;
}

/// Compute estimates on a given SM count, memoised: each window evaluates
/// its GEMMs for every candidate budget and target.
class ComputeCache {
public:
  explicit ComputeCache(const CostModel &model) : model(model) {}
  const ComputeEstimate &get(ComputeOpInterface op, int64_t sms) {
    auto [it, inserted] = cache.try_emplace({op.getOperation(), sms});
    if (inserted) {
      std::string error; // Pricing cannot fail: every item was priced alone.
      it->second = *model.compute(op, error, sms);
    }
    return it->second;
  }

private:
  const CostModel &model;
  llvm::DenseMap<std::pair<Operation *, int64_t>, ComputeEstimate> cache;
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
    return Phases{estimates.get(item.op, beside).timeUs * c.gemmSlowdown,
                  estimates.get(item.op, target).timeUs};
  };

  Evaluation e;
  e.commSms = k;
  SmallVector<Phases> phases;
  SmallVector<size_t> gemmIndex; // Index into `phases` of each GEMM.
  for (const Item &item : items) {
    switch (item.kind) {
    case Kind::Memory:
      phases.push_back({item.aloneUs * c.memorySlowdown, item.aloneUs});
      break;
    case Kind::Compute:
      phases.push_back(
          {item.aloneUs * double(gpu.smCount) / double(left) * c.gemmSlowdown,
           item.aloneUs});
      break;
    case Kind::Gemm: {
      GemmTarget g;
      g.op = item.op;
      g.wavesAlone = item.wavesAlone;
      g.wavesBeside = estimates.get(item.op, left).waves;
      gemmIndex.push_back(phases.size());
      phases.push_back(gemmPhases(item, 0));
      e.gemms.push_back(g);
      break;
    }
    }
  }
  double collectiveUs = timer.collectiveUs(start, k);
  double collectiveBesideUs = collectiveUs * c.commSlowdown;
  auto window = [&] {
    return runWindow(phases, collectiveBesideUs, collectiveUs).windowUs();
  };

  // The budget is shared; given it, the targets are independent choices, so
  // each GEMM keeps the faster of its two in turn. All SMs win ties.
  SmallVector<const Item *> gemmItems;
  for (const Item &item : items)
    if (item.kind == Kind::Gemm)
      gemmItems.push_back(&item);
  auto phasesFor = [&](unsigned i, int64_t target) {
    return gemmPhases(*gemmItems[i], target);
  };
  for (auto [i, g] : llvm::enumerate(e.gemms)) {
    if (allSms)
      continue;
    double full = window();
    phases[gemmIndex[i]] = phasesFor(i, left);
    if (faster(window(), full))
      g.smTarget = left;
    else
      phases[gemmIndex[i]] = phasesFor(i, 0);
  }
  // Each GEMM's two windows, the others as chosen.
  for (auto [i, g] : llvm::enumerate(e.gemms)) {
    phases[gemmIndex[i]] = phasesFor(i, 0);
    g.fullWindowUs = window();
    phases[gemmIndex[i]] = phasesFor(i, left);
    g.reducedWindowUs = window();
    phases[gemmIndex[i]] = phasesFor(i, g.smTarget);
  }
  e.timeline = runWindow(phases, collectiveBesideUs, collectiveUs);
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
    for (auto [index, op] : llvm::enumerate(block))
      position[&op] = index;
    struct Interval {
      CollectiveOpInterface start;
      Operation *wait;
      unsigned from, to;
    };
    SmallVector<Interval> windows;
    for (Operation &op : block) {
      auto start = dyn_cast<CollectiveOpInterface>(&op);
      if (!start || !start.isAsync())
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
    // Uncontended estimates, shared by the windows an op falls in.
    llvm::DenseMap<Operation *, ComputeEstimate> aloneOf;
    ComputeCache estimates(model);

    for (auto [index, w] : llvm::enumerate(windows)) {
      CollectiveOpInterface start = w.start;
      Operation *wait = w.wait;
      WindowDecision d;
      d.start = start;
      d.wait = wait;
      d.defaultCommSms = gpu.collectiveSms;
      d.candidates.assign(candidates.begin(), candidates.end());

      bool overlapping = intersects[index];
      SmallVector<ComputeOpInterface> computeOps;
      for (Operation *it = start->getNextNode(); it != wait;
           it = it->getNextNode()) {
        if (isa<CollectiveOpInterface>(it))
          overlapping = true;
        if (auto compute = dyn_cast<ComputeOpInterface>(it))
          computeOps.push_back(compute);
      }
      d.computeOps = computeOps.size();
      if (computeOps.empty() || overlapping) {
        d.status = computeOps.empty() ? WindowStatus::NoCompute
                                      : WindowStatus::Overlapping;
        decisions.push_back(std::move(d));
        continue;
      }

      SmallVector<Item> items;
      for (ComputeOpInterface compute : computeOps) {
        auto cached = aloneOf.find(compute);
        if (cached == aloneOf.end()) {
          std::string error;
          std::optional<ComputeEstimate> alone = model.compute(compute, error);
          if (!alone)
            return compute->emitError() << error;
          cached = aloneOf.try_emplace(compute, *alone).first;
        }
        const ComputeEstimate &alone = cached->second;
        Item item;
        item.op = compute;
        item.aloneUs = alone.timeUs;
        if (alone.tiles > 0) {
          item.kind = Kind::Gemm;
          item.wavesAlone = alone.waves;
        } else {
          item.kind = alone.memoryBound ? Kind::Memory : Kind::Compute;
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

void mlir::tandem::emitSmTargetRemarks(ArrayRef<WindowDecision> decisions,
                                       const GpuSpec &gpu) {
  for (const WindowDecision &d : decisions) {
    switch (d.status) {
    case WindowStatus::NoCompute:
      d.start->emitRemark() << "no compute overlaps this collective; its CTA "
                               "budget is left unchanged";
      continue;
    case WindowStatus::Overlapping:
      d.start->emitRemark()
          << "another collective is in flight during this window; its CTA "
             "budget and its GEMMs' SM targets are left unchanged (the model "
             "prices one collective at a time)";
      continue;
    case WindowStatus::Decided:
      break;
    }
    auto remark = d.start->emitRemark();
    remark << "CTA budget " << d.commSms << " of {";
    llvm::interleaveComma(d.candidates, remark);
    remark << "}: window " << us(d.windowUs) << " predicted (compute ends at "
           << us(d.computeEndUs) << ", collective at " << us(d.collectiveEndUs)
           << "); " << us(d.defaultWindowUs) << " with the defaults ("
           << d.defaultCommSms << " CTAs, all SMs)";

    int64_t left = gpu.smCount - d.commSms;
    for (const GemmTarget &g : d.gemms) {
      if (g.smTarget > 0) {
        g.op->emitRemark() << "tandem.sm_target = " << g.smTarget << ": "
                           << g.wavesAlone << " waves on " << gpu.smCount
                           << " SMs, " << g.wavesBeside << " waves on "
                           << g.smTarget << " SMs; window "
                           << us(g.reducedWindowUs) << ", "
                           << us(g.fullWindowUs) << " with all SMs";
      } else {
        g.op->emitRemark() << "keeps all SMs: " << g.wavesAlone << " waves on "
                           << gpu.smCount << " SMs, " << g.wavesBeside
                           << " waves on the " << left
                           << " SMs the collective leaves; window "
                           << us(g.fullWindowUs) << ", "
                           << us(g.reducedWindowUs)
                           << " with tandem.sm_target = " << left;
      }
    }
  }
}
