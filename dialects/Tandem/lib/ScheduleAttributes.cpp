//===- ScheduleAttributes.cpp - Verifier of the schedule attributes -------===//

#include "tandem/Dialect/Tandem/ScheduleAttributes.h"
#include "tandem/Dialect/Tandem/TandemOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tandem;

static std::optional<int64_t> getInt(Operation *op, StringRef name) {
  if (auto attr = dyn_cast_or_null<IntegerAttr>(op->getDiscardableAttr(name)))
    return attr.getInt();
  return std::nullopt;
}

std::optional<int64_t> mlir::tandem::getStream(Operation *op) {
  return getInt(op, kStreamAttrName);
}
std::optional<int64_t> mlir::tandem::getSmTarget(Operation *op) {
  return getInt(op, kSmTargetAttrName);
}
std::optional<int64_t> mlir::tandem::getCommSms(Operation *op) {
  return getInt(op, kCommSmsAttrName);
}
bool mlir::tandem::isCopyEngine(Operation *op) {
  return isa_and_nonnull<UnitAttr>(op->getDiscardableAttr(kCopyEngineAttrName));
}
std::optional<int64_t> mlir::tandem::getRecordEvent(Operation *op) {
  return getInt(op, kRecordEventAttrName);
}
std::optional<int64_t> mlir::tandem::getSeq(Operation *op) {
  return getInt(op, kSeqAttrName);
}
ArrayRef<int64_t> mlir::tandem::getWaitEvents(Operation *op) {
  if (auto attr = dyn_cast_or_null<DenseI64ArrayAttr>(
          op->getDiscardableAttr(kWaitEventsAttrName)))
    return attr.asArrayRef();
  return {};
}

std::optional<double> mlir::tandem::getMeasuredScale(Operation *op) {
  if (auto attr = dyn_cast_or_null<FloatAttr>(
          op->getDiscardableAttr(kMeasuredScaleAttrName)))
    return attr.getValueAsDouble();
  return std::nullopt;
}
ArrayRef<int64_t> mlir::tandem::getAvoidOverlap(Operation *op) {
  if (auto attr = dyn_cast_or_null<DenseI64ArrayAttr>(
          op->getDiscardableAttr(kAvoidOverlapAttrName)))
    return attr.asArrayRef();
  return {};
}

std::optional<std::string> mlir::tandem::checkSmTarget(int64_t value,
                                                       int64_t smCount) {
  if (value >= 1 && value <= smCount)
    return std::nullopt;
  return ("'" + kSmTargetAttrName + "' must be in [1, " + Twine(smCount) +
          "], got " + Twine(value))
      .str();
}

std::optional<std::string> mlir::tandem::checkCommSms(int64_t value,
                                                      int64_t smCount) {
  if (value >= 1 && value < smCount)
    return std::nullopt;
  return ("'" + kCommSmsAttrName + "' must be in [1, " + Twine(smCount) +
          "), got " + Twine(value))
      .str();
}

namespace {
/// Where an attribute may stand.
enum class Holder {
  Op,
  ComputeOp,
  Collective,
  CopyEngineCollective,
  PricedOp,
  Function,
  Module
};

struct AttrRule {
  StringLiteral name;
  Holder holder;
  bool isArray; ///< DenseI64ArrayAttr (else IntegerAttr, or StringAttr for
                ///< the calibration).
};

constexpr AttrRule kRules[] = {
    {kStreamAttrName, Holder::Op, false},
    {kSmTargetAttrName, Holder::ComputeOp, false},
    {kCommSmsAttrName, Holder::Collective, false},
    {kCopyEngineAttrName, Holder::CopyEngineCollective, false},
    {kRecordEventAttrName, Holder::Op, false},
    {kWaitEventsAttrName, Holder::Op, true},
    {kSeqAttrName, Holder::Collective, false},
    {kNumStreamsAttrName, Holder::Function, false},
    {kNumEventsAttrName, Holder::Function, false},
    {kCalibrationAttrName, Holder::Module, false},
    {kMeasuredScaleAttrName, Holder::PricedOp, false},
    {kAvoidOverlapAttrName, Holder::PricedOp, true},
};
} // namespace

