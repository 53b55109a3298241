//===- Engine.h - Discrete-event simulation of streams ----------*- C++ -*-===//
//
// The simulation core. It works on tasks, not IR: it depends on LLVM Support
// and the contention table (Contention.h) only, not on MLIR, so that it can
// be tested on hand-built schedules and reused by other front ends
// (TandemEngine library). Tasks run on streams
// in program order; a task starts when its stream is free and its
// dependences have finished. Running tasks share the GPU:
//  - a collective holds its CTA budget of SMs while it runs; one on the copy
//    engines holds none and shares only HBM (the copy-engine point);
//  - a GEMM gets the SMs the collectives leave (capped by its SM target) and
//    its time follows the wave count on that many SMs;
//  - compute-bound kernels scale with the SMs they get;
//  - each side is slowed by the contention table's factor while the other
//    runs; collectives on the same fabric share its bandwidth;
//  - with `gemmsHoldSms`, SMs go to kernels in issue order: a GEMM that
//    gets the SMs while no collective holds any keeps every SM its target
//    allows until it ends, so a collective issued after it gets none and
//    moves no data until the GEMM ends (and, if GEMMs issued before the
//    collective follow on its stream, until they end too). A collective
//    that holds SMs keeps them. Kernels that become ready at one instant
//    are served in program order. Measured with cuBLASLt on the H200
//    (docs/cost-model.md, "SM residency").
// Rates are recomputed whenever the set of running tasks changes, so a task
// that overlaps only part of another is slowed only for that part.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ENGINE_ENGINE_H
#define TANDEM_ENGINE_ENGINE_H

#include "tandem/Engine/Contention.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace tandem {
namespace sim {

enum class TaskKind {
  Gemm,       ///< Tile/wave model: time = max(waves(sms) * waveUs, floorUs).
  Compute,    ///< Compute-bound, time scales with 1 / SMs.
  Memory,     ///< Bandwidth-bound.
  Collective, ///< Communication; holds `commSms` SMs while running.
  Wait        ///< Zero-time synchronisation on its dependences.
};

/// The contention table's factor on a task of `kind` while the other side
/// runs beside it (compute kinds beside collectives that hold SMs, a
/// collective beside compute): gemmSlowdown for GEMMs and compute-bound
/// kernels, memorySlowdown for bandwidth-bound ones, commSlowdown for
/// collectives, 1 for waits. The engine and the closed forms (Window.h) use
/// this one rule.
double contentionSlowdown(TaskKind kind, const ContentionPoint &c);

struct Task {
  std::string name;
  TaskKind kind = TaskKind::Compute;
  unsigned stream = 0;
  /// Uncontended time with all SMs (Gemm/Compute/Memory) or with its CTA
  /// budget (Collective). Includes launch overhead.
  double aloneUs = 0;
  /// Gemm only: output tiles, time of one wave, memory-roofline floor,
  /// launch overhead, SM target (0 = all SMs).
  int64_t tiles = 0;
  double waveUs = 0, floorUs = 0, overheadUs = 0;
  int64_t smTarget = 0;
  /// Collective only: SMs held and the fabric (process group) it uses.
  int64_t commSms = 0;
  /// Collective only: runs on the copy engines. It holds no SMs (commSms is
  /// ignored), never waits for SMs, and the kernels beside it (and it)
  /// are slowed by the contention table's copy-engine point instead.
  bool copyEngine = false;
  std::string fabric;
  /// Indices of tasks that must finish before this one starts.
  std::vector<unsigned> deps;
};

struct Problem {
  int64_t smCount = 132;
  /// The SM-residency rule above. Off by default in the engine; the
  /// simulator turns it on from the cost model (GpuSpec::gemmsHoldSms).
  bool gemmsHoldSms = false;
  /// A task that depends on a task of another stream starts this long
  /// after that task ends (the cross-stream event's latency); dependences
  /// on the same stream cost nothing beyond the tasks' own launch overhead.
  double eventLatencyUs = 0;
  ContentionTable contention = ContentionTable::defaults();
  std::vector<std::string> streamNames; ///< Index = stream id.
  std::vector<Task> tasks;              ///< In issue (program) order.
};

struct Timing {
  double startUs = 0, endUs = 0;
  /// Collectives: when the collective got its SMs (startUs if at once).
  double admittedUs = 0;
};

struct Result {
  std::vector<Timing> timings; ///< Per task.
  double spanUs = 0;
};

/// Runs the schedule. Fails with `error` naming the blocked tasks if the
/// streams deadlock (a task waits on one that can never start).
std::optional<Result> simulate(const Problem &problem, std::string &error);

/// Time of a Gemm task on `sms` SMs, without contention.
double gemmTimeOnSms(const Task &task, int64_t sms);

} // namespace sim
} // namespace tandem
} // namespace mlir

#endif // TANDEM_ENGINE_ENGINE_H
