//===- CostModel.h - Time of compute ops and collectives ---------*- C++
//-*-===//
//
// The cost model every scheduling decision consults. Ops describe their work
// through ComputeOpInterface / CollectiveOpInterface; this turns that into
// microseconds on a target:
//  - GEMM: roofline with tile and wave quantisation for a given SM count;
//  - attention, opaque compute: roofline, scaled by the SMs available;
//  - bandwidth-bound ops: bytes over effective HBM bandwidth;
//  - collectives: alpha-beta per algorithm (ring, tree, direct, P2P) and
//    topology, with the links one step can use and the CTA budget;
//  - contention: slowdown of each side when a kernel overlaps a collective,
//    from a table that a calibration file can replace;
//  - calibration: a file written by tools/tandem-fit from tandem-calibrate's
//    measurements, replacing the contention table and the target fields it
//    measured.
// docs/cost-model.md documents every formula and the source of each constant.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_COSTMODEL_H
#define TANDEM_ANALYSIS_COSTMODEL_H

#include "tandem/Dialect/Tandem/ScheduleAttributes.h"
#include "tandem/Dialect/Tandem/TandemOps.h"
#include "tandem/Engine/Contention.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace mlir {
namespace tandem {

/// The target's numbers, read once from a TargetAttr.
/// Fraction of tensor-core peak the presets assume attention kernels reach
/// (docs/cost-model.md); a calibration replaces it with measured values.
constexpr double kAttentionEfficiency = 0.60;

/// The bandwidth-bound kernels the runtime runs with a measured rate of
/// their own (docs/cost-model.md, "Bandwidth-bound ops"): every other
/// bandwidth-bound op is `generic` (the HBM roofline).
enum class MemoryKernel { generic, norm, normGrad, layoutCopy };

/// A bandwidth-bound kernel's measured time: `latencyUs` + bytes at
/// `hbmEfficiency` of the target's HBM bandwidth (the target's own
/// hbm_efficiency where unset). Not target fields: a calibration file sets
/// them (tandem-fit from tandem-calibrate's `norm` and `strided_copy`).
struct KernelBandwidth {
  double latencyUs = 0;
  std::optional<double> hbmEfficiency;
};

struct GpuSpec {
  std::string name;
  int64_t smCount = 0;
  double bf16Flops = 0, f16Flops = 0, fp8Flops = 0, f32Flops = 0; // FLOP/s
  double hbmBytesPerSecond = 0;
  int64_t hbmBytes = 0;
  double gemmEfficiency = 1, hbmEfficiency = 1;
  int64_t collectiveSms = 0;
  int64_t gemmTileM = 128, gemmTileN = 256;
  double launchOverheadUs = 0;
  /// Fixed time each GEMM wave costs on top of its FLOPs (prologue and
  /// epilogue of a tile). Not a target field: 0 unless a calibration file
  /// sets it (docs/cost-model.md, "Calibration file").
  double gemmWaveOverheadUs = 0;
  /// SM residency: a GEMM sized for all SMs keeps a collective launched
  /// during it (and during GEMMs chained back to back after it) off the
  /// SMs. Measured with cuBLASLt on the H200 (tandem-calibrate's GEMM +
  /// stand-in pairs); assumed for the other targets. Not a target field: a
  /// calibration file may set it ("gemms_hold_sms").
  bool gemmsHoldSms = true;
  /// Fractions of the tensor-core peak the fused attention kernels reach,
  /// forward and backward (the backward by the 2.5x FLOP convention). Not
  /// target fields: the presets assume kAttentionEfficiency, a calibration
  /// file may set them ("attention_efficiency",
  /// "attention_grad_efficiency"; docs/cost-model.md says where the H200
  /// values come from).
  double attentionEfficiency = kAttentionEfficiency,
         attentionGradEfficiency = kAttentionEfficiency;
  /// Fixed time of an attention (backward) kernel on top of its FLOPs at
  /// the efficiency above: the prologue, the causal tail and the last
  /// partial wave, which a fused kernel pays whatever its size. Not target
  /// fields: 0 unless a calibration file sets them ("attention_latency_us",
  /// "attention_grad_latency_us").
  double attentionLatencyUs = 0, attentionGradLatencyUs = 0;
  /// How much later than a kernel queued behind a step on the same stream a
  /// kernel gated by that step's event (cudaStreamWaitEvent on another
  /// stream) starts. Not a target field: 0 unless a calibration file sets
  /// it ("event_latency_us", measured by tandem-calibrate).
  double eventLatencyUs = 0;
  /// Time one peer-to-peer copy-engine copy costs beyond its bytes (its
  /// issue and completion): a copy-engine collective pays it once per peer.
  /// Not a target field: unset (the target's launch overhead is used) unless
  /// a calibration file sets it ("copy_engine_latency_us", measured by
  /// tandem-calibrate's copy_engine_latency).
  std::optional<double> copyEngineLatencyUs;
  /// Measured rates of the norm, norm backward and layout copy kernels
  /// (calibration keys "norm_*", "norm_grad_*", "layout_copy_*").
  KernelBandwidth norm, normGrad, layoutCopy;

