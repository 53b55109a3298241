//===- MemoryBudget.h - The memory-budget rule of every rewrite -*- C++ -*-===//
//
// One rule for every scheduling algorithm that moves or splits ops: a rewrite
// may not raise the block's peak memory (MemoryLiveness.h) above the budget,
// or above the input's own peak where the input already exceeds the budget
// (then no rewrite may make it worse). A budget of 0 means no limit. The
// budget is hard: a rewrite that breaks it is undone, never kept.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_MEMORYBUDGET_H
#define TANDEM_SCHEDULING_MEMORYBUDGET_H

#include "mlir/IR/Block.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace tandem {

class MemoryBudget {
public:
  /// The rule for rewrites of `block` as it is now, under `budgetBytes`
  /// (<= 0: no budget).
  MemoryBudget(Block &block, int64_t budgetBytes);

  bool enabled() const { return budgetBytes > 0; }
  /// The budget asked for.
  int64_t budget() const { return budgetBytes; }
  /// The input's peak (0 without a budget: it is not measured then).
  int64_t inputPeak() const { return inputPeakBytes; }
  /// Whether the input alone already needs more than the budget.
  bool inputOver() const { return enabled() && inputPeakBytes > budgetBytes; }
  /// The most a rewrite may reach: max(budget, input peak); 0 without one.
  int64_t limit() const { return limitBytes; }

  /// The peak of `block` where it exceeds the limit, else std::nullopt
  /// (always std::nullopt without a budget).
  std::optional<int64_t> exceeded(Block &block) const;
  /// Whether `block` respects the limit.
  bool holds(Block &block) const { return !exceeded(block); }

private:
  int64_t budgetBytes, inputPeakBytes = 0, limitBytes = 0;
};

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_MEMORYBUDGET_H
