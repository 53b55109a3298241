//===- Collectives.cpp - Fit the collective model to NCCL measurements ----===//

#include "Collectives.h"

#include "Fit.h"
#include "tandem/Analysis/JsonInput.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <set>
#include <tuple>

using namespace mlir;
using namespace mlir::tandem;
using namespace mlir::tandem::fit;
namespace json = llvm::json;

bool CollectiveMeasurements::isNcclBench(llvm::StringRef text) {
  std::string error;
  std::optional<json::Value> parsed =
      parseJsonInput(text, "", "measurement file", error);
  if (!parsed)
    return false;
  const json::Object *root = parsed->getAsObject();
  return root &&
         root->getString("format") == llvm::StringRef("tandem-nccl-bench");
}

std::optional<CollectiveMeasurements>
CollectiveMeasurements::parse(llvm::StringRef text, llvm::StringRef origin,
                              std::string &error) {
  auto failWith = [&](const llvm::Twine &message) {
    error = message.str();
    return std::nullopt;
  };
  std::optional<json::Value> parsed =
      parseJsonObjectInput(text, origin, "measurement file", error);
  if (!parsed)
    return std::nullopt;
  const json::Object *root = parsed->getAsObject();
  if (root->getString("format") != llvm::StringRef("tandem-nccl-bench"))
    return failWith(origin + ": \"format\" must be \"tandem-nccl-bench\"");
  if (root->getInteger("version") != int64_t(1))
    return failWith(origin + ": \"version\" must be 1");
  CollectiveMeasurements m;
  std::optional<int64_t> ranks = root->getInteger("ranks");
  if (!ranks || *ranks < 1)
    return failWith(origin + ": \"ranks\" must be an integer >= 1");
  m.ranks = *ranks;
  if (std::optional<llvm::StringRef> v = root->getString("nccl_version"))
    m.ncclVersion = v->str();
  else
    return failWith(origin + ": \"nccl_version\" must be a string");
  const json::Array *devices = root->getArray("devices");
  if (!devices || devices->empty())
    return failWith(origin + ": \"devices\" must be a non-empty array");
  const json::Object *first = (*devices)[0].getAsObject();
  std::optional<llvm::StringRef> name =
      first ? first->getString("name") : std::nullopt;
  if (!name)
    return failWith(origin + ": devices[0]: \"name\" must be a string");
  m.deviceName = name->str();
  const json::Array *results = root->getArray("results");
  if (!results || results->empty())
    return failWith(origin + ": \"results\" must be a non-empty array");
  for (auto [i, value] : llvm::enumerate(*results)) {
    std::string where = (origin + ": results[" + llvm::Twine(i) + "]").str();
    const json::Object *row = value.getAsObject();
    if (!row)
      return failWith(where + " must be an object");
    CollectiveSample s;
    std::optional<llvm::StringRef> kind = row->getString("collective");
    if (kind == llvm::StringRef("all_gather"))
      s.kind = CollectiveKind::all_gather;
    else if (kind == llvm::StringRef("reduce_scatter"))
      s.kind = CollectiveKind::reduce_scatter;
    else if (kind == llvm::StringRef("all_reduce"))
      s.kind = CollectiveKind::all_reduce;
    else
      return failWith(where + ": \"collective\" must be \"all_gather\", "
                              "\"reduce_scatter\" or \"all_reduce\"");
    std::optional<int64_t> bytes = row->getInteger("bytes");
    if (!bytes || *bytes < 1)
      return failWith(where + ": \"bytes\" must be an integer >= 1");
    s.bytes = *bytes;
    std::optional<int64_t> ctas = row->getInteger("ctas");
    if (!ctas || *ctas < 0)
      return failWith(where + ": \"ctas\" must be an integer >= 0");
    s.ctas = *ctas;
    std::optional<double> us = row->getNumber("time_us");
    if (!us || !std::isfinite(*us) || !(*us > 0))
      return failWith(where + ": \"time_us\" must be a positive number");
    s.us = *us;
    if (std::optional<double> bw = row->getNumber("busbw_gbps"))
      s.busbwGbps = *bw;
    if (std::optional<llvm::StringRef> a = row->getString("algorithm"))
      s.algorithm = a->str();
    m.samples.push_back(s);
  }
  return m;
}

