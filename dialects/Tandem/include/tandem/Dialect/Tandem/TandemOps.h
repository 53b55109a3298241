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

/// The process group a collective names, or null if it does not resolve.
class GroupOp;
GroupOp lookupGroup(Operation *from, FlatSymbolRefAttr group);

} // namespace tandem
} // namespace mlir

#define GET_OP_CLASSES
#include "tandem/Dialect/Tandem/TandemOps.h.inc"

#endif // TANDEM_DIALECT_TANDEM_TANDEMOPS_H
