//===- CostModel.cpp - Time of compute ops and collectives ----------------===//
//
// Formulas and constants are documented, with their sources, in
// docs/cost-model.md; keep the two in step.
//
//===----------------------------------------------------------------------===//

#include "tandem/Analysis/CostModel.h"
#include "tandem/Analysis/JsonInput.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tandem;

/// Rounds up without forming `a + b - 1`, which overflows for large `a`.
static int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/// "[lo, hi]" with short numbers ("[0.001, 1]", "[0, 1e+06]").
static std::string rangeStr(double lo, double hi) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[" << llvm::format("%g", lo) << ", " << llvm::format("%g", hi) << "]";
  return s;
}

//===----------------------------------------------------------------------===//
// Specs
//===----------------------------------------------------------------------===//

GpuSpec GpuSpec::fromAttr(TargetAttr attr) {
  GpuSpec s;
  s.name = attr.getName().str();
  s.smCount = attr.getSmCount();
  s.bf16Flops = attr.getBf16Tflops().convertToDouble() * 1e12;
  s.f16Flops = attr.getF16Tflops().convertToDouble() * 1e12;
  s.fp8Flops = attr.getFp8Tflops().convertToDouble() * 1e12;
  s.f32Flops = attr.getF32Tflops().convertToDouble() * 1e12;
  s.hbmBytesPerSecond = attr.getHbmBytesPerSecond();
  s.hbmBytes = attr.getHbmBytes();
  s.gemmEfficiency = attr.getGemmEfficiency().convertToDouble();
  s.hbmEfficiency = attr.getHbmEfficiency().convertToDouble();
  s.collectiveSms = attr.getCollectiveSms();
  s.gemmTileM = attr.getGemmTileM();
  s.gemmTileN = attr.getGemmTileN();
  s.launchOverheadUs = attr.getLaunchOverheadUs().convertToDouble();
  return s;
}

double GpuSpec::peakFlops(Type elementType) const {
  if (elementType.isBF16())
    return bf16Flops;
  if (elementType.isF16())
    return f16Flops;
  if (elementType.isF32())
    return f32Flops;
  if (isa<Float8E4M3FNType, Float8E5M2Type, Float8E4M3Type>(elementType))
    return fp8Flops;
  return 0.0;
}

GroupSpec GroupSpec::fromOp(GroupOp op) {
  GroupSpec g;
  g.name = op.getSymName().str();
  g.size = op.getSize();
  g.topology = op.getTopology();
  g.linksPerGpu = op.getLinksPerGpu();
  // GB/s = 1e9 B/s = 1e3 B/us.
  g.linkBytesPerUs = op.getLinkBandwidthGbps().convertToDouble() * 1e3;
  g.linkLatencyUs = op.getLinkLatencyUs().convertToDouble();
  if (op.getTopology() == Topology::hierarchical) {
    g.gpusPerNode = *op.getGpusPerNode();
    g.interNodeBytesPerUs =
        op.getInterNodeBandwidthGbps()->convertToDouble() * 1e3;
    g.interNodeLatencyUs = op.getInterNodeLatencyUs()->convertToDouble();
  }
  return g;
}

//===----------------------------------------------------------------------===//
// Calibration file
//===----------------------------------------------------------------------===//

/// Reads the optional "gpu" object. Unknown keys are errors: a misspelt
/// field would otherwise silently keep the target's value.
/// Fails, naming the first unknown key in sorted order (stable messages),
/// when `obj` has a key outside `known`.
static bool checkKnownKeys(const llvm::json::Object &obj,
                           llvm::ArrayRef<llvm::StringLiteral> known,
                           const std::string &where, std::string &error) {
  std::vector<std::string> keys;
  for (const auto &entry : obj)
    keys.push_back(entry.first.str());
  llvm::sort(keys);
  for (const std::string &key : keys) {
    if (llvm::is_contained(known, key))
      continue;
    error = where + ": unknown field \"" + key + "\" (known: ";
    llvm::raw_string_ostream os(error);
    llvm::interleaveComma(known, os);
    os << ")";
    return false;
  }
  return true;
}

/// Reads the optional number `key` of `obj` into `field`. It must lie in
/// [lo, hi] (TandemBounds.h): an efficiency of 1e-308 passes "(0, 1]" but
/// turns a rate into 0 and a time into infinity.
static bool readOptionalNumber(const llvm::json::Object &obj,
                               llvm::StringRef key,
                               std::optional<double> &field, double lo,
                               double hi, const std::string &where,
                               std::string &error) {
  const llvm::json::Value *v = obj.get(key);
  if (!v)
    return true;
  std::optional<double> d = v->getAsNumber();
  if (!d || !(*d >= lo && *d <= hi)) {
    error = where + ": \"" + key.str() + "\" must be a number in " +
            rangeStr(lo, hi);
    return false;
  }
  field = *d;
  return true;
}

