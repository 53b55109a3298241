//===- Strategy.cpp - Overlap strategies and the automatic choice ---------===//

#include "tandem/Scheduling/Strategy.h"
#include "tandem/Scheduling/SmTargets.h"
#include "tandem/Simulator/Simulate.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/ScopeExit.h"

#include <array>
#include <atomic>

using namespace mlir;
using namespace mlir::tandem;

//===----------------------------------------------------------------------===//
// The strategies
//===----------------------------------------------------------------------===//

static constexpr StrategyPhases kStrategies[] = {
    {OverlapStrategy::None, "none", PipelinePhase::None, false, false},
    {OverlapStrategy::Bulk, "bulk", PipelinePhase::None, true, false},
    {OverlapStrategy::Reschedule, "reschedule", PipelinePhase::None, true,
     true},
    {OverlapStrategy::Pipeline, "pipeline", PipelinePhase::ByCost, true, false},
    {OverlapStrategy::PipelineReschedule, "pipeline+reschedule",
     PipelinePhase::ByCost, true, true},
    {OverlapStrategy::TePreset, "te-preset", PipelinePhase::TePreset, true,
     false},
    {OverlapStrategy::TePresetReschedule, "te-preset+reschedule",
     PipelinePhase::TePreset, true, true},
};
static constexpr size_t kNumStrategies = std::size(kStrategies);

/// Candidates and tables are indexed by the enum's value.
static size_t indexOf(OverlapStrategy strategy) {
  return static_cast<size_t>(strategy);
}

ArrayRef<StrategyPhases> mlir::tandem::getStrategies() { return kStrategies; }

const StrategyPhases &mlir::tandem::getStrategyPhases(OverlapStrategy s) {
  const StrategyPhases &phases = kStrategies[indexOf(s)];
  assert(phases.strategy == s && "kStrategies is in enum order");
  return phases;
}

StringRef mlir::tandem::stringifyStrategy(OverlapStrategy strategy) {
  return getStrategyPhases(strategy).name;
}

std::optional<OverlapStrategy> mlir::tandem::parseStrategy(StringRef name) {
  for (const StrategyPhases &s : kStrategies)
    if (s.name == name)
      return s.strategy;
  return std::nullopt;
}

/// The phases before AG-WGRAD: pipelines, async collectives, bulk overlap.
static void runBasePhases(func::FuncOp func, OpTimer &timer,
                          const StrategyPhases &phases,
                          const OverlapOptions &options, RemarkLog *remarks) {
  if (phases.pipeline != PipelinePhase::None) {
    PipelineOptions pipeline;
    pipeline.transformerEnginePreset =
        phases.pipeline == PipelinePhase::TePreset;
    pipeline.memoryBudget = options.memoryBudget;
    pipeline.remarks = remarks;
    pipelineCollectiveMatmuls(func, timer, pipeline);
  }
  convertToAsyncCollectives(func);
  BulkOverlapOptions bulk;
  bulk.maxInFlight = options.maxInFlight;
  bulk.memoryBudget = options.memoryBudget;
  bulk.remarks = remarks;
  bulkOverlap(func, timer, bulk);
}

/// AG-WGRAD, for the strategies that have it.
static void runReschedulePhase(func::FuncOp func, OpTimer &timer,
                               const OverlapOptions &options,
                               RemarkLog *remarks) {
  RescheduleOptions reschedule;
  reschedule.memoryBudget = options.memoryBudget;
  reschedule.remarks = remarks;
  rescheduleWgrad(func, timer, reschedule);
}

void mlir::tandem::applyOverlapStrategy(func::FuncOp func, OpTimer &timer,
                                        OverlapStrategy strategy,
                                        const OverlapOptions &options) {
  const StrategyPhases &phases = getStrategyPhases(strategy);
  if (!phases.overlap)
    return;
  runBasePhases(func, timer, phases, options, options.remarks);
  if (phases.reschedule)
    runReschedulePhase(func, timer, options, options.remarks);
  assignCtaBudgets(func, timer, options);
}

