//===- RowSplit.cpp - How ops relate to a split of their rows -------------===//

#include "tandem/Scheduling/RowSplit.h"
#include "tandem/Dialect/Tandem/TandemOps.h"

using namespace mlir;
using namespace mlir::tandem;

static RankedTensorType tensorOf(Type type) {
  if (auto future = dyn_cast<FutureType>(type))
    type = future.getValueType();
  return dyn_cast<RankedTensorType>(type);
}

std::optional<RowSplitRule> mlir::tandem::getRowSplitRule(Operation *op) {
  RowSplitRule rule;
  if (auto ew = dyn_cast<ElementwiseOp>(op)) {
    for (unsigned i = 0, e = ew->getNumOperands(); i < e; ++i)
      rule.rowOperands.push_back(i);
    rule.rowResults.push_back(0);
    return rule;
  }
  if (isa<NormOp>(op)) {
    rule.rowOperands.push_back(0); // the weight stays whole
    rule.rowResults.push_back(0);
    return rule;
  }
  if (isa<NormGradOp>(op)) {
    rule.rowOperands = {0, 1}; // output gradient, input; not the weight
    rule.rowResults.push_back(0);
    rule.partialResults.push_back(1);
    return rule;
  }
  if (auto mm = dyn_cast<MatmulOp>(op)) {
    if (mm.getTransposeLhs())
      return std::nullopt;
    rule.rowOperands.push_back(0);
    rule.rowResults.push_back(0);
    return rule;
  }
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  if (!collective)
    return std::nullopt;
  // The group size is the ratio of the rows (the verifier also hashes
  // functions that are not in a module, where the group cannot be looked
  // up).
  RankedTensorType in = tensorOf(op->getOperand(0).getType());
  RankedTensorType out = tensorOf(op->getResult(0).getType());
  if (!in || !out || in.getRank() == 0 || out.getRank() == 0 ||
      in.isDynamicDim(0) || out.isDynamicDim(0) || in.getDimSize(0) == 0 ||
      out.getDimSize(0) == 0)
    return std::nullopt;
  int64_t inRows = in.getDimSize(0), outRows = out.getDimSize(0);
  rule.rowOperands.push_back(0);
  rule.rowResults.push_back(0);
  switch (collective.getCollectiveKind()) {
  case CollectiveKind::all_gather:
  case CollectiveKind::reduce_scatter: {
    auto dim = op->getAttrOfType<IntegerAttr>("dim");
    if (!dim || dim.getInt() != 0)
      return std::nullopt;
    if (collective.getCollectiveKind() == CollectiveKind::all_gather) {
      if (outRows % inRows != 0)
        return std::nullopt;
      rule.scale = outRows / inRows;
    } else {
      if (inRows % outRows != 0)
        return std::nullopt;
      rule.divide = inRows / outRows;
    }
    return rule;
  }
  case CollectiveKind::all_reduce:
    return rule;
  case CollectiveKind::all_to_all:
  case CollectiveKind::permute:
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<int64_t>
mlir::tandem::getResultInterleave(const RowSplitRule &rule,
                                  int64_t interleave) {
  if (interleave < 1 || interleave % rule.divide != 0)
    return std::nullopt;
  return interleave / rule.divide * rule.scale;
}

bool mlir::tandem::canCutRows(Type type, int64_t parts, int64_t interleave) {
  RankedTensorType t = tensorOf(type);
  if (!t || t.getRank() == 0 || t.isDynamicDim(0) || parts < 1 ||
      interleave < 1)
    return false;
  int64_t rows = t.getDimSize(0);
  return rows % (parts * interleave) == 0 && rows / (parts * interleave) > 0;
}

Type mlir::tandem::scaleRows(Type type, int64_t numerator,
                             int64_t denominator) {
  RankedTensorType t = tensorOf(type);
  SmallVector<int64_t> shape(t.getShape());
  shape[0] = shape[0] * numerator / denominator;
  auto scaled = RankedTensorType::get(shape, t.getElementType());
  if (isa<FutureType>(type))
    return FutureType::get(type.getContext(), scaled);
  return scaled;
}

bool mlir::tandem::contractsRows(Operation *op) {
  auto mm = dyn_cast<MatmulOp>(op);
  return mm && mm.getTransposeLhs() && !mm.getTransposeRhs();
}
