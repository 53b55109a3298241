//===- tandem-fit.cpp - Calibrate the cost model from measurements --------===//
//
// Reads the raw measurements of runtime/tools/tandem-calibrate, predicts
// each with the cost model before calibration (a built-in target preset and
// the built-in contention table) and after (the parameters fitted here),
// writes the calibration file that the cost model loads and a Markdown
// report of both predictions against the measurements. The "after" model is
// the one the written file gives: the file is parsed back and applied, so
// the report describes exactly what tandem-simulate will use.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "Fit.h"
#include "RawMeasurements.h"

#include "tandem/Analysis/CostModel.h"
#include "tandem/Dialect/Tandem/TandemDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::tandem;
using namespace mlir::tandem::fit;
namespace cl = llvm::cl;

/// The `--target` preset, or null with `error` listing the known ones.
static TargetAttr lookupTarget(MLIRContext &context, llvm::StringRef name,
                               std::string &error) {
  TargetAttr target = TargetAttr::getPreset(&context, name);
  if (!target) {
    llvm::raw_string_ostream os(error);
    os << "unknown --target '" << name << "'; known presets: ";
    llvm::interleaveComma(TargetAttr::getPresetNames(), os);
  }
  return target;
}

/// Writes `path` through `write`; false (with `error`) if it cannot be
/// opened.
static bool writeFile(llvm::StringRef path, std::string &error,
                      llvm::function_ref<void(llvm::raw_ostream &)> write) {
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(path, &error);
  if (!out)
    return false;
  write(out->os());
  out->keep();
  return true;
}

static cl::OptionCategory fitCategory("tandem-fit options");

static cl::opt<std::string> inputFilename(cl::Positional, cl::Required,
                                          cl::desc("<raw.json | nccl.json>"),
                                          cl::cat(fitCategory));
static cl::opt<std::string>
    outputFilename("out", cl::desc("Write the calibration file here"),
                   cl::value_desc("calibration.json"), cl::cat(fitCategory));
static cl::opt<std::string>
    reportFilename("report",
                   cl::desc("Write the Markdown report here ('-' = stdout)"),
                   cl::value_desc("report.md"), cl::cat(fitCategory));
static cl::opt<std::string>
    targetName("target",
               cl::desc("Target preset the measurements calibrate (default "
                        "h200)"),
               cl::init("h200"), cl::cat(fitCategory));

static cl::opt<std::string> groupSpec(
    "group",
    cl::desc("With tandem-nccl-bench measurements: the measured process "
             "group, \"<size> <topology> <links> <GBps> <latency us>\" "
             "(the fields of a tandem.group op, e.g. \"8 switch 18 25.0 "
             "2.0\")"),
    cl::value_desc("group"), cl::cat(fitCategory));
static cl::opt<std::string> baseCalibration(
    "calibration",
    cl::desc("With tandem-nccl-bench measurements: a calibration file whose "
             "\"gpu\" and contention sections the written file keeps and the "
             "model before calibration uses"),
    cl::value_desc("calibration.json"), cl::cat(fitCategory));

static cl::opt<std::string> residencyMode(
    "residency",
    cl::desc("The SM-residency rule the pairs are fitted with: 'target' "
             "(the target preset's; the file leaves it to the target), 'on' "
             "or 'off' (written as gemms_hold_sms). Either way the report "
             "compares the pairs' errors under both rules"),
    cl::value_desc("target|on|off"), cl::init("target"), cl::cat(fitCategory));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tandem-fit: error: " << message << "\n";
  return 1;
}

namespace {

std::string us(double v) { return llvm::formatv("{0:F1}", v).str(); }
std::string pct(double e) {
  std::string s;
  // No "-0.0%": an error that rounds to zero prints as +0.0%.
  double percent = std::fabs(e) < 0.0005 ? 0.0 : e * 100;
  llvm::raw_string_ostream(s) << llvm::format("%+.1f%%", percent);
  return s;
}
std::string absPct(double e) { return llvm::formatv("{0:F1}%", e * 100); }

/// Everything the report shows, computed once.
struct Evaluation {
  std::vector<double> gemmBefore, gemmAfter;
  std::vector<PairPrediction> pairBefore, pairAfter;
  std::vector<PairPrediction> memoryBefore, memoryAfter;
  std::vector<double> hbmBefore, hbmAfter;
  std::vector<double> kernelBefore, kernelAfter;
};

/// The GEMM pairs predicted under the SM-residency rule the written file
/// does not use, with the contention table fitted under that rule: the
/// report's check of which rule the pairs support.
struct ResidencyCheck {
  bool used = true;       ///< gemms_hold_sms of the written file.
  bool fromTarget = true; ///< The target's rule, not --residency.
  std::vector<PairPrediction> other;
};

/// How the report names a measured kernel.
StringRef kernelName(MemoryKernel kernel) {
  switch (kernel) {
  case MemoryKernel::generic:
    return "bandwidth-bound";
  case MemoryKernel::norm:
    return "norm";
  case MemoryKernel::normGrad:
    return "norm_grad";
  case MemoryKernel::layoutCopy:
    return "layout copy";
  }
  llvm_unreachable("unknown kernel");
}

/// Errors of one quantity over a set, before and after.
struct Row {
  std::string name;
  std::vector<double> before, after;
};

class Report {
public:
  Report(const RawMeasurements &raw, StringRef rawPath, const FitResult &fit,
         const CostModel &before, const CostModel &after,
         const Evaluation &eval, const ResidencyCheck &residency)
      : raw(raw), rawPath(rawPath), fit(fit), before(before), after(after),
        eval(eval), residency(residency) {}

