//===- StreamMap.cpp - The stream every op of a function runs on ----------===//

#include "tandem/ScheduleModel/StreamMap.h"
#include "tandem/Dialect/Tandem/TandemOps.h"

using namespace mlir;
using namespace mlir::tandem;

int64_t StreamNumbering::assign(Operation *op) {
  int64_t stream = 0;
  if (auto collective = dyn_cast<CollectiveOpInterface>(op);
      collective && collective.isAsync()) {
    StringRef group = collective.getGroupAttr().getValue();
    auto [it, inserted] = commStreamOf.try_emplace(group, names.size());
    if (inserted)
      names.push_back(("comm @" + group).str());
    stream = it->second;
  }
  if (op->getDiscardableAttrDictionary().empty())
    return stream;
  if (std::optional<int64_t> explicitStream = getStream(op)) {
    stream = *explicitStream;
    while (int64_t(names.size()) <= stream)
      names.push_back(("stream " + llvm::Twine(names.size())).str());
  }
  return stream;
}

FailureOr<StreamMap> mlir::tandem::computeStreams(func::FuncOp func) {
  if (func.isExternal())
    return func.emitError() << "function '@" << func.getSymName()
                            << "' has no body: it has no streams";
  if (!func.getBody().hasOneBlock())
    return func.emitError("streams need a single-block function; '@")
           << func.getSymName() << "' has " << func.getBody().getBlocks().size()
           << " blocks";

  StreamMap map;
  StreamNumbering numbering;
  for (Operation &op : func.getBody().front()) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    if (!isa<ComputeOpInterface, CollectiveOpInterface, WaitOp>(&op))
      return op.emitError()
             << "'" << op.getName()
             << "' has no stream: only tandem compute ops, collectives and "
                "waits run on streams";
    map.streamOf[&op] = numbering.assign(&op);
  }
  map.names = std::move(numbering.names);
  return map;
}

bool mlir::tandem::hasStreamAttributes(func::FuncOp func) {
  if (func->hasAttr(kNumStreamsAttrName) || func->hasAttr(kNumEventsAttrName))
    return true;
  WalkResult walk = func.walk([](Operation *op) {
    if (op->hasAttr(kStreamAttrName) || op->hasAttr(kRecordEventAttrName) ||
        op->hasAttr(kWaitEventsAttrName))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}