  static GpuSpec fromAttr(TargetAttr attr);
  /// Dense peak FLOP/s for operands of `elementType`; 0 if unsupported.
  double peakFlops(Type elementType) const;
};

/// A process group's size and links, read once from a GroupOp.
struct GroupSpec {
  std::string name;
  int64_t size = 1;
  Topology topology = Topology::switch_;
  int64_t linksPerGpu = 1;
  double linkBytesPerUs = 0; ///< Per link, per direction.
  double linkLatencyUs = 0;
  int64_t gpusPerNode = 0; ///< Hierarchical only.
  double interNodeBytesPerUs = 0;
  double interNodeLatencyUs = 0;

  static GroupSpec fromOp(GroupOp op);
};

/// Target fields a calibration measured (the file's optional "gpu" object).
/// Each set field replaces the target's value; unset fields keep it.
struct GpuCalibration {
  std::string device;             ///< What was measured (informational).
  std::optional<int64_t> smCount; ///< SMs of that device: must match.
  std::optional<double> gemmEfficiency;
  std::optional<double> hbmEfficiency;
  std::optional<double> launchOverheadUs;
  std::optional<int64_t> gemmTileM, gemmTileN;
  std::optional<double> gemmWaveOverheadUs;
  std::optional<bool> gemmsHoldSms;
  std::optional<double> attentionEfficiency, attentionGradEfficiency;
  std::optional<double> attentionLatencyUs, attentionGradLatencyUs;
  std::optional<double> eventLatencyUs;
  std::optional<double> copyEngineLatencyUs;
  std::optional<double> normLatencyUs, normHbmEfficiency;
  std::optional<double> normGradLatencyUs, normGradHbmEfficiency;
  std::optional<double> layoutCopyLatencyUs, layoutCopyHbmEfficiency;
};

/// Communication parameters a calibration measured (the file's optional
/// "comm" object, fitted to NCCL measurements by tandem-fit --collectives).
/// Each set field replaces the built-in CommParams value.
struct CommCalibration {
  std::optional<double> busEfficiency;
  std::optional<double> copyEngineEfficiency;
  std::optional<double> linksPerCta;
  std::optional<double> linkLatencyUs;
};

struct CommParams;

/// A calibration file: the contention table and the measured target fields.
struct Calibration {
  ContentionTable contention;
  /// The file's "copy_engine_contention", also set in `contention`
  /// (ContentionTable::copyEnginePoint); unset where the file has none.
  std::optional<ContentionPoint> copyEngineContention;
  GpuCalibration gpu;
  CommCalibration comm;
  std::string origin; ///< The file (or text) it was read from.

  /// Reads and validates a calibration file. On failure returns
  /// std::nullopt and sets `error`, naming the file and the field.
  static std::optional<Calibration> load(llvm::StringRef path,
                                         std::string &error);
  /// Parses calibration JSON text; `origin` names it in errors.
  static std::optional<Calibration>
  parse(llvm::StringRef json, llvm::StringRef origin, std::string &error);

