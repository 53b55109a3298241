//===- Strategy.cpp - Overlap strategies and the automatic choice ---------===//

#include "tandem/Scheduling/Strategy.h"
#include "tandem/Scheduling/SmTargets.h"
#include "tandem/Simulator/Simulate.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/ScopeExit.h"

#include <atomic>

using namespace mlir;
using namespace mlir::tandem;

StringRef mlir::tandem::stringifyStrategy(OverlapStrategy strategy) {
  switch (strategy) {
  case OverlapStrategy::None:
    return "none";
  case OverlapStrategy::Bulk:
    return "bulk";
  case OverlapStrategy::Reschedule:
    return "reschedule";
  case OverlapStrategy::Pipeline:
    return "pipeline";
  case OverlapStrategy::PipelineReschedule:
    return "pipeline+reschedule";
  case OverlapStrategy::TePreset:
    return "te-preset";
  case OverlapStrategy::TePresetReschedule:
    return "te-preset+reschedule";
  }
  llvm_unreachable("unknown strategy");
}

void mlir::tandem::applyOverlapStrategy(func::FuncOp func, OpTimer &timer,
                                        OverlapStrategy strategy,
                                        const OverlapOptions &options) {
  if (strategy == OverlapStrategy::None)
    return;
  bool te = strategy == OverlapStrategy::TePreset ||
            strategy == OverlapStrategy::TePresetReschedule;
  if (strategy == OverlapStrategy::Pipeline ||
      strategy == OverlapStrategy::PipelineReschedule || te) {
    PipelineOptions pipeline;
    pipeline.transformerEnginePreset = te;
    pipeline.memoryBudget = options.memoryBudget;
    pipeline.emitRemarks = options.emitRemarks;
    pipelineCollectiveMatmuls(func, timer, pipeline);
  }
  convertToAsyncCollectives(func);
  BulkOverlapOptions bulk;
  bulk.maxInFlight = options.maxInFlight;
  bulk.memoryBudget = options.memoryBudget;
  bulk.emitRemarks = options.emitRemarks;
  bulkOverlap(func, timer, bulk);
  if (strategy == OverlapStrategy::Reschedule ||
      strategy == OverlapStrategy::PipelineReschedule ||
      strategy == OverlapStrategy::TePresetReschedule) {
    RescheduleOptions reschedule;
    reschedule.memoryBudget = options.memoryBudget;
    reschedule.emitRemarks = options.emitRemarks;
    rescheduleWgrad(func, timer, reschedule);
  }
  assignCtaBudgets(func, timer, options);
}

void mlir::tandem::assignCtaBudgets(func::FuncOp func, OpTimer &timer,
                                    const OverlapOptions &options) {
  const GpuSpec &gpu = timer.costModel().gpu();
  SmallVector<int64_t> budgets;
  for (int64_t k : {8, 16, 24, 32})
    if (k < gpu.smCount)
      budgets.push_back(k);
  FailureOr<SmallVector<WindowDecision>> decisions =
      assignSmTargets(func, timer.costModel(), budgets);
  // The strategy's ops are all priceable (the simulator checks the same);
  // a failure here has already been reported at the op.
  if (failed(decisions))
    return;
  applySmTargets(*decisions);
  if (options.emitRemarks)
    emitSmTargetRemarks(*decisions, gpu);
  if (!options.relieveResidency)
    return;
  FailureOr<ResidencyRelief> relief =
      relieveSmResidency(func, timer.costModel());
  if (succeeded(relief) && options.emitRemarks)
    emitResidencyRemarks(*relief, gpu);
}

