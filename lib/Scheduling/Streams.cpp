//===- Streams.cpp - Streams and cross-stream events of a schedule --------===//

#include "tandem/Scheduling/Streams.h"
#include "tandem/Analysis/CostModel.h"
#include "tandem/Scheduling/Schedule.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tandem;

//===----------------------------------------------------------------------===//
// StreamClocks
//===----------------------------------------------------------------------===//

StreamClocks::StreamClocks(const StreamMap &streams, Options options)
    : streams(streams), options(options) {
  streamClock.assign(streams.numStreams(), Clock(streams.numStreams(), 0));
}

void StreamClocks::join(ArrayRef<int64_t> from) {
  Clock &into = streamClock[currentStream];
  for (auto [mine, theirs] : llvm::zip_equal(into, from))
    mine = std::max(mine, theirs);
}

void StreamClocks::enter(Operation *op) {
  current = op;
  currentStream = streams.lookup(op);
  assert(currentStream >= 0 && "op without a stream");
  if (options.waitCompletesCollective && isa<WaitOp>(op))
    if (CollectiveOpInterface start = getStartOf(op))
      waitOp(start);
  if (options.implicitDataSync)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        waitOp(def);
}

bool StreamClocks::waitEvent(int64_t event) {
  auto it = eventClock.find(event);
  if (it == eventClock.end())
    return false;
  join(it->second);
  return true;
}

void StreamClocks::waitOp(Operation *producer) {
  auto it = finished.find(producer);
  if (it == finished.end())
    return;
  size_t n = streams.numStreams();
  join(ArrayRef<int64_t>(clockAfter).slice(it->second * n, n));
}

bool StreamClocks::happensBefore(Operation *producer) const {
  auto it = finished.find(producer);
  if (it == finished.end())
    return false;
  int64_t stream = streams.lookup(producer);
  return streamClock[currentStream][stream] >= position[it->second];
}

void StreamClocks::finish(int64_t event) {
  Clock &clock = streamClock[currentStream];
  int64_t pos = ++clock[currentStream];
  finished[current] = position.size();
  position.push_back(pos);
  clockAfter.insert(clockAfter.end(), clock.begin(), clock.end());
  if (event >= 0) {
    eventClock[event] = clock;
    eventOwner[event] = current;
  }
  current = nullptr;
}

//===----------------------------------------------------------------------===//
// Assignment
//===----------------------------------------------------------------------===//

FailureOr<StreamAssignment> mlir::tandem::assignStreams(func::FuncOp func) {
  FailureOr<StreamMap> streams = computeStreams(func);
  if (failed(streams))
    return failure();
  StreamAssignment result;
  result.streams = std::move(*streams);
  const StreamMap &map = result.streams;

  StreamClocks::Options options;
  options.waitCompletesCollective = false; // The wait gets an explicit event.
  options.implicitDataSync = false;
  StreamClocks clocks(map, options);

  Block &block = func.getBody().front();
  llvm::DenseMap<Operation *, llvm::SmallVector<Operation *>> waitsOn;
  llvm::DenseSet<Operation *> recorders;
  llvm::DenseMap<Attribute, Operation *> lastCollectiveOf;
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    int64_t stream = map.lookup(&op);
    llvm::SmallVector<Operation *> deps;
    auto addDep = [&](Operation *def) {
      if (def && def->getBlock() == &block && map.lookup(def) != stream &&
          !llvm::is_contained(deps, def))
        deps.push_back(def);
    };
    for (Value operand : op.getOperands())
      addDep(operand.getDefiningOp());
    auto collective = dyn_cast<CollectiveOpInterface>(&op);
    if (collective)
      addDep(lastCollectiveOf.lookup(collective.getGroupAttr()));
    // Latest first: one wait then covers the earlier ops of that stream.
    llvm::sort(
        deps, [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });

    clocks.enter(&op);
    for (Operation *def : deps) {
      if (clocks.happensBefore(def))
        continue;
      clocks.waitOp(def);
      waitsOn[&op].push_back(def);
      recorders.insert(def);
    }
    clocks.finish(/*event=*/-1);

    if (collective) {
      lastCollectiveOf[collective.getGroupAttr()] = &op;
      if (!collective.isAsync() && stream == 0)
        result.blockingOnCompute.push_back(&op);
    }
  }

  // Event ids in program order of the ops that record them.
  for (Operation &op : block)
    if (recorders.contains(&op))
      result.recordEvent[&op] = result.numEvents++;
  for (auto &[op, defs] : waitsOn) {
    llvm::SmallVector<int64_t> &events = result.waitEvents[op];
    for (Operation *def : defs)
      events.push_back(result.recordEvent.lookup(def));
    llvm::sort(events);
  }
  return result;
}

void mlir::tandem::applyStreamAssignment(func::FuncOp func,
                                         const StreamAssignment &assignment) {
  Builder builder(func.getContext());
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    if (!op.hasTrait<OpTrait::IsTerminator>())
      ops.push_back(&op);
  // Each op gets its own dictionary: the ops are written in parallel (the
  // assignment is only read, attribute uniquing is thread-safe).
  parallelForEach(func.getContext(), ops, [&](Operation *opPtr) {
    Operation &op = *opPtr;
    // One new attribute dictionary per op (each setAttr would unique one).
    // The raw dictionary is what setDiscardableAttrs replaces, with or
    // without properties storage.
    NamedAttrList attrs(op.getRawDictionaryAttrs());
    attrs.set(kStreamAttrName,
              builder.getI64IntegerAttr(assignment.streams.lookup(&op)));
    attrs.erase(kRecordEventAttrName);
    attrs.erase(kWaitEventsAttrName);
    if (auto it = assignment.recordEvent.find(&op);
        it != assignment.recordEvent.end())
      attrs.set(kRecordEventAttrName, builder.getI64IntegerAttr(it->second));
    if (auto it = assignment.waitEvents.find(&op);
        it != assignment.waitEvents.end())
      attrs.set(kWaitEventsAttrName, builder.getDenseI64ArrayAttr(it->second));
    op.setDiscardableAttrs(attrs.getDictionary(op.getContext()));
  });
  func->setAttr(kNumStreamsAttrName,
                builder.getI64IntegerAttr(assignment.streams.numStreams()));
  func->setAttr(kNumEventsAttrName,
                builder.getI64IntegerAttr(assignment.numEvents));
}