  /// Replaces the fields of `spec` that the calibration measured. Fails,
  /// setting `error`, when the calibration was measured on a device with a
  /// different SM count than `spec`'s target.
  bool applyTo(GpuSpec &spec, std::string &error) const;
  /// Replaces the communication parameters the calibration measured.
  void applyTo(CommParams &comm) const;
};

enum class CollectiveAlgorithm {
  Ring,
  Tree,
  Direct,
  PeerToPeer,
  Hierarchical,
  /// Peer-to-peer copies on the copy engines (CostModel::copyEngine).
  CopyEngine
};
llvm::StringRef stringifyAlgorithm(CollectiveAlgorithm algorithm);

struct ComputeEstimate {
  double timeUs = 0;
  int64_t sms = 0;    ///< SMs the estimate assumed.
  int64_t tiles = 0;  ///< GEMM output tiles (0 for other ops).
  int64_t waves = 0;  ///< GEMM waves on `sms` SMs.
  double tileUs = 0;  ///< GEMM: time of one wave.
  double floorUs = 0; ///< Memory-roofline time, independent of SMs.
  bool memoryBound = false;
};

/// What CostModel::compute reads from a compute op, through the compute op
/// interface: everything an estimate depends on besides the SM count.
struct ComputeCostInputs {
  Type elementType;
  double bytes = 0;
  double flops = 0;
  ComputeKind kind = ComputeKind::memory;
  std::optional<GemmShape> gemmShape;
  /// Forward attention work an attention backward redoes: its softmax
  /// statistics when no forward attention kept them
  /// (AttentionGradOp::getStatisticsForward), priced as a forward.
  double recomputeFlops = 0;
  /// Which measured rate a bandwidth-bound op moves its bytes at.
  MemoryKernel memoryKernel = MemoryKernel::generic;
  /// The op's measured duration over the model's (`tandem.measured_scale`),
  /// if it has one: every estimate of the op is scaled by it
  /// (docs/diagnosis.md, "Prevention").
  std::optional<double> measuredScale;

  static ComputeCostInputs of(ComputeOpInterface op);
};

struct CollectiveEstimate {
  double timeUs = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  int64_t steps = 0;
  double bandwidthBytesPerUs = 0; ///< Effective per-GPU bandwidth used.
};

/// Tunables of the communication model (see docs/cost-model.md).
struct CommParams {
  /// Fraction of link bandwidth a collective's data movement reaches.
  double busEfficiency = 0.80;
  /// Links one CTA (NCCL channel) can keep busy: a CTA budget below the link
  /// count limits bandwidth.
  double linksPerCta = 1.0;
  /// When set, replaces every group's `link_latency_us` (the per-step
  /// latency inside a node; inter-node latency is unaffected): a measured
  /// value for the machine, from a calibration file's "comm" section.
  std::optional<double> linkLatencyUs;
  /// Fraction of a GPU's link bandwidth that copy-engine peer copies reach.
  /// 0.84: CUDA's p2pBandwidthLatencyTest (copy engines) moves 380 of 450
  /// GB/s one way between two H100 SXM GPUs (NVIDIA/nccl issue #1264); a
  /// calibration's "comm" section may replace it
  /// ("copy_engine_efficiency"). Not measurable on one GPU.
  double copyEngineEfficiency = 0.84;
};

class CostModel {
public:
  explicit CostModel(GpuSpec gpu,
                     ContentionTable contention = ContentionTable::defaults(),
                     CommParams comm = CommParams());

  const GpuSpec &gpu() const { return spec; }
  const ContentionTable &contention() const { return table; }
  const CommParams &comm() const { return commParams; }

  /// GEMM time on `sms` SMs (0 = all).
  ComputeEstimate gemm(const GemmShape &shape, Type elementType,
                       double bytesAccessed, int64_t sms = 0) const;
  /// Time to stream `bytes` through HBM at the target's effective bandwidth
  /// (the memory roofline of every compute op), without launch overhead.
  double hbmTimeUs(double bytes) const;
  /// Time of bandwidth-bound kernel `kernel` moving `bytes`, without launch
  /// overhead: its measured latency and rate where a calibration gave them
  /// (GpuSpec::norm, normGrad, layoutCopy), hbmTimeUs otherwise.
  double memoryKernelUs(MemoryKernel kernel, double bytes) const;
  /// Time of a compute op on `sms` SMs (0 = all). Fails (with a reason in
  /// `error`) for element types the target has no peak for.
  std::optional<ComputeEstimate>
  compute(ComputeOpInterface op, std::string &error, int64_t sms = 0) const;
  /// The same, from inputs read off an op earlier.
  std::optional<ComputeEstimate> compute(const ComputeCostInputs &inputs,
                                         std::string &error,
                                         int64_t sms = 0) const;
  /// Time of a collective with `ctas` CTAs (0 = the target's default). With
  /// `forced` unset, the fastest algorithm the topology allows is chosen.
  CollectiveEstimate
  collective(CollectiveKind kind, int64_t payloadBytes, const GroupSpec &group,
             int64_t ctas = 0,
             std::optional<CollectiveAlgorithm> forced = std::nullopt,
             int64_t shift = 1) const;