static bool parseGpuSection(const llvm::json::Value &value,
                            llvm::StringRef origin, GpuCalibration &gpu,
                            std::string &error) {
  std::string where = (origin + ": gpu").str();
  const llvm::json::Object *obj = value.getAsObject();
  if (!obj) {
    error = where + " must be an object";
    return false;
  }
  static constexpr llvm::StringLiteral kKnown[] = {
      "device",
      "sm_count",
      "gemm_efficiency",
      "hbm_efficiency",
      "launch_overhead_us",
      "gemm_tile_m",
      "gemm_tile_n",
      "gemm_wave_overhead_us",
      "gemms_hold_sms",
      "attention_efficiency",
      "attention_grad_efficiency",
      "attention_latency_us",
      "attention_grad_latency_us",
      "event_latency_us",
      "copy_engine_latency_us",
      "norm_latency_us",
      "norm_hbm_efficiency",
      "norm_grad_latency_us",
      "norm_grad_hbm_efficiency",
      "layout_copy_latency_us",
      "layout_copy_hbm_efficiency"};
  if (!checkKnownKeys(*obj, kKnown, where, error))
    return false;
  if (const llvm::json::Value *device = obj->get("device")) {
    std::optional<llvm::StringRef> name = device->getAsString();
    if (!name) {
      error = where + ": \"device\" must be a string";
      return false;
    }
    gpu.device = name->str();
  }
  // Integers in [1, max].
  auto readInteger = [&](llvm::StringRef key, std::optional<int64_t> &field,
                         int64_t max) -> bool {
    const llvm::json::Value *v = obj->get(key);
    if (!v)
      return true;
    std::optional<int64_t> i = v->getAsInteger();
    if (!i || *i < 1 || *i > max) {
      error = where + ": \"" + key.str() + "\" must be an integer in [1, " +
              std::to_string(max) + "]";
      return false;
    }
    field = *i;
    return true;
  };
  auto readNumber = [&](llvm::StringRef key, std::optional<double> &field,
                        double lo, double hi) {
    return readOptionalNumber(*obj, key, field, lo, hi, where, error);
  };
  if (const llvm::json::Value *v = obj->get("gemms_hold_sms")) {
    std::optional<bool> b = v->getAsBoolean();
    if (!b) {
      error = where + ": \"gemms_hold_sms\" must be true or false";
      return false;
    }
    gpu.gemmsHoldSms = *b;
  }
  return readInteger("sm_count", gpu.smCount, kMaxSmCount) &&
         readNumber("gemm_efficiency", gpu.gemmEfficiency, kMinEfficiency,
                    1.0) &&
         readNumber("hbm_efficiency", gpu.hbmEfficiency, kMinEfficiency, 1.0) &&
         readNumber("launch_overhead_us", gpu.launchOverheadUs, 0.0,
                    kMaxLatencyUs) &&
         readInteger("gemm_tile_m", gpu.gemmTileM, kMaxGemmTile) &&
         readInteger("gemm_tile_n", gpu.gemmTileN, kMaxGemmTile) &&
         readNumber("gemm_wave_overhead_us", gpu.gemmWaveOverheadUs, 0.0,
                    kMaxLatencyUs) &&
         readNumber("attention_efficiency", gpu.attentionEfficiency,
                    kMinEfficiency, 1.0) &&
         readNumber("attention_grad_efficiency", gpu.attentionGradEfficiency,
                    kMinEfficiency, 1.0) &&
         readNumber("attention_latency_us", gpu.attentionLatencyUs, 0.0,
                    kMaxLatencyUs) &&
         readNumber("attention_grad_latency_us", gpu.attentionGradLatencyUs,
                    0.0, kMaxLatencyUs) &&
         readNumber("event_latency_us", gpu.eventLatencyUs, 0.0,
                    kMaxLatencyUs) &&
         readNumber("copy_engine_latency_us", gpu.copyEngineLatencyUs, 0.0,
                    kMaxLatencyUs) &&
         readNumber("norm_latency_us", gpu.normLatencyUs, 0.0, kMaxLatencyUs) &&
         readNumber("norm_hbm_efficiency", gpu.normHbmEfficiency,
                    kMinEfficiency, 1.0) &&
         readNumber("norm_grad_latency_us", gpu.normGradLatencyUs, 0.0,
                    kMaxLatencyUs) &&
         readNumber("norm_grad_hbm_efficiency", gpu.normGradHbmEfficiency,
                    kMinEfficiency, 1.0) &&
         readNumber("layout_copy_latency_us", gpu.layoutCopyLatencyUs, 0.0,
                    kMaxLatencyUs) &&
         readNumber("layout_copy_hbm_efficiency", gpu.layoutCopyHbmEfficiency,
                    kMinEfficiency, 1.0);
}