std::optional<GroupSpec> fit::parseGroupSpec(llvm::StringRef text,
                                             std::string &error) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ' ', -1, /*KeepEmpty=*/false);
  auto bad = [&](const llvm::Twine &why) {
    error = ("--group '" + text + "': " + why +
             " (expected \"<size> <topology> <links> <GBps> <latency us>\", "
             "e.g. \"8 switch 18 25.0 2.0\")")
                .str();
    return std::nullopt;
  };
  if (parts.size() != 5)
    return bad("needs 5 fields, got " + llvm::Twine(parts.size()));
  GroupSpec g;
  g.name = "measured";
  if (parts[0].getAsInteger(10, g.size) || g.size < 1)
    return bad("the size must be an integer >= 1");
  std::optional<Topology> topology = symbolizeTopology(parts[1]);
  if (!topology)
    return bad("unknown topology '" + parts[1] +
               "' (switch, full_mesh or ring)");
  if (*topology == Topology::hierarchical)
    return bad("a hierarchical group spans nodes; tandem-nccl-bench measures "
               "one node (use its switch, full_mesh or ring topology)");
  g.topology = *topology;
  if (parts[2].getAsInteger(10, g.linksPerGpu) || g.linksPerGpu < 1)
    return bad("the link count must be an integer >= 1");
  double gbps = 0, latency = 0;
  if (parts[3].getAsDouble(gbps) || !std::isfinite(gbps) || !(gbps > 0))
    return bad("the link bandwidth must be a number of GB/s > 0");
  if (parts[4].getAsDouble(latency) || !std::isfinite(latency) || latency < 0)
    return bad("the link latency must be a number of us >= 0");
  g.linkBytesPerUs = gbps * 1e3;
  g.linkLatencyUs = latency;
  return g;
}

namespace {

/// Mean |relative error| of `model` over the samples.
double meanAbsError(const CollectiveMeasurements &m, const GroupSpec &group,
                    const CostModel &model) {
  double sum = 0;
  for (const CollectiveSample &s : m.samples)
    sum += std::fabs(
        model.collective(s.kind, s.bytes, group, s.ctas).timeUs / s.us - 1.0);
  return sum / double(m.samples.size());
}

/// One fitted dimension: its range and the grid step at the coarsest level.
struct Axis {
  double lo, hi, step;
  bool fitted;
  double value; ///< The fixed value when not fitted; the best when fitted.
};

} // namespace

std::optional<CommFit> fit::fitCollectives(const CollectiveMeasurements &m,
                                           const GroupSpec &group,
                                           const CostModel &model,
                                           std::string &error) {
  if (group.size <= 1) {
    error = "the group has one rank: the cost model prices a collective of "
            "one rank as a local copy, which has no communication parameter "
            "to fit (measure with tandem-nccl-bench --gpus N, N >= 2)";
    return std::nullopt;
  }
  // Links per CTA only matters when some budget limits the links, so it is
  // fitted only from a CTA sweep (two or more budgets, one of them set).
  std::set<int64_t> budgets;
  for (const CollectiveSample &s : m.samples)
    budgets.insert(s.ctas);
  bool sweep = budgets.size() >= 2 && *budgets.rbegin() > 0;

  const CommParams start = model.comm();
  // Coarse grid, then four refinements around the best point, each ten
  // times finer over +-2 of the previous steps.
  Axis eff{0.01, 1.0, 0.01, true, start.busEfficiency};
  Axis alpha{0.0, 50.0, 1.0, true,
             start.linkLatencyUs.value_or(group.linkLatencyUs)};
  Axis lpc{0.25, 8.0, 0.25, sweep, start.linksPerCta};
  double best = meanAbsError(m, group, model);
  CommParams bestParams = start;
  bestParams.linkLatencyUs = alpha.value;
  auto values = [](const Axis &a) {
    std::vector<double> v;
    if (!a.fitted)
      return std::vector<double>{a.value};
    for (double x = a.lo; x <= a.hi + a.step * 1e-6; x += a.step)
      v.push_back(x);
    return v;
  };
  bool first = true;
  for (int level = 0; level < 5; ++level) {
    double levelBest = first ? INFINITY : best;
    CommParams levelParams = bestParams;
    for (double e : values(eff))
      for (double l : values(lpc))
        for (double a : values(alpha)) {
          CommParams p;
          p.busEfficiency = e;
          p.linksPerCta = l;
          p.linkLatencyUs = a;
          CostModel candidate(model.gpu(), model.contention(), p);
          double err = meanAbsError(m, group, candidate);
          if (err < levelBest - 1e-12) {
            levelBest = err;
            levelParams = p;
          }
        }
    first = false;
    best = levelBest;
    bestParams = levelParams;
    auto refine = [](Axis &a, double center) {
      if (!a.fitted)
        return;
      double lo = std::max(a.lo, center - 2 * a.step);
      double hi = center + 2 * a.step;
      a.step /= 10;
      a.lo = lo;
      a.hi = hi;
    };
    refine(eff, bestParams.busEfficiency);
    refine(alpha, *bestParams.linkLatencyUs);
    refine(lpc, bestParams.linksPerCta);
    eff.hi = std::min(eff.hi, 1.0);
  }
  CommFit fit;
  fit.busEfficiency = bestParams.busEfficiency;
  fit.linkLatencyUs = *bestParams.linkLatencyUs;
  fit.linksPerCta = bestParams.linksPerCta;
  fit.linksPerCtaFitted = sweep;
  fit.meanAbsError = best;
  return fit;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

static const char *kindName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::all_gather:
    return "all_gather";
  case CollectiveKind::reduce_scatter:
    return "reduce_scatter";
  case CollectiveKind::all_reduce:
    return "all_reduce";
  default:
    return "other";
  }
}