void mlir::tandem::assignCtaBudgets(func::FuncOp func, OpTimer &timer,
                                    const OverlapOptions &options) {
  const GpuSpec &gpu = timer.costModel().gpu();
  SmallVector<int64_t> budgets;
  for (int64_t k : kDefaultCommSmsCandidates)
    if (k < gpu.smCount)
      budgets.push_back(k);
  FailureOr<SmallVector<WindowDecision>> decisions =
      assignSmTargets(func, timer.costModel(), budgets);
  // The strategy's ops are all priceable (the simulator checks the same);
  // a failure here has already been reported at the op.
  if (failed(decisions))
    return;
  applySmTargets(*decisions);
  if (options.remarks)
    explainSmTargets(*decisions, gpu, *options.remarks);
  if (!options.relieveResidency)
    return;
  FailureOr<ResidencyRelief> relief =
      relieveSmResidency(func, timer.costModel());
  if (succeeded(relief) && options.remarks)
    explainResidencyRelief(*relief, gpu, *options.remarks);
}

//===----------------------------------------------------------------------===//
// auto
//===----------------------------------------------------------------------===//

namespace {
/// One strategy tried by `auto`: its copy of the function, its simulation
/// and, with remarks, its explanations. A strategy with AG-WGRAD starts from
/// its base's copy before the CTA budgets, so the base's first phases are
/// explained once, in the base's `shared` log, which both emit first.
struct Candidate {
  const StrategyPhases *phases = nullptr;
  func::FuncOp func;
  std::optional<SimulationReport> report;
  double spanUs = 0;
  RemarkLog *shared = nullptr;
  RemarkLog own;
};
} // namespace

/// The strategy with AG-WGRAD that extends `base` (same pipelines).
static const StrategyPhases *extensionOf(const StrategyPhases &base) {
  for (const StrategyPhases &s : kStrategies)
    if (s.overlap && s.reschedule && s.pipeline == base.pipeline)
      return &s;
  return nullptr;
}

