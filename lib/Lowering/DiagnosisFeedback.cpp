//===- DiagnosisFeedback.cpp - A measured diagnosis as scheduling facts ---===//

#include "tandem/Lowering/DiagnosisFeedback.h"
#include "tandem/Analysis/JsonInput.h"
#include "tandem/Dialect/Tandem/ScheduleAttributes.h"
#include "tandem/Lowering/PlanLowering.h"
#include "tandem/Scheduling/Schedule.h"
#include "tandem/runtime/RunTrace.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tandem;

//===----------------------------------------------------------------------===//
// Reading the report
//===----------------------------------------------------------------------===//

namespace {
/// Errors name the file and the JSON path of the offending field.
struct Reader {
  std::string origin;
  std::string &error;

  bool fail(const Twine &where, const Twine &what) {
    error = (origin + ": " + where + ": " + what).str();
    return false;
  }

  bool readOp(const llvm::json::Value &v, const std::string &where,
              DiagnosedOp &op) {
    const llvm::json::Object *o = v.getAsObject();
    if (!o)
      return fail(where, "must be an object");
    std::optional<StringRef> name = o->getString("name");
    if (!name || name->empty())
      return fail(where, "\"name\" must be a non-empty string");
    op.name = name->str();
    std::optional<int64_t> occurrence = o->getInteger("occurrence");
    if (!occurrence || *occurrence < 0)
      return fail(where, "\"occurrence\" must be a non-negative integer");
    op.occurrence = *occurrence;
    if (const llvm::json::Value *step = o->get("step")) {
      std::optional<int64_t> s = step->getAsInteger();
      if (!s || *s < 0)
        return fail(where, "\"step\" must be a non-negative integer");
      op.step = *s;
    }
    if (const llvm::json::Value *dur = o->get("dur_us")) {
      std::optional<double> d = dur->getAsNumber();
      if (!d || !std::isfinite(*d) || *d < 0)
        return fail(where, "\"dur_us\" must be a non-negative number");
      op.durUs = *d;
    }
    return true;
  }

  bool readAnomaly(const llvm::json::Value &v, size_t index,
                   DiagnosedAnomaly &a) {
    std::string where = llvm::formatv("anomalies[{0}]", index).str();
    const llvm::json::Object *o = v.getAsObject();
    if (!o)
      return fail(where, "must be an object");
    a.index = index;
    std::optional<StringRef> kind = o->getString("kind");
    if (!kind || (*kind != "lost_overlap" && *kind != "harmful_overlap"))
      return fail(where,
                  "\"kind\" must be \"lost_overlap\" or \"harmful_overlap\"");
    a.harmful = *kind == "harmful_overlap";
    std::optional<StringRef> cause = o->getString("cause");
    if (!cause)
      return fail(where, "\"cause\" must be a string");
    a.cause = cause->str();
    std::optional<double> lost = o->getNumber("lost_us");
    if (!lost || !std::isfinite(*lost))
      return fail(where, "\"lost_us\" must be a number");
    a.lostUs = *lost;
    const llvm::json::Array *ops = o->getArray("op_details");
    if (!ops)
      return fail(where, "\"op_details\" must be an array (tandem-diagnose "
                         "--json writes one per anomaly)");
    for (auto [k, op] : llvm::enumerate(*ops)) {
      a.ops.emplace_back();
      if (!readOp(op, llvm::formatv("{0}.op_details[{1}]", where, k).str(),
                  a.ops.back()))
        return false;
    }
    if (a.harmful && a.ops.size() != 2)
      return fail(where, llvm::formatv("a harmful overlap names 2 ops, this "
                                       "one {0}",
                                       a.ops.size()));
    if (a.ops.empty())
      return fail(where, "\"op_details\" is empty");
    return true;
  }
};
} // namespace

