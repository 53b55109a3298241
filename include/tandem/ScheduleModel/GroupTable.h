//===- GroupTable.h - Process groups of a module, looked up once -*- C++ -*-===//
//
// The `tandem.group` a collective runs on, resolved by symbol once per name
// and kept as the cost model's GroupSpec. Every component that prices or
// simulates collectives (OpTimer, the schedule model) looks groups up here.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULEMODEL_GROUPTABLE_H
#define TANDEM_SCHEDULEMODEL_GROUPTABLE_H

#include "tandem/Analysis/CostModel.h"

#include "llvm/ADT/StringMap.h"

namespace mlir {
namespace tandem {

class GroupTable {
public:
  /// The group `op` runs on, or nullptr if its symbol does not resolve to a
  /// `tandem.group` (IR that has not been verified). The spec stays at its
  /// address for the table's life (caches key on it).
  const GroupSpec *lookup(CollectiveOpInterface op);

private:
  llvm::StringMap<GroupSpec> groups;
};

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULEMODEL_GROUPTABLE_H
