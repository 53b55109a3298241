//===- Executor.h - Run a plan on one GPU with CUDA/NCCL/cuBLASLt -*- C++
//-*-===//
//
// Executes one rank's plan: allocates the inputs, the arena and per-stream
// scratch, creates the plan's streams (with their priorities) and events,
// and enqueues every step in plan order on its stream, waiting for and
// recording the plan's events around it. Compute steps go to Kernels.h;
// collectives to NCCL, or, in the single-GPU stand-in mode, to device copies
// of the same byte volume (docs/runtime.md: never real communication).
//
// The header exposes no CUDA or NCCL types.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_EXECUTOR_H
#define TANDEM_RUNTIME_EXECUTOR_H

#include "tandem/runtime/Plan.h"
#include "tandem/runtime/RankExchange.h"
#include "tandem/runtime/RunTrace.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tandem {
namespace runtime {

enum class CollectiveMode {
  /// Real collectives; every group must span all ranks of the run. NCCL
  /// runs them, except copy-engine collectives (Step::copyEngine): this
  /// device's copy engines pull the peers' buffers (peer access within a
  /// process, CUDA IPC between processes; ExecutorOptions::exchange).
  Nccl,
  /// One rank's program on one GPU; each collective becomes a device copy
  /// of the same byte volume on its stream (Kernels.h), a copy-engine
  /// collective unpaced device copies (launchCopyEngineCollective).
  Standin,
  /// One rank's program on one GPU on an emulated fabric: each collective
  /// and P2P ring step becomes a kernel on its CTA budget that moves the
  /// rank's local bytes and is paced to the cost model's time for it alone
  /// (launchEmulatedCollective); a copy-engine collective becomes paced
  /// device copies instead (launchCopyEngineCollective). Emulation, not
  /// communication.
  Emulated,
};

/// A communicator to create: one per (group, CTA budget) the plan's NCCL
/// collectives use (copy-engine ones need none).
struct CommunicatorKey {
  int64_t group = 0;
  int64_t ctas = 0; ///< 0 = NCCL's default.
  bool operator<(const CommunicatorKey &o) const {
    return group != o.group ? group < o.group : ctas < o.ctas;
  }
  bool operator==(const CommunicatorKey &o) const {
    return group == o.group && ctas == o.ctas;
  }
};
/// The communicators a plan needs, in a fixed order every rank agrees on.
std::vector<CommunicatorKey> communicatorKeys(const Plan &plan);

/// Why `plan` cannot run with `mode`, or "" when it can; checked by
/// Executor::create (and by tools before any device work). Copy-engine
/// collectives (Step::copyEngine) in Nccl mode need the launcher's
/// exchange (`hasExchange`): they pull the peers' buffers directly, by
/// peer access within a process and CUDA IPC between processes.
std::string checkCollectiveMode(const Plan &plan, CollectiveMode mode,
                                bool hasExchange);

/// Size of NCCL's unique id (ncclUniqueId), for bootstraps that move it.
constexpr int kCommIdBytes = 128;
/// ncclGetUniqueId for one communicator, as raw bytes.
bool newCommunicatorId(std::string &id, std::string &error);

/// How attention / attention_grad steps run (Kernels.h).
enum class AttentionImpl {
  /// The fused kernels (FlashAttention.cu) where they apply (bf16/f16, head
  /// dim 64 or 128, 16-byte aligned buffers), the unfused path elsewhere.
  Fused,
  /// Always the unfused cuBLASLt + softmax path (the reference of the
  /// fused kernels' tests; `tandem-run --attention unfused`).
  Unfused,
  /// cuDNN's fused attention (CudnnAttention.h) where cuDNN has an engine
  /// for the step, Fused's choice elsewhere (the summary names the step and
  /// cuDNN's reason). Creating the executor fails in a runtime built
  /// without cuDNN (`tandem-run --attention cudnn`).
  Cudnn,
};

struct ExecutorOptions {
  int device = 0;
  CollectiveMode mode = CollectiveMode::Nccl;
  /// This process's rank and the number of ranks (Nccl mode); in stand-in
  /// mode the rank whose program runs (placement of ring_concat, blocks).
  int rank = 0;
  int worldSize = 1;
  /// Nccl mode: one id (kCommIdBytes bytes) per communicatorKeys() entry,
  /// identical on every rank.
  std::vector<std::string> communicatorIds;
  /// Nccl mode with copy-engine collectives: how the ranks exchange their
  /// buffers' addresses (RankExchange). Unused otherwise.
  RankExchange exchange;
  /// Record CUDA events around every step (per-op timing for the trace).
  bool timeSteps = false;
  /// Synchronise after every step so that an execution error names its op.
  bool syncEachStep = false;
  /// Debugging: give every temporary buffer its own allocation instead of
  /// its arena slot (no reuse), so that compute-sanitizer's memcheck reports
  /// a kernel writing past its output instead of silently hitting another
  /// buffer's bytes.
  bool separateBuffers = false;
  /// Capture the step in a CUDA graph and replay it.
  bool cudaGraph = false;
  /// A step that has not finished after this many seconds aborts the
  /// communicators and fails.
  double timeoutSeconds = 300;
  /// cuBLASLt workspace per stream.
  int64_t workspaceBytes = 64ll << 20;
  /// Fused attention by default.
  AttentionImpl attention = AttentionImpl::Fused;
  /// AttentionImpl::Cudnn: cuDNN's deterministic backward (bitwise
  /// reproducible, as the runtime's own kernels are) or its faster
  /// atomic one.
  bool cudnnDeterministic = true;
  /// Emulated mode: where a collective step has no `predicted.alone_us`,
  /// pace it to `fabricLatencyUs` + its per-rank bus bytes (nccl-tests'
  /// busbw convention) / `fabricGbps` GB/s; 0 = no such rate, and such a
  /// plan is refused before any device work.
  double fabricGbps = 0;
  double fabricLatencyUs = 0;
  /// Fault injection (tandem-diagnose's validation): before enqueueing step
  /// `first`, the host waits `second` microseconds (a busy wait, so that
  /// the delay is exact), as a slow host launch would.
  std::vector<std::pair<int64_t, double>> hostDelays;
};

struct RunResult {
  double stepUs = 0;
  /// Per plan step, when ExecutorOptions::timeSteps is set.
  std::vector<StepTiming> steps;
};

class Executor {
public:
  /// Validates the plan, sets the device, allocates memory, creates streams,
  /// events, cuBLASLt handle and communicators. Fails with an error naming
  /// what went wrong before anything is launched.
  static std::unique_ptr<Executor>
  create(const Plan &plan, const ExecutorOptions &options, std::string &error);
  ~Executor();

