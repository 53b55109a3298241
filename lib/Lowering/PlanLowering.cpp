//===- PlanLowering.cpp - Scheduled tandem IR to an execution plan --------===//

#include "tandem/Lowering/PlanLowering.h"
#include "tandem/Dialect/Tandem/ScheduleAttributes.h"

#include "tandem/Scheduling/Streams.h"
#include "tandem/Simulator/Simulate.h"
#include "tandem/runtime/MemoryPlanner.h"
#include "tandem/runtime/RunTrace.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

// A verified module never asks the runtime for more streams or events than
// a plan may hold: the dialect's bounds are the plan format's.
static_assert(mlir::tandem::kMaxStreams == tandem::runtime::kMaxPlanStreams,
              "the dialect's stream bound must be the plan's");
static_assert(mlir::tandem::kMaxEvents == tandem::runtime::kMaxPlanEvents,
              "the dialect's event bound must be the plan's");

using namespace mlir;
using namespace mlir::tandem;
namespace rt = ::tandem::runtime;

std::string mlir::tandem::getStepLabel(Operation *op) {
  if (auto o = dyn_cast<OpaqueOp>(op))
    return o.getKernel().str();
  if (auto layer = op->getAttrOfType<StringAttr>("layer"))
    return layer.str();
  return "";
}

std::string mlir::tandem::getStepLocation(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
  return text;
}

std::optional<std::string> mlir::tandem::getStepTraceName(Operation *op) {
  if (isa<func::ReturnOp>(op))
    return std::nullopt;
  if (auto s = dyn_cast<SliceOp>(op); s && s.isView())
    return std::nullopt;
  rt::Step step;
  step.name = op->getName().getStringRef().str();
  step.label = getStepLabel(op);
  return rt::stepTraceName(step);
}

