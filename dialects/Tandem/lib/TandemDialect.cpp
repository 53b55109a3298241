//===- TandemDialect.cpp - Dialect registration and module attributes -----===//

#include "tandem/Dialect/Tandem/TandemOps.h"
#include "tandem/Dialect/Tandem/ScheduleAttributes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tandem;

#include "tandem/Dialect/Tandem/TandemOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tandem/Dialect/Tandem/TandemOpsTypes.cpp.inc"

void TandemDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tandem/Dialect/Tandem/TandemOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}

void TandemDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tandem/Dialect/Tandem/TandemOpsTypes.cpp.inc"
      >();
}

LogicalResult TandemDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  if (attr.getName() == getTargetAttrName()) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << getTargetAttrName()
                             << "' belongs on the module, not on '"
                             << op->getName() << "'";
    if (!isa<TargetAttr>(attr.getValue()))
      return op->emitError()
             << "'" << getTargetAttrName()
             << "' must be a #tandem.target attribute, got " << attr.getValue();
    return success();
  }
  return verifyScheduleAttribute(op, attr);
}
