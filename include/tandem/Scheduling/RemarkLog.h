//===- RemarkLog.h - Decisions explained, kept until emitted ----*- C++ -*-===//
//
// Every scheduling algorithm explains its decisions as remarks (what moved,
// what was split, what was left alone and why). It writes them into a
// RemarkLog rather than emitting them, so that the caller decides: a pass
// emits its log when the algorithm returns; `auto` keeps one log per
// candidate, built while the candidate is scheduled, and emits only the
// winner's, without scheduling it again.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULING_REMARKLOG_H
#define TANDEM_SCHEDULING_REMARKLOG_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

#include <deque>

namespace mlir {
namespace tandem {

class RemarkLog {
public:
  /// A remark at `op`, to stream into; like Operation::emitRemark, it
  /// carries the op as a note when the context prints ops on diagnostics.
  /// The reference stays valid while the log lives.
  Diagnostic &remark(Operation *op);
  /// A remark at `loc`.
  Diagnostic &remark(Location loc);
  /// Moves `other`'s remarks after this log's.
  void append(RemarkLog &&other);
  /// Emits the remarks in the order they were written, then forgets them.
  void emit(MLIRContext *ctx);
  bool empty() const { return remarks.empty(); }
  size_t size() const { return remarks.size(); }

private:
  std::deque<Diagnostic> remarks;
};

} // namespace tandem
} // namespace mlir

#endif // TANDEM_SCHEDULING_REMARKLOG_H