/// Reads the optional "comm" object (tandem-fit --collectives writes it).
/// Unknown keys are errors, as in "gpu".
static bool parseCommSection(const llvm::json::Value &value,
                             llvm::StringRef origin, CommCalibration &comm,
                             std::string &error) {
  std::string where = (origin + ": comm").str();
  const llvm::json::Object *obj = value.getAsObject();
  if (!obj) {
    error = where + " must be an object";
    return false;
  }
  static constexpr llvm::StringLiteral kKnown[] = {
      "bus_efficiency", "links_per_cta", "link_latency_us",
      "copy_engine_efficiency"};
  if (!checkKnownKeys(*obj, kKnown, where, error))
    return false;
  auto read = [&](llvm::StringRef key, std::optional<double> &field, double lo,
                  double hi) {
    return readOptionalNumber(*obj, key, field, lo, hi, where, error);
  };
  return read("bus_efficiency", comm.busEfficiency, kMinEfficiency, 1.0) &&
         // A CTA drives about one link; 1024 is far above any measurement.
         read("links_per_cta", comm.linksPerCta, kMinEfficiency, 1024.0) &&
         read("link_latency_us", comm.linkLatencyUs, 0.0, kMaxLatencyUs) &&
         read("copy_engine_efficiency", comm.copyEngineEfficiency,
              kMinEfficiency, 1.0);
}

/// The three slowdown factors of a contention row or of the copy-engine
/// point, each in [1, kMaxSlowdown].
static bool readSlowdowns(const llvm::json::Object &obj,
                          const std::string &where, ContentionPoint &p,
                          std::string &error) {
  for (auto [key, field] :
       {std::pair<llvm::StringRef, double *>{"gemm_slowdown", &p.gemmSlowdown},
        {"memory_slowdown", &p.memorySlowdown},
        {"comm_slowdown", &p.commSlowdown}}) {
    std::optional<double> v = obj.getNumber(key);
    if (!v || !(*v >= 1.0 && *v <= kMaxSlowdown)) {
      error = where + ": \"" + key.str() + "\" must be a number in " +
              rangeStr(1.0, kMaxSlowdown) + " (a slowdown factor)";
      return false;
    }
    *field = *v;
  }
  return true;
}

std::optional<Calibration> Calibration::parse(llvm::StringRef text,
                                              llvm::StringRef origin,
                                              std::string &error) {
  std::optional<llvm::json::Value> parsed =
      parseJsonObjectInput(text, origin, "calibration file", error, 1);
  if (!parsed)
    return std::nullopt;
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *rows = root->getArray("contention");
  if (!rows || rows->empty()) {
    error = (origin + ": \"contention\" must be a non-empty array").str();
    return std::nullopt;
  }
  Calibration c;
  c.origin = origin.str();
  ContentionTable &t = c.contention;
  t.origin = origin.str();
  if (std::optional<llvm::StringRef> src = root->getString("source"))
    t.origin += " (" + src->str() + ")";
  for (auto [index, row] : llvm::enumerate(*rows)) {
    std::string where =
        (origin + ": contention[" + llvm::Twine(index) + "]").str();
    const llvm::json::Object *obj = row.getAsObject();
    if (!obj) {
      error = where + " must be an object";
      return std::nullopt;
    }
    ContentionPoint p;
    std::optional<int64_t> sms = obj->getInteger("comm_sms");
    if (!sms || *sms < 1 || *sms > kMaxSmCount) {
      error = where + ": \"comm_sms\" must be an integer in [1, " +
              std::to_string(kMaxSmCount) + "]";
      return std::nullopt;
    }
    p.commSms = *sms;
    if (!readSlowdowns(*obj, where, p, error))
      return std::nullopt;
    if (!t.table.empty() && t.table.back().commSms >= p.commSms) {
      error = where + ": rows must be sorted by strictly increasing comm_sms";
      return std::nullopt;
    }
    t.table.push_back(p);
  }
  if (const llvm::json::Value *ce = root->get("copy_engine_contention")) {
    std::string where = (origin + ": copy_engine_contention").str();
    const llvm::json::Object *obj = ce->getAsObject();
    if (!obj) {
      error = where + " must be an object";
      return std::nullopt;
    }
    static constexpr llvm::StringLiteral kKnown[] = {
        "gemm_slowdown", "memory_slowdown", "comm_slowdown"};
    if (!checkKnownKeys(*obj, kKnown, where, error))
      return std::nullopt;
    ContentionPoint p;
    if (!readSlowdowns(*obj, where, p, error))
      return std::nullopt;
    t.setCopyEnginePoint(p, t.origin);
    c.copyEngineContention = t.copyEnginePoint();
  }
  if (const llvm::json::Value *gpu = root->get("gpu"))
    if (!parseGpuSection(*gpu, origin, c.gpu, error))
      return std::nullopt;
  if (const llvm::json::Value *comm = root->get("comm"))
    if (!parseCommSection(*comm, origin, c.comm, error))
      return std::nullopt;
  return c;
}