  /// The summary rows, for the report and for stdout.
  std::vector<Row> summaryRows() const;
  void write(llvm::raw_ostream &os) const;
  /// One line comparing the pairs' span errors under both SM-residency
  /// rules (empty without GEMM pairs).
  std::string residencySummary() const;

private:
  void writeParameters(llvm::raw_ostream &os) const;
  void writeGemmStructure(llvm::raw_ostream &os) const;
  void writeContention(llvm::raw_ostream &os) const;
  void writeResidency(llvm::raw_ostream &os) const;
  void writeSingles(llvm::raw_ostream &os) const;
  void writeBandwidth(llvm::raw_ostream &os) const;
  void writeKernels(llvm::raw_ostream &os) const;
  void writePairs(llvm::raw_ostream &os) const;
  void writeChoices(llvm::raw_ostream &os) const;
  void writeMemoryPairs(llvm::raw_ostream &os) const;

  const RawMeasurements &raw;
  StringRef rawPath;
  const FitResult &fit;
  const CostModel &before, &after;
  const Evaluation &eval;
  const ResidencyCheck &residency;
};

/// |errors| of the pairs' three durations under one set of predictions.
struct PairErrors {
  ErrorSummary gemm, copy, span;
};
PairErrors pairErrors(const RawMeasurements &raw,
                      const std::vector<PairPrediction> &predicted) {
  std::vector<double> g, c, s;
  for (auto [i, p] : llvm::enumerate(raw.pairs)) {
    g.push_back(
        relativeError(predicted[i].primaryOverlappedUs, p.gemmOverlappedUs));
    c.push_back(
        relativeError(predicted[i].copyOverlappedUs, p.copyOverlappedUs));
    s.push_back(relativeError(predicted[i].spanUs, p.spanUs));
  }
  return {ErrorSummary::of(g), ErrorSummary::of(c), ErrorSummary::of(s)};
}

StringRef onOff(bool on) { return on ? "on" : "off"; }

} // namespace

std::vector<Row> Report::summaryRows() const {
  std::vector<Row> rows;
  Row gemm{"single GEMMs", {}, {}};
  for (auto [i, s] : llvm::enumerate(raw.gemm)) {
    gemm.before.push_back(relativeError(eval.gemmBefore[i], s.us));
    gemm.after.push_back(relativeError(eval.gemmAfter[i], s.us));
  }
  rows.push_back(gemm);
  Row g{"pairs: GEMMs overlapped", {}, {}},
      c{"pairs: stand-in overlapped", {}, {}}, s{"pairs: span", {}, {}};
  for (auto [i, p] : llvm::enumerate(raw.pairs)) {
    g.before.push_back(relativeError(eval.pairBefore[i].primaryOverlappedUs,
                                     p.gemmOverlappedUs));
    g.after.push_back(relativeError(eval.pairAfter[i].primaryOverlappedUs,
                                    p.gemmOverlappedUs));
    c.before.push_back(
        relativeError(eval.pairBefore[i].copyOverlappedUs, p.copyOverlappedUs));
    c.after.push_back(
        relativeError(eval.pairAfter[i].copyOverlappedUs, p.copyOverlappedUs));
    s.before.push_back(relativeError(eval.pairBefore[i].spanUs, p.spanUs));
    s.after.push_back(relativeError(eval.pairAfter[i].spanUs, p.spanUs));
  }
  rows.push_back(g);
  rows.push_back(c);
  rows.push_back(s);
  if (!raw.memoryPairs.empty()) {
    Row mg{"memory pairs: element-wise overlapped", {}, {}},
        mc{"memory pairs: stand-in overlapped", {}, {}},
        ms{"memory pairs: span", {}, {}};
    for (auto [i, p] : llvm::enumerate(raw.memoryPairs)) {
      mg.before.push_back(relativeError(
          eval.memoryBefore[i].primaryOverlappedUs, p.memOverlappedUs));
      mg.after.push_back(relativeError(eval.memoryAfter[i].primaryOverlappedUs,
                                       p.memOverlappedUs));
      mc.before.push_back(relativeError(eval.memoryBefore[i].copyOverlappedUs,
                                        p.copyOverlappedUs));
      mc.after.push_back(relativeError(eval.memoryAfter[i].copyOverlappedUs,
                                       p.copyOverlappedUs));
      ms.before.push_back(relativeError(eval.memoryBefore[i].spanUs, p.spanUs));
      ms.after.push_back(relativeError(eval.memoryAfter[i].spanUs, p.spanUs));
    }
    rows.push_back(mg);
    rows.push_back(mc);
    rows.push_back(ms);
  }
  if (!raw.hbm.empty()) {
    Row h{"bandwidth-bound kernel alone", {}, {}};
    for (auto [i, s] : llvm::enumerate(raw.hbm)) {
      h.before.push_back(relativeError(eval.hbmBefore[i], s.us));
      h.after.push_back(relativeError(eval.hbmAfter[i], s.us));
    }
    rows.push_back(h);
  }
  for (MemoryKernel kernel :
       {MemoryKernel::norm, MemoryKernel::normGrad, MemoryKernel::layoutCopy}) {
    Row k{(kernelName(kernel) + " kernels alone").str(), {}, {}};
    for (auto [i, s] : llvm::enumerate(raw.kernels)) {
      if (s.kernel != kernel)
        continue;
      k.before.push_back(relativeError(eval.kernelBefore[i], s.us));
      k.after.push_back(relativeError(eval.kernelAfter[i], s.us));
    }
    if (!k.after.empty())
      rows.push_back(k);
  }
  return rows;
}