void fit::writeCommCalibrationJson(const std::optional<Calibration> &base,
                                   llvm::StringRef basePath, const CommFit &fit,
                                   const CollectiveMeasurements &m,
                                   llvm::StringRef measurementsPath,
                                   llvm::raw_ostream &os) {
  std::string source =
      ("tandem-fit --group from " +
       llvm::sys::path::filename(measurementsPath) + ": " + m.deviceName +
       " x " + llvm::Twine(m.ranks) + ", NCCL " + m.ncclVersion + ", " +
       llvm::Twine(m.samples.size()) + " collectives; " +
       (base
            ? ("gpu and contention from " + llvm::sys::path::filename(basePath))
                  .str()
            : std::string("contention: the built-in table")))
          .str();
  os << "{\n  \"version\": 1,\n  \"source\": " << json::Value(source);
  if (base) {
    const GpuCalibration &g = base->gpu;
    std::vector<std::string> fields;
    auto add = [&](llvm::StringRef key, const std::string &value) {
      fields.push_back(("\"" + key + "\": " + value).str());
    };
    auto number = [](double v, const char *format) {
      return llvm::formatv(format, v).str();
    };
    if (!g.device.empty()) {
      std::string text;
      llvm::raw_string_ostream(text) << json::Value(g.device);
      add("device", text);
    }
    if (g.smCount)
      add("sm_count", std::to_string(*g.smCount));
    if (g.gemmEfficiency)
      add("gemm_efficiency", number(*g.gemmEfficiency, "{0:F4}"));
    if (g.gemmTileM)
      add("gemm_tile_m", std::to_string(*g.gemmTileM));
    if (g.gemmTileN)
      add("gemm_tile_n", std::to_string(*g.gemmTileN));
    if (g.gemmWaveOverheadUs)
      add("gemm_wave_overhead_us", number(*g.gemmWaveOverheadUs, "{0:F2}"));
    if (g.hbmEfficiency)
      add("hbm_efficiency", number(*g.hbmEfficiency, "{0:F4}"));
    if (g.launchOverheadUs)
      add("launch_overhead_us", number(*g.launchOverheadUs, "{0:F3}"));
    if (g.gemmsHoldSms)
      add("gemms_hold_sms", *g.gemmsHoldSms ? "true" : "false");
    if (g.attentionEfficiency)
      add("attention_efficiency", number(*g.attentionEfficiency, "{0:F4}"));
    if (g.attentionGradEfficiency)
      add("attention_grad_efficiency",
          number(*g.attentionGradEfficiency, "{0:F4}"));
    if (g.attentionLatencyUs)
      add("attention_latency_us", number(*g.attentionLatencyUs, "{0:F2}"));
    if (g.attentionGradLatencyUs)
      add("attention_grad_latency_us",
          number(*g.attentionGradLatencyUs, "{0:F2}"));
    if (g.eventLatencyUs)
      add("event_latency_us", number(*g.eventLatencyUs, "{0:F2}"));
    if (g.copyEngineLatencyUs)
      add("copy_engine_latency_us", number(*g.copyEngineLatencyUs, "{0:F2}"));
    // The measured kernels' latency and rate (tandem-fit from raw.json).
    for (auto [key, value, format] :
         {std::tuple{"norm_latency_us", g.normLatencyUs, "{0:F3}"},
          std::tuple{"norm_hbm_efficiency", g.normHbmEfficiency, "{0:F4}"},
          std::tuple{"norm_grad_latency_us", g.normGradLatencyUs, "{0:F3}"},
          std::tuple{"norm_grad_hbm_efficiency", g.normGradHbmEfficiency,
                     "{0:F4}"},
          std::tuple{"layout_copy_latency_us", g.layoutCopyLatencyUs, "{0:F3}"},
          std::tuple{"layout_copy_hbm_efficiency", g.layoutCopyHbmEfficiency,
                     "{0:F4}"}})
      if (value)
        add(key, number(*value, format));
    if (!fields.empty()) {
      os << ",\n  \"gpu\": {";
      for (auto [i, f] : llvm::enumerate(fields))
        os << (i ? ",\n    " : "\n    ") << f;
      os << "\n  }";
    }
  }
  os << ",\n  \"comm\": {\n    \"bus_efficiency\": "
     << llvm::format("%.4f", fit.busEfficiency)
     << ",\n    \"link_latency_us\": "
     << llvm::format("%.3f", fit.linkLatencyUs);
  if (fit.linksPerCtaFitted)
    os << ",\n    \"links_per_cta\": " << llvm::format("%.3f", fit.linksPerCta);
  // Not measured by NCCL runs: the base file's, where it has one.
  if (base && base->comm.copyEngineEfficiency)
    os << ",\n    \"copy_engine_efficiency\": "
       << llvm::format("%.4f", *base->comm.copyEngineEfficiency);
  os << "\n  },";
  if (base && base->copyEngineContention)
    writeCopyEngineContention(*base->copyEngineContention, os);
  os << "\n  \"contention\": [";
  ContentionTable table = base ? base->contention : ContentionTable::defaults();
  const std::vector<ContentionPoint> &points = table.points();
  for (auto [i, p] : llvm::enumerate(points))
    os << (i ? ",\n" : "\n") << "    {\"comm_sms\": " << p.commSms
       << ", \"gemm_slowdown\": " << llvm::format("%.4f", p.gemmSlowdown)
       << ", \"memory_slowdown\": " << llvm::format("%.4f", p.memorySlowdown)
       << ", \"comm_slowdown\": " << llvm::format("%.4f", p.commSlowdown)
       << "}";
  os << "\n  ]\n}\n";
}