  /// Fills every plan input deterministically: input i gets seed `seed + i`
  /// on every rank (so all ranks of a run, and the reference and optimized
  /// plans, see the same inputs). The arena is zeroed.
  bool initialiseInputs(uint64_t seed, std::string &error);

  /// Runs the plan once and waits for it (with the timeout).
  bool run(RunResult &result, std::string &error);

  /// Copies every plan output back to the host, as raw bytes.
  bool readOutputs(std::vector<std::vector<uint8_t>> &outputs,
                   std::string &error);

  /// Bytes of device memory this executor allocated.
  int64_t deviceBytes() const;

  /// Emulated mode: one line saying where the collectives' target times
  /// come from, how many are copy-engine emulation, and the launch offset
  /// subtracted from them. Stand-in mode: how many collectives run as
  /// copy-engine copies, where the plan has any. Nccl mode: how many
  /// collectives pull the peers' buffers on the copy engines and how the
  /// peers are reached, where the plan has any. Empty otherwise.
  std::string emulationSummary() const;

  /// One line saying how the plan's attention steps run, e.g. "fused (4
  /// steps; 2 backward steps reuse their forward's LSE)" or, with fallbacks,
  /// which steps run unfused and why. Empty when the plan has none.
  std::string attentionSummary() const;

  struct Impl;

private:
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// Converts raw device bytes of `type` to float.
std::vector<float> toFloat(const std::vector<uint8_t> &bytes, DType type);

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_EXECUTOR_H
