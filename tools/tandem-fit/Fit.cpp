//===- Fit.cpp - Cost-model predictions of, and fit to, raw measurements --===//

#include "Fit.h"

#include "tandem/Engine/Engine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

using namespace mlir;
using namespace mlir::tandem;
using namespace mlir::tandem::fit;

//===----------------------------------------------------------------------===//
// Predictions
//===----------------------------------------------------------------------===//

ErrorSummary ErrorSummary::of(const std::vector<double> &errors) {
  ErrorSummary s;
  s.count = errors.size();
  if (errors.empty())
    return s;
  std::vector<double> abs;
  for (double e : errors)
    abs.push_back(std::fabs(e));
  llvm::sort(abs);
  size_t n = abs.size();
  s.medianAbs = n % 2 ? abs[n / 2] : (abs[n / 2 - 1] + abs[n / 2]) / 2;
  s.maxAbs = abs.back();
  for (double a : abs)
    s.meanAbs += a / double(n);
  return s;
}

static int64_t gemmBytes(int64_t m, int64_t n, int64_t k) {
  return 2 * (m * k + k * n + m * n); // bf16 A, B and C
}

double Predictor::gemmUs(const GemmSample &s) const {
  return model
      .gemm(GemmShape{1, s.m, s.n, s.k}, bf16, double(gemmBytes(s.m, s.n, s.k)),
            s.smTarget)
      .timeUs;
}

double Predictor::memoryUs(int64_t bytes) const {
  return model.hbmTimeUs(double(bytes)) + model.gpu().launchOverheadUs;
}

double Predictor::kernelUs(const KernelSample &s) const {
  ComputeCostInputs in;
  in.elementType = bf16;
  in.bytes = double(s.bytes);
  in.kind = ComputeKind::memory;
  in.memoryKernel = s.kernel;
  std::string error;
  std::optional<ComputeEstimate> e = model.compute(in, error);
  assert(e && "a bandwidth-bound op is priced on every target");
  return e ? e->timeUs : 0.0;
}

llvm::StringRef fit::kernelKeyPrefix(MemoryKernel kernel) {
  switch (kernel) {
  case MemoryKernel::generic:
    return "";
  case MemoryKernel::norm:
    return "norm";
  case MemoryKernel::normGrad:
    return "norm_grad";
  case MemoryKernel::layoutCopy:
    return "layout_copy";
  }
  llvm_unreachable("unknown kernel");
}

/// Latency and rate of one measured kernel: with y = us - launch overhead,
/// the line y = latency + bytes * b minimising the sum of squared relative
/// errors (weights 1 / y^2), b = 1 / (peak * efficiency). A negative
/// latency is not representable: the line through the origin then.
static std::optional<KernelFit>
fitKernel(MemoryKernel kernel, ArrayRef<const KernelSample *> samples,
          const GpuSpec &spec, llvm::StringRef origin, std::string &error) {
  std::string where = (origin + ": " + kernelKeyPrefix(kernel)).str();
  double s0 = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  std::set<int64_t> sizes;
  for (const KernelSample *s : samples) {
    double y = s->us - spec.launchOverheadUs;
    if (!(y > 0)) {
      llvm::raw_string_ostream os(error);
      os << where << " " << s->shape << ": " << llvm::format("%.3f", s->us)
         << " us is not longer than the launch overhead ("
         << llvm::format("%.3f", spec.launchOverheadUs) << " us)";
      return std::nullopt;
    }
    double x = double(s->bytes), w = 1.0 / (y * y);
    s0 += w;
    sx += w * x;
    sy += w * y;
    sxx += w * x * x;
    sxy += w * x * y;
    sizes.insert(s->bytes);
  }
  if (sizes.size() < 2) {
    error = where +
            ": a latency and a rate need kernels of at least two "
            "sizes (bytes), got " +
            std::to_string(sizes.size());
    return std::nullopt;
  }
  double slope = (s0 * sxy - sx * sy) / (s0 * sxx - sx * sx);
  double latency = (sy - slope * sx) / s0;
  if (latency < 0) {
    latency = 0;
    slope = sxy / sxx;
  }
  const double peakBytesPerUs = spec.hbmBytesPerSecond / 1e6;
  double efficiency = slope > 0 ? 1.0 / (slope * peakBytesPerUs) : INFINITY;
  if (!(efficiency <= 1.0)) {
    llvm::raw_string_ostream os(error);
    os << where << ": the kernels' bytes grow faster than target '" << spec.name
       << "' HBM peak of " << llvm::format("%.1f", peakBytesPerUs / 1e3)
       << " GB/s allows (fitted efficiency " << llvm::format("%.3f", efficiency)
       << "): they did not stream HBM (too small for the L2?)";
    return std::nullopt;
  }
  if (efficiency < kMinEfficiency) {
    llvm::raw_string_ostream os(error);
    os << where << ": fitted efficiency " << llvm::format("%g", efficiency)
       << " is below " << kMinEfficiency
       << ": the kernels' time does not grow with their bytes";
    return std::nullopt;
  }
  KernelFit fit;
  fit.kernel = kernel;
  // Rounded as the calibration file stores them.
  fit.latencyUs = std::round(latency * 1e3) / 1e3;
  fit.hbmEfficiency = std::round(efficiency * 1e4) / 1e4;
  fit.samples = samples.size();
  return fit;
}