std::vector<CollectiveErrorRow>
fit::collectiveErrorRows(const CollectiveMeasurements &m,
                         const GroupSpec &group, const CostModel &before,
                         const CostModel &after) {
  std::vector<CollectiveErrorRow> rows;
  for (CollectiveKind kind :
       {CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
        CollectiveKind::all_reduce}) {
    CollectiveErrorRow row{kindName(kind), {}, {}};
    for (const CollectiveSample &s : m.samples) {
      if (s.kind != kind)
        continue;
      row.before.push_back(
          before.collective(s.kind, s.bytes, group, s.ctas).timeUs / s.us - 1);
      row.after.push_back(
          after.collective(s.kind, s.bytes, group, s.ctas).timeUs / s.us - 1);
    }
    if (!row.before.empty())
      rows.push_back(row);
  }
  CollectiveErrorRow all{"all", {}, {}};
  for (const CollectiveErrorRow &r : rows) {
    llvm::append_range(all.before, r.before);
    llvm::append_range(all.after, r.after);
  }
  rows.push_back(all);
  return rows;
}

static std::string absPct(double e) {
  return llvm::formatv("{0:F1}%", e * 100).str();
}
static std::string pct(double e) {
  double percent = std::fabs(e) < 0.0005 ? 0.0 : e * 100;
  return llvm::formatv("{0}{1:F1}%", percent < 0 ? "" : "+", percent).str();
}

