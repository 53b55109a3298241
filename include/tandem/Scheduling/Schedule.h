//===- Schedule.h - Shared pieces of scheduling algorithms -*- C++ -*-===//
//
// What every overlap algorithm needs: the time of one op under the cost
// model, the legality of moving an op within its block (SSA order and the
// per-group issue order of collectives), and the start/wait pairs that form
// the windows compute can hide in.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_SCHEDULE_H
#define TANDEM_SCHEDULING_SCHEDULE_H

#include "tandem/Analysis/CostModel.h"
#include "tandem/Scheduling/RemarkLog.h"
#include "tandem/ScheduleModel/GroupTable.h"

#include "mlir/IR/Block.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <optional>

namespace mlir {
namespace tandem {

/// Uncontended times of ops under a cost model, honouring `tandem.sm_target`
/// and `tandem.comm_sms`; caches the process groups it looks up.
class OpTimer {
public:
  explicit OpTimer(const CostModel &model) : model(model), collectives(model) {}
  /// Time of `op` alone in microseconds: compute ops and collectives; 0 for
  /// waits and ops without a cost. std::nullopt (with `error` set) when the
  /// cost model cannot price the op.
  std::optional<double> timeUs(Operation *op, std::string &error);
  /// As above, for ops known to be priceable (returns 0 otherwise).
  double timeUs(Operation *op);
  /// Collective time with an explicit CTA budget.
  double collectiveUs(CollectiveOpInterface op, int64_t ctas);
  /// The group spec of a collective (nullptr if it does not resolve).
  const GroupSpec *group(CollectiveOpInterface op);
  const CostModel &costModel() const { return model; }

private:
  const CostModel &model;
  GroupTable groups;
  CollectiveEstimateCache collectives;
};

/// Program positions of a block's ops that stay cheap to query while ops
/// move. Operation::isBeforeInBlock recomputes the whole block's order after
/// most moves, which makes a pass that moves and compares in a loop
/// quadratic; this keeps a position per op and gives a moved op the middle
/// of its new neighbours' positions (renumbering only when a gap runs out).
class PositionIndex {
public:
  explicit PositionIndex(Block &block);
  /// Position of `op` (an op of the block).
  double of(Operation *op) const { return positions.lookup(op); }
  bool isBefore(Operation *a, Operation *b) const { return of(a) < of(b); }
  /// Records that `op` was moved or inserted; call after every move.
  void moved(Operation *op);
  /// Forgets `op`; call before erasing it.
  void erased(Operation *op) { positions.erase(op); }

private:
  void renumber();
  Block &block;
  llvm::DenseMap<Operation *, double> positions;
};

/// The wait that consumes a `_start` collective's future (null if none).
Operation *getWaitOf(CollectiveOpInterface start);
/// The `_start` collective a wait completes.
CollectiveOpInterface getStartOf(Operation *wait);

/// Whether `op` may be placed immediately before `point` (both in one
/// block): every operand is defined before the new position, every user
/// stays after it, and no collective on the same group is crossed.
bool canMoveBefore(Operation *op, Operation *point);

/// Whether two collectives run on the same process group.
bool sameGroup(CollectiveOpInterface a, CollectiveOpInterface b);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_SCHEDULE_H