void Report::write(llvm::raw_ostream &os) const {
  os << "# Cost-model calibration: " << raw.deviceName << "\n\n"
     << "Measurements: `" << llvm::sys::path::filename(rawPath) << "` ("
     << raw.deviceSms << " SMs): " << raw.gemm.size() << " single GEMMs, "
     << raw.pairs.size() << " GEMM + stand-in pairs, " << raw.memoryPairs.size()
     << " element-wise + stand-in pairs.\n"
     << "Before: target preset `" << before.gpu().name
     << "` and the built-in contention table. After: the calibration file "
        "tandem-fit wrote, loaded back.\n"
     << "Error = predicted / measured - 1. The stand-in kernel's alone time "
        "is an input of the pair predictions (the cost model prices real "
        "collectives from their links), so only its slowdown is predicted.\n\n";

  os << "## Summary\n\n"
     << "| set | n | before: median abs | before: max abs | after: median abs "
        "| after: max abs |\n|---|---|---|---|---|---|\n";
  std::vector<Row> rows = summaryRows();
  double pairMax = 0;
  for (const Row &r : rows) {
    ErrorSummary b = ErrorSummary::of(r.before), a = ErrorSummary::of(r.after);
    os << "| " << r.name << " | " << a.count << " | " << absPct(b.medianAbs)
       << " | " << absPct(b.maxAbs) << " | " << absPct(a.medianAbs) << " | "
       << absPct(a.maxAbs) << " |\n";
    if (StringRef(r.name).contains("pairs"))
      pairMax = std::max(pairMax, a.maxAbs);
  }
  double gemmMax = ErrorSummary::of(rows.front().after).maxAbs;
  auto verdict = [](double e) { return e <= kErrorGoal ? "met" : "NOT met"; };
  os << "\nGoal, every |error| within " << absPct(kErrorGoal)
     << " after calibration: single GEMMs " << verdict(gemmMax) << " (max "
     << absPct(gemmMax) << "); overlapped pairs " << verdict(pairMax)
     << " (max " << absPct(pairMax)
     << " over the overlapped durations and spans).\n\n";

  writeParameters(os);
  writeGemmStructure(os);
  writeContention(os);
  writeResidency(os);
  writeChoices(os);
  writeSingles(os);
  writeBandwidth(os);
  writeKernels(os);
  writePairs(os);
  writeMemoryPairs(os);
}

void Report::writeParameters(llvm::raw_ostream &os) const {
  const GpuSpec &b = before.gpu(), &a = after.gpu();
  os << "## Parameters\n\n| parameter | before | after | source of the "
        "after value |\n|---|---|---|---|\n";
  os << "| gemm_efficiency | " << llvm::formatv("{0:F4}", b.gemmEfficiency)
     << " | " << llvm::formatv("{0:F4}", a.gemmEfficiency)
     << " | fitted: weighted median minimising the mean abs error of the "
        "single GEMMs |\n";
  os << "| gemm_tile_m x gemm_tile_n | " << b.gemmTileM << "x" << b.gemmTileN
     << " | " << a.gemmTileM << "x" << a.gemmTileN
     << " | fitted: best of {64,128,256}^2 for the single GEMMs' wave "
        "quantisation (the target's tile wins ties) |\n";
  os << "| gemm_wave_overhead_us | "
     << llvm::formatv("{0:F2}", b.gemmWaveOverheadUs) << " | "
     << llvm::formatv("{0:F2}", a.gemmWaveOverheadUs) << " | "
     << (fit.useWaveOverhead
             ? "fitted (grid 0-20 us, step 0.05): used because efficiency "
               "and tile alone miss the goal"
             : "not used: efficiency and tile alone meet the goal or it "
               "does not help")
     << " |\n";
  os << "| hbm_efficiency | " << llvm::formatv("{0:F4}", b.hbmEfficiency)
     << " | " << llvm::formatv("{0:F4}", a.hbmEfficiency) << " | "
     << (fit.hbmEfficiency ? "measured: median over `hbm` of bytes / ((us - "
                             "launch_overhead_us) * hbm_gbps)"
                           : "not measured (no `hbm` section): the target's")
     << " |\n";
  os << "| launch_overhead_us | " << llvm::formatv("{0:F3}", b.launchOverheadUs)
     << " | " << llvm::formatv("{0:F3}", a.launchOverheadUs) << " | "
     << (fit.launchOverheadUs
             ? "measured: `launch` us / kernels (empty kernels queued back "
               "to back)"
             : "not measured (no `launch` section): the target's")
     << " |\n";
  for (const KernelFit &k : fit.kernels) {
    StringRef prefix = kernelKeyPrefix(k.kernel);
    const KernelBandwidth &kb = k.kernel == MemoryKernel::norm ? b.norm
                                : k.kernel == MemoryKernel::normGrad
                                    ? b.normGrad
                                    : b.layoutCopy;
    os << "| " << prefix << "_latency_us, " << prefix << "_hbm_efficiency | "
       << llvm::formatv("{0:F3}", kb.latencyUs) << ", "
       << llvm::formatv("{0:F4}", kb.hbmEfficiency.value_or(b.hbmEfficiency))
       << " | " << llvm::formatv("{0:F3}", k.latencyUs) << ", "
       << llvm::formatv("{0:F4}", k.hbmEfficiency)
       << " | fitted: the line us - launch_overhead_us = latency + bytes / "
          "(hbm_gbps * efficiency) minimising the squared relative errors of "
          "the "
       << k.samples << " " << kernelName(k.kernel) << " kernels |\n";
  }
  os << "| contention table | built-in (" << before.contention().points().size()
     << " rows) | " << after.contention().points().size()
     << " rows | fitted per stand-in CTA count, see below |\n\n";
}