std::optional<DiagnosisFeedback>
DiagnosisFeedback::parse(StringRef json, StringRef origin, std::string &error) {
  Reader r{origin.str(), error};
  std::optional<llvm::json::Value> root =
      parseJsonInput(json, origin, "diagnosis report", error);
  if (!root)
    return std::nullopt;
  const llvm::json::Object *o = root->getAsObject();
  if (!o) {
    r.fail("the top level", "must be an object (tandem-diagnose --json)");
    return std::nullopt;
  }
  DiagnosisFeedback d;
  d.origin = origin.str();
  std::optional<StringRef> function = o->getString("function");
  if (!function || function->empty()) {
    r.fail("\"function\"", "must be a non-empty string; a diagnosis of a "
                           "PyTorch trace (--kineto) names no function and "
                           "cannot be fed back");
    return std::nullopt;
  }
  d.function = function->str();
  const llvm::json::Array *anomalies = o->getArray("anomalies");
  if (!anomalies) {
    r.fail("\"anomalies\"", "must be an array");
    return std::nullopt;
  }
  for (auto [k, a] : llvm::enumerate(*anomalies)) {
    d.anomalies.emplace_back();
    if (!r.readAnomaly(a, k, d.anomalies.back()))
      return std::nullopt;
  }
  if (const llvm::json::Value *collectives = o->get("collectives")) {
    const llvm::json::Array *list = collectives->getAsArray();
    if (!list) {
      r.fail("\"collectives\"", "must be an array");
      return std::nullopt;
    }
    llvm::StringMap<int64_t> counts;
    std::vector<std::string> order;
    for (auto [k, c] : llvm::enumerate(*list)) {
      DiagnosedOp op;
      if (!r.readOp(c, llvm::formatv("collectives[{0}]", k).str(), op))
        return std::nullopt;
      auto [it, inserted] = counts.try_emplace(op.name, 0);
      if (inserted)
        order.push_back(op.name);
      it->second = std::max(it->second, op.occurrence + 1);
    }
    for (const std::string &name : order)
      d.collectiveCounts.push_back({name, counts[name]});
  }
  if (const llvm::json::Value *extra = o->get("extra_ops")) {
    const llvm::json::Array *ops = extra->getAsArray();
    if (!ops) {
      r.fail("\"extra_ops\"", "must be an array");
      return std::nullopt;
    }
    for (auto [k, op] : llvm::enumerate(*ops)) {
      d.extraOps.emplace_back();
      if (!r.readOp(op, llvm::formatv("extra_ops[{0}]", k).str(),
                    d.extraOps.back()))
        return std::nullopt;
    }
  }
  return d;
}

std::optional<DiagnosisFeedback> DiagnosisFeedback::load(StringRef path,
                                                         std::string &error) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file) {
    error =
        ("cannot read diagnosis '" + path + "': " + file.getError().message())
            .str();
    return std::nullopt;
  }
  return parse((*file)->getBuffer(), path, error);
}

FailureOr<DiagnosisFeedback> mlir::tandem::loadDiagnosisFor(ModuleOp module,
                                                            StringRef path) {
  std::string error;
  std::optional<DiagnosisFeedback> d = DiagnosisFeedback::load(path, error);
  if (!d)
    return module.emitError() << error;
  if (!module.lookupSymbol<func::FuncOp>(d->function)) {
    auto diag = module.emitError()
                << "diagnosis '" << path << "' measured function @"
                << d->function << ", which this module does not define";
    std::string names;
    for (func::FuncOp f : module.getOps<func::FuncOp>())
      if (!f.isExternal())
        names += (names.empty() ? "" : ", @") + f.getSymName().str();
    if (!names.empty())
      diag << " (it defines @" << names << ")";
    return diag;
  }
  return std::move(*d);
}

FailureOr<::tandem::runtime::Plan> mlir::tandem::loadDiagnosedPlan(
    ModuleOp module, const DiagnosisFeedback &diagnosis, StringRef path) {
  std::string error;
  std::optional<::tandem::runtime::Plan> plan =
      ::tandem::runtime::readPlanFile(path.str(), error);
  if (!plan)
    return module.emitError() << "cannot read the diagnosed plan: " << error;
  if (plan->function != diagnosis.function)
    return module.emitError()
           << "diagnosed plan '" << path << "' is of function @"
           << plan->function << ", the diagnosis '" << diagnosis.origin
           << "' of @" << diagnosis.function;
  return std::move(*plan);
}

//===----------------------------------------------------------------------===//
// Resolving names and writing the facts
//===----------------------------------------------------------------------===//

/// The name with its first word's `_start` removed: a collective measured
/// as `tandem.all_gather_start l0.qkv` is `tandem.all_gather l0.qkv` in a
/// function not yet converted to async collectives.
static std::string withoutStart(StringRef name) {
  auto [op, rest] = name.split(' ');
  if (!op.consume_back("_start"))
    return name.str();
  return rest.empty() ? op.str() : (op + " " + rest).str();
}