/// Runs `count` tasks like `primary` on one stream next to the stand-in,
/// a collective holding `commCtas` SMs on another, in the simulator's engine.
static PairPrediction simulatePair(const CostModel &model,
                                   const sim::Task &primary, int64_t count,
                                   int64_t commCtas, double copyAloneUs) {
  sim::Problem problem;
  problem.smCount = model.gpu().smCount;
  problem.gemmsHoldSms = model.gpu().gemmsHoldSms;
  problem.contention = model.contention();
  problem.streamNames = {"compute", "stand-in"};
  for (int64_t i = 0; i < count; ++i) {
    problem.tasks.push_back(primary);
    problem.tasks.back().name = "primary" + std::to_string(i);
  }
  sim::Task copy;
  copy.name = "stand-in";
  copy.kind = sim::TaskKind::Collective;
  copy.stream = 1;
  copy.aloneUs = copyAloneUs;
  copy.commSms = commCtas;
  copy.fabric = "stand-in";
  problem.tasks.push_back(copy);
  std::string error;
  std::optional<sim::Result> result = sim::simulate(problem, error);
  // Two independent streams without dependences cannot deadlock.
  assert(result && "pair simulation failed");
  PairPrediction p;
  p.primaryAloneUs = double(count) * primary.aloneUs;
  p.primaryOverlappedUs = result->timings[count - 1].endUs;
  p.copyOverlappedUs = result->timings[count].endUs;
  p.spanUs = result->spanUs;
  p.serialUs = p.primaryAloneUs + copyAloneUs;
  return p;
}

PairPrediction Predictor::pair(const GemmPair &p) const {
  ComputeEstimate e =
      model.gemm(GemmShape{1, p.m, p.n, p.k}, bf16,
                 double(gemmBytes(p.m, p.n, p.k)), p.gemmSmTarget);
  // The task the simulator builds for a matmul (lib/Simulator/Simulate.cpp).
  sim::Task task;
  task.kind = sim::TaskKind::Gemm;
  task.aloneUs = e.timeUs;
  task.tiles = e.tiles;
  task.waveUs = e.tileUs;
  task.floorUs = e.floorUs;
  task.overheadUs = model.gpu().launchOverheadUs;
  task.smTarget = p.gemmSmTarget;
  return simulatePair(model, task, p.gemmCount, p.commCtas, p.copyAloneUs);
}

PairPrediction Predictor::memoryPair(const MemoryPair &p) const {
  sim::Task task;
  task.kind = sim::TaskKind::Memory;
  task.aloneUs = memoryUs(p.memBytes);
  return simulatePair(model, task, p.memCount, p.commCtas, p.copyAloneUs);
}

//===----------------------------------------------------------------------===//
// Fit
//===----------------------------------------------------------------------===//

/// x minimising sum_i w_i |x - z_i| (a weighted median).
static double weightedMedian(std::vector<std::pair<double, double>> zw) {
  llvm::sort(zw);
  double total = 0;
  for (auto &[z, w] : zw)
    total += w;
  double acc = 0;
  for (auto &[z, w] : zw) {
    acc += w;
    if (acc >= total / 2)
      return z;
  }
  return zw.back().first;
}

/// Grid search for the per-wave overhead: step and range (µs). A wave of
/// the smallest measured GEMMs takes about 10-20 µs on an H200, so 20 µs
/// covers any overhead the data could support.
constexpr double kOverheadStepUs = 0.05;
constexpr double kOverheadMaxUs = 20.0;

