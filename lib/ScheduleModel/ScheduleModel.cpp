//===- ScheduleModel.cpp - A function as a multi-stream problem -----------===//

#include "tandem/ScheduleModel/ScheduleModel.h"
#include "tandem/ScheduleModel/GroupTable.h"
#include "tandem/ScheduleModel/StreamMap.h"

using namespace mlir;
using namespace mlir::tandem;

std::string mlir::tandem::opLabel(Operation *op, unsigned position) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return (op->getName().getStringRef() + "#" + llvm::Twine(position)).str();
}

sim::Problem mlir::tandem::emptyProblem(const CostModel &model) {
  sim::Problem problem;
  problem.smCount = model.gpu().smCount;
  problem.gemmsHoldSms = model.gpu().gemmsHoldSms;
  problem.eventLatencyUs = model.gpu().eventLatencyUs;
  problem.contention = model.contention();
  return problem;
}

sim::Task mlir::tandem::computeTask(const ComputeEstimate &e,
                                    const GpuSpec &gpu, int64_t smTarget) {
  sim::Task task;
  task.aloneUs = e.timeUs;
  if (e.tiles > 0) {
    task.kind = sim::TaskKind::Gemm;
    task.tiles = e.tiles;
    task.waveUs = e.tileUs;
    task.floorUs = e.floorUs;
    task.overheadUs = gpu.launchOverheadUs;
    task.smTarget = smTarget;
  } else {
    task.kind = e.memoryBound ? sim::TaskKind::Memory : sim::TaskKind::Compute;
  }
  return task;
}

sim::Task mlir::tandem::collectiveTask(const CollectiveEstimate &e,
                                       int64_t ctas, StringRef fabric) {
  sim::Task task;
  task.kind = sim::TaskKind::Collective;
  task.aloneUs = e.timeUs;
  task.commSms = ctas;
  task.fabric = fabric.str();
  return task;
}

FailureOr<ScheduleModel>
ScheduleModel::build(func::FuncOp func, const CostModel &model,
                     const ScheduleModelOptions &options) {
  if (func.isExternal())
    return func.emitError("cannot simulate a function without a body");
  if (!func.getBody().hasOneBlock())
    return func.emitError("tandem-simulate needs a single-block function; '@")
           << func.getSymName() << "' has " << func.getBody().getBlocks().size()
           << " blocks";
  Block &block = func.getBody().front();
  const GpuSpec &gpu = model.gpu();

  ScheduleModel result;
  result.func = func;
  sim::Problem &problem = result.prob;
  problem = emptyProblem(model);
  StreamNumbering streams;
  GroupTable groups;
  // Collectives of one shape on one group cost the same (a step repeats them
  // per layer and micro-batch); structurally identical compute ops too.
  CollectiveEstimateCache collectiveEstimates(model);
  ComputeEstimateCache estimates(model);

  size_t numOps = block.getOperations().size();
  problem.tasks.reserve(numOps);
  result.taskOps.reserve(numOps);
  unsigned position = 0;
  for (Operation &op : block) {
    ++position;
    if (isa<func::ReturnOp>(op))
      continue;
    // The dialect's verifier has checked the schedule attributes' types and
    // their ranges for the module's target; the ranges that depend on the
    // target are checked again for the model's, which a caller may have
    // replaced by a preset.
    bool scheduled = !op.getDiscardableAttrDictionary().empty();
    std::optional<sim::Task> priced;
    if (options.pricer)
      priced = options.pricer(&op);
    sim::Task task = priced.value_or(sim::Task{});
    if (options.nameTasks)
      task.name = opLabel(&op, position);
    if (auto compute = dyn_cast<ComputeOpInterface>(&op)) {
      if (!priced) {
        std::optional<int64_t> smTarget =
            scheduled ? getSmTarget(&op) : std::nullopt;
        if (smTarget)
          if (std::optional<std::string> error =
                  checkSmTarget(*smTarget, gpu.smCount))
            return op.emitError() << *error;
        std::string error;
        std::optional<ComputeEstimate> e = estimates.get(compute, error);
        if (!e)
          return op.emitError() << error;
        task = computeTask(*e, gpu, smTarget.value_or(0));
        if (options.nameTasks)
          task.name = opLabel(&op, position);
      }
      ++result.numComputeOps;
      result.computeUs += task.aloneUs;
    } else if (auto collective = dyn_cast<CollectiveOpInterface>(&op)) {
      const GroupSpec *group = groups.lookup(collective);
      if (!group)
        return op.emitError()
               << "process group @" << collective.getGroupAttr().getValue()
               << " not found";
      if (!priced) {
        std::optional<int64_t> ctas =
            scheduled ? getCommSms(&op) : std::nullopt;
        if (ctas)
          if (std::optional<std::string> error =
                  checkCommSms(*ctas, gpu.smCount))
            return op.emitError() << *error;
        bool copyEngine = isCopyEngine(&op);
        if (copyEngine)
          if (std::optional<std::string> error =
                  checkCopyEngine(collective, *group, model))
            return op.emitError() << *error;
        CollectiveEstimate e =
            collectiveEstimates.get(collective, *group, ctas.value_or(0));
        std::string name = std::move(task.name);
        task = collectiveTask(
            e, copyEngine ? 0 : ctas.value_or(gpu.collectiveSms), "");
        task.copyEngine = copyEngine;
        task.name = std::move(name);
      }
      task.fabric = collective.getGroupAttr().getValue().str();
      ++result.numCollectives;
      result.commUs += task.aloneUs;
    } else if (isa<WaitOp>(op)) {
      task.kind = sim::TaskKind::Wait;
      task.aloneUs = 0;
    } else {
      return op.emitError() << "'" << op.getName()
                            << "' has no cost model: tandem-simulate knows "
                               "tandem compute ops, collectives and waits";
    }
    task.stream = streams.assign(&op);
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (auto it = result.taskIndex.find(def); it != result.taskIndex.end())
          task.deps.push_back(it->second);
    result.taskIndex[&op] = problem.tasks.size();
    result.taskOps.push_back(&op);
    problem.tasks.push_back(std::move(task));
  }
  problem.streamNames.assign(streams.names.begin(), streams.names.end());
  return result;
}
