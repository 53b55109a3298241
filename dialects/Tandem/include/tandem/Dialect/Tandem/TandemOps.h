//===- TandemOps.h - Operations of the tandem dialect ------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_TANDEM_TANDEMOPS_H
#define TANDEM_DIALECT_TANDEM_TANDEMOPS_H

#include "tandem/Dialect/Tandem/TandemDialect.h"
#include "tandem/Dialect/Tandem/TandemInterfaces.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace tandem {

/// The tensor a collective yields: its result type, or the type inside the
/// future for a `_start` form.
RankedTensorType getCollectiveResultTensorType(Value result);

/// Payload bytes of a collective (see CollectiveOpInterface).
int64_t getCollectivePayloadBytes(CollectiveOpInterface op);

/// Bytes of a ranked tensor with a static shape; element types narrower than
/// a byte are rounded up.
int64_t getTensorBytes(RankedTensorType type);

/// Bytes a layout op (slice, concat, ring_concat) with result type `result`
/// moves: none for a view (a contiguous dim-0 slice, SliceOp::isView),
/// otherwise its whole result read and written once. Concats are copies:
/// the runtime does not yet have producers write their chunks in place
/// (docs/cost-model.md, "Layout ops"). The cost model, the pipeline pass's
/// candidates and the plan lowering use this one rule.
double getLayoutBytes(bool view, RankedTensorType result);

/// Whether `block` can be written straight into the result of the one
/// concat that uses it (a contiguous concat; other users read the block
/// there): one concat uses it, once, it is not returned, and it is the
/// single result of a
/// kernel, a copying slice or a collective (or the wait on such a
/// collective's only future) in the concat's block, not a view, an
/// argument or another assembly.
bool isInPlaceBlock(Value block);

/// The process group a collective names, or null if it does not resolve.
class GroupOp;
GroupOp lookupGroup(Operation *from, FlatSymbolRefAttr group);

} // namespace tandem
} // namespace mlir

#define GET_OP_CLASSES
#include "tandem/Dialect/Tandem/TandemOps.h.inc"

#endif // TANDEM_DIALECT_TANDEM_TANDEMOPS_H
