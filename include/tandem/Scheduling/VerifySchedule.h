//===- VerifySchedule.h - Prove a scheduled function safe -------*- C++ -*-===//
//
// Checks that a scheduled function can run on several streams without a race
// and computes what its unscheduled input computed:
//  (a) every use of a value on a stream other than its producer's is ordered
//      after the producer (events, stream order, the wait of a collective);
//  (b) the collective protocol: a `_start` is completed by one later wait in
//      its block, and event attributes are well formed and recorded before
//      they are waited for;
//  (c) each process group's collectives keep their issue order: `tandem.seq`
//      strictly increases in program order, and consecutive collectives of
//      one group on different streams are ordered;
//  (d) with a reference function, the returned values, the compute ops and
//      each group's collectives are the reference's, compared by structural
//      hashes.
// docs/passes/verify-schedule.md gives every check and its messages.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_VERIFYSCHEDULE_H
#define TANDEM_SCHEDULING_VERIFYSCHEDULE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace tandem {

struct VerifyScheduleOptions {
  /// Emit remarks: what could not be checked (collectives without
  /// `tandem.seq`, no reference) and a summary per verified function.
  bool remarks = true;
  /// Compare each group's collectives with the reference's in any order
  /// (same collectives, another issue order) instead of one by one: for
  /// schedules that reorder collectives on purpose (tandem-split-batch
  /// interleaving micro-batches). (c) still checks that the function's
  /// own issue order is consistent.
  bool allowReorderedCollectives = false;
};

/// Verifies `func` (a single block of tandem ops) and, when `reference` is
/// not null, compares it with `reference`, the same function before
/// scheduling (it may live in another module of the same context). Emits an
/// error, with notes at the other ops involved, for every problem found and
/// fails if there was any.
LogicalResult verifySchedule(func::FuncOp func, func::FuncOp reference,
                             const VerifyScheduleOptions &options = {});

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_VERIFYSCHEDULE_H