static bool isWaitName(StringRef name) {
  return name == "tandem.wait" || name.starts_with("tandem.wait ");
}

static std::string describe(const DiagnosedOp &op) {
  return op.occurrence == 0
             ? "'" + op.name + "'"
             : llvm::formatv("'{0}' (#{1})", op.name, op.occurrence + 1).str();
}

LogicalResult
mlir::tandem::applyDiagnosis(func::FuncOp func,
                             const DiagnosisFeedback &diagnosis,
                             const CostModel &model, RemarkLog *remarks,
                             const ::tandem::runtime::Plan *plan) {
  // Ops by name, in program order, under the lowering's naming rule.
  llvm::StringMap<SmallVector<Operation *>> byName;
  for (Operation &op : func.getBody().getOps()) {
    op.removeDiscardableAttr(kAvoidOverlapAttrName);
    op.removeDiscardableAttr(kMeasuredScaleAttrName);
    if (std::optional<std::string> name = getStepTraceName(&op))
      byName[withoutStart(*name)].push_back(&op);
  }
  for (const auto &[name, count] : plan ? decltype(diagnosis.collectiveCounts)()
                                        : diagnosis.collectiveCounts) {
    auto it = byName.find(withoutStart(name));
    int64_t have = it == byName.end() ? 0 : it->second.size();
    if (have != count)
      return func.emitError()
             << "diagnosis '" << diagnosis.origin << "': its plan has " << count
             << " '" << name << "' op(s), @" << func.getSymName() << " has "
             << have
             << ": the ops are numbered differently (a pipeline strategy "
                "splits collectives); diagnose a plan of a strategy without "
                "pipelines, or re-plan the function that was diagnosed";
  }
  auto isExtra = [&](const DiagnosedOp &op) {
    return llvm::any_of(diagnosis.extraOps, [&](const DiagnosedOp &x) {
      return x.name == op.name && x.occurrence == op.occurrence;
    });
  };
  auto resolve = [&](const DiagnosedAnomaly &a,
                     const DiagnosedOp &op) -> FailureOr<Operation *> {
    if (plan && op.step >= 0) {
      if (size_t(op.step) >= plan->steps.size())
        return func.emitError()
               << "diagnosis '" << diagnosis.origin << "': anomaly #" << a.index
               << " names step " << op.step << ", beyond the diagnosed plan's "
               << plan->steps.size() << " steps";
      const ::tandem::runtime::Step &step = plan->steps[op.step];
      if (::tandem::runtime::stepTraceName(step) != op.name)
        return func.emitError()
               << "diagnosis '" << diagnosis.origin << "': anomaly #" << a.index
               << " names " << describe(op) << " at step " << op.step
               << ", which the diagnosed plan calls '"
               << ::tandem::runtime::stepTraceName(step)
               << "': the plan is not the one diagnosed";
      auto it = byName.find(withoutStart(op.name));
      if (it != byName.end())
        for (Operation *candidate : it->second)
          if (getStepLocation(candidate) == step.location)
            return candidate;
      // A collective the schedule created (a P2P ring's permutes, a
      // pipeline's chunks) keeps the location of the collective it
      // decomposes: it stands for that one, whose re-plan may decompose it
      // again (clones keep what the diagnosis sets).
      if (step.kind == ::tandem::runtime::StepKind::Collective)
        for (Operation &candidate : func.getBody().getOps())
          if (isa<CollectiveOpInterface>(candidate) &&
              getStepLocation(&candidate) == step.location) {
            if (remarks)
              remarks->remark(&candidate)
                  << "diagnosis: " << describe(op) << " (step " << op.step
                  << " of the diagnosed plan) is a part of this collective "
                     "that the schedule created; anomaly #"
                  << a.index << " is taken as this collective's";
            return &candidate;
          }
      return func.emitError()
             << "diagnosis '" << diagnosis.origin << "': anomaly #" << a.index
             << " names " << describe(op) << " (step " << op.step << ", at "
             << step.location << "), which @" << func.getSymName()
             << " has no op of that name at that location (the plan was "
                "made from another file or function)";
    }
    auto it = byName.find(withoutStart(op.name));
    size_t have = it == byName.end() ? 0 : it->second.size();
    if (size_t(op.occurrence) < have)
      return it->second[op.occurrence];
    return func.emitError()
           << "diagnosis '" << diagnosis.origin << "': anomaly #" << a.index
           << " names " << describe(op) << ", which @" << func.getSymName()
           << " does not have (" << have
           << " op(s) of that name; names are tandem-run's: '<op> <layer>')";
  };

  // Harmful pairs first: their ops' measured durations were contended.
  llvm::MapVector<Operation *, SmallVector<int64_t>> pairs;
  for (const DiagnosedAnomaly &a : diagnosis.anomalies) {
    if (!a.harmful)
      continue;
    const DiagnosedOp &x = a.ops[0], &y = a.ops[1];
    if (isExtra(x) || isExtra(y)) {
      if (remarks)
        remarks->remark(func)
            << "diagnosis: harmful overlap #" << a.index << " of "
            << describe(x) << " and " << describe(y)
            << " involves an op the plan does not have; nothing to avoid";
      continue;
    }
    FailureOr<Operation *> ox = resolve(a, x);
    if (failed(ox))
      return failure();
    FailureOr<Operation *> oy = resolve(a, y);
    if (failed(oy))
      return failure();
    pairs[*ox].push_back(a.index);
    pairs[*oy].push_back(a.index);
    if (remarks)
      remarks->remark(*ox) << "diagnosis: overlap with " << describe(y)
                           << " was harmful ("
                           << llvm::formatv("{0:F1}", a.lostUs)
                           << " us lost, anomaly #" << a.index
                           << "); the two are not to run concurrently";
  }
  Builder b(func.getContext());
  // Times alone as the model gives them: no SM target or CTA budget (the
  // function may be scheduled) and, once removed above, no earlier scale.
  OpTimer timer(model);
  for (auto &[op, ids] : pairs)
    op->setDiscardableAttr(kAvoidOverlapAttrName, b.getDenseI64ArrayAttr(ids));

  for (const DiagnosedAnomaly &a : diagnosis.anomalies) {
    if (a.harmful)
      continue;
    for (const DiagnosedOp &d : a.ops) {
      if (isExtra(d) || isWaitName(d.name))
        continue; // Not in the plan, or no duration to take.
      FailureOr<Operation *> op = resolve(a, d);
      if (failed(op))
        return failure();
      if ((*op)->hasAttr(kMeasuredScaleAttrName))
        continue; // The same measurement, named by an earlier anomaly.
      if (!isa<ComputeOpInterface, CollectiveOpInterface>(*op))
        continue;
      if (pairs.count(*op)) {
        if (remarks)
          remarks->remark(*op)
              << "diagnosis: measured duration of " << describe(d)
              << " not taken: it was measured in a harmful overlap";
        continue;
      }
      std::string error;
      std::optional<double> modelledUs;
      // Against the plan's prediction for the same step in the same
      // schedule (contention included, as in the measurement); without a
      // plan, against the model's time alone.
      if (plan && d.step >= 0 && plan->steps[d.step].predictedDurationUs > 0) {
        modelledUs = plan->steps[d.step].predictedDurationUs;
      } else if (auto compute = dyn_cast<ComputeOpInterface>(*op)) {
        std::optional<ComputeEstimate> e = model.compute(compute, error);
        if (!e)
          return (*op)->emitError() << error;
        modelledUs = e->timeUs;
      } else {
        modelledUs =
            timer.collectiveUs(cast<CollectiveOpInterface>(*op), /*ctas=*/0);
      }
      if (d.durUs <= 0 || *modelledUs <= 0)
        continue; // Nothing to scale.
      double scale = d.durUs / *modelledUs;
      if (scale < kMinMeasuredScale || scale > kMaxMeasuredScale)
        return (*op)->emitError()
               << "diagnosis '" << diagnosis.origin << "': anomaly #" << a.index
               << " measured " << describe(d) << " at " << d.durUs
               << " us against " << *modelledUs
               << " us predicted: a ratio outside [1e-06, 1e+06] is not a "
                  "measurement of this op";
      (*op)->setDiscardableAttr(kMeasuredScaleAttrName,
                                b.getF64FloatAttr(scale));
      if (remarks)
        remarks->remark(*op)
            << "diagnosis: measured " << llvm::formatv("{0:F1}", d.durUs)
            << " us (anomaly #" << a.index << ", lost overlap, " << a.cause
            << ") replaces the predicted "
            << llvm::formatv("{0:F1}", *modelledUs) << " us (x"
            << llvm::formatv("{0:F3}", scale) << ")";
    }
  }
  return success();
}
