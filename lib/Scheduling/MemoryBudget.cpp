//===- MemoryBudget.cpp - The memory-budget rule of every rewrite ---------===//

#include "tandem/Scheduling/MemoryBudget.h"
#include "tandem/Analysis/MemoryLiveness.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tandem;

MemoryBudget::MemoryBudget(Block &block, int64_t budgetBytes)
    : budgetBytes(std::max<int64_t>(budgetBytes, 0)) {
  if (!enabled())
    return;
  inputPeakBytes = computePeakMemory(block).peakBytes;
  limitBytes = std::max(this->budgetBytes, inputPeakBytes);
}

std::optional<int64_t> MemoryBudget::exceeded(Block &block) const {
  if (!enabled())
    return std::nullopt;
  int64_t peak = computePeakMemory(block).peakBytes;
  if (peak > limitBytes)
    return peak;
  return std::nullopt;
}