/// Best (tile, efficiency[, wave overhead]) for the single GEMMs by mean
/// |relative error|. For a fixed tile and overhead the time is linear in
/// 1 / efficiency (ignoring the memory floor), so the L1-optimal efficiency
/// is a weighted median; the error is then evaluated with the real formula.
static GemmFit fitGemm(const GpuSpec &spec, ArrayRef<GemmSample> samples,
                       Type bf16, bool withOverhead) {
  std::vector<std::pair<int64_t, int64_t>> tiles = {
      {spec.gemmTileM, spec.gemmTileN}};
  for (int64_t tm : {64, 128, 256})
    for (int64_t tn : {64, 128, 256})
      if (std::make_pair(tm, tn) != tiles.front())
        tiles.push_back({tm, tn});

  GemmFit best;
  bool have = false;
  for (auto [tm, tn] : tiles) {
    GpuSpec ideal = spec;
    ideal.gemmTileM = tm;
    ideal.gemmTileN = tn;
    ideal.gemmEfficiency = 1.0;
    ideal.gemmWaveOverheadUs = 0.0;
    CostModel idealModel(ideal);
    std::vector<double> waves, base;
    for (const GemmSample &s : samples) {
      ComputeEstimate e =
          idealModel.gemm(GemmShape{1, s.m, s.n, s.k}, bf16,
                          double(gemmBytes(s.m, s.n, s.k)), s.smTarget);
      waves.push_back(double(e.waves));
      base.push_back(double(e.waves) * e.tileUs);
    }
    int steps = withOverhead ? int(kOverheadMaxUs / kOverheadStepUs) : 0;
    for (int step = 0; step <= steps; ++step) {
      double overhead = step * kOverheadStepUs;
      std::vector<std::pair<double, double>> zw;
      for (auto [i, s] : llvm::enumerate(samples))
        zw.push_back(
            {(s.us - spec.launchOverheadUs - waves[i] * overhead) / base[i],
             base[i] / s.us});
      double inverse = std::max(1.0, weightedMedian(zw));
      GpuSpec candidate = ideal;
      // Rounded as the calibration file stores it.
      candidate.gemmEfficiency = std::round(1e4 / inverse) / 1e4;
      candidate.gemmWaveOverheadUs = overhead;
      CostModel model(candidate);
      Predictor predict(model, bf16);
      std::vector<double> errors;
      for (const GemmSample &s : samples)
        errors.push_back(relativeError(predict.gemmUs(s), s.us));
      ErrorSummary summary = ErrorSummary::of(errors);
      if (!have || summary.meanAbs < best.errors.meanAbs - 1e-12) {
        have = true;
        best = GemmFit{tm, tn, candidate.gemmEfficiency, overhead, summary};
      }
    }
  }
  return best;
}

namespace {
enum class Column { Gemm, Memory, Comm };
} // namespace

/// Slowdown factors at one stand-in CTA count. Each column is fitted by a
/// 1-D search on the mean |relative error| of the durations it governs,
/// alternating until stable, since each factor changes how long the other
/// side overlaps.
static ContentionPoint fitContentionRow(const GpuSpec &spec, Type bf16,
                                        int64_t ctas,
                                        ArrayRef<const GemmPair *> pairs,
                                        ArrayRef<const MemoryPair *> memory) {
  ContentionPoint point{ctas, 1.0, 1.0, 1.0};
  auto objective = [&](const ContentionPoint &q, Column column) {
    CostModel model(spec, ContentionTable::fromPoints({q}, "fit"));
    Predictor predict(model, bf16);
    double sum = 0;
    size_t n = 0;
    auto add = [&](double predicted, double measured) {
      sum += std::fabs(relativeError(predicted, measured));
      ++n;
    };
    if (column != Column::Memory)
      for (const GemmPair *p : pairs) {
        PairPrediction pp = predict.pair(*p);
        if (column == Column::Gemm)
          add(pp.primaryOverlappedUs, p->gemmOverlappedUs);
        else
          add(pp.copyOverlappedUs, p->copyOverlappedUs);
      }
    if (column != Column::Gemm)
      for (const MemoryPair *p : memory) {
        PairPrediction pp = predict.memoryPair(*p);
        if (column == Column::Memory)
          add(pp.primaryOverlappedUs, p->memOverlappedUs);
        else
          add(pp.copyOverlappedUs, p->copyOverlappedUs);
      }
    return n ? sum / double(n) : 0.0;
  };
  // Factors below 1 are not representable (the file rejects them): a
  // measured speed-up fits to 1.
  auto search = [&](double ContentionPoint::*field, Column column) {
    auto scan = [&](double lo, double hi, double step) {
      double bestValue = point.*field, bestError = -1;
      for (int i = 0; lo + i * step <= hi + 1e-12; ++i) {
        ContentionPoint q = point;
        q.*field = std::round((lo + i * step) * 1e4) / 1e4;
        double e = objective(q, column);
        if (bestError < 0 || e < bestError - 1e-12) {
          bestError = e;
          bestValue = q.*field;
        }
      }
      point.*field = bestValue;
    };
    scan(1.0, 3.0, 0.01);
    double center = point.*field;
    scan(std::max(1.0, center - 0.01), center + 0.01, 0.0005);
    // The file stores three decimals.
    point.*field = std::round(point.*field * 1e3) / 1e3;
  };
  for (int round = 0; round < 4; ++round) {
    search(&ContentionPoint::gemmSlowdown, Column::Gemm);
    search(&ContentionPoint::commSlowdown, Column::Comm);
    if (!memory.empty())
      search(&ContentionPoint::memorySlowdown, Column::Memory);
  }
  if (memory.empty())
    point.memorySlowdown = point.commSlowdown;
  return point;
}