void fit::writeCollectiveReport(const CollectiveMeasurements &m,
                                llvm::StringRef measurementsPath,
                                const GroupSpec &group, const CostModel &before,
                                const CostModel &after, const CommFit &fit,
                                llvm::raw_ostream &os) {
  const CommParams &b = before.comm(), &a = after.comm();
  os << "# Collective model calibration: " << m.deviceName << " x " << m.ranks
     << "\n\n"
     << "Measurements: `" << llvm::sys::path::filename(measurementsPath)
     << "` (tandem-nccl-bench, NCCL " << m.ncclVersion
     << "): " << m.samples.size() << " collectives. Group: size " << group.size
     << ", " << stringifyTopology(group.topology) << ", " << group.linksPerGpu
     << " x " << llvm::formatv("{0:F1}", group.linkBytesPerUs / 1e3)
     << " GB/s, launch overhead "
     << llvm::formatv("{0:F3}", before.gpu().launchOverheadUs)
     << " us (target `" << before.gpu().name << "`).\n"
     << "Error = predicted / measured - 1. Before: the model's communication "
        "parameters; after: the calibration file written, loaded back.\n\n";
  os << "## Summary\n\n| set | n | before: median abs | before: max abs | "
        "after: median abs | after: max abs |\n|---|---|---|---|---|---|\n";
  for (const CollectiveErrorRow &r :
       collectiveErrorRows(m, group, before, after)) {
    ErrorSummary eb = ErrorSummary::of(r.before),
                 ea = ErrorSummary::of(r.after);
    os << "| " << r.name << " | " << eb.count << " | " << absPct(eb.medianAbs)
       << " | " << absPct(eb.maxAbs) << " | " << absPct(ea.medianAbs) << " | "
       << absPct(ea.maxAbs) << " |\n";
  }
  os << "\n## Parameters\n\n| parameter | before | after | source of the "
        "after value |\n|---|---|---|---|\n"
     << "| bus_efficiency | " << llvm::formatv("{0:F4}", b.busEfficiency)
     << " | " << llvm::formatv("{0:F4}", a.busEfficiency)
     << " | fitted: grid search minimising the mean abs error |\n"
     << "| link_latency_us | "
     << llvm::formatv("{0:F3}", b.linkLatencyUs.value_or(group.linkLatencyUs))
     << " | "
     << llvm::formatv("{0:F3}", a.linkLatencyUs.value_or(group.linkLatencyUs))
     << " | fitted: the same search |\n"
     << "| links_per_cta | " << llvm::formatv("{0:F3}", b.linksPerCta) << " | "
     << llvm::formatv("{0:F3}", a.linksPerCta) << " | "
     << (fit.linksPerCtaFitted
             ? "fitted: the measurements sweep CTA budgets"
             : "not fitted: one CTA budget measured (tandem-nccl-bench "
               "--ctas 0,8,16,... sweeps them)")
     << " |\n\n";
  os << "## Measurements\n\n| collective | bytes | CTAs | measured us | busbw "
        "GB/s | before us | before algorithm | before err | after us | after "
        "algorithm | after err |\n|---|---|---|---|---|---|---|---|---|---|---|"
        "\n";
  for (const CollectiveSample &s : m.samples) {
    CollectiveEstimate eb = before.collective(s.kind, s.bytes, group, s.ctas),
                       ea = after.collective(s.kind, s.bytes, group, s.ctas);
    os << "| " << kindName(s.kind) << " | " << s.bytes << " | "
       << (s.ctas ? std::to_string(s.ctas) : std::string("NCCL")) << " | "
       << llvm::formatv("{0:F1}", s.us) << " | "
       << llvm::formatv("{0:F1}", s.busbwGbps) << " | "
       << llvm::formatv("{0:F1}", eb.timeUs) << " | "
       << stringifyAlgorithm(eb.algorithm) << " | " << pct(eb.timeUs / s.us - 1)
       << " | " << llvm::formatv("{0:F1}", ea.timeUs) << " | "
       << stringifyAlgorithm(ea.algorithm) << " | " << pct(ea.timeUs / s.us - 1)
       << " |\n";
  }
  os << "\n";
}