void Report::writeGemmStructure(llvm::raw_ostream &os) const {
  auto line = [&](StringRef name, const GemmFit &g) {
    os << "| " << name << " | " << g.tileM << "x" << g.tileN << " | "
       << llvm::formatv("{0:F4}", g.efficiency) << " | "
       << llvm::formatv("{0:F2}", g.waveOverheadUs) << " | "
       << absPct(g.errors.medianAbs) << " | " << absPct(g.errors.maxAbs)
       << " | " << absPct(g.errors.meanAbs) << " |\n";
  };
  os << "## GEMM model structure\n\n"
     << "The documented formula has one efficiency and one tile. The fit "
        "also tries one extension, a fixed time per wave "
        "(`gemm_wave_overhead_us`: tile prologue and epilogue, which do not "
        "shrink with K), and uses it only if the documented formula misses "
        "the goal and the extension lowers the mean error.\n\n"
     << "| fit | tile | efficiency | wave overhead us | median abs | max abs "
        "| mean abs |\n|---|---|---|---|---|---|---|\n";
  line("efficiency + tile", fit.base);
  line("+ wave overhead", fit.extended);
  os << "\nUsed: "
     << (fit.useWaveOverhead ? "efficiency + tile + wave overhead"
                             : "efficiency + tile")
     << ".";
  if (fit.extended.errors.maxAbs > kErrorGoal)
    os << " Even the extended formula misses the goal on some GEMMs: the "
          "single-GEMM table shows which; the model does not represent "
          "cuBLASLt's per-shape kernel choice (split-K, stream-K, other "
          "tiles per SM target).";
  os << "\n\n";
}

void Report::writeContention(llvm::raw_ostream &os) const {
  os << "## Contention table\n\n"
     << "| comm_sms | gemm_slowdown | memory_slowdown | comm_slowdown | "
        "built-in at this comm_sms (gemm / memory / comm) |\n"
     << "|---|---|---|---|---|\n";
  for (auto [i, p] : llvm::enumerate(fit.contention)) {
    ContentionPoint d = before.contention().lookup(p.commSms);
    os << "| " << p.commSms << " | " << llvm::formatv("{0:F3}", p.gemmSlowdown)
       << " | " << llvm::formatv("{0:F3}", p.memorySlowdown)
       << (fit.memoryAssumed[i] ? " (assumed = comm)" : "") << " | "
       << llvm::formatv("{0:F3}", p.commSlowdown) << " | "
       << llvm::formatv("{0:F3} / {1:F3} / {2:F3}", d.gemmSlowdown,
                        d.memorySlowdown, d.commSlowdown)
       << " |\n";
  }
  os << "\nEach column is fitted (grid search, factors >= 1) on the mean abs "
        "error of the durations it governs, in the simulator's engine: "
        "gemm_slowdown on the GEMM streams of the pairs, comm_slowdown on "
        "the stand-in kernel of all pairs, memory_slowdown on the "
        "element-wise stream of the memory pairs.\n\n";
}

std::string Report::residencySummary() const {
  if (raw.pairs.empty())
    return "";
  PairErrors used = pairErrors(raw, eval.pairAfter),
             other = pairErrors(raw, residency.other);
  return llvm::formatv("SM residency: pairs: span {0} with gemms_hold_sms "
                       "{1}, {2} with it {3} (the file: {1}, {4})",
                       absPct(used.span.medianAbs), onOff(residency.used),
                       absPct(other.span.medianAbs), onOff(!residency.used),
                       residency.fromTarget ? "the target's" : "--residency")
      .str();
}

void Report::writeResidency(llvm::raw_ostream &os) const {
  if (raw.pairs.empty())
    return;
  PairErrors used = pairErrors(raw, eval.pairAfter),
             other = pairErrors(raw, residency.other);
  os << "## SM residency\n\n"
     << "With `gemms_hold_sms` on, a collective issued after a GEMM that "
        "holds every SM gets none until that GEMM ends (docs/cost-model.md, "
        "\"SM residency\"). The pairs under each rule, each with its own "
        "fitted contention table (median / max |error|):\n\n"
     << "| gemms_hold_sms | GEMMs overlapped | stand-in overlapped | span |\n"
     << "|---|---|---|---|\n";
  auto row = [&](bool on, const PairErrors &e, StringRef note) {
    os << "| " << onOff(on) << note << " | " << absPct(e.gemm.medianAbs)
       << " / " << absPct(e.gemm.maxAbs) << " | " << absPct(e.copy.medianAbs)
       << " / " << absPct(e.copy.maxAbs) << " | " << absPct(e.span.medianAbs)
       << " / " << absPct(e.span.maxAbs) << " |\n";
  };
  row(residency.used, used, " (the file's)");
  row(!residency.used, other, "");
  bool otherBetter = other.span.meanAbs < used.span.meanAbs;
  os << "\nThe pairs' spans fit better with the rule "
     << onOff(otherBetter ? !residency.used : residency.used)
     << " (mean |error| "
     << absPct(std::min(used.span.meanAbs, other.span.meanAbs)) << " against "
     << absPct(std::max(used.span.meanAbs, other.span.meanAbs))
     << "). The file uses " << onOff(residency.used) << " ("
     << (residency.fromTarget ? "the target's rule" : "--residency") << ")";
  if (otherBetter)
    os << "; `--residency " << onOff(!residency.used) << "` writes the other";
  os << ". The pairs release both sides at once: they do not show whether "
        "a collective issued while a GEMM is already running waits for it, "
        "which is what the rule decides inside a step.\n\n";
}

