//===- AssignStreams.cpp - The tandem-assign-streams pass -----------------===//
//
// Thin driver over assignStreams(): materialises every function's streams and
// cross-stream events as attributes and explains the result in remarks.
//
//===----------------------------------------------------------------------===//

#include "tandem/Scheduling/Streams.h"
#include "tandem/Transforms/Passes.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMASSIGNSTREAMS
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

namespace {
struct AssignStreamsPass
    : public mlir::tandem::impl::TandemAssignStreamsBase<AssignStreamsPass> {
  using Base::Base;

  void runOnOperation() override {
    bool ok = true;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<StreamAssignment> assignment = assignStreams(func);
      if (failed(assignment)) {
        ok = false;
        continue;
      }
      applyStreamAssignment(func, *assignment);
      ++numFunctions;
      numEvents += assignment->numEvents;

      for (Operation *op : assignment->blockingOnCompute)
        op->emitRemark("blocking collective stays on the compute stream; run "
                       "tandem-async-collectives to overlap it");
      InFlightDiagnostic remark = mlir::emitRemark(func.getLoc());
      remark << "'@" << func.getSymName()
             << "': " << assignment->streams.numStreams() << " stream(s) (";
      for (auto [i, name] : llvm::enumerate(assignment->streams.names))
        remark << (i ? ", " : "") << i << ": " << name;
      remark << "), " << assignment->numEvents << " event(s)";
    }
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