/// The copy-engine point: per column the factor with which the engine,
/// running each pair's two sides from their measured alone times (the
/// kernel as a compute-bound or bandwidth-bound task, which keeps every SM;
/// the copies as a copy-engine collective), best predicts the measured
/// overlapped times (mean absolute relative error; scanned from 1 to 3).
static ContentionPoint fitCopyEnginePoint(ArrayRef<CopyEnginePair> pairs) {
  ContentionPoint point = ContentionTable::defaults().copyEnginePoint();
  auto predict = [&](const ContentionPoint &q, const CopyEnginePair &p,
                     bool computeSide) {
    sim::Problem problem;
    ContentionTable t = ContentionTable::defaults();
    t.setCopyEnginePoint(q, "fit");
    problem.contention = t;
    sim::Task compute;
    compute.kind = p.gemmSide ? sim::TaskKind::Compute : sim::TaskKind::Memory;
    compute.aloneUs = p.computeAloneUs;
    sim::Task ce;
    ce.kind = sim::TaskKind::Collective;
    ce.copyEngine = true;
    ce.stream = 1;
    ce.aloneUs = p.ceAloneUs;
    ce.fabric = "ce";
    problem.tasks = {compute, ce};
    std::string error;
    std::optional<sim::Result> r = sim::simulate(problem, error);
    if (!r)
      return 0.0;
    return r->timings[computeSide ? 0 : 1].endUs;
  };
  enum class Column { Gemm, Memory, Comm };
  auto objective = [&](const ContentionPoint &q, Column column) {
    double sum = 0;
    size_t n = 0;
    for (const CopyEnginePair &p : pairs) {
      if (column == Column::Gemm && !p.gemmSide)
        continue;
      if (column == Column::Memory && p.gemmSide)
        continue;
      bool computeSide = column != Column::Comm;
      double measured = computeSide ? p.computeOverlappedUs : p.ceOverlappedUs;
      sum += std::fabs(relativeError(predict(q, p, computeSide), measured));
      ++n;
    }
    return n ? std::optional<double>(sum / double(n)) : std::nullopt;
  };
  auto search = [&](double ContentionPoint::*field, Column column) {
    if (!objective(point, column))
      return; // No pair measures this column: keep the built-in factor.
    double bestValue = point.*field, bestError = -1;
    for (int i = 0; i <= 400; ++i) {
      ContentionPoint q = point;
      q.*field = 1.0 + i * 0.005;
      double e = *objective(q, column);
      if (bestError < 0 || e < bestError - 1e-12) {
        bestError = e;
        bestValue = q.*field;
      }
    }
    point.*field = std::round(bestValue * 1e3) / 1e3;
  };
  for (int round = 0; round < 3; ++round) {
    search(&ContentionPoint::gemmSlowdown, Column::Gemm);
    search(&ContentionPoint::memorySlowdown, Column::Memory);
    search(&ContentionPoint::commSlowdown, Column::Comm);
  }
  return point;
}

