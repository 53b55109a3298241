//===- ScheduleModel.h - A function as a multi-stream problem ---*- C++ -*-===//
//
// The layer below the simulator and the scheduling algorithms (CIRCT's
// scheduling "problem"): built once from a function, it holds one task per
// op in program order, keyed by op both ways, with the op's stream (the one
// StreamMap rule), its process group, its dependences (def-use edges) and
// its price under one cost model. The engine simulates its problem;
// algorithms read it, change task fields to try a decision (an SM target,
// say), re-run the engine, and apply what they keep to the IR once; the
// results come back per op.
//
// Prices are injectable: a TaskPricer replaces the cost model for tests and
// for front ends with their own costs, as CIRCT's operator types do.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULEMODEL_SCHEDULEMODEL_H
#define TANDEM_SCHEDULEMODEL_SCHEDULEMODEL_H

#include "tandem/Analysis/CostModel.h"
#include "tandem/Engine/Engine.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <vector>

namespace mlir {
namespace tandem {

/// A price for one op, for callers that replace the cost model: the fields
/// of sim::Task that describe the work (kind, aloneUs and, for GEMMs, tiles,
/// waveUs, floorUs and overheadUs; for collectives, commSms). The builder
/// sets the stream, the fabric (the group's name), the dependences and the
/// name. std::nullopt: price the op with the cost model.
using TaskPricer = std::function<std::optional<sim::Task>(Operation *)>;

/// The engine's problem for `model`'s target, without tasks: SM count, the
/// SM-residency rule and the contention table. Every problem the compiler
/// simulates (a function, or an algorithm's candidate) starts from this.
sim::Problem emptyProblem(const CostModel &model);

/// The task fields of a compute op priced `e` on `gpu`: a GEMM (wave model)
/// when the estimate has tiles, else compute- or bandwidth-bound work.
/// `smTarget` caps a GEMM's SMs (0 = all).
sim::Task computeTask(const ComputeEstimate &e, const GpuSpec &gpu,
                      int64_t smTarget = 0);

/// The task fields of a collective priced `e` holding `ctas` SMs on the
/// fabric `fabric` (its process group).
sim::Task collectiveTask(const CollectiveEstimate &e, int64_t ctas,
                         StringRef fabric);

struct ScheduleModelOptions {
  /// Name every task (traces, errors); a span-only caller saves the strings.
  bool nameTasks = true;
  /// Prices that replace the cost model's (see TaskPricer).
  TaskPricer pricer;
};

class ScheduleModel {
public:
  /// Builds the model of `func` (single block). Emits an error at the
  /// offending op and fails when an op is not a tandem compute op,
  /// collective or wait, cannot be priced, names a group that does not
  /// resolve, or carries an SM target or CTA budget out of range for the
  /// model's target (which may differ from the module's).
  static FailureOr<ScheduleModel>
  build(func::FuncOp func, const CostModel &model,
        const ScheduleModelOptions &options = {});

  func::FuncOp function() const { return func; }
  /// The engine's problem: tasks in program order, streams, contention.
  const sim::Problem &problem() const { return prob; }
  sim::Problem &problem() { return prob; }
  /// The op of each task, in task order.
  ArrayRef<Operation *> ops() const { return taskOps; }
  Operation *opOf(unsigned task) const { return taskOps[task]; }
  /// The task of `op`, or std::nullopt (the terminator, other functions).
  std::optional<unsigned> taskOf(Operation *op) const {
    auto it = taskIndex.find(op);
    if (it == taskIndex.end())
      return std::nullopt;
    return it->second;
  }

  /// Sums of uncontended times, and op counts.
  double computeUs = 0, commUs = 0;
  unsigned numComputeOps = 0, numCollectives = 0;

private:
  func::FuncOp func;
  sim::Problem prob;
  std::vector<Operation *> taskOps;
  llvm::DenseMap<Operation *, unsigned> taskIndex;
};

/// A readable name for an op in traces and errors: its NameLoc if it has
/// one, else the op name and its 1-based position in the block.
std::string opLabel(Operation *op, unsigned position);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULEMODEL_SCHEDULEMODEL_H