FailureOr<StrategyChoice>
mlir::tandem::chooseOverlapStrategy(func::FuncOp func, OpTimer &timer,
                                    const OverlapOptions &options) {
  StrategyChoice choice;
  auto module = func->getParentOfType<ModuleOp>();
  MLIRContext *ctx = module.getContext();
  SymbolTable symbols(module);
  bool explain = options.remarks != nullptr;
  OverlapOptions base = options;
  base.remarks = nullptr; // Each candidate writes its own log.
  // The relief needs a simulation of each candidate: done below, on the
  // candidates' own simulations.
  base.relieveResidency = false;

  // One empty copy of the function per candidate but `none` (the input),
  // inserted into the module here, on this thread (symbol insertion renames
  // and is not thread-safe); the bodies are filled and transformed below in
  // parallel.
  std::array<Candidate, kNumStrategies> candidates;
  std::array<RemarkLog, kNumStrategies> sharedLogs;
  SmallVector<func::FuncOp> copies;
  llvm::scope_exit cleanup([&] {
    for (func::FuncOp copy : copies)
      symbols.erase(copy);
  });
  for (const StrategyPhases &s : kStrategies) {
    Candidate &c = candidates[indexOf(s.strategy)];
    c.phases = &s;
    if (!s.overlap) {
      c.func = func;
      continue;
    }
    c.func = func.cloneWithoutRegions();
    symbols.insert(c.func); // renames the copy to a unique name
    copies.push_back(c.func);
  }
  auto fill = [](func::FuncOp to, func::FuncOp from) {
    IRMapping mapping;
    from.getBody().cloneInto(&to.getBody(), mapping);
  };

  const CostModel &model = timer.costModel();
  std::atomic<bool> failedSimulation{false};
  auto simulate = [&](Candidate &c) {
    FailureOr<SimulationReport> report =
        simulateFunction(c.func, model, /*spanOnly=*/true);
    if (failed(report)) {
      failedSimulation = true;
      return;
    }
    c.spanUs = report->spanUs;
    c.report = std::move(*report);
  };
  auto logOf = [&](Candidate &c) { return explain ? &c.own : nullptr; };

  // Chains: each base strategy (no AG-WGRAD) and its extension with
  // AG-WGRAD, which starts from a copy of the base taken before the CTA
  // budgets (which come last in every strategy). Each chain has its own
  // OpTimer (it caches) and simulates its two candidates as soon as they
  // are built (read-only), so that a short chain's simulations run while a
  // long chain is still transforming; the input's simulation is a task of
  // its own. With threads to spare, each chain's two ends run in parallel
  // too (nested, so only when the pool is larger than the outer tasks: on a
  // small pool the nesting only adds waiting).
  bool spareThreads = false; // Set once the number of outer tasks is known.
  auto chain = [&](const StrategyPhases &phases) {
    Candidate &b = candidates[indexOf(phases.strategy)];
    Candidate &e = candidates[indexOf(extensionOf(phases)->strategy)];
    RemarkLog *shared =
        explain ? &sharedLogs[indexOf(phases.strategy)] : nullptr;
    b.shared = e.shared = shared;
    OpTimer local(model), extendedTimer(model);
    fill(b.func, func);
    runBasePhases(b.func, local, phases, base, shared);
    fill(e.func, b.func);
    OverlapOptions baseOptions = base, extendedOptions = base;
    baseOptions.remarks = logOf(b);
    extendedOptions.remarks = logOf(e);
    std::function<void()> finish[] = {
        [&] {
          assignCtaBudgets(b.func, local, baseOptions);
          simulate(b);
        },
        [&] {
          runReschedulePhase(e.func, extendedTimer, base, logOf(e));
          assignCtaBudgets(e.func, extendedTimer, extendedOptions);
          simulate(e);
        }};
    if (spareThreads)
      parallelForEach(ctx, finish,
                      [](const std::function<void()> &task) { task(); });
    else
      for (const std::function<void()> &task : finish)
        task();
  };
  SmallVector<std::function<void()>> tasks;
  // Later strategies build larger candidates (the TE chain's ring steps
  // make it the largest): start them first.
  for (const StrategyPhases &s : llvm::reverse(kStrategies))
    if (s.overlap && !s.reschedule)
      tasks.push_back([&chain, &s] { chain(s); });
  tasks.push_back(
      [&] { simulate(candidates[indexOf(OverlapStrategy::None)]); });
  spareThreads =
      ctx->isMultithreadingEnabled() && ctx->getNumThreads() > tasks.size();
  parallelForEach(ctx, tasks,
                  [](const std::function<void()> &task) { task(); });
  if (failedSimulation)
    return failure();

  // The SM residency relief (which only ever shortens a candidate) on the
  // two fastest candidates other than the input (`none` stays as it is):
  // each costs one or more simulations, and a slower candidate would need
  // more than the relief usually gives to overtake them. Then on
  // `te-preset`, the peer baseline, if it could still overtake the best
  // (the relief removes waits for SMs and only slows what it changes, so
  // it shortens a span by at most the time collectives waited): `auto` is
  // never predicted slower than strategy=te-preset, which gets the relief
  // too.
  if (options.relieveResidency) {
    auto relieve = [&](Candidate *c) -> LogicalResult {
      FailureOr<ResidencyRelief> relief =
          relieveSmResidency(c->func, model, &*c->report);
      if (failed(relief))
        return failure();
      if (relief->applied)
        c->spanUs = relief->spanAfterUs;
      if (explain)
        explainResidencyRelief(*relief, model.gpu(), c->own);
      return success();
    };
    SmallVector<Candidate *> order;
    for (Candidate &c : candidates)
      if (c.phases->overlap)
        order.push_back(&c);
    llvm::stable_sort(order, [](Candidate *a, Candidate *b) {
      return a->spanUs < b->spanUs;
    });
    order.resize(std::min<size_t>(order.size(), 2));
    if (failed(failableParallelForEach(ctx, order, relieve)))
      return failure();
    Candidate *te = &candidates[indexOf(OverlapStrategy::TePreset)];
    if (!llvm::is_contained(order, te)) {
      double bestUs = candidates.front().spanUs;
      for (const Candidate &c : candidates)
        bestUs = std::min(bestUs, c.spanUs);
      double waitedUs = 0;
      for (auto [task, timing] : llvm::zip_equal(
               te->report->model.problem().tasks, te->report->result.timings))
        if (task.kind == sim::TaskKind::Collective)
          waitedUs += timing.admittedUs - timing.startUs;
      if (te->spanUs - waitedUs < bestUs && failed(relieve(te)))
        return failure();
    }
  }

  Candidate *best = nullptr;
  for (Candidate &c : candidates) {
    choice.spansUs.push_back({c.phases->strategy, c.spanUs});
    if (!best || c.spanUs < best->spanUs * (1 - 1e-9))
      best = &c;
  }
  choice.chosen = best->phases->strategy;
  if (best->func != func)
    func.getBody().takeBody(best->func.getBody());
  if (explain) {
    if (best->shared)
      options.remarks->append(std::move(*best->shared));
    options.remarks->append(std::move(best->own));
  }
  return choice;
}