namespace {

std::string locationText(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

/// Builds the plan op by op; values map to buffer indices.
class Lowerer {
public:
  Lowerer(func::FuncOp func) : func(func) {}

  FailureOr<rt::Plan> run(const PlanLoweringOptions &options);

private:
  FailureOr<int64_t> newBuffer(Operation *at, Value value, std::string name,
                               rt::Buffer::Role role);
  FailureOr<int64_t> bufferOf(Operation *user, Value value);
  LogicalResult lowerOp(Operation *op, rt::Step &step);
  FailureOr<int64_t> groupIndex(Operation *op, StringRef name);

  func::FuncOp func;
  rt::Plan plan;
  llvm::DenseMap<Value, int64_t> buffers;
  /// Concats that write in place (ConcatOp::writesInPlace): the value whose
  /// buffer holds each block (the collective's future for a wait) -> the
  /// concat and the block's byte offset in it. That buffer is a view of the
  /// concat's.
  llvm::DenseMap<Value, std::pair<ConcatOp, int64_t>> inPlaceBlocks;
  llvm::StringMap<int64_t> groups;
  /// The op each step came from.
  std::vector<Operation *> opOfStep;
};

FailureOr<int64_t> Lowerer::newBuffer(Operation *at, Value value,
                                      std::string name, rt::Buffer::Role role) {
  RankedTensorType type = dyn_cast<RankedTensorType>(value.getType());
  if (auto future = dyn_cast<FutureType>(value.getType()))
    type = dyn_cast<RankedTensorType>(future.getValueType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0)
    return at->emitError() << "the runtime needs statically shaped tensors of "
                              "rank >= 1, got "
                           << value.getType();
  rt::Buffer buffer;
  Type element = type.getElementType();
  if (element.isBF16())
    buffer.type = rt::DType::BF16;
  else if (element.isF16())
    buffer.type = rt::DType::F16;
  else if (element.isF32())
    buffer.type = rt::DType::F32;
  else
    return at->emitError() << "element type " << element
                           << " is not supported by the runtime (bf16, f16 "
                              "and f32 are)";
  buffer.shape.assign(type.getShape().begin(), type.getShape().end());
  buffer.role = role;
  buffer.name = std::move(name);
  if (auto it = inPlaceBlocks.find(value); it != inPlaceBlocks.end()) {
    // A block of an in-place concat: a view of the concat's buffer, which
    // the first block to be lowered creates.
    auto [concat, offset] = it->second;
    auto root = buffers.find(concat.getResult());
    int64_t rootIndex;
    if (root == buffers.end()) {
      FailureOr<int64_t> r =
          newBuffer(at, concat.getResult(),
                    "concat#" + std::to_string(plan.buffers.size()),
                    rt::Buffer::Role::Temp);
      if (failed(r))
        return failure();
      rootIndex = *r;
    } else {
      rootIndex = root->second;
    }
    buffer.role = rt::Buffer::Role::View;
    buffer.viewOf = rootIndex;
    buffer.viewOffset = offset;
  }
  int64_t index = plan.buffers.size();
  plan.buffers.push_back(std::move(buffer));
  buffers[value] = index;
  return index;
}

FailureOr<int64_t> Lowerer::bufferOf(Operation *user, Value value) {
  auto it = buffers.find(value);
  if (it == buffers.end())
    return user->emitError()
           << "operand is not defined earlier in the function's block";
  return it->second;
}

FailureOr<int64_t> Lowerer::groupIndex(Operation *op, StringRef name) {
  auto it = groups.find(name);
  if (it != groups.end())
    return it->second;
  auto group = SymbolTable::lookupNearestSymbolFrom<GroupOp>(
      op, StringAttr::get(op->getContext(), name));
  if (!group)
    return op->emitError() << "group '@" << name << "' not found";
  rt::Group g;
  g.name = name.str();
  g.size = group.getSize();
  g.topology = stringifyTopology(group.getTopology()).str();
  int64_t index = plan.groups.size();
  plan.groups.push_back(g);
  groups[name] = index;
  return index;
}

static rt::ReduceKind convert(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::sum:
    return rt::ReduceKind::Sum;
  case ReduceKind::avg:
    return rt::ReduceKind::Avg;
  case ReduceKind::max:
    return rt::ReduceKind::Max;
  case ReduceKind::min:
    return rt::ReduceKind::Min;
  }
  return rt::ReduceKind::Sum;
}

LogicalResult Lowerer::lowerOp(Operation *op, rt::Step &step) {
  step.name = op->getName().getStringRef().str();
  step.location = getStepLocation(op);
  step.label = getStepLabel(op);
  if (auto sm = op->getAttrOfType<IntegerAttr>(kSmTargetAttrName))
    step.smTarget = sm.getInt();
  if (auto sms = op->getAttrOfType<IntegerAttr>(kCommSmsAttrName))
    step.commSms = sms.getInt();
  step.copyEngine = isCopyEngine(op);

  // Inputs first: they must exist before results are created.
  auto addInputs = [&](ValueRange values) -> LogicalResult {
    for (Value v : values) {
      FailureOr<int64_t> b = bufferOf(op, v);
      if (failed(b))
        return failure();
      step.inputs.push_back(*b);
    }
    return success();
  };
  auto addResults = [&](StringRef what) -> LogicalResult {
    for (OpResult r : op->getResults()) {
      std::string name = (what + "#" + llvm::Twine(plan.buffers.size())).str();
      FailureOr<int64_t> b =
          newBuffer(op, r, std::move(name), rt::Buffer::Role::Temp);
      if (failed(b))
        return failure();
      step.outputs.push_back(*b);
    }
    return success();
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](MatmulOp m) -> LogicalResult {
        step.kind = rt::StepKind::Matmul;
        step.role = stringifyMatmulRole(m.getRole()).str();
        step.transA = m.getTransposeLhs();
        step.transB = m.getTransposeRhs();
        if (failed(addInputs({m.getLhs(), m.getRhs()})))
          return failure();
        return addResults(step.label.empty() ? "matmul" : step.label);
      })
      .Case([&](AttentionOp a) -> LogicalResult {
        step.kind = rt::StepKind::Attention;
        step.heads = a.getNumHeads();
        step.kvHeads = a.getNumKvHeads();
        step.headDim = a.getHeadDim();
        step.causal = a.getCausal();
        if (std::optional<uint64_t> queries = a.getQueries())
          step.queries = static_cast<int64_t>(*queries);
        if (failed(addInputs({a.getQkv()})))
          return failure();
        return addResults("attention");
      })
      .Case([&](AttentionGradOp a) -> LogicalResult {
        step.kind = rt::StepKind::AttentionGrad;
        step.heads = a.getNumHeads();
        step.kvHeads = a.getNumKvHeads();
        step.headDim = a.getHeadDim();
        step.causal = a.getCausal();
        if (failed(addInputs({a.getOutputGrad(), a.getQkv(), a.getOutput()})))
          return failure();
        return addResults("attention_grad");
      })
      .Case([&](NormOp n) -> LogicalResult {
        step.kind = rt::StepKind::Norm;
        step.norm = n.getKind() == NormKind::layer ? rt::NormKind::Layer
                                                   : rt::NormKind::Rms;
        if (failed(addInputs({n.getInput(), n.getWeight()})))
          return failure();
        return addResults("norm");
      })
      .Case([&](NormGradOp n) -> LogicalResult {
        step.kind = rt::StepKind::NormGrad;
        step.norm = n.getKind() == NormKind::layer ? rt::NormKind::Layer
                                                   : rt::NormKind::Rms;
        if (failed(addInputs({n.getOutputGrad(), n.getInput(), n.getWeight()})))
          return failure();
        return addResults("norm_grad");
      })
      .Case([&](ElementwiseOp e) -> LogicalResult {
        step.kind = rt::StepKind::Elementwise;
        std::optional<rt::ElementwiseKind> kind = rt::parseElementwiseKind(
            stringifyElementwiseKind(e.getKind()).str());
        if (!kind)
          return op->emitError() << "element-wise kind '"
                                 << stringifyElementwiseKind(e.getKind())
                                 << "' has no runtime kernel";
        step.elementwise = *kind;
        if (failed(addInputs(e.getInputs())))
          return failure();
        return addResults(stringifyElementwiseKind(e.getKind()));
      })
      .Case([&](OpaqueOp o) -> LogicalResult {
        step.kind = rt::StepKind::Opaque;
        step.declaredBytes = o.getDeclaredBytes();
        step.declaredFlops = o.getDeclaredFlops().convertToDouble();
        if (failed(addInputs(o.getInputs())))
          return failure();
        return addResults(o.getKernel());
      })
      .Case([&](SliceOp s) -> LogicalResult {
        if (failed(addInputs({s.getInput()})))
          return failure();
        // A contiguous dim-0 chunk is a view: no step, no copy.
        if (s.isView()) {
          int64_t base = step.inputs[0];
          int64_t root = rt::rootBuffer(plan, base);
          int64_t offset = plan.buffers[base].role == rt::Buffer::Role::View
                               ? plan.buffers[base].viewOffset
                               : 0;
          FailureOr<int64_t> b = newBuffer(
              op, s.getResult(), "slice#" + std::to_string(plan.buffers.size()),
              rt::Buffer::Role::View);
          if (failed(b))
            return failure();
          rt::Buffer &view = plan.buffers[*b];
          view.viewOf = root;
          // The input's rows are getWeightSum() units; the block starts
          // getBlockStart() units in.
          view.viewOffset = offset + plan.buffers[base].bytes() /
                                         s.getWeightSum() * s.getBlockStart();
          // No launch: the caller drops the step, or keeps it as a sync
          // step if the schedule put events on the slice.
          step.kind = rt::StepKind::Sync;
          step.name.clear();
          step.inputs.clear();
          return success();
        }
        step.kind = rt::StepKind::Slice;
        step.dim = s.getDim();
        step.chunk = s.getChunk();
        step.chunks = s.getChunks();
        if (std::optional<ArrayRef<int64_t>> weights = s.getWeights())
          step.weights.assign(weights->begin(), weights->end());
        step.interleave = s.getInterleave();
        return addResults("slice");
      })
      .Case([&](ConcatOp c) -> LogicalResult {
        if (buffers.count(c.getResult())) {
          // In place: the producers wrote the blocks. No launch; kept as a
          // sync step if the schedule put events on the concat.
          step.kind = rt::StepKind::Sync;
          step.name.clear();
          step.inputs.clear();
          return success();
        }
        step.kind = rt::StepKind::Concat;
        step.dim = c.getDim();
        step.interleave = c.getInterleave();
        if (failed(addInputs(c.getInputs())))
          return failure();
        return addResults("concat");
      })
      .Case([&](RingConcatOp c) -> LogicalResult {
        step.kind = rt::StepKind::RingConcat;
        step.dim = c.getDim();
        FailureOr<int64_t> g = groupIndex(op, c.getGroup());
        if (failed(g))
          return failure();
        step.group = *g;
        if (failed(addInputs(c.getInputs())))
          return failure();
        return addResults("ring_concat");
      })
      .Case([&](WaitOp w) -> LogicalResult {
        step.kind = rt::StepKind::Sync;
        FailureOr<int64_t> b = bufferOf(op, w.getFuture());
        if (failed(b))
          return failure();
        buffers[w.getResult()] = *b;
        return success();
      })
      .Case([&](CollectiveOpInterface c) -> LogicalResult {
        step.kind = rt::StepKind::Collective;
        step.collective = static_cast<rt::CollectiveKind>(
            static_cast<int>(c.getCollectiveKind()));
        FailureOr<int64_t> g = groupIndex(op, c.getGroupAttr().getValue());
        if (failed(g))
          return failure();
        step.group = *g;
        if (auto dim = op->getAttrOfType<IntegerAttr>("dim"))
          step.dim = dim.getInt();
        if (auto reduce = op->getAttrOfType<ReduceKindAttr>("reduce"))
          step.reduce = convert(reduce.getValue());
        if (auto shift = op->getAttrOfType<IntegerAttr>("shift"))
          step.shift = shift.getInt();
        auto split = op->getAttrOfType<IntegerAttr>("split_dim");
        auto concat = op->getAttrOfType<IntegerAttr>("concat_dim");
        if ((split && split.getInt() != 0) || (concat && concat.getInt() != 0))
          return op->emitError()
                 << "the runtime supports all_to_all only with split 0 and "
                    "concat 0";
        if (step.dim != 0)
          return op->emitError() << "the runtime supports collectives along "
                                    "dimension 0 only, this one is along "
                                 << step.dim;
        if (failed(addInputs({c.getInput()})))
          return failure();
        return addResults(stringifyCollectiveKind(c.getCollectiveKind()));
      })
      .Default([&](Operation *other) -> LogicalResult {
        return other->emitError()
               << "op has no runtime lowering (only tandem compute ops, "
                  "collectives and waits do)";
      });
}

