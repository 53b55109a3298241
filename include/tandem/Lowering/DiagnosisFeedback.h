//===- DiagnosisFeedback.h - A measured diagnosis as scheduling facts -*- C++
//-*-===//
//
// Prevention (issue 17, item 5): what `tandem-diagnose --json` found in a
// measured step, turned into facts on the IR that every pass pricing ops
// honours. The diagnosis names ops as tandem-run's trace does
// (`<op> <label>`, the k-th of that name in issue order); the function's ops
// get the same names from the plan lowering's rule (getStepTraceName), so
// that a name in the diagnosis resolves to the op whose step it measured.
//  - a harmful overlap: both ops get one pair id in `tandem.avoid_overlap`,
//    which the overlap phases keep apart (Scheduling/AvoidOverlap.h);
//  - the ops of a lost expected overlap: their measured durations replace
//    the model's, as `tandem.measured_scale` (measured over modelled time
//    alone), by which the cost model scales the op's every estimate.
// docs/diagnosis.md ("Prevention") describes the rules.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LOWERING_DIAGNOSISFEEDBACK_H
#define TANDEM_LOWERING_DIAGNOSISFEEDBACK_H

#include "tandem/Analysis/CostModel.h"
#include "tandem/Scheduling/RemarkLog.h"
#include "tandem/runtime/Plan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace tandem {

/// One op of a diagnosis, as the measured trace named it.
struct DiagnosedOp {
  std::string name;
  int64_t occurrence = 0; ///< 0-based, among the ops of that name.
  double durUs = 0;       ///< Measured duration.
  int64_t step = -1;      ///< The diagnosed plan's step index, where known.
};

/// One anomaly of a diagnosis (its `anomalies[index]`).
struct DiagnosedAnomaly {
  size_t index = 0;
  bool harmful = false; ///< harmful_overlap; else lost_overlap.
  std::string cause;
  double lostUs = 0;
  std::vector<DiagnosedOp> ops;
};

/// The parts of a `tandem-diagnose --json` report that scheduling uses.
struct DiagnosisFeedback {
  std::string origin;   ///< The file it was read from.
  std::string function; ///< The function the diagnosed trace measured.
  std::vector<DiagnosedAnomaly> anomalies;
  /// Ops the measured trace had and the plan did not (`extra_ops`).
  std::vector<DiagnosedOp> extraOps;
  /// How many collectives of each name the diagnosed plan had (its
  /// `collectives`): a function whose counts differ (a pipeline split them)
  /// numbers its ops differently, and is refused.
  std::vector<std::pair<std::string, int64_t>> collectiveCounts;

  /// Reads a diagnosis file. On failure returns std::nullopt and sets
  /// `error`, naming the file and the field.
  static std::optional<DiagnosisFeedback> load(llvm::StringRef path,
                                               std::string &error);
  /// Parses diagnosis JSON text; `origin` names it in errors.
  static std::optional<DiagnosisFeedback>
  parse(llvm::StringRef json, llvm::StringRef origin, std::string &error);
};

/// Loads the diagnosis at `path` and checks that `module` defines the
/// function it measured; emits an error on `module` and fails otherwise.
FailureOr<DiagnosisFeedback> loadDiagnosisFor(ModuleOp module,
                                              llvm::StringRef path);

/// Writes the diagnosis's facts on `func` (the function it measured).
///
/// With `plan` (the plan the diagnosed run executed), an op the diagnosis
/// gives a `step` for is the op of `func` at that step's source location
/// (Step::location) with that name: ops keep their locations through
/// scheduling, so `func` may be the unscheduled input the plan was made
/// from, in any order, and a pipeline's chunks resolve to the op they split.
/// Its measured scale is then over the step's own predicted time alone.
/// Without a plan (or without a step), an op is the k-th op of its name in
/// `func`'s program order, which is right when `func` is numbered as the
/// plan was (the counts of collectives are checked):
/// `tandem.avoid_overlap` on the two ops of every harmful overlap (pair id:
/// the anomaly's index) and `tandem.measured_scale` on the ops of every lost
/// expected overlap (the measured duration over `model`'s time alone for
/// the op on all SMs and the default CTAs), replacing facts an earlier
/// diagnosis wrote. A name that
/// ends in `_start` also resolves to the blocking form of that collective
/// (every overlap strategy converts blocking collectives). Ops the diagnosis
/// lists as extra (not in the plan) and waits are skipped. Fails with an
/// error on `func` when a name does not resolve or when the function has
/// another number of collectives of a name than the diagnosed plan. With
/// `remarks`, says what each op was given and what was skipped and why.
LogicalResult applyDiagnosis(func::FuncOp func,
                             const DiagnosisFeedback &diagnosis,
                             const CostModel &model, RemarkLog *remarks,
                             const ::tandem::runtime::Plan *plan = nullptr);

/// Reads the plan a diagnosed run executed (`diagnosis-plan`) and checks it
/// is of the diagnosis's function; emits an error on `module` and fails
/// otherwise.
FailureOr<::tandem::runtime::Plan>
loadDiagnosedPlan(ModuleOp module, const DiagnosisFeedback &diagnosis,
                  llvm::StringRef path);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_LOWERING_DIAGNOSISFEEDBACK_H
