//===- AvoidOverlap.h - Keep apart what a diagnosis found harmful -*- C++
//-*-===//
//
// The prevention half of issue 17: ops that share a `tandem.avoid_overlap`
// pair id (written from a measured diagnosis, Lowering/DiagnosisFeedback.h)
// ran slower together than one after the other, so no strategy may place
// them concurrently again. Every strategy but `none` ends with this phase
// (before its CTA budgets, so that budgets, SM targets and `auto`'s
// simulation see the separated schedule).
//
// A collective and a compute op may run concurrently when the compute op is
// issued between the collective's `_start` and its `tandem.wait` (the compute
// stream reaches it while the collective may still run), or before the start
// without gating it (the collective waits only for its operands). In the
// first case the phase moves the wait up to just before the compute op: the
// compute stream then waits for the collective's completion first, and what
// the window still holds before that op stays overlapped. In the second it
// moves the compute op down to just after the wait.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_AVOIDOVERLAP_H
#define TANDEM_SCHEDULING_AVOIDOVERLAP_H

#include "tandem/Scheduling/RemarkLog.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace tandem {

struct AvoidOverlapResult {
  unsigned separated = 0; ///< Waits moved to keep a pair apart.
  unsigned apart = 0;     ///< Pairs the schedule already kept apart.
  unsigned kept = 0;      ///< Pairs this phase cannot separate.
};

/// Separates every pair of ops of `func` that share a `tandem.avoid_overlap`
/// id: a `_start` collective and a compute op issued in its window get the
/// wait moved above the compute op; a compute op issued before the start
/// that does not gate it moves below the wait. A move the dependences do
/// not allow, or that would raise the program-order peak above
/// `memoryBudget` (bytes, 0 = none; MemoryBudget.h), is not made and the
/// pair is kept, as is a pair of two collectives. With `remarks`, every pair
/// gets a remark naming both ops and what was done.
AvoidOverlapResult avoidHarmfulOverlaps(func::FuncOp func, int64_t memoryBudget,
                                        RemarkLog *remarks);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_AVOIDOVERLAP_H
