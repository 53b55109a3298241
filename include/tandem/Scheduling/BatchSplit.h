//===- BatchSplit.h - Split a step into independent parts --------*- C++
//-*-===//
//
// Batch splitting (issue 15, Domino's idea with the part count chosen by
// the cost model): every row-local op of the step (RowSplit.h) runs as k
// parts, each on 1/k of the rows, so that one part's native collective
// runs under another part's compute. Ops that are not row-local
// (attention, opaque kernels) take their operands assembled and their row
// users take slices again; wgrad GEMMs take every part's rows at once
// (in-place concats, the same order for both operands); the parts of a
// norm's weight gradient are added up. The parts are then ordered by a
// list scheduler over the cost model: a compute op that leads to a
// collective soonest goes first, a collective is issued as soon as its
// input is ready (never ahead of the program's frontier), and ops that
// feed no collective fill the gaps where they fit.
//
// The rewrite computes the same values (the schedule verifier proves it
// with RowSplit.h's rule); the memory budget stays a hard limit.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_BATCHSPLIT_H
#define TANDEM_SCHEDULING_BATCHSPLIT_H

#include "tandem/Scheduling/Schedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace tandem {

/// The part counts tried when the options leave the choice to the cost
/// model.
inline constexpr int64_t kSplitPartCandidates[] = {2, 4, 8};

struct BatchSplitOptions {
  /// Parts: 0 chooses among kSplitPartCandidates, no split, and no split
  /// with the ops reordered by the list scheduler (independent chains such
  /// as micro-batches interleaved), by simulating each with bulk overlap;
  /// 1 leaves the function as it is.
  int64_t parts = 0;
  /// Uneven parts forced: part p holds weights[p] of the weights' sum of
  /// every group of rows (overrides `parts`; empty = not forced).
  llvm::SmallVector<int64_t> weights;
  /// With `parts` 0: also try, for 2 and 4 parts, the uneven parts whose
  /// GEMMs fill the waves best where they beat equal parts.
  bool waveAware = true;
  /// Judge every candidate with its collectives moved to the copy engines
  /// where that pays (assignCopyEngines), as a strategy with copy engines
  /// runs them next: a split that suits SM collectives may not suit copy
  /// engines.
  bool copyEngines = false;
  /// Judge every candidate after the CTA budgets and SM-residency relief
  /// too (assignCtaBudgets, with `copyEngines`), the phases a strategy
  /// runs after the split: a split that wins before them may lose after.
  bool judgeWithBudgets = false;
  int64_t memoryBudget = 0; ///< Bytes; 0 = none.
  int64_t maxInFlight = 0;  ///< Bulk overlap's (0: no limit).
  /// Where the decision is explained (null: not explained).
  RemarkLog *remarks = nullptr;
};

struct BatchSplitCandidate {
  int64_t parts = 1;
  /// Uneven parts' sizes (empty: equal parts).
  llvm::SmallVector<int64_t> weights;
  /// With one part: the input reordered by the list scheduler, which
  /// interleaves its independent chains (micro-batches).
  bool reordered = false;
  double spanUs = 0;     ///< Simulated with async collectives and bulk overlap.
  int64_t peakBytes = 0; ///< Program-order peak (0 when no budget is set).
  bool overBudget = false;
};

struct BatchSplitResult {
  int64_t parts = 1; ///< Applied; 1 = left unsplit.
  /// The applied parts' weights (one each for equal parts).
  llvm::SmallVector<int64_t> weights;
  /// Applied with one part: the input's ops reordered by the list
  /// scheduler (micro-batches interleaved).
  bool reordered = false;
  unsigned splitOps = 0; ///< Ops of the input that run as parts.
  unsigned barriers = 0; ///< Ops that took assembled operands.
  /// Ops kept whole that read one part (a sequence's attention).
  unsigned onParts = 0;
  /// Slices and concats whose parts are the split's parts (the rows of
  /// one sequence, their join).
  unsigned seenThrough = 0;
  unsigned assemblies = 0;  ///< Concats built (in place or copies).
  unsigned slices = 0;      ///< Slices built (views or copies).
  unsigned partialSums = 0; ///< Additions of weight-gradient parts.
  /// Concats and slices that repeated an earlier one, merged into it.
  unsigned merged = 0;
  llvm::SmallVector<BatchSplitCandidate> candidates;
  /// Why the function was left alone, when it was not splittable at all.
  std::string notApplicable;
};

/// Splits `func` (blocking collectives, no schedule attributes yet) into
/// parts and orders them. Fails only when the simulator cannot run a
/// candidate (its errors are emitted).
FailureOr<BatchSplitResult> splitBatch(func::FuncOp func, OpTimer &timer,
                                       const BatchSplitOptions &options);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_BATCHSPLIT_H
