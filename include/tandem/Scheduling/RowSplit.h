//===- RowSplit.h - How ops relate to a split of their rows ------*- C++
//-*-===//
//
// The rule behind batch splitting (tandem-split-batch) and the schedule
// verifier's proof of a split program, kept in one place.
//
// A part is `tandem.slice dim 0 chunk p of k interleave i`: the rows seen as
// i groups of k equal blocks, block p of every group. An op is row-local
// when part p of its row results is the op applied to part p of its row
// operands (with the same interleave) and its other operands whole:
// element-wise ops, norms, a matmul's row operand (not transposed), and the
// collectives that act on rows: an all-gather along dimension 0 of part p
// (interleave i) is part p of the gathered tensor with interleave i * size,
// a reduce-scatter along dimension 0 divides the interleave by the group
// size (which must divide it), an all-reduce keeps it. A norm's weight
// gradient sums over the rows: the parts' gradients add up to it. A matmul
// with a transposed row operand (a wgrad) contracts over the rows: the same
// permutation of both operands' rows leaves it unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_ROWSPLIT_H
#define TANDEM_SCHEDULING_ROWSPLIT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir {
namespace tandem {

/// What follows the rows in a row-local op.
struct RowSplitRule {
  /// Operands cut into parts with the rows; the others stay whole.
  llvm::SmallVector<unsigned, 4> rowOperands;
  /// Results that are parts of the unsplit results.
  llvm::SmallVector<unsigned, 2> rowResults;
  /// Results that sum over the rows: the parts' results add up to them.
  llvm::SmallVector<unsigned, 2> partialResults;
  /// The row results' interleave is the operands' times `scale` (an
  /// all-gather's group size) or divided by `divide` (a reduce-scatter's).
  int64_t scale = 1, divide = 1;
};

/// The rule of `op` if it is row-local; std::nullopt otherwise (an op a
/// split must assemble its operands for).
std::optional<RowSplitRule> getRowSplitRule(Operation *op);

/// The interleave of the row results when the row operands are parts with
/// `interleave`; std::nullopt where the group size does not divide it.
std::optional<int64_t> getResultInterleave(const RowSplitRule &rule,
                                           int64_t interleave);

/// Whether `type` (a ranked tensor, or a future of one) can be cut into
/// `parts` parts with `interleave`: dimension 0 divides into
/// interleave * parts blocks.
bool canCutRows(Type type, int64_t parts, int64_t interleave);

/// `type` (a ranked tensor or a future of one) with dimension 0 multiplied
/// by `numerator` and divided by `denominator`.
Type scaleRows(Type type, int64_t numerator, int64_t denominator);

/// Whether `op` contracts over the rows of both operands: a matmul with a
/// transposed row operand (`transpose_lhs`, a wgrad) whose rhs is not
/// transposed, so that both operands' dimension 0 is the contraction.
bool contractsRows(Operation *op);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_ROWSPLIT_H
