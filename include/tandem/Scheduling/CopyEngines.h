//===- CopyEngines.h - Collectives moved to the copy engines ----*- C++ -*-===//
//
// Low-contention collectives (issue 15, item 3): an all-gather or a
// reduce-scatter marked `tandem.copy_engine` runs as peer-to-peer copies on
// the GPU's copy engines (plus a small reduction kernel for a
// reduce-scatter) instead of a kernel that holds SMs. It is slower alone
// than NCCL's kernel where latency dominates, but the compute beside it
// keeps every SM and shares only HBM. The decision is the cost model's:
// eligible collectives are grouped into classes (kind, bytes, group), and
// each class, largest first, is moved where the simulated step gets
// shorter. docs/passes/copy-engines.md.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_COPYENGINES_H
#define TANDEM_SCHEDULING_COPYENGINES_H

#include "tandem/Analysis/CostModel.h"
#include "tandem/Scheduling/RemarkLog.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir {
namespace tandem {

enum class CopyEngineMode {
  /// Move a class where the simulated span shortens (the default).
  Cost,
  /// Move every eligible collective (for measuring the method itself).
  All
};

struct CopyEngineOptions {
  CopyEngineMode mode = CopyEngineMode::Cost;
  /// Peak-memory limit in bytes (0 = none); a reduce-scatter's staging
  /// counts (MemoryLiveness.h). A class that breaks it stays on SMs.
  int64_t memoryBudget = 0;
  RemarkLog *remarks = nullptr;
};

/// Collectives of one kind, payload and group: moved or kept together.
struct CopyEngineClass {
  CollectiveKind kind = CollectiveKind::all_gather;
  int64_t payloadBytes = 0;
  std::string group;
  SmallVector<Operation *> ops;
  double smAloneUs = 0; ///< One of them alone, as a kernel on SMs.
  double ceAloneUs = 0; ///< One of them alone, on the copy engines.
  bool moved = false;
  /// The step's simulated span before trying the class and with it moved
  /// (Cost mode; unset when not simulated).
  std::optional<double> spanBeforeUs, spanWithUs;
  /// Why it stayed (memory budget), empty otherwise.
  std::string keptBecause;
};

struct CopyEngineDecision {
  SmallVector<CopyEngineClass> classes;
  /// Collectives that cannot use the copy engines: the first of each
  /// reason, the reason, and how many share it.
  struct Ineligible {
    Operation *op;
    std::string reason;
    unsigned count;
  };
  SmallVector<Ineligible> ineligible;
  double spanBeforeUs = 0, spanAfterUs = 0;
  /// Set when the function was left alone as a whole (and why).
  std::string leftAlone;
};

/// Decides and applies which of `func`'s all-gathers and reduce-scatters
/// run on the copy engines. Collectives already marked stay marked;
/// collectives with a CTA budget (`tandem.comm_sms`) lose it when moved.
/// Fails if the simulator cannot run the function (errors emitted).
FailureOr<CopyEngineDecision>
assignCopyEngines(func::FuncOp func, const CostModel &model,
                  const CopyEngineOptions &options);

/// Remarks: per class what moved (or stayed) and the predicted spans; per
/// reason the collectives that cannot move.
void explainCopyEngines(const CopyEngineDecision &decision, RemarkLog &log);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_COPYENGINES_H
