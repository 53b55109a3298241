//===- StreamMap.h - The stream every op of a function runs on --*- C++ -*-===//
//
// The one rule for streams, used by the simulator, the schedule verifier,
// stream assignment and the plan lowering: an op's `tandem.stream`
// attribute wins; otherwise compute ops, blocking collectives and waits run
// on stream 0, the compute stream, and each process group's `_start`
// collectives on a communication stream of its own, created at the group's
// first `_start` in program order (even one with an explicit stream).
// Explicit and default streams share one index space (docs/simulator.md).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULEMODEL_STREAMMAP_H
#define TANDEM_SCHEDULEMODEL_STREAMMAP_H

#include "tandem/Dialect/Tandem/ScheduleAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir {
namespace tandem {

/// Numbers the streams of one function, fed its ops in program order.
class StreamNumbering {
public:
  StreamNumbering() { names.push_back("compute"); }
  /// The stream of `op`, a tandem compute op, collective or wait.
  int64_t assign(Operation *op);
  /// One name per stream: "compute", "comm @<group>" or "stream <i>".
  llvm::SmallVector<std::string> names;

private:
  llvm::StringMap<int64_t> commStreamOf;
};

/// The stream of every op of a single-block function.
struct StreamMap {
  /// Every op of the block except the terminator.
  llvm::DenseMap<Operation *, int64_t> streamOf;
  /// One name per stream, as StreamNumbering gives them.
  llvm::SmallVector<std::string> names;

  int64_t numStreams() const { return names.size(); }
  /// Stream of `op`; -1 for the terminator and ops outside the block.
  int64_t lookup(Operation *op) const {
    auto it = streamOf.find(op);
    return it == streamOf.end() ? -1 : it->second;
  }
};

/// Streams by the rule above. Fails, with an error at the op, on a function
/// that is external or has several blocks and on an op that is neither a
/// tandem compute op, a collective, a wait nor the terminator. (The
/// attribute's type and range are the dialect verifier's.)
FailureOr<StreamMap> computeStreams(func::FuncOp func);

/// Whether `func` carries any stream or event attribute (on an op or the
/// function itself), i.e. whether its synchronisation is explicit.
bool hasStreamAttributes(func::FuncOp func);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULEMODEL_STREAMMAP_H