static StringRef describe(Holder holder) {
  switch (holder) {
  case Holder::Op:
    return "an op of the tandem dialect";
  case Holder::ComputeOp:
    return "a compute op";
  case Holder::Collective:
    return "a collective";
  case Holder::CopyEngineCollective:
    return "an all-gather, a reduce-scatter or a permute";
  case Holder::PricedOp:
    return "a compute op or a collective";
  case Holder::Function:
    return "a function";
  case Holder::Module:
    return "the module";
  }
  llvm_unreachable("unknown holder");
}

static bool holds(Holder holder, Operation *op) {
  switch (holder) {
  case Holder::Op:
    return isa<TandemDialect>(op->getDialect()) && !isa<GroupOp>(op);
  case Holder::ComputeOp:
    return isa<ComputeOpInterface>(op);
  case Holder::Collective:
    return isa<CollectiveOpInterface>(op);
  case Holder::CopyEngineCollective:
    if (auto collective = dyn_cast<CollectiveOpInterface>(op))
      return collective.getCollectiveKind() == CollectiveKind::all_gather ||
             collective.getCollectiveKind() == CollectiveKind::reduce_scatter ||
             collective.getCollectiveKind() == CollectiveKind::permute;
    return false;
  case Holder::PricedOp:
    return isa<ComputeOpInterface, CollectiveOpInterface>(op);
  case Holder::Function:
    return isa<FunctionOpInterface>(op);
  case Holder::Module:
    return isa<ModuleOp>(op);
  }
  llvm_unreachable("unknown holder");
}

/// The SM count of the target the op's module names, if it names one.
static std::optional<int64_t> targetSmCount(Operation *op) {
  auto module =
      isa<ModuleOp>(op) ? cast<ModuleOp>(op) : op->getParentOfType<ModuleOp>();
  if (!module)
    return std::nullopt;
  if (auto target =
          module->getAttrOfType<TargetAttr>(TandemDialect::getTargetAttrName()))
    return target.getSmCount();
  return std::nullopt;
}

/// The count `name` the function around `op` declares, if it does.
static std::optional<int64_t> declaredCount(Operation *op, StringRef name,
                                            FunctionOpInterface &func) {
  func = op->getParentOfType<FunctionOpInterface>();
  if (!func)
    return std::nullopt;
  return getInt(func, name);
}

/// Checks an event id against the bound and the function's declared count.
static LogicalResult checkEvent(Operation *op, int64_t event, StringRef name) {
  if (event < 0 || event >= kMaxEvents)
    return op->emitError() << "'" << name << "' must hold event ids in [0, "
                           << kMaxEvents << "), got " << event;
  FunctionOpInterface func;
  if (std::optional<int64_t> n = declaredCount(op, kNumEventsAttrName, func);
      n && event >= *n)
    return op->emitError() << (name == kRecordEventAttrName ? "records"
                                                            : "waits for")
                           << " event " << event << ", but '@" << func.getName()
                           << "' declares '" << kNumEventsAttrName
                           << "' = " << *n;
  return success();
}