std::optional<FitResult> fit::fitCalibration(const RawMeasurements &raw,
                                             llvm::StringRef origin,
                                             const GpuSpec &target, Type bf16,
                                             std::string &error) {
  FitResult result;
  GpuSpec spec = target;

  if (raw.launch) {
    // Rounded as the calibration file stores it.
    spec.launchOverheadUs =
        std::round(raw.launch->us / double(raw.launch->kernels) * 1e3) / 1e3;
    result.launchOverheadUs = spec.launchOverheadUs;
  }

  if (!raw.hbm.empty()) {
    // The model prices a bandwidth-bound op at bytes / (peak * efficiency)
    // plus the launch overhead; each copy gives the efficiency that makes
    // this exact, and the median is robust to one noisy size.
    const double peakBytesPerUs = spec.hbmBytesPerSecond / 1e6;
    std::vector<double> efficiencies;
    for (auto [i, s] : llvm::enumerate(raw.hbm)) {
      std::string where = (origin + ": hbm[" + llvm::Twine(i) + "]").str();
      double streamUs = s.us - spec.launchOverheadUs;
      if (!(streamUs > 0)) {
        llvm::raw_string_ostream os(error);
        os << where << ": " << llvm::format("%.3f", s.us)
           << " us is not longer than the launch overhead ("
           << llvm::format("%.3f", spec.launchOverheadUs)
           << " us): the copy is too small to measure bandwidth";
        return std::nullopt;
      }
      double efficiency = double(s.bytes) / streamUs / peakBytesPerUs;
      if (efficiency > 1.0) {
        llvm::raw_string_ostream os(error);
        os << where << ": " << llvm::format("%.1f", s.bytes / streamUs / 1e3)
           << " GB/s exceeds target '" << spec.name << "' peak of "
           << llvm::format("%.1f", peakBytesPerUs / 1e3)
           << " GB/s: the copy did not stream HBM (too small for the L2?)";
        return std::nullopt;
      }
      efficiencies.push_back(efficiency);
    }
    llvm::sort(efficiencies);
    size_t n = efficiencies.size();
    double median = n % 2 ? efficiencies[n / 2]
                          : (efficiencies[n / 2 - 1] + efficiencies[n / 2]) / 2;
    spec.hbmEfficiency = std::round(median * 1e4) / 1e4;
    result.hbmEfficiency = spec.hbmEfficiency;
  }

  for (MemoryKernel kernel :
       {MemoryKernel::norm, MemoryKernel::normGrad, MemoryKernel::layoutCopy}) {
    std::vector<const KernelSample *> samples;
    for (const KernelSample &s : raw.kernels)
      if (s.kernel == kernel)
        samples.push_back(&s);
    if (samples.empty())
      continue;
    std::optional<KernelFit> k =
        fitKernel(kernel, samples, spec, origin, error);
    if (!k)
      return std::nullopt;
    result.kernels.push_back(*k);
  }

  result.base = fitGemm(spec, raw.gemm, bf16, /*withOverhead=*/false);
  result.extended = fitGemm(spec, raw.gemm, bf16, /*withOverhead=*/true);
  // The per-wave overhead is an extension of the documented GEMM formula:
  // use it only where efficiency and tile alone miss the goal and it helps.
  result.useWaveOverhead =
      result.base.errors.maxAbs > kErrorGoal &&
      result.extended.errors.meanAbs < result.base.errors.meanAbs;
  const GemmFit &gemm = result.useWaveOverhead ? result.extended : result.base;
  spec.gemmTileM = gemm.tileM;
  spec.gemmTileN = gemm.tileN;
  spec.gemmEfficiency = gemm.efficiency;
  spec.gemmWaveOverheadUs = result.useWaveOverhead ? gemm.waveOverheadUs : 0;

  std::set<int64_t> ctas;
  for (const GemmPair &p : raw.pairs)
    ctas.insert(p.commCtas);
  for (auto [i, p] : llvm::enumerate(raw.memoryPairs)) {
    if (ctas.count(p.commCtas))
      continue;
    error = (origin + ": memory_pairs[" + llvm::Twine(i) + "]: comm_ctas " +
             llvm::Twine(p.commCtas) +
             " has no GEMM pair: a contention row needs both")
                .str();
    return std::nullopt;
  }
  for (int64_t c : ctas) {
    std::vector<const GemmPair *> pairs;
    std::vector<const MemoryPair *> memory;
    for (const GemmPair &p : raw.pairs)
      if (p.commCtas == c)
        pairs.push_back(&p);
    for (const MemoryPair &p : raw.memoryPairs)
      if (p.commCtas == c)
        memory.push_back(&p);
    result.contention.push_back(fitContentionRow(spec, bf16, c, pairs, memory));
    result.memoryAssumed.push_back(memory.empty());
  }
  if (!raw.copyEnginePairs.empty())
    result.copyEngine = fitCopyEnginePoint(raw.copyEnginePairs);
  return result;
}

