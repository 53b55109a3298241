//===- GroupTable.cpp - Process groups of a module, looked up once --------===//

#include "tandem/ScheduleModel/GroupTable.h"

using namespace mlir;
using namespace mlir::tandem;

const GroupSpec *GroupTable::lookup(CollectiveOpInterface op) {
  StringRef name = op.getGroupAttr().getValue();
  auto it = groups.find(name);
  if (it == groups.end()) {
    GroupOp group = lookupGroup(op, op.getGroupAttr());
    if (!group)
      return nullptr;
    it = groups.try_emplace(name, GroupSpec::fromOp(group)).first;
  }
  return &it->second;
}
