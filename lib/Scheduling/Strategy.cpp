//===- Strategy.cpp - Overlap strategies and the automatic choice ---------===//

#include "tandem/Scheduling/Strategy.h"
#include "tandem/Scheduling/AvoidOverlap.h"
#include "tandem/Scheduling/CopyEngines.h"
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
    {OverlapStrategy::Split, "split", PipelinePhase::None, true, false, true},
    {OverlapStrategy::SplitReschedule, "split+reschedule", PipelinePhase::None,
     true, true, true},
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
  if (phases.split) {
    BatchSplitOptions split;
    split.memoryBudget = options.memoryBudget;
    split.maxInFlight = options.maxInFlight;
    split.waveAware = options.waveAwareParts;
    split.copyEngines = options.copyEngines;
    split.judgeWithBudgets = true;
    split.remarks = remarks;
    // A candidate the simulator cannot run has its errors emitted; the
    // strategy's own simulation then fails the same way.
    (void)splitBatch(func, timer, split);
  }
  if (phases.pipeline != PipelinePhase::None) {
    PipelineOptions pipeline;
    pipeline.transformerEnginePreset =
        phases.pipeline == PipelinePhase::TePreset;
    pipeline.memoryBudget = options.memoryBudget;
    pipeline.copyEngines = options.copyEngines;
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
  // Pairs a diagnosis found harmful are kept apart before anything is
  // priced on the final order.
  avoidHarmfulOverlaps(func, options.memoryBudget, options.remarks);
  if (options.copyEngines) {
    CopyEngineOptions ce;
    ce.memoryBudget = options.memoryBudget;
    FailureOr<CopyEngineDecision> moved =
        assignCopyEngines(func, timer.costModel(), ce);
    // As below: a failure has been reported at the op.
    if (failed(moved))
      return;
    if (options.remarks)
      explainCopyEngines(*moved, *options.remarks);
  }
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
    if (s.overlap && s.reschedule && s.pipeline == base.pipeline &&
        s.split == base.split)
      return &s;
  return nullptr;
}

namespace {
/// `auto`'s search, in the order of its phases: candidates (one copy of the
/// function per strategy, built and simulated chain by chain), the SM
/// residency relief on the most promising ones, the decision, and applying
/// the winner with its recorded explanations.
class AutoSearch {
public:
  AutoSearch(func::FuncOp func, OpTimer &timer, const OverlapOptions &options)
      : func(func), model(timer.costModel()), options(options),
        ctx(func->getContext()), symbols(func->getParentOfType<ModuleOp>()),
        explain(options.remarks != nullptr) {
    base = options;
    base.remarks = nullptr; // Each candidate writes its own log.
    // The relief needs a simulation of each candidate: done below, on the
    // candidates' own simulations.
    base.relieveResidency = false;
  }
  ~AutoSearch() {
    for (func::FuncOp copy : copies)
      symbols.erase(copy);
  }

  LogicalResult buildCandidates();
  LogicalResult relieveResidency();
  StrategyChoice chooseAndApply();

private:
  void makeCopies();
  void simulate(Candidate &c);
  void runChain(const StrategyPhases &phases, bool spareThreads);
  LogicalResult relieve(Candidate &c);
  RemarkLog *logOf(Candidate &c) { return explain ? &c.own : nullptr; }
  Candidate &candidate(OverlapStrategy s) { return candidates[indexOf(s)]; }

  func::FuncOp func;
  const CostModel &model;
  const OverlapOptions &options;
  OverlapOptions base;
  MLIRContext *ctx;
  SymbolTable symbols;
  bool explain;
  std::array<Candidate, kNumStrategies> candidates;
  std::array<RemarkLog, kNumStrategies> sharedLogs;
  SmallVector<func::FuncOp> copies;
  std::atomic<bool> failedSimulation{false};
};
} // namespace

/// One empty copy of the function per candidate but `none` (the input),
/// inserted into the module here, on this thread (symbol insertion renames
/// and is not thread-safe); the bodies are filled and transformed in
/// parallel.
void AutoSearch::makeCopies() {
  for (const StrategyPhases &s : kStrategies) {
    Candidate &c = candidate(s.strategy);
    c.phases = &s;
    if (!s.overlap) {
      c.func = func;
      continue;
    }
    c.func = func.cloneWithoutRegions();
    symbols.insert(c.func); // renames the copy to a unique name
    copies.push_back(c.func);
  }
}

void AutoSearch::simulate(Candidate &c) {
  FailureOr<SimulationReport> report =
      simulateFunction(c.func, model, /*spanOnly=*/true);
  if (failed(report)) {
    failedSimulation = true;
    return;
  }
  c.spanUs = report->spanUs;
  c.report = std::move(*report);
}