void Report::writeSingles(llvm::raw_ostream &os) const {
  os << "## Single GEMMs\n\n| M | N | K | SM target | measured us | before "
        "us | before err | after us | after err |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  for (auto [i, s] : llvm::enumerate(raw.gemm))
    os << "| " << s.m << " | " << s.n << " | " << s.k << " | "
       << (s.smTarget ? std::to_string(s.smTarget) : "all") << " | " << us(s.us)
       << " | " << us(eval.gemmBefore[i]) << " | "
       << pct(relativeError(eval.gemmBefore[i], s.us)) << " | "
       << us(eval.gemmAfter[i]) << " | "
       << pct(relativeError(eval.gemmAfter[i], s.us)) << " |\n";
  os << "\n";
}

void Report::writeBandwidth(llvm::raw_ostream &os) const {
  if (!raw.standaloneCopy.empty()) {
    os << "## Stand-in kernel alone\n\n| CTAs | bytes | us | GB/s | GB/s per "
          "CTA |\n|---|---|---|---|---|\n";
    for (const CopySample &s : raw.standaloneCopy) {
      double gbps = double(s.bytes) / s.us / 1e3;
      os << "| " << s.ctas << " | " << s.bytes << " | " << us(s.us) << " | "
         << llvm::formatv("{0:F0}", gbps) << " | "
         << llvm::formatv("{0:F1}", gbps / double(s.ctas)) << " |\n";
    }
    os << "\n";
  }
  if (!raw.hbm.empty()) {
    os << "## Bandwidth-bound kernel alone (full-device element-wise copy)\n\n"
       << "| bytes | measured us | GB/s | before us | before err | after us | "
          "after err |\n|---|---|---|---|---|---|---|\n";
    for (auto [i, s] : llvm::enumerate(raw.hbm))
      os << "| " << s.bytes << " | " << us(s.us) << " | "
         << llvm::formatv("{0:F0}", double(s.bytes) / s.us / 1e3) << " | "
         << us(eval.hbmBefore[i]) << " | "
         << pct(relativeError(eval.hbmBefore[i], s.us)) << " | "
         << us(eval.hbmAfter[i]) << " | "
         << pct(relativeError(eval.hbmAfter[i], s.us)) << " |\n";
    os << "\n";
  }
  if (raw.launch)
    os << "Launch: " << raw.launch->kernels << " empty kernels queued back to "
       << "back took " << us(raw.launch->us) << " us, "
       << llvm::formatv("{0:F3}", raw.launch->us / raw.launch->kernels)
       << " us each.\n\n";
}

void Report::writePairs(llvm::raw_ostream &os) const {
  os << "## GEMM + stand-in pairs\n\n"
     << "`n` GEMMs in a row on one stream next to one stand-in kernel on a "
        "higher-priority stream. Serial: the same work on one stream.\n\n"
     << "| M x N x K | n | SM target | CTAs | quantity | measured us | "
        "before us | before err | after us | after err |\n"
     << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (auto [i, p] : llvm::enumerate(raw.pairs)) {
    const PairPrediction &b = eval.pairBefore[i], &a = eval.pairAfter[i];
    auto row = [&](StringRef what, double measured, double pb, double pa) {
      os << "| " << p.m << " x " << p.n << " x " << p.k << " | " << p.gemmCount
         << " | " << (p.gemmSmTarget ? std::to_string(p.gemmSmTarget) : "all")
         << " | " << p.commCtas << " | " << what << " | " << us(measured)
         << " | " << us(pb) << " | " << pct(relativeError(pb, measured))
         << " | " << us(pa) << " | " << pct(relativeError(pa, measured))
         << " |\n";
    };
    row("GEMMs alone", p.gemmAloneUs, b.primaryAloneUs, a.primaryAloneUs);
    row("GEMMs overlapped", p.gemmOverlappedUs, b.primaryOverlappedUs,
        a.primaryOverlappedUs);
    row("stand-in overlapped", p.copyOverlappedUs, b.copyOverlappedUs,
        a.copyOverlappedUs);
    row("span", p.spanUs, b.spanUs, a.spanUs);
    row("serial", p.serialUs, b.serialUs, a.serialUs);
  }
  os << "\n";
}

