//===- Streams.h - Streams and cross-stream events --------------*- C++ -*-===//
//
// The events that order the uses of a value on a stream other than its
// producer's, and the vector clocks that decide what is ordered before
// what. Which stream an op runs on is the schedule model's rule
// (tandem/ScheduleModel/StreamMap.h).
//
// An event belongs to the op that records it (`tandem.record_event`): it
// completes when that op has completed on its stream. An op lists the events
// its stream waits for before the op runs (`tandem.wait_events`). The vector
// clocks below decide whether one op is ordered before another (it happens
// before) through stream order, events and the completion of a collective
// at its `tandem.wait`. docs/passes/assign-streams.md describes the format.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_STREAMS_H
#define TANDEM_SCHEDULING_STREAMS_H

#include "tandem/ScheduleModel/StreamMap.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir {
namespace tandem {


/// Vector clocks over the streams of one block, fed the ops in program
/// order: `enter(op)`, then the waits of `op` (`waitEvent`, `waitOp`), then
/// the questions about `op` (`happensBefore`), then `finish`. An op's clock
/// entry for stream `s` counts the ops of `s` known to have completed.
class StreamClocks {
public:
  struct Options {
    /// A `tandem.wait` orders its collective's completion before itself: the
    /// wait is the synchronisation point, whatever its stream.
    bool waitCompletesCollective = true;
    /// Every SSA use is ordered after its producer, as tandem-simulate
    /// assumes (its dependences are the def-use edges).
    bool implicitDataSync = false;
  };

  StreamClocks(const StreamMap &streams, Options options);

  /// Starts `op` (not the terminator): joins its stream's clock with its
  /// collective if it is a wait, and with its producers, as the options say.
  void enter(Operation *op);
  /// The stream of the current op waits for `event`, as recorded last before
  /// it in program order. False (and nothing joined) if no op recorded it.
  bool waitEvent(int64_t event);
  /// The stream of the current op waits for the completion of `producer`, a
  /// finished op.
  void waitOp(Operation *producer);
  /// Whether `producer`, a finished op, has completed before the current op
  /// starts.
  bool happensBefore(Operation *producer) const;
  /// Completes the current op on its stream and, if `event` >= 0, records
  /// `event` right after it.
  void finish(int64_t event);
  /// The op that recorded `event` last, or null.
  Operation *recordedBy(int64_t event) const {
    auto it = eventOwner.find(event);
    return it == eventOwner.end() ? nullptr : it->second;
  }

private:
  using Clock = llvm::SmallVector<int64_t>;
  void join(llvm::ArrayRef<int64_t> from);

  const StreamMap &streams;
  Options options;
  Operation *current = nullptr;
  int64_t currentStream = 0;
  /// Current clock of every stream.
  llvm::SmallVector<Clock> streamClock;
  /// Index of every finished op into `position` and `clockAfter`.
  llvm::DenseMap<Operation *, unsigned> finished;
  /// Position (1-based) of every finished op on its stream.
  std::vector<int64_t> position;
  /// Clock of the op's stream right after the op completed, numStreams()
  /// entries per finished op, flat.
  std::vector<int64_t> clockAfter;
  llvm::DenseMap<int64_t, Clock> eventClock;
  llvm::DenseMap<int64_t, Operation *> eventOwner;
};

/// Streams and events for one function.
struct StreamAssignment {
  StreamMap streams;
  /// The event each recording op records; ids 0 .. numEvents-1 in program
  /// order of the recording ops.
  llvm::DenseMap<Operation *, int64_t> recordEvent;
  /// Events each op waits for, ascending.
  llvm::DenseMap<Operation *, llvm::SmallVector<int64_t>> waitEvents;
  int64_t numEvents = 0;
  /// Blocking collectives that run on the compute stream (stream 0).
  llvm::SmallVector<Operation *> blockingOnCompute;
};

/// Streams as `computeStreams` gives them (manual `tandem.stream` kept), and
/// events that order, across streams:
///  - every use of a value after its producer (the use of a `_start`'s future
///    by its `tandem.wait` included);
///  - every collective after the previous collective of its group in program
///    order (the issue-order edge of DependenceGraph).
/// The earlier op records an event and the later one waits for it, unless
/// the later op is already ordered after it (stream order and earlier waits,
/// transitively); the latest such dependence is considered first, so that
/// one wait covers the earlier ops of the same stream. Existing event
/// attributes are ignored. Errors as `computeStreams`.
FailureOr<StreamAssignment> assignStreams(func::FuncOp func);

/// Writes `assignment` as attributes: `tandem.stream` on every op but the
/// terminator, `tandem.record_event` / `tandem.wait_events` where the
/// assignment has them (and removes stale ones elsewhere), and
/// `tandem.num_streams` / `tandem.num_events` on the function.
void applyStreamAssignment(func::FuncOp func,
                           const StreamAssignment &assignment);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_STREAMS_H
