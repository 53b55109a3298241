//===- MemoryPlanner.h - Static arena plan honouring the schedule -*- C++
//-*-===//
//
// Places every temporary buffer of a plan at an offset in one arena. Two
// buffers may share bytes only when every step that touches the earlier one
// happens before the step that first writes the later one, through stream
// order and events exactly as the executor issues them; program order alone
// is not enough once several streams run. Step inputs and outputs are not in
// the arena: the executor keeps them for the whole step.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_MEMORYPLANNER_H
#define TANDEM_RUNTIME_MEMORYPLANNER_H

#include "tandem/runtime/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tandem {
namespace runtime {

/// Arena offsets are multiples of this (cuBLASLt and vector loads want at
/// least 16 bytes; 256 matches cudaMalloc's alignment).
constexpr int64_t kArenaAlignment = 256;

/// Happens-before between the steps of a plan, from vector clocks over its
/// streams: a step waits for the last record of each event it names that
/// precedes it in program order, as cudaStreamWaitEvent does.
class HappensBefore {
public:
  explicit HappensBefore(const Plan &plan);
  /// Whether step `a` has completed before step `b` starts (a != b).
  bool before(int64_t a, int64_t b) const;
  /// Position (1-based) of `step` on its stream.
  int64_t position(int64_t step) const { return positions[step]; }
  /// Clock of the stream of `step` when it starts, before it runs.
  const std::vector<int64_t> &startClock(int64_t step) const {
    return clocks[step];
  }

private:
  std::vector<int64_t> streams;
  std::vector<int64_t> positions;
  std::vector<std::vector<int64_t>> clocks;
};

/// The buffer whose storage `buffer` uses (itself unless it is a view).
int64_t rootBuffer(const Plan &plan, int64_t buffer);

struct MemoryPlanStats {
  int64_t arenaBytes = 0;
  /// Sum of all temporary buffers' sizes: the arena without any reuse.
  int64_t totalTempBytes = 0;
  int64_t tempBuffers = 0;
};

/// Sets `arenaOffset` of every Temp buffer and `plan.arenaBytes` (first fit
/// in order of first write). Expects a plan that validatePlan accepts apart
/// from its memory plan (indices in range, counts within the plan bounds).
/// Returns an empty string, or an error if a temp buffer is read before any
/// step writes it or an offset would overflow.
std::string planMemory(Plan &plan, MemoryPlanStats *stats = nullptr);

/// Bytes the temporaries take without any reuse: the sum of their sizes,
/// each rounded up to kArenaAlignment (at least one alignment unit). No sound
/// memory plan needs a larger arena. False when the sum overflows int64
/// (impossible within the plan bounds: below 2^58).
bool arenaUpperBound(const Plan &plan, int64_t &bytes);

/// Checks an existing memory plan: every Temp buffer placed inside the
/// arena, aligned, and no two temps sharing bytes unless one's accesses all
/// happen before the other's first write. Empty string when sound.
std::string checkMemoryPlan(const Plan &plan);

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_MEMORYPLANNER_H
