//===- Plan.h - Execution plan of one scheduled training step ----*- C++
//-*-===//
//
// The contract between the compiler and the runtime. A plan is one rank's
// program of an SPMD step: the buffers it uses (with a static memory plan),
// the streams, and every launch in issue order with all its parameters, plus
// the cross-stream events that order the launches. tandem-opt writes it from
// scheduled IR (`--tandem-export-plan`); an ML compiler can instead fill the
// structs below and hand them to the executor without touching disk.
//
// This header and PlanIO/MemoryPlanner need neither CUDA nor MLIR: the plan
// library builds everywhere and CI tests it without a GPU. docs/runtime.md
// documents the on-disk format (JSON, `format_version` below).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_PLAN_H
#define TANDEM_RUNTIME_PLAN_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tandem {
namespace runtime {

/// On-disk format version written and accepted.
constexpr int kPlanFormatVersion = 1;

/// Bounds of the plan format. Every count that sizes an allocation of the
/// reader, the validator, the memory planner or the executor is bounded, so
/// that no plan (read or built in memory) can make them allocate without
/// bound; validatePlan and the reader reject a plan past any of them with an
/// error naming the bound. The stream and event bounds are the tandem
/// dialect's (kMaxStreams, kMaxEvents in ScheduleAttributes.h).
constexpr int64_t kMaxPlanStreams = 64;
constexpr int64_t kMaxPlanEvents = int64_t(1) << 20;
/// Buffers and steps: the validator's and planner's tables are per buffer or
/// per step times streams (at most 2^18 x 64 clocks, 128 MiB).
constexpr int64_t kMaxPlanBuffers = int64_t(1) << 18;
constexpr int64_t kMaxPlanSteps = int64_t(1) << 18;
constexpr int64_t kMaxPlanGroups = 1024;
/// Ranks of one process group.
constexpr int64_t kMaxGroupSize = int64_t(1) << 16;
/// Bytes of one buffer (1 TiB, far above any GPU's memory). With the buffer
/// bound this keeps every sum of buffer sizes (the arena) below 2^58.
constexpr int64_t kMaxBufferBytes = int64_t(1) << 40;
/// Bytes an opaque step declares it moves (its stand-in kernel's sweep).
constexpr int64_t kMaxDeclaredBytes = kMaxBufferBytes;
/// Nesting of JSON arrays and objects in a plan file (a plan needs 4).
constexpr int kMaxPlanJsonDepth = 16;

enum class DType { BF16, F16, F32 };
int64_t dtypeBytes(DType type);
const char *dtypeName(DType type);
std::optional<DType> parseDType(const std::string &name);

/// Element-wise kinds of tandem.elementwise. For a result of rows x cols:
/// add, mul, gelu_grad(dy, x): two inputs of the result's shape;
/// copy, cast, gelu, silu: one input of the result's shape;
/// swiglu(x): x is rows x 2*cols, result = silu(x[:, :cols]) * x[:, cols:];
/// swiglu_grad(dy, x): dy is rows x cols/2, x and result rows x cols.
enum class ElementwiseKind {
  Add,
  Mul,
  Copy,
  Cast,
  Gelu,
  GeluGrad,
  Silu,
  Swiglu,
  SwigluGrad
};
const char *elementwiseKindName(ElementwiseKind kind);
std::optional<ElementwiseKind> parseElementwiseKind(const std::string &name);

enum class NormKind { Layer, Rms };
enum class CollectiveKind {
  AllGather,
  ReduceScatter,
  AllReduce,
  AllToAll,
  Permute
};
enum class ReduceKind { Sum, Avg, Max, Min };
const char *collectiveKindName(CollectiveKind kind);

/// What a step does.
enum class StepKind {
  Matmul,
  Attention,
  AttentionGrad,
  Norm,
  NormGrad,
  Elementwise,
  Opaque,
  /// Layout copies (tandem.slice / concat / ring_concat along a dimension
  /// other than a dim-0 contiguous view).
  Slice,
  Concat,
  RingConcat,
  Collective,
  /// No launch: only the stream's event waits and records (tandem.wait).
  Sync,
};
const char *stepKindName(StepKind kind);
std::optional<StepKind> parseStepKind(const std::string &name);

/// A tensor of the step. Buffers either own storage (an arena slot, or a
/// step input/output kept for the whole step) or are views into another
/// buffer at a byte offset (dim-0 slices).
struct Buffer {
  enum class Role { Input, Temp, View };
  std::string name;
  DType type = DType::BF16;
  std::vector<int64_t> shape;
  Role role = Role::Temp;
  /// View: the buffer viewed and the byte offset into it.
  int64_t viewOf = -1;
  int64_t viewOffset = 0;
  /// Temp: byte offset in the arena, set by planMemory (-1 = unplanned).
  int64_t arenaOffset = -1;
  /// Input: initial values are uniform in [-initScale, initScale). The
  /// lowering gives a GEMM weight (K rows of reduction) 1/sqrt(K), so that
  /// activations stay O(1) through the step, as in a trained model.
  double initScale = 1.0;