std::optional<Calibration> Calibration::load(llvm::StringRef path,
                                             std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = ("cannot read calibration file '" + path +
             "': " + buffer.getError().message())
                .str();
    return std::nullopt;
  }
  return parse((*buffer)->getBuffer(), path, error);
}

bool Calibration::applyTo(GpuSpec &spec, std::string &error) const {
  if (gpu.smCount && *gpu.smCount != spec.smCount) {
    error = (llvm::Twine(origin) + ": gpu: \"sm_count\" is " +
             llvm::Twine(*gpu.smCount) + " (the measured device) but target '" +
             spec.name + "' has " + llvm::Twine(spec.smCount) +
             " SMs: the calibration does not describe this target")
                .str();
    return false;
  }
  if (gpu.gemmEfficiency)
    spec.gemmEfficiency = *gpu.gemmEfficiency;
  if (gpu.hbmEfficiency)
    spec.hbmEfficiency = *gpu.hbmEfficiency;
  if (gpu.launchOverheadUs)
    spec.launchOverheadUs = *gpu.launchOverheadUs;
  if (gpu.gemmTileM)
    spec.gemmTileM = *gpu.gemmTileM;
  if (gpu.gemmTileN)
    spec.gemmTileN = *gpu.gemmTileN;
  if (gpu.gemmWaveOverheadUs)
    spec.gemmWaveOverheadUs = *gpu.gemmWaveOverheadUs;
  if (gpu.gemmsHoldSms)
    spec.gemmsHoldSms = *gpu.gemmsHoldSms;
  if (gpu.eventLatencyUs)
    spec.eventLatencyUs = *gpu.eventLatencyUs;
  if (gpu.copyEngineLatencyUs)
    spec.copyEngineLatencyUs = *gpu.copyEngineLatencyUs;
  if (gpu.attentionEfficiency)
    spec.attentionEfficiency = *gpu.attentionEfficiency;
  if (gpu.attentionGradEfficiency)
    spec.attentionGradEfficiency = *gpu.attentionGradEfficiency;
  if (gpu.attentionLatencyUs)
    spec.attentionLatencyUs = *gpu.attentionLatencyUs;
  if (gpu.attentionGradLatencyUs)
    spec.attentionGradLatencyUs = *gpu.attentionGradLatencyUs;
  auto apply = [](KernelBandwidth &k, std::optional<double> latencyUs,
                  std::optional<double> efficiency) {
    if (latencyUs)
      k.latencyUs = *latencyUs;
    if (efficiency)
      k.hbmEfficiency = *efficiency;
  };
  apply(spec.norm, gpu.normLatencyUs, gpu.normHbmEfficiency);
  apply(spec.normGrad, gpu.normGradLatencyUs, gpu.normGradHbmEfficiency);
  apply(spec.layoutCopy, gpu.layoutCopyLatencyUs, gpu.layoutCopyHbmEfficiency);
  return true;
}

