//===- ScheduleAttributes.h - The dialect's schedule attributes -*- C++ -*-===//
//
// The discardable `tandem.*` attributes that record a schedule on the IR:
// streams, SM targets, CTA budgets, events and the per-group issue order on
// ops; stream and event counts on functions; the calibration on the module.
// They are declared once, in TandemDialect.td (`discardableAttrs`); this
// header gives their names, the bounds the verifier enforces, and typed
// accessors for code that reads them. The dialect's attribute verifier
// rejects any other `tandem.*` name, a wrong type, a value out of range and
// an attribute on an op it does not belong on.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_TANDEM_SCHEDULEATTRIBUTES_H
#define TANDEM_DIALECT_TANDEM_SCHEDULEATTRIBUTES_H

#include "tandem/Dialect/Tandem/TandemDialect.h"

#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace mlir {
namespace tandem {

/// The stream an op runs on (ops): an integer in [0, kMaxStreams).
constexpr llvm::StringLiteral kStreamAttrName =
    TandemDialect::StreamAttrHelper::getNameStr();
/// SMs a compute op's kernel is sized for (compute ops): [1, sm_count].
constexpr llvm::StringLiteral kSmTargetAttrName =
    TandemDialect::SmTargetAttrHelper::getNameStr();
/// CTAs (SMs) a collective runs with (collectives): [1, sm_count).
constexpr llvm::StringLiteral kCommSmsAttrName =
    TandemDialect::CommSmsAttrHelper::getNameStr();
/// The collective runs on the copy engines (peer-to-peer copies, plus a
/// reduction kernel for a reduce-scatter) instead of holding SMs
/// (all-gathers and reduce-scatters, sync or async): a unit attribute,
/// exclusive with `tandem.comm_sms`. docs/passes/copy-engines.md.
constexpr llvm::StringLiteral kCopyEngineAttrName =
    TandemDialect::CopyEngineAttrHelper::getNameStr();
/// Event an op records once it has completed (ops): [0, kMaxEvents).
constexpr llvm::StringLiteral kRecordEventAttrName =
    TandemDialect::RecordEventAttrHelper::getNameStr();
/// Events the op's stream waits for before the op runs (ops), ascending.
constexpr llvm::StringLiteral kWaitEventsAttrName =
    TandemDialect::WaitEventsAttrHelper::getNameStr();
/// Per-group issue index of a collective (collectives): non-negative.
constexpr llvm::StringLiteral kSeqAttrName =
    TandemDialect::SeqAttrHelper::getNameStr();
/// Streams a function's ops use, ids 0 .. n-1 (functions): [1, kMaxStreams].
constexpr llvm::StringLiteral kNumStreamsAttrName =
    TandemDialect::NumStreamsAttrHelper::getNameStr();
/// Events a function's ops record, ids 0 .. n-1 (functions):
/// [0, kMaxEvents].
constexpr llvm::StringLiteral kNumEventsAttrName =
    TandemDialect::NumEventsAttrHelper::getNameStr();
/// Calibration file every pass that prices ops uses unless given one
/// (the module): a non-empty path, docs/cost-model.md "Calibration file".
constexpr llvm::StringLiteral kCalibrationAttrName =
    TandemDialect::CalibrationAttrHelper::getNameStr();

/// A priced op's measured duration over the cost model's time alone for it
/// (compute ops and collectives): a positive finite f64 by which the model
/// scales every estimate of the op, and of the parts a rewrite splits it
/// into (clones keep it). Written from a diagnosis (docs/diagnosis.md,
/// "Prevention").
constexpr llvm::StringLiteral kMeasuredScaleAttrName =
    TandemDialect::MeasuredScaleAttrHelper::getNameStr();
/// Harmful overlaps a priced op takes part in (compute ops and collectives):
/// non-negative pair ids; two ops that share an id must not run
/// concurrently. Written from a diagnosis.
constexpr llvm::StringLiteral kAvoidOverlapAttrName =
    TandemDialect::AvoidOverlapAttrHelper::getNameStr();

/// Bounds on the counts that size the tables built from a schedule (stream
/// queues and vector clocks are streams x streams; event tables per event).
/// The runtime's plan format has the same bounds (kMaxPlanStreams,
/// kMaxPlanEvents in runtime/include/tandem/runtime/Plan.h).
constexpr int64_t kMaxStreams = 64;
constexpr int64_t kMaxEvents = int64_t(1) << 20;
/// Largest SM count a target may give (sm_target's bound without a target).
constexpr int64_t kMaxSmCount = 4096;
/// Bounds on `tandem.measured_scale`: a measurement this far from the model
/// is not of the op, and larger factors would overflow the times they scale.
constexpr double kMinMeasuredScale = 1e-6, kMaxMeasuredScale = 1e6;

/// Typed reads of the op attributes above. The verifier has checked types
/// and ranges on verified IR; on an attribute of the wrong type these
/// return std::nullopt (or an empty list), as if it were absent.
std::optional<int64_t> getStream(Operation *op);
std::optional<int64_t> getSmTarget(Operation *op);
std::optional<int64_t> getCommSms(Operation *op);
/// Whether the collective carries `tandem.copy_engine`.
bool isCopyEngine(Operation *op);
std::optional<int64_t> getRecordEvent(Operation *op);
ArrayRef<int64_t> getWaitEvents(Operation *op);
std::optional<int64_t> getSeq(Operation *op);
std::optional<double> getMeasuredScale(Operation *op);
ArrayRef<int64_t> getAvoidOverlap(Operation *op);

/// The range rules that depend on the target, for callers that price with
/// a target other than the module's (a preset override): the sentence that
/// says what is wrong, or std::nullopt if `value` is allowed.
std::optional<std::string> checkSmTarget(int64_t value, int64_t smCount);
std::optional<std::string> checkCommSms(int64_t value, int64_t smCount);

/// Verifies one `tandem.*` discardable attribute other than `tandem.target`
/// (TandemDialect::verifyOperationAttribute).
LogicalResult verifyScheduleAttribute(Operation *op, NamedAttribute attr);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_DIALECT_TANDEM_SCHEDULEATTRIBUTES_H