  /// Product of the dimensions and its size in bytes; -1 when the product
  /// overflows int64 (validatePlan rejects such a buffer, and any past
  /// kMaxBufferBytes).
  int64_t elements() const;
  int64_t bytes() const;
};

/// A process group of the plan (tandem.group).
struct Group {
  std::string name;
  int64_t size = 1;
  /// "switch", "full_mesh", "ring" or "hierarchical" (informational).
  std::string topology;
};

/// One launch. `inputs` / `outputs` are buffer indices; which parameters
/// apply depends on `kind` (docs/runtime.md lists them per kind).
struct Step {
  StepKind kind = StepKind::Sync;
  std::string name;     ///< The op name, e.g. "tandem.matmul".
  std::string location; ///< Source location of the IR op, for errors.
  std::string label;    ///< Layer tag or kernel name, informational.
  int64_t stream = 0;
  std::vector<int64_t> waitEvents;
  int64_t recordEvent = -1;
  std::vector<int64_t> inputs;
  std::vector<int64_t> outputs;

  // Matmul.
  bool transA = false, transB = false;
  std::string role; ///< fprop / dgrad / wgrad.
  // Attention and AttentionGrad.
  int64_t heads = 0, kvHeads = 0, headDim = 0;
  bool causal = false;
  // Attention only (JSON "queries", optional): 0 = every row of qkv is a
  // query; N in [1, rows of qkv] = only the last N rows are, at sequence
  // positions rows - N .. rows - 1 (causal: bottom-right aligned), and the
  // result has N rows: the last N rows of the full attention.
  int64_t queries = 0;
  // Norm and NormGrad.
  NormKind norm = NormKind::Rms;
  // Elementwise.
  ElementwiseKind elementwise = ElementwiseKind::Copy;
  // Opaque.
  int64_t declaredBytes = 0;
  double declaredFlops = 0;
  // Slice / Concat / RingConcat (all along `dim`). A slice cuts each of the
  // `interleave` groups of `dim` into `chunks` blocks and keeps block
  // `chunk` of every group; a concat's result is `interleave` groups, each
  // holding block g of every input in input order (the inputs' extents
  // along `dim` may differ; a ring_concat's may not).
  int64_t dim = 0, chunk = 0, chunks = 1, interleave = 1;
  // Slice only (JSON "weights", optional): empty = `chunks` equal blocks;
  // otherwise one weight >= 1 per chunk, and block j of a group of extent G
  // is (G / W) * weights[j] long (W = the weights' sum, which must divide
  // G), starting at (G / W) * (weights[0] + ... + weights[j - 1]).
  std::vector<int64_t> weights;
  // Collective (and RingConcat's group).
  CollectiveKind collective = CollectiveKind::AllGather;
  ReduceKind reduce = ReduceKind::Sum;
  int64_t group = -1;
  int64_t shift = 1;
  // Compute SM target (cuBLASLt) and collective CTA budget; 0 = default.
  int64_t smTarget = 0;
  int64_t commSms = 0;
  // Collective transport (JSON "transport"): true = the GPU's copy engines
  // ("copy_engine": peer copies, no SMs held, so no comm_sms), false = the
  // SM kernels of NCCL ("sms", the default). all_gather, reduce_scatter
  // and permute only (validatePlan).
  bool copyEngine = false;
  // The simulator's prediction for this step, in microseconds from the
  // step's start (negative = none).
  double predictedStartUs = -1, predictedDurationUs = -1;
  // The cost model's time for this step alone (the simulator task's
  // alone_us, launch overhead included; negative = not in the plan). The
  // emulated fabric paces each collective to it.
  double predictedAloneUs = -1;
};

/// The simulator's prediction for the whole plan (all in microseconds).
struct Prediction {
  double spanUs = 0, computeUs = 0, commUs = 0, exposedCommUs = 0;
  double boundUs = 0;
  std::string target;
};

struct Plan {
  int formatVersion = kPlanFormatVersion;
  std::string function;              ///< Name of the lowered function.
  std::string producer;              ///< What wrote it, e.g. "tandem-opt".
  std::vector<std::string> schedule; ///< Pipeline that produced it.
  int64_t numStreams = 1;
  std::vector<int64_t> streamPriorities; ///< Per stream; lower = higher.
  std::vector<std::string> streamNames;
  int64_t numEvents = 0;
  std::vector<Group> groups;
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  /// Buffers of the function arguments / results, in order.
  std::vector<int64_t> inputs;
  std::vector<int64_t> outputs;
  /// Bytes of the temporary arena (set by planMemory).
  int64_t arenaBytes = 0;
  std::optional<Prediction> prediction;
};

/// Checks everything the executor relies on before anything launches:
/// counts within the bounds above, indices in range, shapes and types
/// consistent with each step's kind, every byte a step accesses (a whole
/// buffer, or a layout copy's rows: PlanAccesses.h) inside its buffer, views
/// inside their base, temporaries inside the arena, events recorded before
/// they are waited for, the memory plan free of overlapping live buffers when
/// present. All size, offset and count arithmetic is checked for overflow.
/// Returns an empty string or the first problem, naming the step (index, op,
/// location) or buffer and, for a bound, the bound.
std::string validatePlan(const Plan &plan);

/// Reads / writes the JSON form (docs/runtime.md). Reading validates the
/// syntax and types of every field and then calls validatePlan; errors name
/// the file and the JSON path of the offending field.
std::optional<Plan> readPlanFile(const std::string &path, std::string &error);
std::optional<Plan> parsePlan(const std::string &text,
                              const std::string &origin, std::string &error);

/// The offset of the first '[' or '{' of `text` nested deeper than `limit`
/// levels outside strings, or std::string::npos: what the plan reader (and
/// the trace readers of tandem-diagnose) check before a recursive JSON
/// parser sees the text.
std::size_t jsonNestingExceeds(const std::string &text, int limit);
std::string writePlanJson(const Plan &plan);
bool writePlanFile(const Plan &plan, const std::string &path,
                   std::string &error);

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_PLAN_H