FailureOr<StrategyChoice>
mlir::tandem::chooseOverlapStrategy(func::FuncOp func, OpTimer &timer,
                                    const OverlapOptions &options) {
  StrategyChoice choice;
  auto module = func->getParentOfType<ModuleOp>();
  SymbolTable symbols(module);
  OverlapOptions quiet = options;
  quiet.emitRemarks = false;
  // The relief needs a simulation of each candidate: done below, on the
  // candidates' own simulations.
  quiet.relieveResidency = false;
  RescheduleOptions reschedule;
  reschedule.memoryBudget = options.memoryBudget;
  reschedule.emitRemarks = false;
  BulkOverlapOptions bulkOptions;
  bulkOptions.maxInFlight = options.maxInFlight;
  bulkOptions.memoryBudget = options.memoryBudget;
  bulkOptions.emitRemarks = false;
  PipelineOptions pipelineOptions;
  pipelineOptions.memoryBudget = options.memoryBudget;
  pipelineOptions.emitRemarks = false;

  // One empty copy of the function per candidate, inserted into the module
  // here, on this thread (symbol insertion renames and is not thread-safe);
  // the candidates' bodies are filled and transformed below in parallel.
  SmallVector<func::FuncOp> copies;
  auto cleanup = llvm::make_scope_exit([&] {
    for (func::FuncOp copy : copies)
      symbols.erase(copy);
  });
  auto emptyCopy = [&] {
    func::FuncOp copy = func.cloneWithoutRegions();
    symbols.insert(copy); // renames the copy to a unique name
    copies.push_back(copy);
    return copy;
  };
  func::FuncOp bulk = emptyCopy(), rescheduled = emptyCopy(),
               pipelined = emptyCopy(), both = emptyCopy(), te = emptyCopy(),
               teRescheduled = emptyCopy();
  auto fill = [](func::FuncOp to, func::FuncOp from) {
    IRMapping mapping;
    from.getBody().cloneInto(&to.getBody(), mapping);
  };

  std::pair<OverlapStrategy, func::FuncOp> candidates[] = {
      {OverlapStrategy::None, func},
      {OverlapStrategy::Bulk, bulk},
      {OverlapStrategy::Reschedule, rescheduled},
      {OverlapStrategy::Pipeline, pipelined},
      {OverlapStrategy::PipelineReschedule, both},
      {OverlapStrategy::TePreset, te},
      {OverlapStrategy::TePresetReschedule, teRescheduled}};
  const CostModel &model = timer.costModel();
  std::vector<std::optional<SimulationReport>> reports(std::size(candidates));
  std::atomic<bool> failedSimulation{false};
  auto simulate = [&](size_t i) {
    FailureOr<SimulationReport> report =
        simulateFunction(candidates[i].second, model, /*spanOnly=*/true);
    if (failed(report))
      failedSimulation = true;
    else
      reports[i] = std::move(*report);
  };

  // Three independent chains, each a base strategy and its extension with
  // AG-WGRAD: the extension starts from a copy of the base taken before the
  // CTA budgets (which come last in every strategy). Each chain has its own
  // OpTimer (it caches) and simulates its two candidates as soon as they
  // are built (read-only), so that a short chain's simulations run while a
  // long chain is still transforming; the input's simulation is a task of
  // its own.
  // The four tasks below; with threads to spare, each chain's two ends run
  // in parallel too (nested, so only when the pool is larger than the outer
  // tasks: on a small pool the nesting only adds waiting).
  constexpr unsigned kTasks = 4;
  bool spareThreads = module.getContext()->isMultithreadingEnabled() &&
                      module.getContext()->getNumThreads() > kTasks;
  auto chain = [&](size_t baseIndex, std::optional<PipelineOptions> pipeline) {
    func::FuncOp base = candidates[baseIndex].second,
                 extended = candidates[baseIndex + 1].second;
    OpTimer local(model), extendedTimer(model);
    fill(base, func);
    if (pipeline)
      pipelineCollectiveMatmuls(base, local, *pipeline);
    convertToAsyncCollectives(base);
    bulkOverlap(base, local, bulkOptions);
    fill(extended, base);
    // From here the two candidates are independent (each with its own
    // timer): the base's budgets and simulation run beside the extension.
    std::function<void()> finish[] = {
        [&] {
          assignCtaBudgets(base, local, quiet);
          simulate(baseIndex);
        },
        [&] {
          rescheduleWgrad(extended, extendedTimer, reschedule);
          assignCtaBudgets(extended, extendedTimer, quiet);
          simulate(baseIndex + 1);
        }};
    if (spareThreads) {
      parallelForEach(module.getContext(), finish,
                      [](const std::function<void()> &task) { task(); });
    } else {
      for (const std::function<void()> &task : finish)
        task();
    }
  };
  PipelineOptions tePipeline = pipelineOptions;
  tePipeline.transformerEnginePreset = true;
  // Longest first: the TE chain's ring steps make it the largest.
  std::function<void()> tasks[kTasks] = {
      [&] { chain(5, tePipeline); }, [&] { chain(3, pipelineOptions); },
      [&] { chain(1, std::nullopt); }, [&] { simulate(0); }};
  parallelForEach(module.getContext(), tasks,
                  [](const std::function<void()> &task) { task(); });
  if (failedSimulation)
    return failure();
  SmallVector<std::optional<double>> spans(std::size(candidates));
  for (auto [i, report] : llvm::enumerate(reports))
    spans[i] = report->spanUs;

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
    auto relieve = [&](size_t i) -> LogicalResult {
      FailureOr<ResidencyRelief> relief =
          relieveSmResidency(candidates[i].second, model, &*reports[i]);
      if (failed(relief))
        return failure();
      if (relief->applied)
        spans[i] = relief->spanAfterUs;
      return success();
    };
    SmallVector<size_t> order;
    for (size_t i = 1; i < std::size(candidates); ++i)
      order.push_back(i);
    llvm::stable_sort(
        order, [&](size_t a, size_t b) { return *spans[a] < *spans[b]; });
    order.resize(std::min<size_t>(order.size(), 2));
    if (failed(failableParallelForEach(module.getContext(), order, relieve)))
      return failure();
    constexpr size_t kTePreset = 5;
    assert(candidates[kTePreset].first == OverlapStrategy::TePreset);
    if (!llvm::is_contained(order, kTePreset)) {
      double bestUs = *spans[0];
      for (const std::optional<double> &span : spans)
        bestUs = std::min(bestUs, *span);
      const SimulationReport &te = *reports[kTePreset];
      double waitedUs = 0;
      for (auto [task, timing] :
           llvm::zip_equal(te.model.problem().tasks, te.result.timings))
        if (task.kind == sim::TaskKind::Collective)
          waitedUs += timing.admittedUs - timing.startUs;
      if (*spans[kTePreset] - waitedUs < bestUs && failed(relieve(kTePreset)))
        return failure();
    }
  }

  double best = 0;
  func::FuncOp bestCopy; // null while the input itself is best
  for (auto [i, candidate] : llvm::enumerate(candidates)) {
    double span = *spans[i];
    choice.spansUs.push_back({candidate.first, span});
    if (i == 0 || span < best * (1 - 1e-9)) {
      best = span;
      choice.chosen = candidate.first;
      bestCopy = candidate.second == func ? func::FuncOp() : candidate.second;
    }
  }

  if (!options.emitRemarks) {
    if (bestCopy)
      func.getBody().takeBody(bestCopy.getBody());
    choice.applied = true;
  }
  return choice;
}
