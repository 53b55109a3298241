//===- Window.h - The engine's rate rule in closed form ---------*- C++ -*-===//
//
// One collective and a sequence of compute ops on one stream, started
// together: the case every scheduling decision prices (a bulk-overlap window,
// a pipeline step, an SM-target window). While both sides run, each op
// progresses at 1 / its time beside the collective and the collective at
// 1 / its time beside compute; once one side is done, the other continues at
// its alone rate. This is the engine's rule (Engine.cpp recomputes rates
// whenever the running set changes) solved for this shape, so that an
// algorithm that prices a window in closed form and the simulator that runs
// the schedule agree. The per-kind factors come from contentionSlowdown
// (Engine.h), which the engine uses too.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ENGINE_WINDOW_H
#define TANDEM_ENGINE_WINDOW_H

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cstddef>

namespace mlir {
namespace tandem {
namespace sim {

/// A compute op's time while the collective runs and once it has ended.
struct WindowPhases {
  double besideUs = 0, afterUs = 0;
};

/// When the compute sequence and the collective end, from their start.
struct WindowTimeline {
  double computeEndUs = 0, collectiveEndUs = 0;
  /// Ops that start while the collective still runs.
  size_t startedBeside = 0;
  double windowUs() const { return std::max(computeEndUs, collectiveEndUs); }
};

/// Runs `ops` (one after another) beside a collective that takes
/// `collectiveBesideUs` while compute runs and `collectiveAloneUs` alone.
WindowTimeline runWindow(llvm::ArrayRef<WindowPhases> ops,
                         double collectiveBesideUs, double collectiveAloneUs);

} // namespace sim
} // namespace tandem
} // namespace mlir

#endif // TANDEM_ENGINE_WINDOW_H
