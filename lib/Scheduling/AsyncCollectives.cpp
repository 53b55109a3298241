//===- AsyncCollectives.cpp - Blocking collectives to start/wait ----------===//

#include "tandem/Dialect/Tandem/ScheduleAttributes.h"
#include "tandem/Scheduling/Overlap.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tandem;

//===----------------------------------------------------------------------===//
// Async conversion
//===----------------------------------------------------------------------===//

unsigned mlir::tandem::convertToAsyncCollectives(func::FuncOp func) {
  SmallVector<Operation *> collectives;
  func.walk([&](CollectiveOpInterface c) { collectives.push_back(c); });
  llvm::StringMap<int64_t> nextSeq;
  unsigned converted = 0;
  for (Operation *op : collectives) {
    auto collective = cast<CollectiveOpInterface>(op);
    Builder b(op->getContext());
    IntegerAttr seq =
        b.getI64IntegerAttr(nextSeq[collective.getGroupAttr().getValue()]++);
    if (collective.isAsync()) {
      op->setAttr(kSeqAttrName, seq);
      continue;
    }
    OpBuilder builder(op);
    RankedTensorType tensorType = collective.getResultTensorType();
    OperationState state(op->getLoc(),
                         (op->getName().getStringRef() + "_start").str());
    state.addOperands(op->getOperands());
    state.propertiesAttr = op->getPropertiesAsAttribute();
    state.addAttributes(op->getDiscardableAttrDictionary().getValue());
    state.attributes.set(kSeqAttrName, seq); // One dictionary, not two.
    state.addTypes(FutureType::get(op->getContext(), tensorType));
    Operation *start = builder.create(state);
    auto wait =
        WaitOp::create(builder, op->getLoc(), tensorType, start->getResult(0));
    op->getResult(0).replaceAllUsesWith(wait.getResult());
    op->erase();
    ++converted;
  }
  return converted;
}
