//===- DependenceGraph.h - Dependences between the ops of a step -*- C++ -*-===//
//
// The dependence graph of one block: SSA def-use edges (futures included)
// and, between collectives on the same process group, issue-order edges:
// every rank must issue a group's collectives in one order, so no schedule
// may swap two of them. Also computes the critical path under a cost
// function, a lower bound on any schedule's span.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_DEPENDENCEGRAPH_H
#define TANDEM_ANALYSIS_DEPENDENCEGRAPH_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace tandem {

enum class DependenceKind {
  Data,           ///< The target uses a value the source defines.
  CollectiveOrder ///< Both are collectives on one group, source issued first.
};

struct Dependence {
  unsigned from, to; ///< Node indices (program order).
  DependenceKind kind;
};

class DependenceGraph {
public:
  /// Builds the graph of `block`'s ops in program order. Uses in nested
  /// regions count as uses by the op that holds the region.
  explicit DependenceGraph(Block &block);

  unsigned size() const { return ops.size(); }
  Operation *getOp(unsigned node) const { return ops[node]; }
  /// Node of `op`, or -1 if `op` is not in the block.
  int getNode(Operation *op) const;
  llvm::ArrayRef<Dependence> getEdges() const { return edges; }
  llvm::ArrayRef<unsigned> getPredecessors(unsigned node) const {
    return preds[node];
  }
  llvm::ArrayRef<unsigned> getSuccessors(unsigned node) const {
    return succs[node];
  }

  struct CriticalPath {
    double lengthUs = 0;
    llvm::SmallVector<Operation *> ops; ///< In dependence order.
  };
  /// Longest path where each node costs `costUs(op)`.
  CriticalPath
  getCriticalPath(llvm::function_ref<double(Operation *)> costUs) const;

private:
  llvm::SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, unsigned> index;
  llvm::SmallVector<Dependence> edges;
  llvm::SmallVector<llvm::SmallVector<unsigned>> preds, succs;
};

} // namespace tandem
} // namespace mlir

#endif // TANDEM_ANALYSIS_DEPENDENCEGRAPH_H
