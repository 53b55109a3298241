//===- CopyEngines.cpp - Collectives moved to the copy engines ------------===//

#include "tandem/Scheduling/CopyEngines.h"
#include "tandem/ScheduleModel/GroupTable.h"
#include "tandem/Scheduling/MemoryBudget.h"
#include "tandem/Simulator/Simulate.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tandem;

static std::string us(double v) { return llvm::formatv("{0:F1} us", v).str(); }

static std::string mib(int64_t bytes) {
  return llvm::formatv("{0:F2} MiB", double(bytes) / (1 << 20)).str();
}

/// Marks (or unmarks) `ops` as copy-engine collectives; a CTA budget is
/// dropped when marking (the two exclude each other) and returned.
static SmallVector<Attribute> mark(ArrayRef<Operation *> ops) {
  SmallVector<Attribute> budgets;
  for (Operation *op : ops) {
    budgets.push_back(op->getDiscardableAttr(kCommSmsAttrName));
    op->removeDiscardableAttr(kCommSmsAttrName);
    op->setDiscardableAttr(kCopyEngineAttrName,
                           UnitAttr::get(op->getContext()));
  }
  return budgets;
}

static void unmark(ArrayRef<Operation *> ops, ArrayRef<Attribute> budgets) {
  for (auto [op, budget] : llvm::zip_equal(ops, budgets)) {
    op->removeDiscardableAttr(kCopyEngineAttrName);
    if (budget)
      op->setDiscardableAttr(kCommSmsAttrName, budget);
  }
}

FailureOr<CopyEngineDecision>
mlir::tandem::assignCopyEngines(func::FuncOp func, const CostModel &model,
                                const CopyEngineOptions &options) {
  CopyEngineDecision d;
  if (func.isExternal())
    return d;
  if (!func.getBody().hasOneBlock()) {
    d.leftAlone = "it has more than one block";
    return d;
  }
  Block &block = func.getBody().front();
  GroupTable groups;

  // Classes in program order of their first member; the reasons why the
  // others cannot move go to `d.ineligible`.
  llvm::MapVector<std::tuple<unsigned, int64_t, StringRef>, CopyEngineClass>
      classes;
  for (Operation &op : block) {
    auto collective = dyn_cast<CollectiveOpInterface>(&op);
    if (!collective || isCopyEngine(&op))
      continue;
    CollectiveKind kind = collective.getCollectiveKind();
    if (kind != CollectiveKind::all_gather &&
        kind != CollectiveKind::reduce_scatter &&
        kind != CollectiveKind::permute)
      continue; // Not a candidate at all (said in the pass's contract).
    const GroupSpec *group = groups.lookup(collective);
    if (!group)
      return op.emitError()
             << "process group " << collective.getGroupAttr() << " not found";
    std::string why;
    std::optional<CollectiveEstimate> ce =
        model.copyEngine(kind, collective.getPayloadBytes(), *group, &why);
    if (!ce) {
      // Few distinct reasons: a linear search is enough.
      auto it = llvm::find_if(d.ineligible,
                              [&](const auto &i) { return i.reason == why; });
      if (it == d.ineligible.end())
        d.ineligible.push_back({&op, why, 1});
      else
        ++it->count;
      continue;
    }
    auto key = std::make_tuple(static_cast<unsigned>(kind),
                               collective.getPayloadBytes(),
                               collective.getGroupAttr().getValue());
    auto [it, inserted] = classes.try_emplace(key);
    CopyEngineClass &c = it->second;
    if (inserted) {
      c.kind = kind;
      c.payloadBytes = collective.getPayloadBytes();
      c.group = group->name;
      c.ceAloneUs = ce->timeUs;
      c.smAloneUs = model.collective(kind, c.payloadBytes, *group, 0).timeUs;
    }
    c.ops.push_back(&op);
  }

  // The largest classes first: they decide most of the step.
  SmallVector<CopyEngineClass> order;
  for (auto &entry : classes)
    order.push_back(std::move(entry.second));
  llvm::stable_sort(
      order, [](const CopyEngineClass &a, const CopyEngineClass &b) {
        return a.smAloneUs * a.ops.size() > b.smAloneUs * b.ops.size();
      });

  auto span = [&]() -> FailureOr<double> {
    FailureOr<SimulationReport> report =
        simulateFunction(func, model, /*spanOnly=*/true);
    if (failed(report))
      return failure();
    return report->spanUs;
  };
  FailureOr<double> current = span();
  if (failed(current))
    return failure();
  d.spanBeforeUs = *current;
  MemoryBudget budget(block, options.memoryBudget);

  for (CopyEngineClass &c : order) {
    SmallVector<Attribute> budgets = mark(c.ops);
    if (std::optional<int64_t> peak = budget.exceeded(block)) {
      unmark(c.ops, budgets);
      c.keptBecause = "the reduce-scatters' staging would raise peak memory "
                      "to " +
                      mib(*peak) + ", over the limit of " + mib(budget.limit());
      continue;
    }
    if (options.mode == CopyEngineMode::All) {
      c.moved = true;
      continue;
    }
    FailureOr<double> with = span();
    if (failed(with)) {
      unmark(c.ops, budgets);
      return failure();
    }
    c.spanBeforeUs = *current;
    c.spanWithUs = *with;
    if (*with < *current * (1 - 1e-6)) {
      c.moved = true;
      *current = *with;
    } else {
      unmark(c.ops, budgets);
    }
  }
  if (options.mode == CopyEngineMode::All) {
    FailureOr<double> after = span();
    if (failed(after))
      return failure();
    *current = *after;
  }
  d.spanAfterUs = *current;
  d.classes = std::move(order);
  return d;
}

void mlir::tandem::explainCopyEngines(const CopyEngineDecision &d,
                                      RemarkLog &log) {
  for (const CopyEngineClass &c : d.classes) {
    Diagnostic &r = log.remark(c.ops.front());
    r << "copy engines: " << c.ops.size() << " "
      << stringifyCollectiveKind(c.kind) << " of " << mib(c.payloadBytes)
      << " on @" << c.group << " "
      << (c.moved ? "moved to the copy engines" : "left on SMs") << " (alone "
      << us(c.ceAloneUs) << " on copy engines vs " << us(c.smAloneUs)
      << " on SMs";
    if (c.spanWithUs)
      r << "; predicted step " << us(*c.spanBeforeUs) << " -> "
        << us(*c.spanWithUs) << " with them moved";
    r << ")";
    if (!c.keptBecause.empty())
      r << ": " << c.keptBecause;
    else if (!c.moved)
      r << ": the step is not shorter, the SMs they free do not pay for "
           "the slower copies";
  }
  for (const CopyEngineDecision::Ineligible &i : d.ineligible)
    log.remark(i.op) << "copy engines: " << i.count
                     << " collective(s) like this one stay on SMs: "
                     << i.reason;
}
