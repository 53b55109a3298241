//===- TandemDialect.h - The tandem dialect, types and attributes -*- C++ -*-===//
//
// Declares the dialect, its enumerations, the target attribute and the future
// type. Ops are in TandemOps.h.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_TANDEM_TANDEMDIALECT_H
#define TANDEM_DIALECT_TANDEM_TANDEMDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "tandem/Dialect/Tandem/TandemBounds.h"

#include "tandem/Dialect/Tandem/TandemOpsDialect.h.inc"

#include "tandem/Dialect/Tandem/TandemEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tandem/Dialect/Tandem/TandemAttributes.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tandem/Dialect/Tandem/TandemOpsTypes.h.inc"

#endif // TANDEM_DIALECT_TANDEM_TANDEMDIALECT_H