void Report::writeChoices(llvm::raw_ostream &os) const {
  // Pairs that differ only in the GEMM's SM target.
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
  std::map<Key, std::vector<size_t>> groups;
  for (auto [i, p] : llvm::enumerate(raw.pairs))
    groups[Key{p.m, p.n, p.k, p.gemmCount, p.commCtas, p.bytes}].push_back(i);

  os << "## SM-target choice per pair\n\n"
     << "Measured spans (us). Naive overlap: the GEMMs on all SMs next to the "
        "stand-in. Model's choice: the measured SM target whose predicted "
        "span is smallest, with its measured span. Bound: max(GEMMs alone "
        "on all SMs, stand-in alone).\n\n"
     << "| M x N x K | n | CTAs | serial | naive overlap | choice before | "
        "choice after | best measured | bound | after choice vs bound |\n"
     << "|---|---|---|---|---|---|---|---|---|---|\n";
  auto choose = [&](const std::vector<size_t> &members,
                    const std::vector<PairPrediction> &predicted) {
    // On a tie, the GEMM with more SMs (no target = all) wins: an SM
    // target that is not predicted to help is not worth setting.
    auto sms = [&](size_t i) {
      int64_t t = raw.pairs[i].gemmSmTarget;
      return t ? t : raw.deviceSms;
    };
    size_t best = members.front();
    for (size_t i : members)
      if (predicted[i].spanUs < predicted[best].spanUs - 1e-9 ||
          (std::fabs(predicted[i].spanUs - predicted[best].spanUs) <= 1e-9 &&
           sms(i) > sms(best)))
        best = i;
    return best;
  };
  auto target = [&](size_t i) {
    int64_t t = raw.pairs[i].gemmSmTarget;
    return t ? std::to_string(t) : std::string("all");
  };
  for (auto &[key, members] : groups) {
    const GemmPair &first = raw.pairs[members.front()];
    std::optional<size_t> naive;
    for (size_t i : members)
      if (raw.pairs[i].gemmSmTarget == 0)
        naive = i;
    size_t measuredBest = members.front();
    for (size_t i : members)
      if (raw.pairs[i].spanUs < raw.pairs[measuredBest].spanUs)
        measuredBest = i;
    size_t cb = choose(members, eval.pairBefore),
           ca = choose(members, eval.pairAfter);
    const GemmPair &ref = raw.pairs[naive.value_or(members.front())];
    double bound = std::max(ref.gemmAloneUs, ref.copyAloneUs);
    os << "| " << first.m << " x " << first.n << " x " << first.k << " | "
       << first.gemmCount << " | " << first.commCtas << " | "
       << us(ref.serialUs) << " | "
       << (naive ? us(raw.pairs[*naive].spanUs) : std::string("-")) << " | "
       << target(cb) << ": " << us(raw.pairs[cb].spanUs) << " | " << target(ca)
       << ": " << us(raw.pairs[ca].spanUs) << " | " << target(measuredBest)
       << ": " << us(raw.pairs[measuredBest].spanUs) << " | " << us(bound)
       << " | " << pct(raw.pairs[ca].spanUs / bound - 1.0) << " |\n";
  }
  os << "\n";
}

void Report::writeKernels(llvm::raw_ostream &os) const {
  if (raw.kernels.empty())
    return;
  os << "## The runtime's norm and layout copy kernels alone\n\n"
     << "Back to back, bf16 (tandem-calibrate's `norm` and `strided_copy`); "
        "bytes as the cost model counts them for the op.\n\n"
     << "| kernel | shape | bytes | measured us | GB/s | before us | before "
        "err | after us | after err |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  for (auto [i, s] : llvm::enumerate(raw.kernels))
    os << "| " << kernelName(s.kernel) << " | " << s.shape << " | " << s.bytes
       << " | " << llvm::formatv("{0:F2}", s.us) << " | "
       << llvm::formatv("{0:F0}", double(s.bytes) / s.us / 1e3) << " | "
       << llvm::formatv("{0:F2}", eval.kernelBefore[i]) << " | "
       << pct(relativeError(eval.kernelBefore[i], s.us)) << " | "
       << llvm::formatv("{0:F2}", eval.kernelAfter[i]) << " | "
       << pct(relativeError(eval.kernelAfter[i], s.us)) << " |\n";
  os << "\n";
}

void Report::writeMemoryPairs(llvm::raw_ostream &os) const {
  if (raw.memoryPairs.empty())
    return;
  os << "## Element-wise + stand-in pairs\n\n"
     << "| element-wise bytes | n | CTAs | quantity | measured us | before us "
        "| before err | after us | after err |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  for (auto [i, p] : llvm::enumerate(raw.memoryPairs)) {
    const PairPrediction &b = eval.memoryBefore[i], &a = eval.memoryAfter[i];
    auto row = [&](StringRef what, double measured, double pb, double pa) {
      os << "| " << p.memBytes << " | " << p.memCount << " | " << p.commCtas
         << " | " << what << " | " << us(measured) << " | " << us(pb) << " | "
         << pct(relativeError(pb, measured)) << " | " << us(pa) << " | "
         << pct(relativeError(pa, measured)) << " |\n";
    };
    row("element-wise alone", p.memAloneUs, b.primaryAloneUs, a.primaryAloneUs);
    row("element-wise overlapped", p.memOverlappedUs, b.primaryOverlappedUs,
        a.primaryOverlappedUs);
    row("stand-in overlapped", p.copyOverlappedUs, b.copyOverlappedUs,
        a.copyOverlappedUs);
    row("span", p.spanUs, b.spanUs, a.spanUs);
    row("serial", p.serialUs, b.serialUs, a.serialUs);
  }
  os << "\n";
}

