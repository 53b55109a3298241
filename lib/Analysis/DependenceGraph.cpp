//===- DependenceGraph.cpp - Dependences between the ops of a step --------===//

#include "tandem/Analysis/DependenceGraph.h"
#include "tandem/Dialect/Tandem/TandemOps.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::tandem;

DependenceGraph::DependenceGraph(Block &block) {
  for (Operation &op : block) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  preds.resize(ops.size());
  succs.resize(ops.size());
  auto addEdge = [&](unsigned from, unsigned to, DependenceKind kind) {
    if (llvm::is_contained(succs[from], to))
      return;
    edges.push_back({from, to, kind});
    succs[from].push_back(to);
    preds[to].push_back(from);
  };

  llvm::StringMap<unsigned> lastCollective;
  for (auto [node, op] : llvm::enumerate(ops)) {
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def)
          continue;
        // Uses inside regions of `op` may be defined inside `op` too.
        Operation *top = block.findAncestorOpInBlock(*def);
        if (!top || top == op)
          continue;
        auto it = index.find(top);
        if (it != index.end())
          addEdge(it->second, node, DependenceKind::Data);
      }
    });
    if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
      StringRef group = collective.getGroupAttr().getValue();
      auto [it, inserted] = lastCollective.try_emplace(group, node);
      if (!inserted) {
        addEdge(it->second, node, DependenceKind::CollectiveOrder);
        it->second = node;
      }
    }
  }
}

int DependenceGraph::getNode(Operation *op) const {
  auto it = index.find(op);
  return it == index.end() ? -1 : int(it->second);
}

DependenceGraph::CriticalPath DependenceGraph::getCriticalPath(
    llvm::function_ref<double(Operation *)> costUs) const {
  // Program order is a topological order: every edge goes forward.
  llvm::SmallVector<double> finish(ops.size(), 0.0);
  llvm::SmallVector<int> via(ops.size(), -1);
  CriticalPath path;
  int last = -1;
  for (unsigned node = 0; node < ops.size(); ++node) {
    double start = 0.0;
    for (unsigned p : preds[node])
      if (finish[p] > start) {
        start = finish[p];
        via[node] = p;
      }
    finish[node] = start + costUs(ops[node]);
    if (last < 0 || finish[node] > finish[last])
      last = node;
  }
  if (last < 0)
    return path;
  path.lengthUs = finish[last];
  for (int node = last; node >= 0; node = via[node])
    path.ops.push_back(ops[node]);
  std::reverse(path.ops.begin(), path.ops.end());
  return path;
}