  /// Time of an all-gather, reduce-scatter or permute on the copy engines:
  /// the peers' blocks copied into this rank's memory (one copy per peer,
  /// each paying `copyEngineLatencyUs`), after a flag exchange of one link
  /// latency, at `copyEngineEfficiency` of the GPU's link bandwidth, plus
  /// for a reduce-scatter a bandwidth-bound kernel that sums the n blocks;
  /// a permute is one copy over the links one peer can use.
  /// std::nullopt, with the reason in `whyNot`, for other kinds, groups of
  /// one and topologies where a GPU cannot reach every peer's memory
  /// directly (ring, hierarchical).
  std::optional<CollectiveEstimate>
  copyEngine(CollectiveKind kind, int64_t payloadBytes, const GroupSpec &group,
             std::string *whyNot = nullptr) const;
  /// Per-GPU bandwidth (bytes/us) of a native collective with `ctas` CTAs.
  double nativeBandwidth(const GroupSpec &group, int64_t ctas) const;
  /// Bandwidth of one peer-to-peer transfer to a single peer.
  double peerBandwidth(const GroupSpec &group, int64_t ctas) const;

private:
  std::optional<ComputeEstimate> modelled(const ComputeCostInputs &inputs,
                                          std::string &error,
                                          int64_t sms) const;
  int64_t effectiveCtas(int64_t ctas) const;
  GpuSpec spec;
  ContentionTable table;
  CommParams commParams;
};

/// CostModel::compute for one caller (not thread-safe) that reads each op
/// through the compute op interface once and keeps its estimates per SM
/// count: the interface calls (types to bytes, FLOPs and GEMM shapes) are
/// most of an estimate's cost, and callers ask for the same few SM counts
/// again and again. (An earlier version shared estimates between
/// structurally identical ops; hashing an op's structure cost more than
/// pricing it again.) Keyed by op: a caller that erases an op while the
/// cache lives must forget() it first, as a new op may reuse its address.
class ComputeEstimateCache {
public:
  explicit ComputeEstimateCache(const CostModel &model) : model(model) {}
  /// As CostModel::compute(op, error, sms).
  std::optional<ComputeEstimate> get(ComputeOpInterface op, std::string &error,
                                     int64_t sms = 0);
  /// Drops what is known about `op` (before it is erased).
  void forget(Operation *op) { entries.erase(op); }

private:
  struct Entry {
    ComputeCostInputs inputs;
    SmallVector<std::pair<int64_t, ComputeEstimate>, 2> bySms;
  };
  const CostModel &model;
  llvm::DenseMap<Operation *, Entry> entries;
};

/// CostModel::collective for one caller (not thread-safe), memoised by
/// (kind, payload bytes, group, CTAs, shift): a step repeats the same few
/// collectives in every layer and micro-batch. The group is keyed by
/// address: it must outlive the cache.
class CollectiveEstimateCache {
public:
  explicit CollectiveEstimateCache(const CostModel &model) : model(model) {}
  /// As CostModel::collective(kind, payloadBytes, group, ctas, std::nullopt,
  /// shift).
  CollectiveEstimate get(CollectiveKind kind, int64_t payloadBytes,
                         const GroupSpec &group, int64_t ctas, int64_t shift);
  /// The estimate of `op` on `group` with `ctas` CTAs (0 = the default),
  /// scaled by the op's `tandem.measured_scale` if it has one. An op with
  /// `tandem.copy_engine` gets the copy-engine estimate (`ctas` ignored)
  /// where the model has one (checkCopyEngine says where it has not).
  CollectiveEstimate get(CollectiveOpInterface op, const GroupSpec &group,
                         int64_t ctas);

private:
  const CostModel &model;
  llvm::DenseMap<
      std::tuple<unsigned, int64_t, const GroupSpec *, int64_t, int64_t>,
      CollectiveEstimate>
      estimates;
};

/// Why `op`, which carries `tandem.copy_engine`, cannot run on the copy
/// engines of `group` (std::nullopt if it can): the sentence for an error.
std::optional<std::string> checkCopyEngine(CollectiveOpInterface op,
                                           const GroupSpec &group,
                                           const CostModel &model);

/// The ring distance a collective moves its data over: a permute's shift, 1
/// for every other collective (CostModel::collective's `shift`).
int64_t collectiveShift(CollectiveOpInterface op);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_ANALYSIS_COSTMODEL_H