/// tandem-fit nccl.json --group ...: the collective model's parameters.
static int fitCollectiveMeasurements(StringRef text) {
  std::string error;
  std::optional<CollectiveMeasurements> measured =
      CollectiveMeasurements::parse(text, inputFilename, error);
  if (!measured)
    return fail(error);
  if (groupSpec.empty())
    return fail(inputFilename + " holds tandem-nccl-bench measurements: "
                                "pass the measured group with --group "
                                "\"<size> <topology> <links> <GBps> "
                                "<latency us>\"");
  std::optional<GroupSpec> group = parseGroupSpec(groupSpec, error);
  if (!group)
    return fail(error);
  if (group->size != measured->ranks)
    return fail(llvm::Twine(inputFilename) + " was measured on " +
                llvm::Twine(measured->ranks) +
                " rank(s) but --group has size " + llvm::Twine(group->size));

  MLIRContext context;
  context.getOrLoadDialect<TandemDialect>();
  std::string targetError;
  TargetAttr target = lookupTarget(context, targetName, targetError);
  if (!target)
    return fail(targetError);
  GpuSpec spec = GpuSpec::fromAttr(target);
  ContentionTable table = ContentionTable::defaults();
  CommParams comm;
  std::optional<Calibration> base;
  if (!baseCalibration.empty()) {
    base = Calibration::load(baseCalibration, error);
    if (!base || !base->applyTo(spec, error))
      return fail(error);
    base->applyTo(comm);
    table = base->contention;
  }
  CostModel before(spec, table, comm);
  std::optional<CommFit> fitted =
      fitCollectives(*measured, *group, before, error);
  if (!fitted)
    return fail(error);

  std::string calibrationText;
  llvm::raw_string_ostream calibrationStream(calibrationText);
  writeCommCalibrationJson(base, baseCalibration, *fitted, *measured,
                           inputFilename, calibrationStream);
  // The model after calibration is the one the written file gives.
  StringRef origin = outputFilename.empty() ? StringRef("<calibration>")
                                            : StringRef(outputFilename);
  std::optional<Calibration> written =
      Calibration::parse(calibrationText, origin, error);
  GpuSpec afterSpec = GpuSpec::fromAttr(target);
  if (!written || !written->applyTo(afterSpec, error))
    return fail("the calibration written does not load back (a tandem-fit "
                "bug): " +
                error);
  CommParams afterComm;
  written->applyTo(afterComm);
  CostModel after(afterSpec, written->contention, afterComm);

  if (!outputFilename.empty() &&
      !writeFile(outputFilename, error,
                 [&](llvm::raw_ostream &os) { os << calibrationText; }))
    return fail(error);
  if (!reportFilename.empty() &&
      !writeFile(reportFilename, error, [&](llvm::raw_ostream &os) {
        writeCollectiveReport(*measured, inputFilename, *group, before, after,
                              *fitted, os);
      }))
    return fail(error);
  if (reportFilename != "-") {
    llvm::outs() << "tandem-fit: " << measured->deviceName << " x "
                 << measured->ranks << ", NCCL " << measured->ncclVersion
                 << ", " << measured->samples.size()
                 << " collectives; |error| median / max, before -> after:\n";
    for (const CollectiveErrorRow &r :
         collectiveErrorRows(*measured, *group, before, after)) {
      ErrorSummary b = ErrorSummary::of(r.before),
                   a = ErrorSummary::of(r.after);
      llvm::outs() << "  " << r.name << ": " << absPct(b.medianAbs) << " / "
                   << absPct(b.maxAbs) << " -> " << absPct(a.medianAbs) << " / "
                   << absPct(a.maxAbs) << "\n";
    }
    llvm::outs() << "  bus_efficiency "
                 << llvm::formatv("{0:F4}", after.comm().busEfficiency)
                 << ", link_latency_us "
                 << llvm::formatv("{0:F3}", *after.comm().linkLatencyUs)
                 << ", links_per_cta "
                 << llvm::formatv("{0:F3}", after.comm().linksPerCta)
                 << (fitted->linksPerCtaFitted ? "" : " (not fitted)") << "\n";
  }
  return 0;
}