void Calibration::applyTo(CommParams &params) const {
  if (comm.busEfficiency)
    params.busEfficiency = *comm.busEfficiency;
  if (comm.linksPerCta)
    params.linksPerCta = *comm.linksPerCta;
  if (comm.linkLatencyUs)
    params.linkLatencyUs = *comm.linkLatencyUs;
  if (comm.copyEngineEfficiency)
    params.copyEngineEfficiency = *comm.copyEngineEfficiency;
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

llvm::StringRef mlir::tandem::stringifyAlgorithm(CollectiveAlgorithm a) {
  switch (a) {
  case CollectiveAlgorithm::Ring:
    return "ring";
  case CollectiveAlgorithm::Tree:
    return "tree";
  case CollectiveAlgorithm::Direct:
    return "direct";
  case CollectiveAlgorithm::PeerToPeer:
    return "p2p";
  case CollectiveAlgorithm::Hierarchical:
    return "hierarchical";
  case CollectiveAlgorithm::CopyEngine:
    return "copy_engine";
  }
  llvm_unreachable("unknown algorithm");
}

CostModel::CostModel(GpuSpec gpu, ContentionTable contention, CommParams comm)
    : spec(std::move(gpu)), table(std::move(contention)), commParams(comm) {}

double CostModel::hbmTimeUs(double bytes) const {
  return bytes / (spec.hbmBytesPerSecond * spec.hbmEfficiency / 1e6);
}

double CostModel::memoryKernelUs(MemoryKernel kernel, double bytes) const {
  const KernelBandwidth *k = nullptr;
  switch (kernel) {
  case MemoryKernel::generic:
    return hbmTimeUs(bytes);
  case MemoryKernel::norm:
    k = &spec.norm;
    break;
  case MemoryKernel::normGrad:
    k = &spec.normGrad;
    break;
  case MemoryKernel::layoutCopy:
    k = &spec.layoutCopy;
    break;
  }
  double efficiency = k->hbmEfficiency.value_or(spec.hbmEfficiency);
  return k->latencyUs + bytes / (spec.hbmBytesPerSecond * efficiency / 1e6);
}

ComputeEstimate CostModel::gemm(const GemmShape &shape, Type elementType,
                                double bytesAccessed, int64_t sms) const {
  ComputeEstimate e;
  e.sms = (sms <= 0 || sms > spec.smCount) ? spec.smCount : sms;
  double perSmFlopsPerUs =
      spec.peakFlops(elementType) * spec.gemmEfficiency / spec.smCount / 1e6;
  // Tile choice: the target's tile, unless the problem has too few tiles to
  // give every SM one; then halve the tile (N first, down to 64x64), as
  // GEMM libraries pick smaller tiles for skinny problems.
  int64_t tileM = spec.gemmTileM, tileN = spec.gemmTileN;
  // Verified IR bounds m x n by the result's size; a shape from elsewhere
  // saturates instead of overflowing.
  auto tilesFor = [&](int64_t tm, int64_t tn) -> int64_t {
    std::optional<int64_t> tiles =
        checkedProduct(std::max<int64_t>(shape.batch, 1), ceilDiv(shape.m, tm));
    if (tiles)
      tiles = checkedProduct(*tiles, ceilDiv(shape.n, tn));
    return tiles.value_or(std::numeric_limits<int64_t>::max());
  };
  while (tilesFor(tileM, tileN) < spec.smCount && (tileM > 64 || tileN > 64)) {
    if (tileN >= tileM && tileN > 64)
      tileN /= 2;
    else
      tileM /= 2;
  }
  e.tiles = tilesFor(tileM, tileN);
  e.waves = ceilDiv(e.tiles, e.sms);
  e.tileUs =
      2.0 * tileM * tileN * shape.k / perSmFlopsPerUs + spec.gemmWaveOverheadUs;
  e.floorUs = hbmTimeUs(bytesAccessed);
  double computeUs = e.waves * e.tileUs;
  e.memoryBound = e.floorUs > computeUs;
  e.timeUs = std::max(computeUs, e.floorUs) + spec.launchOverheadUs;
  return e;
}

ComputeCostInputs ComputeCostInputs::of(ComputeOpInterface op) {
  ComputeCostInputs in;
  in.elementType = op.getComputeElementType();
  in.bytes = op.getBytesAccessed();
  in.flops = op.getFlops();
  in.kind = op.getComputeKind();
  in.gemmShape = op.getGemmShape();
  Operation *o = op.getOperation();
  if (isa<NormOp>(o))
    in.memoryKernel = MemoryKernel::norm;
  else if (isa<NormGradOp>(o))
    in.memoryKernel = MemoryKernel::normGrad;
  else if (isa<SliceOp, ConcatOp, RingConcatOp>(o))
    in.memoryKernel = MemoryKernel::layoutCopy;
  // The runtime's backward reads the statistics its forward kept; without
  // that forward (a causal segment's prefix attentions, an argument) it
  // runs a forward pass first (runtime/lib/Executor.cpp).
  if (auto grad = dyn_cast<AttentionGradOp>(o);
      grad && !grad.hasKeptStatistics())
    in.recomputeFlops = grad.getForwardFlops();
  in.measuredScale = getMeasuredScale(op);
  return in;
}

std::optional<ComputeEstimate> CostModel::compute(ComputeOpInterface op,
                                                  std::string &error,
                                                  int64_t sms) const {
  return compute(ComputeCostInputs::of(op), error, sms);
}

std::optional<ComputeEstimate> CostModel::compute(const ComputeCostInputs &in,
                                                  std::string &error,
                                                  int64_t sms) const {
  std::optional<ComputeEstimate> e = modelled(in, error, sms);
  if (!e || !in.measuredScale)
    return e;
  // A measurement corrects the model for this op; the model still says how
  // SM counts compare.
  double scale = *in.measuredScale;
  e->timeUs *= scale;
  e->tileUs *= scale;
  e->floorUs *= scale;
  return e;
}

std::optional<ComputeEstimate> CostModel::modelled(const ComputeCostInputs &in,
                                                   std::string &error,
                                                   int64_t sms) const {
  Type elementType = in.elementType;
  double bytes = in.bytes;
  double flops = in.flops;
  ComputeKind kind = in.kind;
  // An op that computes and moves nothing (a view) launches no kernel.
  if (flops == 0.0 && bytes == 0.0) {
    ComputeEstimate e;
    e.sms = spec.smCount;
    e.memoryBound = true;
    return e;
  }
  double peak = spec.peakFlops(elementType);
  if (peak <= 0.0 && flops > 0.0 && kind != ComputeKind::memory) {
    llvm::raw_string_ostream os(error);
    os << "target '" << spec.name << "' has no tensor-core peak for "
       << elementType;
    return std::nullopt;
  }
  if (in.gemmShape)
    return gemm(*in.gemmShape, elementType, bytes, sms);

  ComputeEstimate e;
  e.sms = (sms <= 0 || sms > spec.smCount) ? spec.smCount : sms;
  e.floorUs = memoryKernelUs(in.memoryKernel, bytes);
  double computeUs = 0.0, fixedUs = 0.0;
  switch (kind) {
  case ComputeKind::attention:
    computeUs = flops / (peak * spec.attentionEfficiency / 1e6);
    fixedUs = spec.attentionLatencyUs;
    break;
  case ComputeKind::attention_grad:
    computeUs = flops / (peak * spec.attentionGradEfficiency / 1e6);
    fixedUs = spec.attentionGradLatencyUs;
    if (in.recomputeFlops > 0) {
      computeUs += in.recomputeFlops / (peak * spec.attentionEfficiency / 1e6);
      fixedUs += spec.attentionLatencyUs;
    }
    break;
  case ComputeKind::opaque:
  case ComputeKind::gemm:
    computeUs = flops > 0.0 ? flops / (peak * spec.gemmEfficiency / 1e6) : 0.0;
    break;
  case ComputeKind::memory:
    computeUs = 0.0;
    break;
  }
  // Compute-bound work spreads over the SMs it gets; bandwidth-bound work is
  // limited by HBM, which a few SMs less barely changes.
  computeUs = computeUs * double(spec.smCount) / double(e.sms) + fixedUs;
  e.memoryBound = e.floorUs >= computeUs;
  e.timeUs = std::max(computeUs, e.floorUs) + spec.launchOverheadUs;
  return e;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

int64_t CostModel::effectiveCtas(int64_t ctas) const {
  return ctas > 0 ? ctas : spec.collectiveSms;
}

double CostModel::nativeBandwidth(const GroupSpec &group, int64_t ctas) const {
  // A native collective drives every link it can reach: all links of a GPU
  // on a switch or a full mesh (NCCL builds several rings / direct paths),
  // the two neighbour links on a ring. A CTA budget below that limits it.
  int64_t usable = group.topology == Topology::ring
                       ? std::min<int64_t>(group.linksPerGpu, 2)
                       : group.linksPerGpu;
  double ctaLinks = effectiveCtas(ctas) * commParams.linksPerCta;
  double links = std::min<double>(usable, ctaLinks);
  return links * group.linkBytesPerUs * commParams.busEfficiency;
}

/// Links one transfer to one peer can use: through a switch all of them; on
/// a full mesh only the links to that peer; on a ring one neighbour link.
static double peerLinks(const GroupSpec &group) {
  switch (group.topology) {
  case Topology::switch_:
  case Topology::hierarchical:
    return group.linksPerGpu;
  case Topology::full_mesh:
    return std::max<double>(
        1.0, std::floor(double(group.linksPerGpu) / double(group.size - 1)));
  case Topology::ring:
    return 1.0;
  }
  return 1.0;
}

double CostModel::peerBandwidth(const GroupSpec &group, int64_t ctas) const {
  double links =
      std::min(peerLinks(group), effectiveCtas(ctas) * commParams.linksPerCta);
  return links * group.linkBytesPerUs * commParams.busEfficiency;
}

CollectiveEstimate
CostModel::collective(CollectiveKind kind, int64_t payloadBytes,
                      const GroupSpec &group, int64_t ctas,
                      std::optional<CollectiveAlgorithm> forced,
                      int64_t shift) const {
  const double n = double(group.size);
  const double bytes = double(payloadBytes);
  const double launch = spec.launchOverheadUs;
  // A calibrated latency describes the machine's links, whatever the IR's
  // group attribute says.
  const double alpha = commParams.linkLatencyUs.value_or(group.linkLatencyUs);
  CollectiveEstimate best;
  best.timeUs = -1;
  auto consider = [&](CollectiveAlgorithm algorithm, int64_t steps,
                      double timeUs, double bw) {
    if (forced && *forced != algorithm)
      return;
    if (best.timeUs < 0 || timeUs < best.timeUs)
      best = CollectiveEstimate{timeUs, algorithm, steps, bw};
  };

  if (group.size <= 1) {
    // A group of one only copies locally.
    double bw = spec.hbmBytesPerSecond * spec.hbmEfficiency / 1e6;
    return CollectiveEstimate{launch + bytes / bw,
                              forced.value_or(CollectiveAlgorithm::Direct), 0,
                              bw};
  }

  if (group.topology == Topology::hierarchical) {
    // Two levels: inside a node over the switch, across nodes over the NIC
    // (one NIC per GPU, each GPU carrying 1/g of the inter-node traffic).
    double g = double(group.gpusPerNode);
    double nodes = n / g;
    GroupSpec intra = group;
    intra.topology = Topology::switch_;
    intra.size = group.gpusPerNode;
    double intraBw = nativeBandwidth(intra, ctas);
    double interBw = group.interNodeBytesPerUs * commParams.busEfficiency;
    // One pass (all-gather or reduce-scatter) of `b` bytes.
    auto pass = [&](double b) {
      double t = 0;
      if (g > 1)
        t += (g - 1) * alpha + (g - 1) / g * b / intraBw;
      if (nodes > 1)
        t += (nodes - 1) * group.interNodeLatencyUs +
             (nodes - 1) / nodes * b / g / interBw;
      return t;
    };
    int64_t steps = int64_t(g - 1 + nodes - 1);
    double t = 0;
    switch (kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      t = pass(bytes);
      break;
    case CollectiveKind::all_reduce:
      t = 2 * pass(bytes);
      steps *= 2;
      break;
    case CollectiveKind::all_to_all:
      // Each GPU sends (nodes-1)/nodes of its buffer off-node over its NIC.
      t = alpha + (g - 1) / n * bytes / intraBw + group.interNodeLatencyUs +
          (nodes - 1) / nodes * bytes / interBw;
      steps = 2;
      break;
    case CollectiveKind::permute:
      t = group.interNodeLatencyUs + bytes / interBw;
      steps = 1;
      break;
    }
    return CollectiveEstimate{
        launch + t, forced.value_or(CollectiveAlgorithm::Hierarchical), steps,
        interBw};
  }

  const double bw = nativeBandwidth(group, ctas);
  switch (kind) {
  case CollectiveKind::all_gather:
  case CollectiveKind::reduce_scatter: {
    double volume = (n - 1) / n * bytes;
    consider(CollectiveAlgorithm::Ring, group.size - 1,
             launch + (n - 1) * alpha + volume / bw, bw);
    // Every pair has its own links: one step reaches all peers at once.
    if (group.topology == Topology::full_mesh)
      consider(CollectiveAlgorithm::Direct, 1, launch + alpha + volume / bw,
               bw);
    // As a sequence of P2P ring steps (what a chunked pipeline issues), each
    // step limited to one peer's links. Only on request: a native collective
    // never decomposes itself this way.
    if (forced == CollectiveAlgorithm::PeerToPeer) {
      double p2p = peerBandwidth(group, ctas);
      consider(CollectiveAlgorithm::PeerToPeer, group.size - 1,
               launch + (n - 1) * (alpha + launch) + volume / p2p, p2p);
    }
    break;
  }
  case CollectiveKind::all_reduce: {
    double volume = 2 * (n - 1) / n * bytes;
    consider(CollectiveAlgorithm::Ring, 2 * (group.size - 1),
             launch + 2 * (n - 1) * alpha + volume / bw, bw);
    int64_t depth = int64_t(std::ceil(std::log2(n)));
    consider(CollectiveAlgorithm::Tree, 2 * depth,
             launch + 2 * depth * alpha + 2 * bytes / bw, bw);
    if (group.topology == Topology::full_mesh)
      consider(CollectiveAlgorithm::Direct, 2, launch + 2 * alpha + volume / bw,
               bw);
    break;
  }
  case CollectiveKind::all_to_all: {
    double volume = (n - 1) / n * bytes;
    // On a ring, slices cross n/4 links on average (both directions used).
    double hops =
        group.topology == Topology::ring ? std::max(1.0, n / 4.0) : 1.0;
    consider(CollectiveAlgorithm::Direct, 1,
             launch + hops * alpha + volume * hops / bw, bw);
    break;
  }
  case CollectiveKind::permute: {
    double p2p = peerBandwidth(group, ctas);
    int64_t s = ((shift % group.size) + group.size) % group.size;
    int64_t hops = group.topology == Topology::ring
                       ? std::min<int64_t>(s, group.size - s)
                       : 1;
    consider(CollectiveAlgorithm::PeerToPeer, hops,
             launch + hops * alpha + bytes / p2p, p2p);
    break;
  }
  }
  if (best.timeUs < 0) {
    // The forced algorithm does not apply to this kind/topology: fall back
    // to the unforced choice and let the caller see the algorithm it got.
    return collective(kind, payloadBytes, group, ctas, std::nullopt, shift);
  }
  return best;
}

std::optional<CollectiveEstimate>
CostModel::copyEngine(CollectiveKind kind, int64_t payloadBytes,
                      const GroupSpec &group, std::string *whyNot) const {
  auto refuse =
      [&](const llvm::Twine &why) -> std::optional<CollectiveEstimate> {
    if (whyNot)
      *whyNot = why.str();
    return std::nullopt;
  };
  if (kind != CollectiveKind::all_gather &&
      kind != CollectiveKind::reduce_scatter && kind != CollectiveKind::permute)
    return refuse("only all-gathers, reduce-scatters and permutes run on "
                  "the copy engines, not " +
                  stringifyCollectiveKind(kind));
  if (group.size <= 1)
    return refuse("group @" + group.name + " has one rank: nothing to copy");
  if (group.topology != Topology::switch_ &&
      group.topology != Topology::full_mesh)
    return refuse("group @" + group.name + " is a " +
                  stringifyTopology(group.topology) +
                  " group: the copy engines need every peer's memory within "
                  "one link (a switch or a full mesh inside one node)");
  const double n = double(group.size);
  const double bytes = double(payloadBytes);
  const double alpha = commParams.linkLatencyUs.value_or(group.linkLatencyUs);
  const double copyLatency =
      spec.copyEngineLatencyUs.value_or(spec.launchOverheadUs);
  if (kind == CollectiveKind::permute) {
    // One copy from one peer (a P2P ring step), over the links it can use.
    double bw = commParams.copyEngineEfficiency * peerLinks(group) *
                group.linkBytesPerUs;
    return CollectiveEstimate{spec.launchOverheadUs + alpha + copyLatency +
                                  bytes / bw,
                              CollectiveAlgorithm::CopyEngine, 1, bw};
  }
  // What arrives: the n-1 peers' blocks of 1/n of the payload. A switch
  // gives one copy every link of the GPU; on a full mesh the n-1 copies
  // run at once, one over each peer's links: either way the GPU's links.
  double bw = commParams.copyEngineEfficiency * double(group.linksPerGpu) *
              group.linkBytesPerUs;
  double t = spec.launchOverheadUs + alpha + (n - 1) * copyLatency +
             (n - 1) / n * bytes / bw;
  if (kind == CollectiveKind::reduce_scatter)
    // Sum the own block and the n-1 staged ones: read n blocks, write one.
    t += spec.launchOverheadUs +
         memoryKernelUs(MemoryKernel::generic, (n + 1) / n * bytes);
  return CollectiveEstimate{t, CollectiveAlgorithm::CopyEngine, group.size - 1,
                            bw};
}

std::optional<std::string>
mlir::tandem::checkCopyEngine(CollectiveOpInterface op, const GroupSpec &group,
                              const CostModel &model) {
  std::string why;
  if (model.copyEngine(op.getCollectiveKind(), op.getPayloadBytes(), group,
                       &why))
    return std::nullopt;
  return "'" + kCopyEngineAttrName.str() + "' cannot apply: " + why;
}

//===----------------------------------------------------------------------===//
// ComputeEstimateCache
//===----------------------------------------------------------------------===//

std::optional<ComputeEstimate> ComputeEstimateCache::get(ComputeOpInterface op,
                                                         std::string &error,
                                                         int64_t sms) {
  auto [it, inserted] = entries.try_emplace(op.getOperation());
  Entry &entry = it->second;
  if (inserted)
    entry.inputs = ComputeCostInputs::of(op);
  for (const auto &[known, estimate] : entry.bySms)
    if (known == sms)
      return estimate;
  std::optional<ComputeEstimate> estimate =
      model.compute(entry.inputs, error, sms);
  if (estimate)
    entry.bySms.push_back({sms, *estimate});
  return estimate;
}

CollectiveEstimate CollectiveEstimateCache::get(CollectiveKind kind,
                                                int64_t payloadBytes,
                                                const GroupSpec &group,
                                                int64_t ctas, int64_t shift) {
  auto [it, inserted] = estimates.try_emplace(
      {static_cast<unsigned>(kind), payloadBytes, &group, ctas, shift});
  if (inserted)
    it->second =
        model.collective(kind, payloadBytes, group, ctas, std::nullopt, shift);
  return it->second;
}

CollectiveEstimate CollectiveEstimateCache::get(CollectiveOpInterface op,
                                                const GroupSpec &group,
                                                int64_t ctas) {
  std::optional<CollectiveEstimate> ce;
  if (isCopyEngine(op))
    ce = model.copyEngine(op.getCollectiveKind(), op.getPayloadBytes(), group);
  CollectiveEstimate e = ce ? *ce
                            : get(op.getCollectiveKind(), op.getPayloadBytes(),
                                  group, ctas, collectiveShift(op));
  if (std::optional<double> scale = getMeasuredScale(op))
    e.timeUs *= *scale;
  return e;
}

int64_t mlir::tandem::collectiveShift(CollectiveOpInterface op) {
  if (auto p = dyn_cast<PermuteOp>(op.getOperation()))
    return p.getShift();
  if (auto p = dyn_cast<PermuteStartOp>(op.getOperation()))
    return p.getShift();
  return 1;
}
