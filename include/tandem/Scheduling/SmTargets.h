//===- SmTargets.h - CTA budgets and GEMM SM targets per window -*- C++ -*-===//
//
// The decision behind tandem-assign-sm-targets, as functions an ML compiler
// can call on a func.func. A window is a `_start` collective, its wait in the
// same block, and the compute ops between them in program order, which run
// beside the collective. For each window with compute, the collective's CTA
// budget k and each GEMM's SM-count target (all SMs, or the sm_count - k SMs
// the collective leaves) are chosen jointly, by the cost model's prediction
// of the window's time: the collective and the compute sequence start
// together and are slowed by the contention table only while both run.
// Deciding, recording and explaining are separate steps.
// docs/passes/assign-sm-targets.md gives the model and its formulas.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_SMTARGETS_H
#define TANDEM_SCHEDULING_SMTARGETS_H

#include "tandem/Analysis/CostModel.h"
#include "tandem/Scheduling/RemarkLog.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
namespace tandem {

/// The CTA budgets tried when the caller names none.
constexpr int64_t kDefaultCommSmsCandidates[] = {8, 16, 24, 32};

/// Checks a list of candidate CTA budgets against `gpu`: at least one, each
/// in [1, sm_count), none twice. On failure sets `error` to a sentence that
/// names the offending value.
LogicalResult checkCommSmsCandidates(ArrayRef<int64_t> candidates,
                                     const GpuSpec &gpu, std::string &error);

/// The SM-count target chosen for one GEMM of a window.
struct GemmTarget {
  Operation *op = nullptr;
  /// SMs the GEMM is sized for: 0 = all SMs (no attribute), otherwise
  /// sm_count - k.
  int64_t smTarget = 0;
  int64_t wavesAlone = 0;  ///< Waves on all SMs.
  int64_t wavesBeside = 0; ///< Waves on the sm_count - k SMs left beside it.
  /// Predicted window time at the chosen k with this GEMM on all SMs and
  /// with it sized for sm_count - k, the other GEMMs as chosen.
  double fullWindowUs = 0, reducedWindowUs = 0;
};

/// What was decided for a window.
enum class WindowStatus {
  /// The CTA budget and the GEMMs' targets were chosen.
  Decided,
  /// No compute op lies between the start and the wait: left alone.
  NoCompute,
  /// Another collective runs during the window (its window intersects this
  /// one, or it is issued inside it): left alone, since the model prices one
  /// collective at a time.
  Overlapping,
};

/// The choice for one window.
struct WindowDecision {
  CollectiveOpInterface start;
  Operation *wait = nullptr;
  WindowStatus status = WindowStatus::NoCompute;
  /// Compute ops between the start and the wait.
  unsigned computeOps = 0;
  int64_t commSms = 0; ///< The chosen CTA budget k.
  /// Predicted at the chosen k and targets, from the start: when the last
  /// compute op and the collective end, and the later of the two.
  double windowUs = 0, computeEndUs = 0, collectiveEndUs = 0;
  /// The same prediction with the target's collective_sms and all SMs.
  int64_t defaultCommSms = 0;
  double defaultWindowUs = 0;
  /// The candidates that were tried, in the caller's order.
  SmallVector<int64_t> candidates;
  SmallVector<GemmTarget> gemms; ///< In program order.

  bool decided() const { return status == WindowStatus::Decided; }
};

/// Decides every window of `func` (every block) with `model`, trying the CTA
/// budgets `candidates` (checked with checkCommSmsCandidates first). Returns
/// one decision per window, in program order of the starts. The IR is not
/// changed. Fails, with an error at the op, when the cost model cannot price
/// a compute op in a window, or when a collective's group does not resolve
/// (IR that has not been verified).
FailureOr<SmallVector<WindowDecision>>
assignSmTargets(func::FuncOp func, const CostModel &model,
                ArrayRef<int64_t> candidates);

/// Records `decisions`: `tandem.comm_sms = k` on each decided start,
/// `tandem.sm_target` on the GEMMs given a target, and no `tandem.sm_target`
/// on the other GEMMs of decided windows (the prediction assumed all SMs).
/// Undecided windows are left as they are. Returns the number of GEMMs given
/// a target.
unsigned applySmTargets(ArrayRef<WindowDecision> decisions);

/// Explains `decisions` as remarks: one per window at its start, one per
/// GEMM of a decided window.
void explainSmTargets(ArrayRef<WindowDecision> decisions, const GpuSpec &gpu,
                      RemarkLog &log);

//===----------------------------------------------------------------------===//
// SM residency relief
//===----------------------------------------------------------------------===//
//
// The window model prices a collective issued at its window's start. In the
// simulator a collective can also be issued while a GEMM sized for all SMs
// runs (queued behind another collective, or ready only later); it then
// waits for SMs until that GEMM ends (SM residency, docs/cost-model.md).
// The relief simulates the function, gives every GEMM that kept a
// collective waiting the SM target that leaves the collective its CTAs, and
// keeps the change only if the simulated span gets shorter.

struct SimulationReport;

/// A collective that waited for SMs, and the GEMMs that held them.
struct ResidencyWait {
  Operation *collective = nullptr;
  double waitedUs = 0;
  int64_t commSms = 0;
  SmallVector<Operation *> gemms; ///< In program order.
  /// What sm_count - commSms SMs add to the GEMMs alone (cost model).
  double extraUs = 0;
  /// NoGain: the simulated step when its targets were last tried.
  double triedSpanUs = 0;
  enum class Outcome {
    Relieved, ///< Its GEMMs' targets were kept.
    NotWorth, ///< extraUs >= waitedUs: not tried.
    NoGain,   ///< Tried (with the others, then with its class, then alone
              ///< if among the longest waits); the step did not get shorter.
  } outcome = Outcome::NoGain;
};

/// What the relief did for one function.
struct ResidencyRelief {
  SmallVector<ResidencyWait> waits; ///< Found in the first simulation.
  /// GEMMs given a target, with the target (applied only if `applied`).
  SmallVector<std::pair<Operation *, int64_t>> targets;
  double spanBeforeUs = 0, spanAfterUs = 0;
  bool applied = false;
};

/// Runs the relief on `func` (single block; other functions are returned
/// untouched with no waits). `before`, if given, is a simulation of `func`
/// as it is now (spanOnly suffices), which saves one simulation. Does
/// nothing when the cost model's gemmsHoldSms is off. Fails with an error
/// at the op if the function cannot be simulated.
FailureOr<ResidencyRelief>
relieveSmResidency(func::FuncOp func, const CostModel &model,
                   const SimulationReport *before = nullptr);

/// Explains `relief`: one remark per retargeted GEMM, and one per waiting
/// collective left waiting, saying why.
void explainResidencyRelief(const ResidencyRelief &relief, const GpuSpec &gpu,
                            RemarkLog &log);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_SMTARGETS_H