static Evaluation evaluate(const RawMeasurements &raw, const CostModel &before,
                           const CostModel &after, Type bf16) {
  Evaluation eval;
  Predictor b(before, bf16), a(after, bf16);
  for (const GemmSample &s : raw.gemm) {
    eval.gemmBefore.push_back(b.gemmUs(s));
    eval.gemmAfter.push_back(a.gemmUs(s));
  }
  for (const GemmPair &p : raw.pairs) {
    eval.pairBefore.push_back(b.pair(p));
    eval.pairAfter.push_back(a.pair(p));
  }
  for (const MemoryPair &p : raw.memoryPairs) {
    eval.memoryBefore.push_back(b.memoryPair(p));
    eval.memoryAfter.push_back(a.memoryPair(p));
  }
  for (const HbmSample &s : raw.hbm) {
    eval.hbmBefore.push_back(b.memoryUs(s.bytes));
    eval.hbmAfter.push_back(a.memoryUs(s.bytes));
  }
  for (const KernelSample &s : raw.kernels) {
    eval.kernelBefore.push_back(b.kernelUs(s));
    eval.kernelAfter.push_back(a.kernelUs(s));
  }
  return eval;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(fitCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Fits the cost model to runtime/tools/tandem-calibrate's measurements "
      "(raw.json),\nor its collective model to runtime/tools/"
      "tandem-nccl-bench's (nccl.json, with --group):\nwrites the "
      "calibration file the cost model loads (--out) and a Markdown\nreport "
      "of the prediction error before and after calibration (--report).\n");

  if (residencyMode != "target" && residencyMode != "on" &&
      residencyMode != "off")
    return fail("--residency must be target, on or off, got '" + residencyMode +
                "'");
  auto buffer = llvm::MemoryBuffer::getFile(inputFilename);
  if (!buffer)
    return fail("cannot read '" + inputFilename +
                "': " + buffer.getError().message());
  if (CollectiveMeasurements::isNcclBench((*buffer)->getBuffer())) {
    if (residencyMode != "target")
      return fail("--residency is only used with tandem-calibrate "
                  "measurements, and " +
                  inputFilename + " holds tandem-nccl-bench's");
    return fitCollectiveMeasurements((*buffer)->getBuffer());
  }
  if (!groupSpec.empty() || !baseCalibration.empty())
    return fail(llvm::Twine(groupSpec.empty() ? "--calibration" : "--group") +
                " is only used with tandem-nccl-bench measurements, and " +
                inputFilename +
                " holds none (no \"format\": "
                "\"tandem-nccl-bench\")");
  std::string error;
  std::optional<RawMeasurements> raw =
      RawMeasurements::parse((*buffer)->getBuffer(), inputFilename, error);
  if (!raw)
    return fail(error);

  MLIRContext context;
  context.getOrLoadDialect<TandemDialect>();
  std::string targetError;
  TargetAttr target = lookupTarget(context, targetName, targetError);
  if (!target)
    return fail(targetError);
  GpuSpec targetSpec = GpuSpec::fromAttr(target);
  if (raw->deviceSms != targetSpec.smCount)
    return fail(llvm::Twine(inputFilename) + ": the device has " +
                llvm::Twine(raw->deviceSms) + " SMs but target '" +
                targetSpec.name + "' has " + llvm::Twine(targetSpec.smCount) +
                ": pass the --target preset of the measured GPU");
  Type bf16 = Builder(&context).getBF16Type();

  // Fits with the SM-residency rule `holdSms`, writes the file into `text`
  // and loads it back: the model after calibration is the one the file
  // gives.
  StringRef calibrationOrigin = outputFilename.empty()
                                    ? StringRef("<calibration>")
                                    : StringRef(outputFilename);
  auto fitWith = [&](bool holdSms, bool write, std::string &text,
                     std::optional<FitResult> &fitted,
                     std::optional<CostModel> &model) -> bool {
    GpuSpec spec = targetSpec;
    spec.gemmsHoldSms = holdSms;
    fitted = fitCalibration(*raw, inputFilename, spec, bf16, error);
    if (!fitted)
      return false;
    if (write)
      fitted->gemmsHoldSms = holdSms;
    llvm::raw_string_ostream os(text);
    writeCalibrationJson(*fitted, *raw, inputFilename, os);
    std::optional<Calibration> calibration =
        Calibration::parse(text, calibrationOrigin, error);
    GpuSpec afterSpec = spec;
    if (!calibration || !calibration->applyTo(afterSpec, error)) {
      error = "the calibration written does not load back (a tandem-fit "
              "bug): " +
              error;
      return false;
    }
    model.emplace(afterSpec, calibration->contention);
    return true;
  };
  ResidencyCheck residency;
  residency.fromTarget = residencyMode == "target";
  residency.used =
      residency.fromTarget ? targetSpec.gemmsHoldSms : residencyMode == "on";
  std::string calibrationText, otherText;
  std::optional<FitResult> fitted, otherFit;
  std::optional<CostModel> after, otherModel;
  if (!fitWith(residency.used, !residency.fromTarget, calibrationText, fitted,
               after) ||
      !fitWith(!residency.used, true, otherText, otherFit, otherModel))
    return fail(error);
  CostModel before(targetSpec, ContentionTable::defaults());
  Evaluation eval = evaluate(*raw, before, *after, bf16);
  Predictor otherPredictor(*otherModel, bf16);
  for (const GemmPair &p : raw->pairs)
    residency.other.push_back(otherPredictor.pair(p));
  Report report(*raw, inputFilename, *fitted, before, *after, eval, residency);

  if (!outputFilename.empty() &&
      !writeFile(outputFilename, error,
                 [&](llvm::raw_ostream &os) { os << calibrationText; }))
    return fail(error);
  if (!reportFilename.empty() &&
      !writeFile(reportFilename, error,
                 [&](llvm::raw_ostream &os) { report.write(os); }))
    return fail(error);
  if (reportFilename != "-") {
    // A short summary on stdout; the report has the details.
    llvm::outs() << "tandem-fit: " << raw->deviceName << ", "
                 << raw->gemm.size() << " GEMMs, " << raw->pairs.size()
                 << " GEMM pairs, " << raw->memoryPairs.size()
                 << " memory pairs; |error| median / max, before -> after:\n";
    for (const Row &r : report.summaryRows()) {
      ErrorSummary b = ErrorSummary::of(r.before),
                   a = ErrorSummary::of(r.after);
      llvm::outs() << "  " << r.name << ": " << absPct(b.medianAbs) << " / "
                   << absPct(b.maxAbs) << " -> " << absPct(a.medianAbs) << " / "
                   << absPct(a.maxAbs) << "\n";
    }
    std::string residencyLine = report.residencySummary();
    if (!residencyLine.empty())
      llvm::outs() << "  " << residencyLine << "\n";
  }
  return 0;
}
