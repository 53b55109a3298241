//===- Executor.cpp - Run a plan on one GPU -------------------------------===//

#include "tandem/runtime/Executor.h"

#include "tandem/runtime/CudnnAttention.h"

#include "PeerMemory.h"
#include "tandem/runtime/Kernels.h"
#include "tandem/runtime/MemoryPlanner.h"
#include "tandem/runtime/PlanAccesses.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>
#include <thread>

namespace tandem {
namespace runtime {

namespace {

std::string stepWhere(const Plan &plan, size_t index) {
  const Step &s = plan.steps[index];
  std::ostringstream os;
  os << "step " << index << " (" << s.name;
  if (!s.location.empty())
    os << " at " << s.location;
  os << ")";
  return os.str();
}

ncclDataType_t ncclType(DType type) {
  switch (type) {
  case DType::BF16:
    return ncclBfloat16;
  case DType::F16:
    return ncclFloat16;
  case DType::F32:
    return ncclFloat32;
  }
  return ncclFloat32;
}

ncclRedOp_t ncclOp(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::Sum:
    return ncclSum;
  case ReduceKind::Avg:
    return ncclAvg;
  case ReduceKind::Max:
    return ncclMax;
  case ReduceKind::Min:
    return ncclMin;
  }
  return ncclSum;
}

/// Rows x cols view of a buffer (cols = last dimension).
void view2d(const Buffer &b, int64_t &rows, int64_t &cols) {
  cols = b.shape.back();
  rows = b.elements() / cols;
}

/// Per-rank bytes a collective moves over the network with a ring (or
/// direct) algorithm: what the stand-in streams through HBM.
int64_t collectiveTraffic(CollectiveKind kind, int64_t inBytes,
                          int64_t outBytes, int64_t n) {
  switch (kind) {
  case CollectiveKind::AllGather:
    return outBytes * (n - 1) / n;
  case CollectiveKind::ReduceScatter:
    return inBytes * (n - 1) / n;
  case CollectiveKind::AllReduce:
    return 2 * inBytes * (n - 1) / n;
  case CollectiveKind::AllToAll:
    return inBytes * (n - 1) / n;
  case CollectiveKind::Permute:
    return inBytes;
  }
  return inBytes;
}

} // namespace

std::vector<CommunicatorKey> communicatorKeys(const Plan &plan) {
  std::vector<CommunicatorKey> keys;
  for (const Step &s : plan.steps)
    if (s.kind == StepKind::Collective && !s.copyEngine) {
      CommunicatorKey key{s.group, s.commSms};
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        keys.push_back(key);
    }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string checkCollectiveMode(const Plan &plan, CollectiveMode mode,
                                bool hasExchange) {
  if (mode != CollectiveMode::Nccl || hasExchange)
    return "";
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (plan.steps[i].copyEngine)
      return stepWhere(plan, i) +
             ": transport copy_engine: a copy-engine collective across GPUs "
             "pulls the peers' buffers directly, and this launcher gives no "
             "exchange of the ranks' buffer addresses "
             "(ExecutorOptions::exchange); run with tandem-run (threads or "
             "mpirun on one node), one rank's program on one GPU "
             "(--emulate-fabric or --standin-collectives), or export the plan "
             "without copy-engine transport";
  return "";
}

bool newCommunicatorId(std::string &id, std::string &error) {
  ncclUniqueId unique;
  ncclResult_t r = ncclGetUniqueId(&unique);
  if (r != ncclSuccess) {
    error = std::string("ncclGetUniqueId failed: ") + ncclGetErrorString(r);
    return false;
  }
  id.assign(unique.internal, sizeof(unique.internal));
  return true;
}

struct Executor::Impl {
  Plan plan;
  ExecutorOptions options;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> events;
  cudaEvent_t stepStart = nullptr, stepStop = nullptr;
  /// Host time when stepStart was recorded, and when each step began to be
  /// enqueued (microseconds from it; StepTiming::hostUs).
  std::chrono::steady_clock::time_point hostStart;
  std::vector<double> hostEnqueueUs;
  /// Recorded on stream 0 when the step begins; every other stream waits
  /// for it, so that in a CUDA graph capture they join the capture.
  cudaEvent_t forkEvent = nullptr;
  std::vector<cudaEvent_t> joinEvents;
  std::vector<cudaEvent_t> opBegin, opEnd;
  cublasLtHandle_t blas = nullptr;
  std::vector<BlasContext> blasPerStream;
  std::vector<void *> scratch;
  std::vector<int64_t> scratchBytes;
  std::vector<void *> inputMemory;
  void *arena = nullptr;
  std::vector<char *> bufferPtr;
  std::map<CommunicatorKey, ncclComm_t> comms;
  cudaGraphExec_t graph = nullptr;
  int64_t allocated = 0;
  /// Per step: which kernels an attention step runs, and the LSE its fused
  /// or cuDNN forward writes / backward reads (null: stream scratch for a
  /// forward nobody differentiates; a fused backward then recomputes it, a
  /// cuDNN one runs cuDNN's forward into its scratch first).
  enum class AttentionKernel { None, Unfused, Fused, Cudnn };
  std::vector<AttentionKernel> attentionKernel;
  std::vector<float *> attentionLse;
  /// Forward steps that write into a causal sequence's statistics (its
  /// backward's): floats between two heads' rows there; 0 = their own.
  std::vector<int64_t> attentionLseStride;
  /// `--attention cudnn`: one cuDNN handle (and its graphs) per stream that
  /// runs a cuDNN attention step.
  std::vector<std::unique_ptr<CudnnAttention>> cudnnPerStream;
  /// Scratch layout of a cuDNN attention step: [lse][out][workspace], the
  /// first two only where no forward's LSE is kept for it.
  struct CudnnScratch {
    int64_t lse = 0, out = 0, workspace = 0, bytes = 0;
  };
  CudnnScratch cudnnScratch(size_t index) const;
  /// The kernel arguments of attention step `index`, with the statistics'
  /// stride a causal segment writes with.
  AttentionArgs argsOf(size_t index) const;
  std::vector<void *> lseMemory;
  std::string attentionSummary;
  /// Emulated mode: each collective step's target time alone (us), and the
  /// launch-to-start offset of the emulated kernel, measured once and
  /// subtracted from every target so that its event-timed duration alone
  /// matches the target.
  std::vector<double> collectiveTargetUs;
  double emulationOffsetUs = 0;
  std::string emulationSummary;
  bool measureEmulationOffset(std::string &error);
  /// Emulated mode: per copy-engine collective step, the 8-byte device slot
  /// its pacing stamp writes (null for every other step), in `timerSlots`.
  std::vector<uint64_t *> copyEngineTimer;
  void *timerSlots = nullptr;
  /// Nccl mode with copy-engine collectives: the peers' memory, and per step
  /// its index among the copy-engine collectives (-1 for every other step)
  /// and its input as each rank's buffer appears to this device.
  std::unique_ptr<detail::PeerMemory> peers;
  std::vector<int64_t> copyEngineIndex;
  std::vector<std::vector<const void *>> peerInputs;
  bool connectPeers(std::string &error);
  bool launchPeerCopyEngine(size_t index, cudaStream_t stream,
                            std::string &error);

  ~Impl();
  bool allocate(void **ptr, int64_t bytes, const std::string &what,
                std::string &error);
  bool cuda(cudaError_t e, const std::string &what, std::string &error) {
    if (e == cudaSuccess)
      return true;
    error =
        what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
    return false;
  }
  bool nccl(ncclResult_t r, const std::string &what, std::string &error) {
    if (r == ncclSuccess || r == ncclInProgress)
      return true;
    error = what + ": " + ncclGetErrorString(r);
    return false;
  }
  bool enqueue(std::string &error);
  bool launch(size_t index, std::string &error);
  bool launchCollective(size_t index, cudaStream_t stream, std::string &error);
  bool launchLayout(size_t index, cudaStream_t stream, std::string &error);
  bool waitFor(cudaEvent_t event, std::string &error);
  void abortCommunicators();
};

Executor::Impl::~Impl() {
  if (graph)
    cudaGraphExecDestroy(graph);
  for (auto &[key, comm] : comms)
    ncclCommDestroy(comm);
  for (cudaEvent_t e : events)
    cudaEventDestroy(e);
  for (cudaEvent_t e : joinEvents)
    cudaEventDestroy(e);
  for (cudaEvent_t e : opBegin)
    cudaEventDestroy(e);
  for (cudaEvent_t e : opEnd)
    cudaEventDestroy(e);
  if (forkEvent)
    cudaEventDestroy(forkEvent);
  if (stepStart)
    cudaEventDestroy(stepStart);
  if (stepStop)
    cudaEventDestroy(stepStop);
  for (BlasContext &b : blasPerStream)
    if (b.workspace)
      cudaFree(b.workspace);
  for (void *p : scratch)
    if (p)
      cudaFree(p);
  for (void *p : inputMemory)
    cudaFree(p);
  for (void *p : lseMemory)
    cudaFree(p);
  if (timerSlots)
    cudaFree(timerSlots);
  if (arena)
    cudaFree(arena);
  if (blas)
    cublasLtDestroy(blas);
  for (cudaStream_t s : streams)
    cudaStreamDestroy(s);
}

bool Executor::Impl::allocate(void **ptr, int64_t bytes,
                              const std::string &what, std::string &error) {
  *ptr = nullptr;
  if (bytes <= 0)
    return true;
  if (!cuda(cudaMalloc(ptr, bytes),
            "cudaMalloc of " + std::to_string(bytes) + " bytes for " + what,
            error))
    return false;
  allocated += bytes;
  return true;
}

bool Executor::Impl::measureEmulationOffset(std::string &error) {
  // On the stream and scratch of a collective (every collective stream has
  // 64 MiB of scratch in this mode).
  for (const Step &s : plan.steps)
    if (s.kind == StepKind::Collective)
      return measureEmulatedCollectiveOffset(
          streams[s.stream], scratch[s.stream], scratchBytes[s.stream],
          emulationOffsetUs, error);
  return true;
}

void Executor::Impl::abortCommunicators() {
  for (auto &[key, comm] : comms)
    ncclCommAbort(comm);
  comms.clear();
}

Executor::Executor(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Executor::~Executor() = default;

int64_t Executor::deviceBytes() const { return impl->allocated; }

std::string Executor::emulationSummary() const {
  return impl->emulationSummary;
}

std::string Executor::attentionSummary() const {
  return impl->attentionSummary;
}

namespace {

AttentionArgs attentionArgs(const Plan &plan, const Step &s) {
  AttentionArgs a;
  bool grad = s.kind == StepKind::AttentionGrad;
  const Buffer &qkv = plan.buffers[s.inputs[grad ? 1 : 0]];
  a.seq = qkv.shape[0];
  a.heads = s.heads;
  a.kvHeads = s.kvHeads;
  a.headDim = s.headDim;
  a.causal = s.causal;
  a.type = plan.buffers[s.inputs[0]].type;
  a.smTarget = static_cast<int>(s.smTarget);
  // Query rows (forward only; validatePlan refuses them elsewhere). All
  // rows spelled out is the full attention.
  a.queries = s.queries == a.seq ? 0 : s.queries;
  return a;
}

/// Whether backward `b` may read the LSE forward `a` saves: the same
/// attention, with the same query rows (all of them: a backward has no
/// `queries`).
bool sameAttention(const Plan &plan, const Step &a, const Step &b) {
  return a.heads == b.heads && a.kvHeads == b.kvHeads &&
         a.headDim == b.headDim && a.causal == b.causal &&
         attentionArgs(plan, a).queryRows() ==
             attentionArgs(plan, b).queryRows();
}

} // namespace

AttentionArgs Executor::Impl::argsOf(size_t index) const {
  AttentionArgs a = attentionArgs(plan, plan.steps[index]);
  if (index < attentionLseStride.size())
    a.lseStride = attentionLseStride[index];
  return a;
}

std::unique_ptr<Executor> Executor::create(const Plan &plan,
                                           const ExecutorOptions &options,
                                           std::string &error) {
  if (std::string invalid = validatePlan(plan); !invalid.empty()) {
    error = "invalid plan: " + invalid;
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  Impl &x = *impl;
  x.plan = plan;
  x.options = options;
  if (x.plan.arenaBytes == 0 ||
      std::any_of(x.plan.buffers.begin(), x.plan.buffers.end(),
                  [](const Buffer &b) {
                    return b.role == Buffer::Role::Temp && b.arenaOffset < 0;
                  })) {
    if (std::string e = planMemory(x.plan); !e.empty()) {
      error = "memory planning failed: " + e;
      return nullptr;
    }
  }
  // Collective mode requirements, checked before any device work.
  if (std::string e = checkCollectiveMode(x.plan, options.mode,
                                          static_cast<bool>(options.exchange));
      !e.empty()) {
    error = e;
    return nullptr;
  }
  if (options.mode == CollectiveMode::Nccl) {
    for (const Group &g : x.plan.groups)
      if (g.size != options.worldSize) {
        error = "group '" + g.name + "' has " + std::to_string(g.size) +
                " ranks but this run has " + std::to_string(options.worldSize) +
                " (NCCL mode needs every group to span all ranks; use the "
                "single-GPU stand-in mode to run one rank of a larger plan)";
        return nullptr;
      }
    std::vector<CommunicatorKey> keys = communicatorKeys(x.plan);
    if (options.communicatorIds.size() != keys.size()) {
      error = "the plan needs " + std::to_string(keys.size()) +
              " communicator id(s), " +
              std::to_string(options.communicatorIds.size()) + " given";
      return nullptr;
    }
  }
  if (options.rank < 0 || options.rank >= std::max(options.worldSize, 1)) {
    if (options.mode == CollectiveMode::Nccl) {
      error = "rank " + std::to_string(options.rank) + " is outside [0, " +
              std::to_string(options.worldSize) + ")";
      return nullptr;
    }
  }
  for (const Group &g : x.plan.groups)
    if (options.mode != CollectiveMode::Nccl && options.rank >= g.size) {
      error = "stand-in rank " + std::to_string(options.rank) +
              " is outside group '" + g.name + "' of size " +
              std::to_string(g.size);
      return nullptr;
    }

  // Emulated fabric: every collective needs a target time, before any
  // device work.
  x.collectiveTargetUs.assign(x.plan.steps.size(), 0);
  if (options.mode == CollectiveMode::Emulated) {
    int fromPlan = 0, fromRate = 0;
    for (size_t i = 0; i < x.plan.steps.size(); ++i) {
      const Step &s = x.plan.steps[i];
      if (s.kind != StepKind::Collective)
        continue;
      if (s.predictedAloneUs >= 0) {
        x.collectiveTargetUs[i] = s.predictedAloneUs;
        ++fromPlan;
        continue;
      }
      if (options.fabricGbps <= 0) {
        error = stepWhere(x.plan, i) +
                ": the emulated fabric needs the collective's predicted time "
                "alone (steps[" +
                std::to_string(i) +
                "].predicted.alone_us), which this plan does not carry; "
                "export it with a tandem-opt that writes alone_us, or choose "
                "a rate explicitly (--fabric-gbps, --fabric-latency-us)";
        return nullptr;
      }
      const Buffer &in = x.plan.buffers[s.inputs[0]];
      const Buffer &out = x.plan.buffers[s.outputs[0]];
      int64_t bus = collectiveTraffic(s.collective, in.bytes(), out.bytes(),
                                      x.plan.groups[s.group].size);
      x.collectiveTargetUs[i] =
          options.fabricLatencyUs + bus / (options.fabricGbps * 1e3);
      ++fromRate;
    }
    int64_t copyEngine =
        std::count_if(x.plan.steps.begin(), x.plan.steps.end(),
                      [](const Step &s) { return s.copyEngine; });
    std::ostringstream os;
    os << "EMULATED FABRIC (paced local kernels, not communication): "
       << fromPlan << " collective(s) paced to the plan's predicted alone_us";
    if (fromRate > 0)
      os << ", " << fromRate << " to an explicitly chosen rate of "
         << options.fabricGbps << " GB/s bus bandwidth + "
         << options.fabricLatencyUs << " us";
    if (copyEngine > 0)
      os << "; " << copyEngine
         << " of them COPY-ENGINE EMULATION (paced device-to-device copies "
            "and a 1-CTA pacing kernel, not NVLink copy engines)";
    x.emulationSummary = os.str();
  } else if (options.mode == CollectiveMode::Standin) {
    int64_t copyEngine =
        std::count_if(x.plan.steps.begin(), x.plan.steps.end(),
                      [](const Step &s) { return s.copyEngine; });
    if (copyEngine > 0)
      x.emulationSummary =
          "STAND-IN: " + std::to_string(copyEngine) +
          " copy-engine collective(s) run as unpaced device-to-device "
          "copies (not NVLink copy engines)";
  }

  if (!x.cuda(cudaSetDevice(options.device),
              "cudaSetDevice(" + std::to_string(options.device) + ")", error))
    return nullptr;
  int lowest = 0, greatest = 0;
  if (!x.cuda(cudaDeviceGetStreamPriorityRange(&lowest, &greatest),
              "cudaDeviceGetStreamPriorityRange", error))
    return nullptr;
  for (int64_t s = 0; s < x.plan.numStreams; ++s) {
    int64_t p = s < static_cast<int64_t>(x.plan.streamPriorities.size())
                    ? x.plan.streamPriorities[s]
                    : 0;
    // Plan priorities: 0 = default, negative = higher (as in CUDA).
    int priority =
        std::clamp<int>(lowest + static_cast<int>(p),
                        std::min(lowest, greatest), std::max(lowest, greatest));
    cudaStream_t stream;
    if (!x.cuda(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking,
                                             priority),
                "cudaStreamCreateWithPriority for stream " + std::to_string(s),
                error))
      return nullptr;
    x.streams.push_back(stream);
  }
  for (int64_t e = 0; e < x.plan.numEvents; ++e) {
    cudaEvent_t event;
    if (!x.cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                "cudaEventCreate", error))
      return nullptr;
    x.events.push_back(event);
  }
  for (int64_t s = 0; s < x.plan.numStreams; ++s) {
    cudaEvent_t event;
    if (!x.cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                "cudaEventCreate", error))
      return nullptr;
    x.joinEvents.push_back(event);
  }
  if (!x.cuda(cudaEventCreateWithFlags(&x.forkEvent, cudaEventDisableTiming),
              "cudaEventCreate", error) ||
      !x.cuda(cudaEventCreate(&x.stepStart), "cudaEventCreate", error) ||
      !x.cuda(cudaEventCreate(&x.stepStop), "cudaEventCreate", error))
    return nullptr;
  if (options.timeSteps)
    for (size_t i = 0; i < x.plan.steps.size(); ++i) {
      cudaEvent_t b, e;
      if (!x.cuda(cudaEventCreate(&b), "cudaEventCreate", error) ||
          !x.cuda(cudaEventCreate(&e), "cudaEventCreate", error))
        return nullptr;
      x.opBegin.push_back(b);
      x.opEnd.push_back(e);
    }

  cublasStatus_t status = cublasLtCreate(&x.blas);
  if (status != CUBLAS_STATUS_SUCCESS) {
    error = "cublasLtCreate failed with status " + std::to_string(status);
    return nullptr;
  }

  // Memory: inputs, the arena, per-stream workspace and scratch.
  x.bufferPtr.assign(x.plan.buffers.size(), nullptr);
  for (int64_t b : x.plan.inputs) {
    void *p;
    if (!x.allocate(&p, x.plan.buffers[b].bytes(),
                    "input '" + x.plan.buffers[b].name + "'", error))
      return nullptr;
    x.inputMemory.push_back(p);
    x.bufferPtr[b] = static_cast<char *>(p);
  }
  if (options.separateBuffers) {
    // Debugging: every temp in an allocation of its own, so that memory
    // checkers see an out-of-bounds write instead of a neighbour's bytes.
    for (size_t b = 0; b < x.plan.buffers.size(); ++b) {
      if (x.plan.buffers[b].role != Buffer::Role::Temp)
        continue;
      void *p;
      if (!x.allocate(&p, std::max<int64_t>(x.plan.buffers[b].bytes(), 1),
                      "buffer '" + x.plan.buffers[b].name + "'", error))
        return nullptr;
      x.inputMemory.push_back(p);
      x.bufferPtr[b] = static_cast<char *>(p);
    }
  } else {
    if (!x.allocate(&x.arena, x.plan.arenaBytes, "the arena", error))
      return nullptr;
    for (size_t b = 0; b < x.plan.buffers.size(); ++b)
      if (x.plan.buffers[b].role == Buffer::Role::Temp)
        x.bufferPtr[b] = static_cast<char *>(x.arena) +
                         std::max<int64_t>(x.plan.buffers[b].arenaOffset, 0);
  }
  for (size_t b = 0; b < x.plan.buffers.size(); ++b)
    if (x.plan.buffers[b].role == Buffer::Role::View)
      x.bufferPtr[b] =
          x.bufferPtr[x.plan.buffers[b].viewOf] + x.plan.buffers[b].viewOffset;

  // Attention: fused where the kernels apply (or cuDNN's, where asked for
  // and cuDNN has an engine). A fused or cuDNN forward whose (qkv, out) a
  // backward of the same kernels reads keeps its LSE in an allocation of
  // its own for that backward; the plan's ordering of `out` orders the LSE
  // too.
  using AttentionKernel = Impl::AttentionKernel;
  size_t numSteps = x.plan.steps.size();
  x.attentionKernel.assign(numSteps, AttentionKernel::None);
  x.attentionLse.assign(numSteps, nullptr);
  x.cudnnPerStream.resize(x.plan.numStreams);
  {
    int counts[4] = {0, 0, 0, 0}, reused = 0;
    std::string fallback;
    for (size_t i = 0; i < numSteps; ++i) {
      const Step &s = x.plan.steps[i];
      if (s.kind != StepKind::Attention && s.kind != StepKind::AttentionGrad)
        continue;
      AttentionArgs args = attentionArgs(x.plan, s);
      bool aligned = true;
      for (int64_t b : s.inputs)
        aligned &= reinterpret_cast<uintptr_t>(x.bufferPtr[b]) % 16 == 0;
      for (int64_t b : s.outputs)
        aligned &= reinterpret_cast<uintptr_t>(x.bufferPtr[b]) % 16 == 0;
      std::string reason;
      AttentionKernel kernel = AttentionKernel::Unfused;
      if (options.attention == AttentionImpl::Unfused) {
        reason = "unfused attention requested";
      } else if (!aligned) {
        reason = "a buffer is not 16-byte aligned";
      } else if (options.attention == AttentionImpl::Cudnn) {
        std::unique_ptr<CudnnAttention> &cudnn = x.cudnnPerStream[s.stream];
        if (!cudnn) {
          cudnn = CudnnAttention::create(options.cudnnDeterministic, error);
          if (!cudnn) {
            error = "--attention cudnn: " + error;
            return nullptr;
          }
        }
        // A cuDNN backward without a kept LSE runs the forward first.
        bool grad = s.kind == StepKind::AttentionGrad;
        std::string cudnnReason, fusedReason;
        if (cudnn->prepare(args, grad, cudnnReason) &&
            (!grad || cudnn->prepare(args, false, cudnnReason))) {
          kernel = AttentionKernel::Cudnn;
        } else {
          reason = "cuDNN: " + cudnnReason;
          if (fusedAttentionSupported(args, fusedReason))
            kernel = AttentionKernel::Fused;
          else
            reason += "; fused: " + fusedReason;
        }
      } else if (fusedAttentionSupported(args, reason)) {
        kernel = AttentionKernel::Fused;
      }
      x.attentionKernel[i] = kernel;
      ++counts[int(kernel)];
      if (fallback.empty() && !reason.empty() &&
          !(options.attention == AttentionImpl::Fused &&
            kernel == AttentionKernel::Fused))
        fallback = stepWhere(x.plan, i) + ": " + reason;
    }
    // The LSE (heads x rows) of attention step `index`'s own shape; null
    // with `error` set when the allocation fails.
    auto allocateLse = [&](size_t index) -> float * {
      void *p;
      if (!x.allocate(&p,
                      fusedAttentionLseBytes(
                          attentionArgs(x.plan, x.plan.steps[index])),
                      "the LSE of " + stepWhere(x.plan, index), error))
        return nullptr;
      x.lseMemory.push_back(p);
      return static_cast<float *>(p);
    };
    for (size_t i = 0; i < numSteps; ++i) {
      const Step &f = x.plan.steps[i];
      AttentionKernel kernel = x.attentionKernel[i];
      if (f.kind != StepKind::Attention || (kernel != AttentionKernel::Fused &&
                                            kernel != AttentionKernel::Cudnn))
        continue;
      for (size_t j = i + 1; j < numSteps; ++j) {
        const Step &g = x.plan.steps[j];
        if (g.kind != StepKind::AttentionGrad ||
            x.attentionKernel[j] != kernel || !sameAttention(x.plan, f, g) ||
            g.inputs[1] != f.inputs[0] || g.inputs[2] != f.outputs[0])
          continue;
        if (!x.attentionLse[i] && !(x.attentionLse[i] = allocateLse(i)))
          return nullptr;
        x.attentionLse[j] = x.attentionLse[i];
        ++reused;
      }
    }
    // A causal sequence in segments (tandem-gen --segments): the
    // backward's output is the token-order concat of the segments' outputs
    // (each a view of it), and each segment's forward read a prefix of the
    // backward's qkv (that qkv, or a view at its start) with its queries
    // last. Each forward then writes its rows of the whole sequence's
    // statistics, and the backward reads them instead of recomputing them.
    // Only an exact cover of the sequence's rows, all with one kernel.
    x.attentionLseStride.assign(numSteps, 0);
    auto rowOf = [&](int64_t buffer, int64_t whole, int64_t &row) {
      const Buffer &w = x.plan.buffers[whole];
      if (buffer == whole) {
        row = 0;
        return true;
      }
      const Buffer &b = x.plan.buffers[buffer];
      int64_t rowBytes = w.shape[0] > 0 ? w.bytes() / w.shape[0] : 0;
      if (b.role != Buffer::Role::View || b.viewOf != whole || rowBytes <= 0 ||
          b.viewOffset % rowBytes != 0)
        return false;
      row = b.viewOffset / rowBytes;
      return true;
    };
    int segmented = 0;
    for (size_t j = 0; j < numSteps; ++j) {
      const Step &g = x.plan.steps[j];
      AttentionKernel kernel = x.attentionKernel[j];
      if (g.kind != StepKind::AttentionGrad || x.attentionLse[j] ||
          (kernel != AttentionKernel::Fused &&
           kernel != AttentionKernel::Cudnn))
        continue;
      int64_t qkv = g.inputs[1], out = g.inputs[2];
      int64_t rows = x.plan.buffers[qkv].shape[0];
      std::vector<std::pair<int64_t, size_t>> segments; // first row, step
      for (size_t i = 0; i < j; ++i) {
        const Step &f = x.plan.steps[i];
        int64_t outRow = 0, qkvRow = 0;
        if (f.kind != StepKind::Attention || x.attentionKernel[i] != kernel ||
            x.attentionLse[i] || f.heads != g.heads || f.kvHeads != g.kvHeads ||
            f.headDim != g.headDim || f.causal != g.causal ||
            !rowOf(f.outputs[0], out, outRow) ||
            !rowOf(f.inputs[0], qkv, qkvRow) || qkvRow != 0)
          continue;
        int64_t n = x.plan.buffers[f.outputs[0]].shape[0];
        // Its queries are the rows outRow .. outRow + n of the sequence, and
        // its statistics start there (16-byte aligned for either kernel).
        if (x.plan.buffers[f.inputs[0]].shape[0] != outRow + n ||
            attentionArgs(x.plan, f).queryRows() != n || outRow % 4 != 0)
          continue;
        segments.push_back({outRow, i});
      }
      std::sort(segments.begin(), segments.end());
      int64_t next = 0;
      for (auto [row, i] : segments)
        next = row == next
                   ? next + x.plan.buffers[x.plan.steps[i].outputs[0]].shape[0]
                   : -1;
      if (segments.size() < 2 || next != rows)
        continue;
      if (kernel == AttentionKernel::Cudnn) {
        // cuDNN builds a graph per statistics layout: each segment's must
        // build (else the backward recomputes, as without segments).
        bool built = true;
        for (auto [row, i] : segments) {
          AttentionArgs a = attentionArgs(x.plan, x.plan.steps[i]);
          a.lseStride = rows;
          std::string ignored;
          built = built && x.cudnnPerStream[x.plan.steps[i].stream]->prepare(
                               a, false, ignored);
        }
        if (!built)
          continue;
      }
      if (!(x.attentionLse[j] = allocateLse(j)))
        return nullptr;
      for (auto [row, i] : segments) {
        x.attentionLse[i] = x.attentionLse[j] + row;
        x.attentionLseStride[i] = rows;
      }
      ++segmented;
    }
    std::vector<std::string> parts;
    const char *names[4] = {"", "unfused", "fused", "cuDNN"};
    for (int k = 3; k >= 1; --k)
      if (counts[k] > 0)
        parts.push_back(std::string(names[k]) + " " +
                        std::to_string(counts[k]));
    if (!parts.empty()) {
      std::ostringstream os;
      for (size_t k = 0; k < parts.size(); ++k)
        os << (k ? ", " : "") << parts[k];
      os << " step(s)";
      if (options.attention == AttentionImpl::Cudnn)
        os << " (cuDNN " << cudnnAttentionLibraryVersion()
           << (options.cudnnDeterministic ? ", deterministic backward"
                                          : ", non-deterministic backward")
           << ")";
      if (reused > 0)
        os << "; " << reused << " backward step(s) reuse their forward's LSE";
      if (segmented > 0)
        os << "; " << segmented
           << " backward step(s) read the LSE their causal segments' "
              "forwards wrote";
      if (!fallback.empty())
        os << "; not "
           << (options.attention == AttentionImpl::Cudnn ? "cuDNN" : "fused")
           << " where " << fallback
           << (counts[1] + counts[2] + counts[3] > 1 ? ", ..." : "");
      x.attentionSummary = os.str();
    }
  }

  x.scratchBytes.assign(x.plan.numStreams, 0);
  std::vector<bool> usesBlas(x.plan.numStreams, false);
  for (const Step &s : x.plan.steps) {
    int64_t need = 0;
    auto buf = [&](size_t i) -> const Buffer & {
      return x.plan.buffers[s.inputs[i]];
    };
    if (s.kind == StepKind::Attention || s.kind == StepKind::AttentionGrad) {
      AttentionArgs a = attentionArgs(x.plan, s);
      size_t index = &s - x.plan.steps.data();
      if (x.attentionKernel[index] == Impl::AttentionKernel::Cudnn) {
        need = x.cudnnScratch(index).bytes;
      } else if (x.attentionKernel[index] == Impl::AttentionKernel::Fused) {
        need = s.kind == StepKind::Attention
                   ? fusedAttentionLseBytes(a)
                   : fusedAttentionGradScratchBytes(a);
      } else {
        need = s.kind == StepKind::Attention ? attentionScratchBytes(a)
                                             : attentionGradScratchBytes(a);
        usesBlas[s.stream] = true;
      }
    } else if (s.kind == StepKind::NormGrad) {
      int64_t rows, cols;
      view2d(buf(1), rows, cols);
      need = normGradScratchBytes(rows, cols);
    } else if (s.kind == StepKind::Collective && s.copyEngine &&
               options.mode == CollectiveMode::Nccl) {
      // The n-1 peer blocks a reduce-scatter pulls, staged whole.
      need = emulatedStagingBytes(
          s.collective, x.plan.buffers[s.inputs[0]].bytes(),
          static_cast<int>(x.plan.groups[s.group].size));
    } else if (s.kind == StepKind::Collective &&
               options.mode != CollectiveMode::Nccl) {
      need = 64ll << 20; // traffic is streamed cyclically through this
      // A copy-engine reduce-scatter stages its n-1 peer blocks whole.
      if (s.copyEngine)
        need = std::max(need,
                        emulatedStagingBytes(
                            s.collective, x.plan.buffers[s.inputs[0]].bytes(),
                            static_cast<int>(x.plan.groups[s.group].size)));
    } else if (s.kind == StepKind::Matmul) {
      usesBlas[s.stream] = true;
    }
    x.scratchBytes[s.stream] = std::max(x.scratchBytes[s.stream], need);
  }
  for (int64_t s = 0; s < x.plan.numStreams; ++s) {
    void *p = nullptr;
    if (!x.allocate(&p, x.scratchBytes[s],
                    "scratch of stream " + std::to_string(s), error))
      return nullptr;
    x.scratch.push_back(p);
    BlasContext ctx;
    ctx.handle = x.blas;
    if (usesBlas[s]) {
      if (!x.allocate(&ctx.workspace, options.workspaceBytes,
                      "cuBLASLt workspace of stream " + std::to_string(s),
                      error))
        return nullptr;
      ctx.workspaceBytes = options.workspaceBytes;
    }
    x.blasPerStream.push_back(ctx);
  }

  // Communicators: one per (group, CTA budget), all ranks in one order.
  if (options.mode == CollectiveMode::Nccl) {
    std::vector<CommunicatorKey> keys = communicatorKeys(x.plan);
    for (size_t k = 0; k < keys.size(); ++k) {
      ncclUniqueId id;
      if (options.communicatorIds[k].size() != sizeof(id.internal)) {
        error = "communicator id " + std::to_string(k) + " has " +
                std::to_string(options.communicatorIds[k].size()) +
                " bytes, expected " + std::to_string(sizeof(id.internal));
        return nullptr;
      }
      std::memcpy(id.internal, options.communicatorIds[k].data(),
                  sizeof(id.internal));
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      if (keys[k].ctas > 0) {
        config.minCTAs = static_cast<int>(keys[k].ctas);
        config.maxCTAs = static_cast<int>(keys[k].ctas);
      }
      ncclComm_t comm;
      std::string what = "ncclCommInitRankConfig for group '" +
                         x.plan.groups[keys[k].group].name + "' (" +
                         std::to_string(keys[k].ctas) + " CTAs, rank " +
                         std::to_string(options.rank) + " of " +
                         std::to_string(options.worldSize) + ")";
      if (!x.nccl(ncclCommInitRankConfig(&comm, options.worldSize, id,
                                         options.rank, &config),
                  what, error))
        return nullptr;
      x.comms[keys[k]] = comm;
    }
  }
  if (options.mode == CollectiveMode::Nccl && !x.connectPeers(error))
    return nullptr;
  // Copy-engine collectives' pacing stamps: one slot per such step, since
  // two of them on different streams may run at once.
  x.copyEngineTimer.assign(numSteps, nullptr);
  if (options.mode == CollectiveMode::Emulated) {
    std::vector<size_t> paced;
    for (size_t i = 0; i < numSteps; ++i)
      if (x.plan.steps[i].copyEngine)
        paced.push_back(i);
    if (!paced.empty()) {
      if (!x.allocate(&x.timerSlots, paced.size() * sizeof(uint64_t),
                      "copy-engine pacing stamps", error))
        return nullptr;
      for (size_t k = 0; k < paced.size(); ++k)
        x.copyEngineTimer[paced[k]] = static_cast<uint64_t *>(x.timerSlots) + k;
    }
  }
  if (options.mode == CollectiveMode::Emulated && !x.emulationSummary.empty()) {
    if (!x.measureEmulationOffset(error))
      return nullptr;
    std::ostringstream os;
    os << "; launch offset " << x.emulationOffsetUs << " us subtracted";
    x.emulationSummary += os.str();
  }
  return std::unique_ptr<Executor>(new Executor(std::move(impl)));
}

bool Executor::Impl::connectPeers(std::string &error) {
  size_t numSteps = plan.steps.size();
  copyEngineIndex.assign(numSteps, -1);
  int64_t count = 0;
  for (size_t i = 0; i < numSteps; ++i)
    if (plan.steps[i].copyEngine)
      copyEngineIndex[i] = count++;
  if (count == 0)
    return true;
  // Each copy-engine input lives in one allocation (an input's own, a
  // separate buffer's, or the arena) at an offset every rank shares: the
  // ranks run one plan with one memory plan.
  std::vector<void *> regions;
  std::vector<std::pair<size_t, int64_t>> regionOf(numSteps, {0, 0});
  for (size_t i = 0; i < numSteps; ++i) {
    if (copyEngineIndex[i] < 0)
      continue;
    int64_t b = plan.steps[i].inputs[0], root = b;
    while (plan.buffers[root].role == Buffer::Role::View)
      root = plan.buffers[root].viewOf;
    void *base = plan.buffers[root].role == Buffer::Role::Temp &&
                         !options.separateBuffers
                     ? arena
                     : static_cast<void *>(bufferPtr[root]);
    auto it = std::find(regions.begin(), regions.end(), base);
    size_t k = it - regions.begin();
    if (it == regions.end())
      regions.push_back(base);
    regionOf[i] = {k, base ? bufferPtr[b] - static_cast<char *>(base) : 0};
  }
  int n = options.worldSize;
  peers = detail::PeerMemory::connect(options.rank, n, options.device, regions,
                                      2 * count * n, options.exchange, error);
  if (!peers)
    return false;
  peerInputs.assign(numSteps, {});
  for (size_t i = 0; i < numSteps; ++i) {
    if (copyEngineIndex[i] < 0)
      continue;
    for (int p = 0; p < n; ++p) {
      char *base = peers->region(p, regionOf[i].first);
      peerInputs[i].push_back(base ? base + regionOf[i].second : nullptr);
    }
  }
  emulationSummary = "COPY-ENGINE COLLECTIVES: " + std::to_string(count) +
                     " collective(s) pull the peers' buffers with "
                     "cudaMemcpyAsync on this GPU's copy engines (" +
                     peers->summary() + ")";
  return true;
}

bool Executor::Impl::launchPeerCopyEngine(size_t index, cudaStream_t stream,
                                          std::string &error) {
  // Ready: every rank this one reads from has its input in place (and each
  // rank that reads this one learns that this input is). Done: every rank
  // that reads this one's input has finished, so that the step, and with it
  // the input's lifetime on this rank, ends only then.
  const Step &s = plan.steps[index];
  const Buffer &in = plan.buffers[s.inputs[0]];
  const Buffer &out = plan.buffers[s.outputs[0]];
  int n = options.worldSize, rank = options.rank;
  int64_t slot = 2 * copyEngineIndex[index] * n;
  int to = -1, from = -1;
  const void *src = bufferPtr[s.inputs[0]];
  const void *const *pulls = peerInputs[index].data();
  if (s.collective == CollectiveKind::Permute) {
    int shift = static_cast<int>(((s.shift % n) + n) % n);
    to = (rank + shift) % n;
    from = (rank - shift + n) % n;
    src = peerInputs[index][from];
    pulls = nullptr;
  }
  // A permute by a multiple of the group reads this rank's own input.
  bool alone = to == rank && from == rank;
  auto handshake = [&](int64_t at, int signalTo, int waitFrom) {
    return alone || launchPeerSignalWait(peers->signalTable(), n, rank, at,
                                         signalTo, waitFrom, peers->epoch(),
                                         options.timeoutSeconds, stream, error);
  };
  return handshake(slot, to, from) &&
         launchCopyEngineCollective(s.collective, s.reduce, src, in.elements(),
                                    bufferPtr[s.outputs[0]], out.elements(),
                                    in.type, n, rank, scratch[s.stream],
                                    scratchBytes[s.stream], nullptr, -1.0,
                                    stream, error, pulls) &&
         handshake(slot + n, from, to);
}

bool Executor::initialiseInputs(uint64_t seed, std::string &error) {
  Impl &x = *impl;
  cudaStream_t s = x.streams[0];
  for (size_t i = 0; i < x.plan.inputs.size(); ++i) {
    int64_t b = x.plan.inputs[i];
    const Buffer &buf = x.plan.buffers[b];
    if (!launchFill(x.bufferPtr[b], buf.type, buf.elements(), seed + i,
                    static_cast<float>(buf.initScale), s, error)) {
      error = "initialising input " + std::to_string(i) + ": " + error;
      return false;
    }
  }
  if (x.arena && !x.cuda(cudaMemsetAsync(x.arena, 0, x.plan.arenaBytes, s),
                         "cudaMemsetAsync of the arena", error))
    return false;
  return x.cuda(cudaStreamSynchronize(s), "initialising inputs", error);
}

bool Executor::Impl::launchLayout(size_t index, cudaStream_t stream,
                                  std::string &error) {
  // The copies validatePlan checked against the buffers (PlanAccesses.h),
  // for this rank: what was validated is what is launched.
  const Step &s = plan.steps[index];
  std::vector<LayoutCopy> copies;
  if (!layoutCopies(plan, s, options.rank, copies, error))
    return false;
  for (const LayoutCopy &c : copies)
    if (!launchCopy2D(bufferPtr[c.dst.buffer] + c.dst.offset, c.dst.pitch,
                      bufferPtr[c.src.buffer] + c.src.offset, c.src.pitch,
                      c.src.rowBytes, c.src.rows, stream, error)) {
      error = std::string(stepKindName(s.kind)) + ": " + error;
      return false;
    }
  return true;
}

bool Executor::Impl::launchCollective(size_t index, cudaStream_t stream,
                                      std::string &error) {
  const Step &s = plan.steps[index];
  const Buffer &in = plan.buffers[s.inputs[0]];
  const Buffer &out = plan.buffers[s.outputs[0]];
  const char *src = bufferPtr[s.inputs[0]];
  char *dst = bufferPtr[s.outputs[0]];
  int64_t n = plan.groups[s.group].size;
  if (s.copyEngine && options.mode == CollectiveMode::Nccl)
    return launchPeerCopyEngine(index, stream, error);
  if (s.copyEngine) {
    // Paced to the target like the kernel below; unpaced as a stand-in.
    double pace =
        options.mode == CollectiveMode::Emulated
            ? std::max(0.0, collectiveTargetUs[index] - emulationOffsetUs)
            : -1.0;
    return launchCopyEngineCollective(
        s.collective, s.reduce, src, in.elements(), dst, out.elements(),
        in.type, static_cast<int>(n), options.rank % static_cast<int>(n),
        scratch[s.stream], scratchBytes[s.stream], copyEngineTimer[index], pace,
        stream, error);
  }
  if (options.mode == CollectiveMode::Emulated) {
    int ctas = s.commSms > 0 ? static_cast<int>(s.commSms) : 0;
    double pace = std::max(0.0, collectiveTargetUs[index] - emulationOffsetUs);
    return launchEmulatedCollective(
        s.collective, s.reduce, src, in.elements(), dst, out.elements(),
        in.type, static_cast<int>(n), options.rank % static_cast<int>(n), ctas,
        emulatedStagingBytes(s.collective, in.bytes(), static_cast<int>(n)),
        scratch[s.stream], scratchBytes[s.stream], pace, stream, error);
  }
  if (options.mode == CollectiveMode::Standin) {
    int ctas = s.commSms > 0 ? static_cast<int>(s.commSms) : 0;
    int64_t traffic =
        collectiveTraffic(s.collective, in.bytes(), out.bytes(), n);
    return launchStandinCollective(
        s.collective, s.reduce, src, in.elements(), dst, out.elements(),
        in.type, static_cast<int>(n), options.rank % static_cast<int>(n), ctas,
        traffic, scratch[s.stream], scratchBytes[s.stream], stream, error);
  }
  ncclComm_t comm = comms.at(CommunicatorKey{s.group, s.commSms});
  ncclDataType_t type = ncclType(in.type);
  int64_t count = in.elements();
  int rank = options.rank;
  switch (s.collective) {
  case CollectiveKind::AllGather:
    return nccl(ncclAllGather(src, dst, count, type, comm, stream),
                "ncclAllGather", error);
  case CollectiveKind::ReduceScatter:
    return nccl(ncclReduceScatter(src, dst, out.elements(), type,
                                  ncclOp(s.reduce), comm, stream),
                "ncclReduceScatter", error);
  case CollectiveKind::AllReduce:
    return nccl(
        ncclAllReduce(src, dst, count, type, ncclOp(s.reduce), comm, stream),
        "ncclAllReduce", error);
  case CollectiveKind::AllToAll: {
    int64_t block = count / n, bytes = in.bytes() / n;
    if (!nccl(ncclGroupStart(), "ncclGroupStart", error))
      return false;
    for (int64_t p = 0; p < n; ++p) {
      ncclSend(src + p * bytes, block, type, static_cast<int>(p), comm, stream);
      ncclRecv(dst + p * bytes, block, type, static_cast<int>(p), comm, stream);
    }
    return nccl(ncclGroupEnd(), "ncclGroupEnd (all_to_all send/recv)", error);
  }
  case CollectiveKind::Permute: {
    // Reduced first: the plan's shift is any int64.
    int64_t shift = s.shift % n;
    int to = static_cast<int>(((rank + shift) % n + n) % n);
    int from = static_cast<int>(((rank - shift) % n + n) % n);
    if (!nccl(ncclGroupStart(), "ncclGroupStart", error))
      return false;
    ncclSend(src, count, type, to, comm, stream);
    ncclRecv(dst, count, type, from, comm, stream);
    return nccl(ncclGroupEnd(), "ncclGroupEnd (permute send/recv)", error);
  }
  }
  return true;
}

Executor::Impl::CudnnScratch Executor::Impl::cudnnScratch(size_t index) const {
  auto align = [](int64_t bytes) { return (bytes + 255) / 256 * 256; };
  const Step &s = plan.steps[index];
  AttentionArgs a = argsOf(index);
  bool grad = s.kind == StepKind::AttentionGrad;
  const CudnnAttention &cudnn = *cudnnPerStream[s.stream];
  CudnnScratch r;
  int64_t offset = 0;
  if (!attentionLse[index]) {
    r.lse = offset;
    offset += align(fusedAttentionLseBytes(a));
    if (grad) {
      r.out = offset;
      offset += align(a.seq * a.heads * a.headDim * dtypeBytes(a.type));
    }
  }
  r.workspace = offset;
  int64_t workspace = cudnn.workspaceBytes(a, grad);
  if (grad && !attentionLse[index])
    workspace = std::max(workspace, cudnn.workspaceBytes(a, false));
  r.bytes = offset + align(workspace);
  return r;
}

bool Executor::Impl::launch(size_t index, std::string &error) {
  const Step &s = plan.steps[index];
  cudaStream_t stream = streams[s.stream];
  auto ptr = [&](int64_t b) { return bufferPtr[b]; };
  auto in = [&](size_t i) -> const Buffer & {
    return plan.buffers[s.inputs[i]];
  };
  switch (s.kind) {
  case StepKind::Matmul: {
    const Buffer &a = in(0), &c = plan.buffers[s.outputs[0]];
    MatmulArgs args;
    args.m = c.shape[0];
    args.n = c.shape[1];
    args.k = s.transA ? a.shape[0] : a.shape[1];
    args.transA = s.transA;
    args.transB = s.transB;
    args.abType = a.type;
    args.cType = c.type;
    args.smTarget = static_cast<int>(s.smTarget);
    return launchMatmul(blasPerStream[s.stream], args, ptr(s.inputs[0]),
                        ptr(s.inputs[1]), ptr(s.outputs[0]), stream, error);
  }
  case StepKind::Attention:
  case StepKind::AttentionGrad: {
    bool grad = s.kind == StepKind::AttentionGrad;
    AttentionArgs a = argsOf(index);
    if (attentionKernel[index] == AttentionKernel::Cudnn) {
      CudnnAttention &cudnn = *cudnnPerStream[s.stream];
      CudnnScratch layout = cudnnScratch(index);
      char *base = static_cast<char *>(scratch[s.stream]);
      void *workspace = base + layout.workspace;
      float *lse = attentionLse[index]
                       ? attentionLse[index]
                       : reinterpret_cast<float *>(base + layout.lse);
      if (!grad)
        return cudnn.forward(a, ptr(s.inputs[0]), ptr(s.outputs[0]), lse,
                             workspace, stream, error);
      // No forward kept this backward's LSE: cuDNN's forward writes it (and
      // an output nobody reads) into the scratch first.
      if (!attentionLse[index] &&
          !cudnn.forward(a, ptr(s.inputs[1]), base + layout.out, lse, workspace,
                         stream, error))
        return false;
      return cudnn.backward(a, ptr(s.inputs[0]), ptr(s.inputs[1]),
                            ptr(s.inputs[2]), lse, ptr(s.outputs[0]), workspace,
                            stream, error);
    }
    if (attentionKernel[index] == AttentionKernel::Fused) {
      if (!grad)
        return launchFusedAttention(
            a, ptr(s.inputs[0]), ptr(s.outputs[0]),
            attentionLse[index] ? attentionLse[index]
                                : static_cast<float *>(scratch[s.stream]),
            stream, error);
      return launchFusedAttentionGrad(a, ptr(s.inputs[0]), ptr(s.inputs[1]),
                                      ptr(s.inputs[2]), attentionLse[index],
                                      ptr(s.outputs[0]), scratch[s.stream],
                                      stream, error);
    }
    if (!grad)
      return launchAttention(blasPerStream[s.stream], a, ptr(s.inputs[0]),
                             ptr(s.outputs[0]), scratch[s.stream], stream,
                             error);
    return launchAttentionGrad(
        blasPerStream[s.stream], a, ptr(s.inputs[0]), ptr(s.inputs[1]),
        ptr(s.inputs[2]), ptr(s.outputs[0]), scratch[s.stream], stream, error);
  }
  case StepKind::Norm: {
    int64_t rows, cols;
    view2d(in(0), rows, cols);
    return launchNorm(s.norm, ptr(s.inputs[0]), in(0).type, ptr(s.inputs[1]),
                      in(1).type, ptr(s.outputs[0]), rows, cols, stream, error);
  }
  case StepKind::NormGrad: {
    int64_t rows, cols;
    view2d(in(1), rows, cols);
    return launchNormGrad(s.norm, ptr(s.inputs[0]), ptr(s.inputs[1]),
                          in(1).type, ptr(s.inputs[2]), in(2).type,
                          ptr(s.outputs[0]), ptr(s.outputs[1]), rows, cols,
                          scratch[s.stream], stream, error);
  }
  case StepKind::Elementwise: {
    const Buffer &r = plan.buffers[s.outputs[0]];
    int64_t rows, cols;
    view2d(r, rows, cols);
    bool binary = s.inputs.size() > 1;
    return launchElementwise(
        s.elementwise, ptr(s.inputs[0]), in(0).type,
        binary ? ptr(s.inputs[1]) : nullptr, binary ? in(1).type : in(0).type,
        ptr(s.outputs[0]), r.type, rows, cols, stream, error);
  }
  case StepKind::Opaque: {
    std::vector<const void *> ins;
    std::vector<int64_t> inBytes, outBytes;
    std::vector<void *> outs;
    std::vector<DType> outTypes;
    for (int64_t b : s.inputs) {
      ins.push_back(ptr(b));
      inBytes.push_back(plan.buffers[b].bytes());
    }
    for (int64_t b : s.outputs) {
      outs.push_back(ptr(b));
      outBytes.push_back(plan.buffers[b].bytes());
      outTypes.push_back(plan.buffers[b].type);
    }
    DType input0Type =
        s.inputs.empty() ? DType::F32 : plan.buffers[s.inputs[0]].type;
    return launchOpaque(
        ins.data(), inBytes.data(), static_cast<int>(ins.size()), input0Type,
        outs.data(), outBytes.data(), outTypes.data(),
        static_cast<int>(outs.size()), s.declaredBytes, stream, error);
  }
  case StepKind::Slice:
  case StepKind::Concat:
  case StepKind::RingConcat:
    return launchLayout(index, stream, error);
  case StepKind::Collective:
    return launchCollective(index, stream, error);
  case StepKind::Sync:
    return true;
  }
  return true;
}

bool Executor::Impl::enqueue(std::string &error) {
  cudaStream_t main = streams[0];
  // A new epoch for the copy-engine handshakes, before any stream forks.
  if (peers && !launchAdvanceEpoch(peers->epoch(), main, error))
    return false;
  if (!cuda(cudaEventRecord(forkEvent, main), "cudaEventRecord", error))
    return false;
  // Fork: every stream starts after the step's start.
  for (size_t s = 1; s < streams.size(); ++s)
    if (!cuda(cudaStreamWaitEvent(streams[s], forkEvent, 0),
              "cudaStreamWaitEvent", error))
      return false;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &s = plan.steps[i];
    cudaStream_t stream = streams[s.stream];
    for (const auto &[step, us] : options.hostDelays) {
      if (step != static_cast<int64_t>(i))
        continue;
      auto until = std::chrono::steady_clock::now() +
                   std::chrono::duration<double, std::micro>(us);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    if (options.timeSteps && !options.cudaGraph)
      hostEnqueueUs[i] = std::chrono::duration<double, std::micro>(
                             std::chrono::steady_clock::now() - hostStart)
                             .count();
    for (int64_t e : s.waitEvents)
      if (!cuda(cudaStreamWaitEvent(stream, events[e], 0),
                stepWhere(plan, i) + ": cudaStreamWaitEvent", error))
        return false;
    nvtxRangePushA(s.label.empty() ? s.name.c_str() : s.label.c_str());
    if (options.timeSteps && !options.cudaGraph)
      cudaEventRecord(opBegin[i], stream);
    std::string launchError;
    bool ok = launch(i, launchError);
    if (options.timeSteps && !options.cudaGraph)
      cudaEventRecord(opEnd[i], stream);
    nvtxRangePop();
    if (!ok) {
      error = stepWhere(plan, i) + ": " + launchError;
      return false;
    }
    if (s.recordEvent >= 0 &&
        !cuda(cudaEventRecord(events[s.recordEvent], stream),
              stepWhere(plan, i) + ": cudaEventRecord", error))
      return false;
    if (options.syncEachStep && !options.cudaGraph) {
      cudaError_t e = cudaStreamSynchronize(stream);
      if (e != cudaSuccess) {
        error = stepWhere(plan, i) +
                " failed while running: " + cudaGetErrorName(e) + " (" +
                cudaGetErrorString(e) + ")";
        return false;
      }
    }
  }
  // Join: the step ends when every stream is done.
  for (size_t s = 1; s < streams.size(); ++s) {
    if (!cuda(cudaEventRecord(joinEvents[s], streams[s]), "cudaEventRecord",
              error) ||
        !cuda(cudaStreamWaitEvent(main, joinEvents[s], 0),
              "cudaStreamWaitEvent", error))
      return false;
  }
  return true;
}

bool Executor::Impl::waitFor(cudaEvent_t event, std::string &error) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(options.timeoutSeconds);
  while (true) {
    cudaError_t e = cudaEventQuery(event);
    if (e == cudaSuccess)
      return true;
    if (e != cudaErrorNotReady) {
      error = std::string("the step failed while running: ") +
              cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
              "); rerun with --sync-each-step to name the failing op";
      return false;
    }
    for (auto &[key, comm] : comms) {
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm, &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        error = "NCCL reported an asynchronous error on group '" +
                plan.groups[key.group].name +
                "': " + ncclGetErrorString(async) + "; communicators aborted";
        abortCommunicators();
        return false;
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::ostringstream os;
      os << "the step did not complete within " << options.timeoutSeconds
         << " s";
      if (!comms.empty()) {
        os << "; communicators aborted (ncclCommAbort). Collectives of the "
              "plan: ";
        int listed = 0;
        for (size_t i = 0; i < plan.steps.size() && listed < 4; ++i)
          if (plan.steps[i].kind == StepKind::Collective) {
            os << (listed ? ", " : "") << stepWhere(plan, i);
            ++listed;
          }
        abortCommunicators();
      }
      error = os.str();
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

bool Executor::run(RunResult &result, std::string &error) {
  Impl &x = *impl;
  // Start and stop are recorded outside any graph, around the whole step.
  if (!x.cuda(cudaEventRecord(x.stepStart, x.streams[0]), "cudaEventRecord",
              error))
    return false;
  x.hostStart = std::chrono::steady_clock::now();
  x.hostEnqueueUs.assign(x.plan.steps.size(), -1);
  if (x.options.cudaGraph) {
    if (!x.graph) {
      cudaGraph_t graph;
      if (!x.cuda(cudaStreamBeginCapture(x.streams[0],
                                         cudaStreamCaptureModeThreadLocal),
                  "cudaStreamBeginCapture", error))
        return false;
      std::string enqueueError;
      bool ok = x.enqueue(enqueueError);
      cudaError_t end = cudaStreamEndCapture(x.streams[0], &graph);
      if (!ok) {
        error = "while capturing the CUDA graph: " + enqueueError;
        return false;
      }
      if (!x.cuda(end, "cudaStreamEndCapture", error))
        return false;
      cudaError_t inst = cudaGraphInstantiate(&x.graph, graph, 0);
      cudaGraphDestroy(graph);
      if (!x.cuda(inst, "cudaGraphInstantiate", error))
        return false;
    }
    if (!x.cuda(cudaGraphLaunch(x.graph, x.streams[0]), "cudaGraphLaunch",
                error))
      return false;
  } else if (!x.enqueue(error)) {
    return false;
  }
  if (!x.cuda(cudaEventRecord(x.stepStop, x.streams[0]), "cudaEventRecord",
              error))
    return false;
  if (!x.waitFor(x.stepStop, error))
    return false;
  float ms = 0;
  if (!x.cuda(cudaEventElapsedTime(&ms, x.stepStart, x.stepStop),
              "cudaEventElapsedTime", error))
    return false;
  result.stepUs = ms * 1000.0;
  result.steps.clear();
  if (x.options.timeSteps && !x.options.cudaGraph) {
    result.steps.resize(x.plan.steps.size());
    for (size_t i = 0; i < x.plan.steps.size(); ++i) {
      float b = 0, e = 0;
      if (!x.cuda(cudaEventElapsedTime(&b, x.stepStart, x.opBegin[i]),
                  "cudaEventElapsedTime", error) ||
          !x.cuda(cudaEventElapsedTime(&e, x.stepStart, x.opEnd[i]),
                  "cudaEventElapsedTime", error))
        return false;
      result.steps[i].startUs = b * 1000.0;
      result.steps[i].endUs = e * 1000.0;
      result.steps[i].hostUs = x.hostEnqueueUs[i];
    }
  }
  return true;
}

bool Executor::readOutputs(std::vector<std::vector<uint8_t>> &outputs,
                           std::string &error) {
  Impl &x = *impl;
  outputs.clear();
  for (int64_t b : x.plan.outputs) {
    std::vector<uint8_t> host(x.plan.buffers[b].bytes());
    if (!x.cuda(cudaMemcpy(host.data(), x.bufferPtr[b], host.size(),
                           cudaMemcpyDeviceToHost),
                "cudaMemcpy of output '" + x.plan.buffers[b].name + "'", error))
      return false;
    outputs.push_back(std::move(host));
  }
  return true;
}

std::vector<float> toFloat(const std::vector<uint8_t> &bytes, DType type) {
  std::vector<float> out;
  size_t n = bytes.size() / dtypeBytes(type);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits = 0;
    if (type == DType::F32) {
      std::memcpy(&bits, bytes.data() + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      if (type == DType::BF16) {
        bits = static_cast<uint32_t>(h) << 16;
      } else {
        // IEEE half to float.
        uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f,
                 mant = h & 0x3ff;
        if (exp == 0) {
          float v = std::ldexp(static_cast<float>(mant), -24);
          out.push_back(sign ? -v : v);
          continue;
        }
        if (exp == 31)
          bits = sign | 0x7f800000u | (mant << 13);
        else
          bits = sign | ((exp + 112) << 23) | (mant << 13);
      }
    }
    float v;
    std::memcpy(&v, &bits, 4);
    out.push_back(v);
  }
  return out;
}

} // namespace runtime
} // namespace tandem
