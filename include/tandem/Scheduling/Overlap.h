//===- Overlap.h - Bulk overlap and wgrad rescheduling ----------*- C++ -*-===//
//
// The scheduling algorithms behind tandem-async-collectives,
// tandem-bulk-overlap and tandem-reschedule-wgrad, as functions an ML
// compiler can call on a func.func. Each returns what it did; with
// a RemarkLog in its options it also explains every decision as a remark.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_OVERLAP_H
#define TANDEM_SCHEDULING_OVERLAP_H

#include "tandem/Scheduling/Schedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace tandem {

/// Replaces blocking collectives by `_start` + `tandem.wait` (the wait right
/// after its start) and stamps every collective with `tandem.seq`. Returns
/// the number of collectives converted.
unsigned convertToAsyncCollectives(func::FuncOp func);

struct BulkOverlapOptions {
  int64_t maxInFlight = 0;  ///< Per group; 0: no limit.
  int64_t memoryBudget = 0; ///< Bytes; 0 = none.
  /// Where the decisions are explained (null: not explained).
  RemarkLog *remarks = nullptr;
};

struct BulkOverlapResult {
  unsigned hoisted = 0, sunk = 0, budgetBlocked = 0;
};

/// Moves each start as early and each wait as late as dependences, the
/// per-group issue order, `maxInFlight` and the memory budget allow.
BulkOverlapResult bulkOverlap(func::FuncOp func, OpTimer &timer,
                              const BulkOverlapOptions &options);

struct RescheduleOptions {
  int64_t memoryBudget = 0; ///< Bytes; 0 = none.
  double fillLimit = 1.0;   ///< Fraction of a window's time to fill.
  /// After the moves, split a wgrad whose window is covered without half of
  /// it, and move that half into a later window that still has room.
  bool splitToFill = true;
  /// Where the decisions are explained (null: not explained).
  RemarkLog *remarks = nullptr;
};

struct RescheduleResult {
  unsigned moved = 0, kept = 0;
  unsigned split = 0; ///< wgrads split to fill a window.
  bool inputOverBudget = false;
};

/// AG-WGRAD: moves wgrad GEMMs with no downstream consumer into later
/// collectives' windows, chosen by the cost model.
RescheduleResult rescheduleWgrad(func::FuncOp func, OpTimer &timer,
                                 const RescheduleOptions &options);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_OVERLAP_H