FailureOr<rt::Plan> Lowerer::run(const PlanLoweringOptions &options) {
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return func.emitError() << "the runtime lowers functions with exactly one "
                               "block";
  plan.function = func.getSymName().str();
  plan.producer = options.producer;

  // Streams and events: the schedule's own, or the defaults.
  FailureOr<StreamMap> streamMap = computeStreams(func);
  if (failed(streamMap))
    return failure();
  std::optional<StreamAssignment> assigned;
  bool explicitSync = hasStreamAttributes(func);
  if (!explicitSync) {
    FailureOr<StreamAssignment> a = assignStreams(func);
    if (failed(a))
      return failure();
    assigned = std::move(*a);
    plan.numEvents = assigned->numEvents;
    streamMap = assigned->streams;
  }
  plan.numStreams = streamMap->numStreams();
  for (int64_t s = 0; s < plan.numStreams; ++s) {
    plan.streamNames.push_back(streamMap->names[s]);
    // Communication streams get CUDA's higher priority, as NCCL's own
    // streams would: their kernels are short and gate other work.
    plan.streamPriorities.push_back(
        StringRef(streamMap->names[s]).starts_with("comm") ? -1 : 0);
  }

  Block &block = func.getBody().front();
  for (ConcatOp concat : block.getOps<ConcatOp>()) {
    if (!concat.writesInPlace())
      continue;
    // Inputs may differ in rows (uneven parts): each block starts after
    // the bytes of the blocks before it.
    int64_t offset = 0;
    for (Value v : concat.getInputs()) {
      Value storage = v;
      if (auto wait = v.getDefiningOp<WaitOp>())
        storage = wait.getFuture();
      inPlaceBlocks[storage] = {concat, offset};
      auto type = cast<RankedTensorType>(v.getType());
      offset +=
          type.getNumElements() * int64_t(type.getElementTypeBitWidth() / 8);
    }
  }
  for (BlockArgument arg : block.getArguments()) {
    std::string name = "arg" + std::to_string(arg.getArgNumber());
    FailureOr<int64_t> b =
        newBuffer(func, arg, std::move(name), rt::Buffer::Role::Input);
    if (failed(b))
      return failure();
    plan.inputs.push_back(*b);
  }

  int64_t maxEvent = -1;
  for (Operation &op : block) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands()) {
        FailureOr<int64_t> b = bufferOf(&op, v);
        if (failed(b))
          return failure();
        plan.outputs.push_back(*b);
      }
      continue;
    }
    rt::Step step;
    step.stream = streamMap->lookup(&op);
    if (assigned) {
      if (auto it = assigned->recordEvent.find(&op);
          it != assigned->recordEvent.end())
        step.recordEvent = it->second;
      if (auto it = assigned->waitEvents.find(&op);
          it != assigned->waitEvents.end())
        step.waitEvents.assign(it->second.begin(), it->second.end());
    } else {
      // Types and ranges: the dialect's verifier.
      step.recordEvent = getRecordEvent(&op).value_or(-1);
      ArrayRef<int64_t> waits = getWaitEvents(&op);
      step.waitEvents.assign(waits.begin(), waits.end());
    }
    maxEvent = std::max(maxEvent, step.recordEvent);
    for (int64_t e : step.waitEvents)
      maxEvent = std::max(maxEvent, e);
    if (failed(lowerOp(&op, step)))
      return failure();
    // A view slice needs no step unless it carries synchronisation.
    if (step.name.empty()) {
      if (step.recordEvent < 0 && step.waitEvents.empty())
        continue;
      step.name = op.getName().getStringRef().str();
      step.location = locationText(op.getLoc());
    }
    step.predictedStartUs = -1;
    plan.steps.push_back(std::move(step));
    opOfStep.push_back(&op);
  }
  // GEMM weights start at the scale that keeps activations O(1):
  // uniform in [-1/sqrt(K), 1/sqrt(K)) for K reduced rows. Without it,
  // products of unit-scale inputs grow by sqrt(K) per GEMM and attention's
  // softmax saturates, so that legitimate rounding differences between a
  // schedule and its reference would be amplified without bound.
  for (const rt::Step &step : plan.steps) {
    if (step.kind != rt::StepKind::Matmul)
      continue;
    rt::Buffer &rhs = plan.buffers[step.inputs[1]];
    if (rhs.role != rt::Buffer::Role::Input || rhs.shape.size() != 2)
      continue;
    int64_t k = step.transB ? rhs.shape[1] : rhs.shape[0];
    rhs.initScale = std::min(rhs.initScale, 1.0 / std::sqrt(double(k)));
  }

  if (explicitSync)
    plan.numEvents = std::max<int64_t>(
        maxEvent + 1,
        func->getAttrOfType<IntegerAttr>(kNumEventsAttrName)
            ? func->getAttrOfType<IntegerAttr>(kNumEventsAttrName).getInt()
            : 0);

  if (options.model) {
    FailureOr<SimulationReport> report = simulateFunction(func, *options.model);
    if (failed(report))
      return failure();
    rt::Prediction p;
    p.target = options.targetName;
    p.spanUs = report->spanUs;
    p.computeUs = report->computeUs;
    p.commUs = report->commUs;
    p.exposedCommUs = report->exposedCommUs;
    p.boundUs = report->boundUs;
    plan.prediction = p;
    // Each step's task in the schedule model: when it runs in the
    // schedule, and its time alone (the emulated fabric paces collectives
    // to it).
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      std::optional<unsigned> task = report->model.taskOf(opOfStep[i]);
      if (!task)
        continue;
      const sim::Timing &t = report->result.timings[*task];
      plan.steps[i].predictedStartUs = t.startUs;
      plan.steps[i].predictedDurationUs = t.endUs - t.startUs;
      plan.steps[i].predictedAloneUs =
          report->model.problem().tasks[*task].aloneUs;
    }
  }

  std::string error = rt::validatePlan(plan);
  if (error.empty())
    error = rt::planMemory(plan);
  if (!error.empty())
    return func.emitError() << "the lowered plan is invalid: " << error;
  return std::move(plan);
}

} // namespace

FailureOr<rt::Plan>
mlir::tandem::lowerToPlan(func::FuncOp func,
                          const PlanLoweringOptions &options) {
  Lowerer lowerer(func);
  return lowerer.run(options);
}