LogicalResult mlir::tandem::verifyScheduleAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  const AttrRule *rule =
      llvm::find_if(kRules, [&](const AttrRule &r) { return r.name == name; });
  if (rule == std::end(kRules)) {
    auto diag = op->emitError() << "unknown attribute '" << name
                                << "': the tandem dialect defines "
                                << TandemDialect::getTargetAttrName();
    for (const AttrRule &r : kRules)
      diag << ", " << r.name;
    return diag;
  }
  if (!holds(rule->holder, op))
    return op->emitError() << "'" << name << "' belongs on "
                           << describe(rule->holder) << ", not on '"
                           << op->getName() << "'";

  Attribute value = attr.getValue();
  if (name == kCalibrationAttrName) {
    auto path = dyn_cast<StringAttr>(value);
    if (!path || path.getValue().empty())
      return op->emitError() << "'" << name
                             << "' must be a non-empty string (the path of "
                                "a calibration file), got "
                             << value;
    return success();
  }
  if (name == kCopyEngineAttrName) {
    if (!isa<UnitAttr>(value))
      return op->emitError()
             << "'" << name << "' must be a unit attribute, got " << value;
    if (op->getDiscardableAttr(kCommSmsAttrName))
      return op->emitError()
             << "'" << name << "' and '" << kCommSmsAttrName
             << "' exclude each other: a collective on the copy engines "
                "holds no SMs";
    return success();
  }
  if (name == kMeasuredScaleAttrName) {
    auto scale = dyn_cast<FloatAttr>(value);
    double v = scale ? scale.getValueAsDouble() : 0;
    if (!scale || !scale.getType().isF64() || !std::isfinite(v) ||
        v < kMinMeasuredScale || v > kMaxMeasuredScale)
      return op->emitError() << "'" << name
                             << "' must be an f64 in [1e-06, 1e+06] (measured "
                                "over modelled time), got "
                             << value;
    return success();
  }
  if (name == kAvoidOverlapAttrName) {
    auto ids = dyn_cast<DenseI64ArrayAttr>(value);
    if (!ids)
      return op->emitError()
             << "'" << name << "' must be an array<i64> of pair ids, got "
             << value;
    for (int64_t id : ids.asArrayRef())
      if (id < 0)
        return op->emitError()
               << "'" << name << "' must hold non-negative pair ids, got "
               << id;
    return success();
  }
  if (rule->isArray) {
    auto events = dyn_cast<DenseI64ArrayAttr>(value);
    if (!events)
      return op->emitError()
             << "'" << name << "' must be an array<i64> of event ids, got "
             << value;
    for (int64_t e : events.asArrayRef())
      if (failed(checkEvent(op, e, name)))
        return failure();
    return success();
  }
  auto integer = dyn_cast<IntegerAttr>(value);
  if (!integer || !integer.getType().isSignlessInteger(64))
    return op->emitError() << "'" << name << "' must be an i64 integer, got "
                           << value;
  int64_t v = integer.getInt();

  if (name == kStreamAttrName) {
    if (v < 0 || v >= kMaxStreams)
      return op->emitError() << "'" << name << "' must be in [0, "
                             << kMaxStreams << "), got " << v;
    FunctionOpInterface func;
    if (std::optional<int64_t> n = declaredCount(op, kNumStreamsAttrName, func);
        n && v >= *n)
      return op->emitError()
             << "runs on stream " << v << ", but '@" << func.getName()
             << "' declares '" << kNumStreamsAttrName << "' = " << *n;
    return success();
  }
  if (name == kRecordEventAttrName)
    return checkEvent(op, v, name);
  if (name == kSeqAttrName) {
    if (v < 0)
      return op->emitError()
             << "'" << name << "' must be non-negative, got " << v;
    return success();
  }
  if (name == kNumStreamsAttrName) {
    if (v < 1 || v > kMaxStreams)
      return op->emitError() << "'" << name << "' must be in [1, "
                             << kMaxStreams << "], got " << v;
    return success();
  }
  if (name == kNumEventsAttrName) {
    if (v < 0 || v > kMaxEvents)
      return op->emitError() << "'" << name << "' must be in [0, " << kMaxEvents
                             << "], got " << v;
    return success();
  }
  std::optional<int64_t> smCount = targetSmCount(op);
  if (name == kSmTargetAttrName) {
    if (std::optional<std::string> error =
            checkSmTarget(v, smCount.value_or(kMaxSmCount)))
      return op->emitError() << *error;
    return success();
  }
  assert(name == kCommSmsAttrName && "an attribute without a rule");
  if (std::optional<std::string> error =
          checkCommSms(v, smCount.value_or(kMaxSmCount)))
    return op->emitError() << *error;
  return success();
}
