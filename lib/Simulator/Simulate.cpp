//===- Simulate.cpp - Simulate a tandem function on its target ------------===//

#include "tandem/Simulator/Simulate.h"
#include "tandem/Analysis/DependenceGraph.h"
#include "tandem/Analysis/MemoryLiveness.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tandem;

FailureOr<SimulationReport>
mlir::tandem::simulateFunction(func::FuncOp func, const CostModel &model,
                               bool spanOnly) {
  SimulationReport report;
  report.function = func.getSymName().str();
  ScheduleModelOptions options;
  // Names are for traces and errors; a span-only run names no task (its
  // errors are reported by a full run below).
  options.nameTasks = !spanOnly;
  FailureOr<ScheduleModel> built = ScheduleModel::build(func, model, options);
  if (failed(built))
    return failure();
  report.model = std::move(*built);
  const sim::Problem &problem = report.model.problem();
  report.computeUs = report.model.computeUs;
  report.commUs = report.model.commUs;
  report.numComputeOps = report.model.numComputeOps;
  report.numCollectives = report.model.numCollectives;
  Block &block = func.getBody().front();

  std::string error;
  std::optional<sim::Result> result = sim::simulate(problem, error);
  if (!result) {
    if (spanOnly) // The error names tasks: run again with names.
      return simulateFunction(func, model, /*spanOnly=*/false);
    return func.emitError() << error;
  }
  report.result = std::move(*result);
  const std::vector<sim::Timing> &timing = report.result.timings;
  report.spanUs = report.result.spanUs;
  report.boundUs = std::max(report.computeUs, report.commUs);

  // Exposed communication: on the compute stream, the time collectives run
  // there, plus every gap whose last-finishing dependence is communication.
  double prevEnd = 0.0;
  for (unsigned id = 0; id < problem.tasks.size(); ++id) {
    const sim::Task &t = problem.tasks[id];
    if (t.stream != 0)
      continue;
    double gap = timing[id].startUs - prevEnd;
    if (gap > 1e-9) {
      int blocker = -1;
      for (unsigned d : t.deps)
        if (blocker < 0 || timing[d].endUs > timing[blocker].endUs)
          blocker = d;
      if (blocker >= 0) {
        sim::TaskKind k = problem.tasks[blocker].kind;
        if (k == sim::TaskKind::Collective || k == sim::TaskKind::Wait)
          report.exposedCommUs += gap;
      }
    }
    if (t.kind == sim::TaskKind::Collective)
      report.exposedCommUs += timing[id].endUs - timing[id].startUs;
    prevEnd = std::max(prevEnd, timing[id].endUs);
  }
  report.overlapEfficiency =
      report.commUs > 0
          ? std::clamp(1.0 - report.exposedCommUs / report.commUs, 0.0, 1.0)
          : 1.0;
  // Summing per-op times leaves rounding noise; keep the report readable.
  if (report.overlapEfficiency < 1e-9)
    report.overlapEfficiency = 0.0;

  if (spanOnly)
    return report;

  // Peak memory over time: a buffer lives from its producer's start to the
  // end of its last consumer; arguments and returned values for the whole
  // span; a wait's result is its future's buffer.
  struct Interval {
    int64_t bytes;
    double from, to;
  };
  llvm::SmallVector<Interval> intervals;
  llvm::DenseMap<Value, unsigned> bufferOf;
  for (BlockArgument arg : block.getArguments()) {
    bufferOf[arg] = intervals.size();
    intervals.push_back({getValueBytes(arg), 0.0, report.spanUs});
  }
  for (Operation &op : block) {
    std::optional<unsigned> task = report.model.taskOf(&op);
    double start = task ? timing[*task].startUs : 0.0;
    double end = task ? timing[*task].endUs : report.spanUs;
    if (isa<func::ReturnOp>(op))
      end = report.spanUs;
    for (Value operand : op.getOperands())
      if (auto b = bufferOf.find(operand); b != bufferOf.end())
        intervals[b->second].to = std::max(intervals[b->second].to, end);
    for (Value res : op.getResults()) {
      if (auto wait = dyn_cast<WaitOp>(op))
        if (auto b = bufferOf.find(wait.getFuture()); b != bufferOf.end()) {
          unsigned buffer = b->second; // copy before the map may grow
          bufferOf[res] = buffer;
          continue;
        }
      bufferOf[res] = intervals.size();
      intervals.push_back({getValueBytes(res), start, end});
    }
  }
  std::vector<std::pair<double, int64_t>> events;
  for (const Interval &i : intervals) {
    events.push_back({i.from, i.bytes});
    events.push_back({i.to, -i.bytes});
  }
  // At equal times, frees come first: a buffer freed at t can be reused by
  // one allocated at t.
  std::sort(events.begin(), events.end(), [](const auto &a, const auto &b) {
    return a.first != b.first ? a.first < b.first : a.second < b.second;
  });
  int64_t live = 0;
  for (auto &[time, delta] : events) {
    live += delta;
    report.peakMemoryBytes = std::max(report.peakMemoryBytes, live);
  }
  report.staticPeakMemoryBytes = computePeakMemory(block).peakBytes;

  DependenceGraph graph(block);
  report.criticalPathUs = graph
                              .getCriticalPath([&](Operation *op) {
                                std::optional<unsigned> t =
                                    report.model.taskOf(op);
                                return t ? problem.tasks[*t].aloneUs : 0.0;
                              })
                              .lengthUs;
  return report;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

static llvm::json::Object reportObject(const SimulationReport &r) {
  return llvm::json::Object{
      {"function", r.function},
      {"span_us", r.spanUs},
      {"compute_us", r.computeUs},
      {"comm_us", r.commUs},
      {"bound_us", r.boundUs},
      {"critical_path_us", r.criticalPathUs},
      {"exposed_comm_us", r.exposedCommUs},
      {"overlap_efficiency", r.overlapEfficiency},
      {"span_over_bound", r.boundUs > 0 ? r.spanUs / r.boundUs : 1.0},
      {"peak_memory_bytes", r.peakMemoryBytes},
      {"static_peak_memory_bytes", r.staticPeakMemoryBytes},
      {"compute_ops", int64_t(r.numComputeOps)},
      {"collectives", int64_t(r.numCollectives)},
      {"streams", int64_t(r.model.problem().streamNames.size())},
  };
}

void mlir::tandem::writeReportJson(ArrayRef<SimulationReport> reports,
                                   StringRef target, llvm::raw_ostream &os) {
  // The first function's metrics also sit at the top level, so that the
  // common one-function case reads `report["span_us"]` directly.
  llvm::json::Object root;
  if (!reports.empty())
    root = reportObject(reports.front());
  root["version"] = 1;
  root["target"] = target;
  llvm::json::Array all;
  for (const SimulationReport &r : reports)
    all.push_back(reportObject(r));
  root["functions"] = std::move(all);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}

static StringRef taskKindName(sim::TaskKind kind) {
  switch (kind) {
  case sim::TaskKind::Gemm:
    return "gemm";
  case sim::TaskKind::Compute:
    return "compute";
  case sim::TaskKind::Memory:
    return "memory";
  case sim::TaskKind::Collective:
    return "collective";
  case sim::TaskKind::Wait:
    return "wait";
  }
  llvm_unreachable("unknown task kind");
}

void mlir::tandem::writeChromeTrace(ArrayRef<SimulationReport> reports,
                                    llvm::raw_ostream &os) {
  llvm::json::Array events;
  for (auto [pid, r] : llvm::enumerate(reports)) {
    events.push_back(llvm::json::Object{
        {"ph", "M"},
        {"name", "process_name"},
        {"pid", int64_t(pid)},
        {"args", llvm::json::Object{{"name", "simulated @" + r.function}}}});
    for (auto [tid, name] : llvm::enumerate(r.model.problem().streamNames))
      events.push_back(
          llvm::json::Object{{"ph", "M"},
                             {"name", "thread_name"},
                             {"pid", int64_t(pid)},
                             {"tid", int64_t(tid)},
                             {"args", llvm::json::Object{{"name", name}}}});
    for (auto [id, task] : llvm::enumerate(r.model.problem().tasks)) {
      const sim::Timing &t = r.result.timings[id];
      double dur = t.endUs - t.startUs;
      llvm::json::Object args{
          {"alone_us", task.aloneUs},
          {"slowdown", task.aloneUs > 0 ? dur / task.aloneUs : 1.0}};
      if (task.kind == sim::TaskKind::Collective) {
        args["waited_for_sms_us"] = t.admittedUs - t.startUs;
        args["transport"] = task.copyEngine ? "copy_engine" : "sms";
      }
      events.push_back(llvm::json::Object{{"ph", "X"},
                                          {"name", task.name},
                                          {"cat", taskKindName(task.kind)},
                                          {"pid", int64_t(pid)},
                                          {"tid", int64_t(task.stream)},
                                          {"ts", t.startUs},
                                          {"dur", dur},
                                          {"args", std::move(args)}});
    }
  }
  llvm::json::Object root{{"traceEvents", std::move(events)},
                          {"displayTimeUnit", "ms"}};
  os << llvm::json::Value(std::move(root)) << "\n";
}

void mlir::tandem::printSummary(const SimulationReport &r,
                                llvm::raw_ostream &os) {
  auto ms = [](double us) { return llvm::format("%10.3f ms", us / 1000.0); };
  os << "@" << r.function << ": " << r.numComputeOps << " compute ops, "
     << r.numCollectives << " collectives, "
     << r.model.problem().streamNames.size() << " stream(s)\n";
  os << "  span                " << ms(r.spanUs) << "\n";
  os << "  compute (alone)     " << ms(r.computeUs) << "\n";
  os << "  communication       " << ms(r.commUs) << "\n";
  os << "  bound max(comp,comm)" << ms(r.boundUs)
     << llvm::format("   span/bound %.3f\n",
                     r.boundUs > 0 ? r.spanUs / r.boundUs : 1.0);
  os << "  exposed comm        " << ms(r.exposedCommUs)
     << llvm::format("   hidden %.1f%%\n", 100.0 * r.overlapEfficiency);
  os << "  critical path       " << ms(r.criticalPathUs) << "\n";
  os << llvm::format("  peak memory         %10.2f GiB\n",
                     double(r.peakMemoryBytes) / double(1LL << 30));
}