/// A chain: a base strategy (no AG-WGRAD) and its extension with AG-WGRAD,
/// which starts from a copy of the base taken before the CTA budgets (which
/// come last in every strategy). Each chain has its own OpTimer (it caches)
/// and simulates its two candidates as soon as they are built (read-only).
/// With `spareThreads`, its two ends run in parallel too (nested, so only
/// when the pool is larger than the outer tasks: on a small pool the
/// nesting only adds waiting).
void AutoSearch::runChain(const StrategyPhases &phases, bool spareThreads) {
  auto fill = [](func::FuncOp to, func::FuncOp from) {
    IRMapping mapping;
    from.getBody().cloneInto(&to.getBody(), mapping);
  };
  Candidate &b = candidate(phases.strategy);
  Candidate &e = candidate(extensionOf(phases)->strategy);
  RemarkLog *shared = explain ? &sharedLogs[indexOf(phases.strategy)] : nullptr;
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
}

/// Candidates: every chain, and the input's simulation as a task of its
/// own, so that a short chain's simulations run while a long chain is still
/// transforming.
LogicalResult AutoSearch::buildCandidates() {
  makeCopies();
  SmallVector<std::function<void()>> tasks;
  bool spareThreads = false; // Set once the number of outer tasks is known.
  // Later strategies build larger candidates (the TE chain's ring steps
  // make it the largest): start them first.
  for (const StrategyPhases &s : llvm::reverse(kStrategies))
    if (s.overlap && !s.reschedule)
      tasks.push_back([this, &s, &spareThreads] { runChain(s, spareThreads); });
  tasks.push_back([this] { simulate(candidate(OverlapStrategy::None)); });
  spareThreads =
      ctx->isMultithreadingEnabled() && ctx->getNumThreads() > tasks.size();
  parallelForEach(ctx, tasks,
                  [](const std::function<void()> &task) { task(); });
  return failure(failedSimulation);
}

LogicalResult AutoSearch::relieve(Candidate &c) {
  FailureOr<ResidencyRelief> relief =
      relieveSmResidency(c.func, model, &*c.report);
  if (failed(relief))
    return failure();
  if (relief->applied)
    c.spanUs = relief->spanAfterUs;
  if (explain)
    explainResidencyRelief(*relief, model.gpu(), c.own);
  return success();
}

/// The SM residency relief (which only ever shortens a candidate) on the
/// two fastest candidates other than the input (`none` stays as it is):
/// each costs one or more simulations, and a slower candidate would need
/// more than the relief usually gives to overtake them. Then on every
/// other candidate that could still overtake the best (the relief removes
/// waits for SMs and only slows what it changes, so it shortens a span by
/// at most the time collectives waited): `auto` is never predicted slower
/// than a named strategy, which gets the relief too.
LogicalResult AutoSearch::relieveResidency() {
  if (!options.relieveResidency)
    return success();
  SmallVector<Candidate *> order;
  for (Candidate &c : candidates)
    if (c.phases->overlap)
      order.push_back(&c);
  llvm::stable_sort(
      order, [](Candidate *a, Candidate *b) { return a->spanUs < b->spanUs; });
  SmallVector<Candidate *> first(
      order.begin(), order.begin() + std::min<size_t>(order.size(), 2));
  if (failed(failableParallelForEach(
          ctx, first, [&](Candidate *c) { return relieve(*c); })))
    return failure();
  // Then every other candidate that could still overtake the best (the
  // relief removes waits for SMs and only slows what it changes, so it
  // shortens a span by at most the time collectives waited): `auto` is
  // never predicted slower than any named strategy, which gets the relief
  // too.
  for (Candidate *c : llvm::drop_begin(order, first.size())) {
    double bestUs = candidates.front().spanUs;
    for (const Candidate &other : candidates)
      bestUs = std::min(bestUs, other.spanUs);
    double waitedUs = 0;
    for (auto [task, timing] : llvm::zip_equal(c->report->model.problem().tasks,
                                               c->report->result.timings))
      if (task.kind == sim::TaskKind::Collective)
        waitedUs += timing.admittedUs - timing.startUs;
    if (c->spanUs - waitedUs < bestUs && failed(relieve(*c)))
      return failure();
  }
  return success();
}

/// Decision (the shortest predicted span; the earlier strategy wins ties),
/// apply (the winner's body replaces the function's) and explain (the
/// winner's recorded logs, not a rerun).
StrategyChoice AutoSearch::chooseAndApply() {
  StrategyChoice choice;
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

FailureOr<StrategyChoice>
mlir::tandem::chooseOverlapStrategy(func::FuncOp func, OpTimer &timer,
                                    const OverlapOptions &options) {
  AutoSearch search(func, timer, options);
  if (failed(search.buildCandidates()) || failed(search.relieveResidency()))
    return failure();
  return search.chooseAndApply();
}
