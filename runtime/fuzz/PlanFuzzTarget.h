//===- PlanFuzzTarget.h - What the plan fuzzer checks per input -*- C++ -*-===//
//
// The body of the plan fuzz target, callable without libFuzzer: the fuzzer
// (PlanFuzzer.cpp) aborts when it returns a problem, and the unit tests run
// it over the seed and regression corpora, so every input that ever failed
// is replayed by the normal test command. Also the launch-bounds oracle the
// property test uses. Plain C++17, no CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_FUZZ_PLANFUZZTARGET_H
#define TANDEM_RUNTIME_FUZZ_PLANFUZZTARGET_H

#include "tandem/runtime/Plan.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tandem {
namespace runtime {

/// Recomputes, in 128-bit arithmetic and independently of validatePlan,
/// where every byte range of every step (stepAccesses, what the executor
/// launches) lands when the executor allocates the plan: an input in an
/// allocation of its own, a temporary at its arena offset, a view at its
/// offset into its storage. Returns "" when all of them lie inside their
/// allocation, else the first that does not. Expects every temporary to be
/// placed (planMemory ran) and the operand indices to be in range; `rank`
/// places ring_concat blocks.
std::string checkLaunchBounds(const Plan &plan, int64_t rank = 0);

/// One fuzz input: reads it as a plan (parsePlan, which validates). If it
/// is accepted, the plan must stay valid through planMemory, every access
/// must lie inside its allocation (checkLaunchBounds), and its JSON form
/// must read back to the same JSON. Returns "" when every invariant holds
/// (whether the input was accepted or rejected), else the broken invariant.
/// `accepted`, when given, says whether the reader accepted the input.
std::string runPlanFuzzInput(const uint8_t *data, size_t size,
                             bool *accepted = nullptr);

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_FUZZ_PLANFUZZTARGET_H