void fit::writeCopyEngineContention(const ContentionPoint &p,
                                    llvm::raw_ostream &os) {
  os << "\n  \"copy_engine_contention\": {\"gemm_slowdown\": "
     << llvm::format("%.3f", p.gemmSlowdown)
     << ", \"memory_slowdown\": " << llvm::format("%.3f", p.memorySlowdown)
     << ", \"comm_slowdown\": " << llvm::format("%.3f", p.commSlowdown) << "},";
}

void fit::writeCalibrationJson(const FitResult &fit, const RawMeasurements &raw,
                               llvm::StringRef rawPath, llvm::raw_ostream &os) {
  const GemmFit &gemm = fit.useWaveOverhead ? fit.extended : fit.base;
  std::string source =
      ("tandem-fit from " + llvm::sys::path::filename(rawPath) + ": " +
       raw.deviceName + ", " + llvm::Twine(raw.gemm.size()) + " GEMMs, " +
       llvm::Twine(raw.pairs.size()) + " GEMM pairs, " +
       llvm::Twine(raw.memoryPairs.size()) + " memory pairs" +
       (raw.copyEnginePairs.empty()
            ? std::string()
            : ", " + std::to_string(raw.copyEnginePairs.size()) +
                  " copy-engine pairs") +
       (raw.kernels.empty() ? std::string()
                            : ", " + std::to_string(raw.kernels.size()) +
                                  " norm, norm_grad and strided copy kernels") +
       (raw.emulatedComm ? " (communication side: the emulated fabric's "
                           "collective kernel, tandem-calibrate --comm "
                           "emulated)"
                         : ""))
          .str();
  os << "{\n  \"version\": 1,\n  \"source\": " << llvm::json::Value(source)
     << ",\n  \"gpu\": {\n    \"device\": " << llvm::json::Value(raw.deviceName)
     << ",\n    \"sm_count\": " << raw.deviceSms
     << ",\n    \"gemm_efficiency\": " << llvm::format("%.4f", gemm.efficiency)
     << ",\n    \"gemm_tile_m\": " << gemm.tileM
     << ",\n    \"gemm_tile_n\": " << gemm.tileN;
  if (fit.useWaveOverhead)
    os << ",\n    \"gemm_wave_overhead_us\": "
       << llvm::format("%.2f", gemm.waveOverheadUs);
  if (fit.hbmEfficiency)
    os << ",\n    \"hbm_efficiency\": "
       << llvm::format("%.4f", *fit.hbmEfficiency);
  if (fit.launchOverheadUs)
    os << ",\n    \"launch_overhead_us\": "
       << llvm::format("%.3f", *fit.launchOverheadUs);
  if (raw.eventLatencyUs)
    os << ",\n    \"event_latency_us\": "
       << llvm::format("%.2f", *raw.eventLatencyUs);
  if (raw.copyEngineLatencyUs)
    os << ",\n    \"copy_engine_latency_us\": "
       << llvm::format("%.2f", *raw.copyEngineLatencyUs);
  for (const KernelFit &k : fit.kernels)
    os << ",\n    \"" << kernelKeyPrefix(k.kernel)
       << "_latency_us\": " << llvm::format("%.3f", k.latencyUs) << ",\n    \""
       << kernelKeyPrefix(k.kernel)
       << "_hbm_efficiency\": " << llvm::format("%.4f", k.hbmEfficiency);
  if (fit.gemmsHoldSms)
    os << ",\n    \"gemms_hold_sms\": "
       << (*fit.gemmsHoldSms ? "true" : "false");
  os << "\n  },";
  if (fit.copyEngine)
    writeCopyEngineContention(*fit.copyEngine, os);
  os << "\n  \"contention\": [";
  for (auto [i, p] : llvm::enumerate(fit.contention))
    os << (i ? ",\n" : "\n") << "    {\"comm_sms\": " << p.commSms
       << ", \"gemm_slowdown\": " << llvm::format("%.3f", p.gemmSlowdown)
       << ", \"memory_slowdown\": " << llvm::format("%.3f", p.memorySlowdown)
       << ", \"comm_slowdown\": " << llvm::format("%.3f", p.commSlowdown)
       << "}";
  os << "\n  ]\n}\n";
}
