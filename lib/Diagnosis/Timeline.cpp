//===- Timeline.cpp - A step's ops in time, from a trace or a plan --------===//

#include "tandem/Diagnosis/Timeline.h"

#include "JsonSupport.h"

#include "tandem/runtime/Fidelity.h"
#include "tandem/runtime/Plan.h"
#include "tandem/runtime/RunTrace.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace tandem {
namespace diagnosis {

using nlohmann::json;

std::string Timeline::streamName(int64_t stream) const {
  if (stream >= 0 && stream < static_cast<int64_t>(streamNames.size()) &&
      !streamNames[stream].empty())
    return streamNames[stream];
  return "stream " + std::to_string(stream);
}

double Timeline::spanUs() const {
  double begin = 0, end = 0;
  bool first = true;
  for (const TimelineOp &op : ops) {
    if (first) {
      begin = op.startUs;
      end = op.endUs();
      first = false;
    }
    begin = std::min(begin, op.startUs);
    end = std::max(end, op.endUs());
  }
  return end - begin;
}

bool readFileText(const std::string &path, std::string &text,
                  std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open the file";
    return false;
  }
  std::ostringstream os;
  os << in.rdbuf();
  if (in.bad()) {
    error = path + ": cannot read the file";
    return false;
  }
  text = os.str();
  return true;
}

namespace {

/// The class and role of an op from its name and category.
void classify(TimelineOp &op) {
  const std::string &cat = op.category;
  op.role = cat == "collective"              ? OpRole::Collective
            : cat == "wait" || cat == "sync" ? OpRole::Wait
                                             : OpRole::Compute;
  if (op.role == OpRole::Wait) {
    op.opClass.clear();
    return;
  }
  // "tandem.matmul#4" (simulator) or "tandem.matmul l0.qkv" (tandem-run).
  std::string opName = op.name.substr(0, op.name.find_first_of(" #"));
  std::optional<std::string> cls = runtime::opClassOfOpName(opName);
  op.opClass = cls ? *cls : (cat.empty() ? std::string("unknown") : cat);
}

void numberOccurrences(Timeline &t) {
  std::map<std::string, int64_t> seen;
  for (TimelineOp &op : t.ops)
    op.occurrence = seen[op.name]++;
}

struct Process {
  int64_t pid = 0;
  std::string name;
  std::string function;
  enum Kind { Simulated, Measured, Predicted } kind = Simulated;
};

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::optional<Process> processOf(int64_t pid, const std::string &name) {
  Process p;
  p.pid = pid;
  p.name = name;
  if (startsWith(name, "simulated @")) {
    p.kind = Process::Simulated;
    p.function = name.substr(11);
  } else if (startsWith(name, "predicted @")) {
    p.kind = Process::Predicted;
    p.function = name.substr(11);
  } else if (startsWith(name, "measured @")) {
    p.kind = Process::Measured;
    std::string rest = name.substr(10);
    size_t rank = rest.rfind(" rank ");
    p.function = rank == std::string::npos ? rest : rest.substr(0, rank);
  } else {
    return std::nullopt;
  }
  return p;
}

std::optional<Timeline> timelineOfTrace(const json &doc,
                                        const std::string &origin,
                                        TimelineSource source,
                                        const std::string &function,
                                        std::string &error) {
  auto fail = [&](const std::string &message) -> std::optional<Timeline> {
    error = origin + ": " + message;
    return std::nullopt;
  };
  if (!doc.is_object() || !doc.contains("traceEvents") ||
      !doc["traceEvents"].is_array())
    return fail("not a Chrome trace: no \"traceEvents\" array");
  const json &events = doc["traceEvents"];

  std::vector<Process> processes;
  bool kernels = false;
  for (size_t i = 0; i < events.size(); ++i) {
    const json &e = events[i];
    if (!e.is_object())
      return fail("traceEvents[" + std::to_string(i) + "] is not an object");
    if (e.value("cat", json()).is_string() && e["cat"] == "kernel")
      kernels = true;
    if (e.value("ph", json()) != "M" ||
        e.value("name", json()) != "process_name")
      continue;
    std::optional<int64_t> pid = intField(e, "pid");
    std::optional<std::string> name =
        stringField(e.value("args", json()), "name");
    if (!pid || !name)
      return fail("traceEvents[" + std::to_string(i) +
                  "]: a process_name event needs an integer \"pid\" and "
                  "args.name");
    if (std::optional<Process> p = processOf(*pid, *name))
      processes.push_back(*p);
  }
  if (processes.empty()) {
    if (kernels)
      return fail("no process named by --tandem-simulate or tandem-run; it "
                  "looks like a PyTorch profiler (Kineto) trace: read it with "
                  "--kineto");
    return fail("no process named 'simulated @<function>' "
                "(--tandem-simulate), 'measured @<function> rank <r>' or "
                "'predicted @<function>' (tandem-run --trace)");
  }
  std::vector<Process::Kind> wanted =
      source == TimelineSource::Measured
          ? std::vector<Process::Kind>{Process::Measured, Process::Simulated}
          : std::vector<Process::Kind>{Process::Predicted, Process::Simulated};
  std::vector<Process> candidates;
  for (Process::Kind kind : wanted) {
    for (const Process &p : processes)
      if (p.kind == kind && (function.empty() || p.function == function))
        candidates.push_back(p);
    if (!candidates.empty())
      break;
  }
  if (candidates.empty()) {
    std::string names;
    for (const Process &p : processes)
      names += (names.empty() ? "'" : ", '") + p.name + "'";
    return fail(std::string("no ") +
                (source == TimelineSource::Measured
                     ? "measured or simulated"
                     : "predicted or simulated") +
                " process" +
                (function.empty() ? "" : " of function '" + function + "'") +
                " (it has " + names + ")");
  }
  if (candidates.size() > 1) {
    std::string names;
    for (const Process &p : candidates)
      names += (names.empty() ? "'" : ", '") + p.function + "'";
    return fail("holds " + std::to_string(candidates.size()) + " functions (" +
                names + "); choose one with --function");
  }
  const Process &chosen = candidates.front();

  Timeline t;
  t.origin = origin + " (process '" + chosen.name + "')";
  t.function = chosen.function;
  for (size_t i = 0; i < events.size(); ++i) {
    const json &e = events[i];
    std::optional<int64_t> pid = intField(e, "pid");
    if (!pid || *pid != chosen.pid)
      continue;
    std::string where = "traceEvents[" + std::to_string(i) + "]";
    json ph = e.value("ph", json());
    if (ph == "M" && e.value("name", json()) == "thread_name") {
      std::optional<int64_t> tid = intField(e, "tid");
      std::optional<std::string> name =
          stringField(e.value("args", json()), "name");
      if (!tid || *tid < 0 || *tid >= 1 << 16 || !name)
        return fail(where + ": a thread_name event needs a \"tid\" in "
                            "[0, 65536) and args.name");
      if (static_cast<int64_t>(t.streamNames.size()) <= *tid)
        t.streamNames.resize(*tid + 1);
      t.streamNames[*tid] = *name;
      continue;
    }
    if (ph != "X")
      continue;
    TimelineOp op;
    std::optional<std::string> name = stringField(e, "name");
    if (!name)
      return fail(where + ": \"name\" must be a string");
    op.name = *name;
    std::optional<int64_t> tid = intField(e, "tid");
    if (!tid || *tid < 0)
      return fail(where + " ('" + op.name +
                  "'): \"tid\" must be a non-negative integer");
    op.stream = *tid;
    std::optional<double> ts = numberField(e, "ts");
    std::optional<double> dur = numberField(e, "dur");
    if (!ts)
      return fail(where + " ('" + op.name + "'): \"ts\" must be a number");
    if (!dur || *dur < 0)
      return fail(where + " ('" + op.name +
                  "'): \"dur\" must be a non-negative number");
    op.startUs = *ts;
    op.durUs = *dur;
    if (e.contains("cat")) {
      std::optional<std::string> cat = stringField(e, "cat");
      if (!cat)
        return fail(where + " ('" + op.name + "'): \"cat\" must be a string");
      op.category = *cat;
    }
    if (e.contains("args")) {
      const json &args = e["args"];
      if (!args.is_object())
        return fail(where + " ('" + op.name + "'): \"args\" must be an object");
      struct {
        const char *key;
        double *field;
      } numbers[] = {{"alone_us", &op.aloneUs},
                     {"waited_for_sms_us", &op.waitedForSmsUs},
                     {"host_us", &op.hostUs}};
      for (auto &n : numbers) {
        if (!args.contains(n.key))
          continue;
        std::optional<double> v = numberField(args, n.key);
        if (!v || *v < 0)
          return fail(where + " ('" + op.name + "'): args." + n.key +
                      " must be a non-negative number");
        *n.field = *v;
      }
      if (args.contains("step")) {
        std::optional<int64_t> step = intField(args, "step");
        if (!step || *step < 0)
          return fail(where + " ('" + op.name +
                      "'): args.step must be a non-negative integer");
        op.step = *step;
      }
    }
    classify(op);
    t.ops.push_back(std::move(op));
  }
  if (t.ops.empty())
    return fail("process '" + chosen.name + "' has no complete (\"X\") events");
  // tandem-run's measured steps take their model alone times from the
  // prediction of the same steps beside them.
  if (chosen.kind == Process::Measured) {
    std::optional<int64_t> predicted;
    for (const Process &p : processes)
      if (p.kind == Process::Predicted && p.function == chosen.function)
        predicted = p.pid;
    if (predicted) {
      std::map<int64_t, double> alone;
      for (const json &e : events)
        if (intField(e, "pid") == predicted && e.value("ph", json()) == "X")
          if (std::optional<int64_t> step =
                  intField(e.value("args", json()), "step"))
            if (std::optional<double> a = numberField(e["args"], "alone_us"))
              alone[*step] = *a;
      for (TimelineOp &op : t.ops) {
        auto it = alone.find(op.step);
        if (op.aloneUs < 0 && it != alone.end())
          op.aloneUs = it->second;
      }
    }
  }
  numberOccurrences(t);
  return t;
}

} // namespace

std::optional<Timeline> timelineOfPlan(const runtime::Plan &plan,
                                       const std::string &origin,
                                       std::string &error) {
  Timeline t;
  t.origin = origin + " (the plan's prediction)";
  t.function = plan.function;
  t.streamNames = plan.streamNames;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const runtime::Step &s = plan.steps[i];
    if (s.predictedStartUs < 0)
      continue;
    TimelineOp op;
    op.name = runtime::stepTraceName(s);
    op.stream = s.stream;
    op.category = runtime::stepKindName(s.kind);
    op.startUs = s.predictedStartUs;
    op.durUs = std::max(0.0, s.predictedDurationUs);
    op.aloneUs = s.predictedAloneUs;
    op.step = static_cast<int64_t>(i);
    classify(op);
    t.ops.push_back(std::move(op));
  }
  if (t.ops.empty()) {
    error = origin + ": the plan carries no predicted timeline (no step has "
                     "\"predicted\"; export it with a target so that "
                     "--tandem-export-plan simulates it)";
    return std::nullopt;
  }
  numberOccurrences(t);
  return t;
}

std::optional<Timeline> parseTimeline(const std::string &text,
                                      const std::string &origin,
                                      TimelineSource source,
                                      const std::string &function,
                                      std::string &error) {
  std::optional<json> doc = parseJson(text, origin, error);
  if (!doc)
    return std::nullopt;
  if (doc->is_object() && doc->contains("format") &&
      (*doc)["format"] == "tandem-plan") {
    if (source == TimelineSource::Measured) {
      error = origin + ": is an execution plan, which holds no measurement; "
                       "MEASURED is a trace (tandem-run --trace, or "
                       "--tandem-simulate's trace=)";
      return std::nullopt;
    }
    std::optional<runtime::Plan> plan = runtime::parsePlan(text, origin, error);
    if (!plan)
      return std::nullopt;
    if (!function.empty() && plan->function != function) {
      error = origin + ": the plan is of function '" + plan->function +
              "', not '" + function + "'";
      return std::nullopt;
    }
    return timelineOfPlan(*plan, origin, error);
  }
  return timelineOfTrace(*doc, origin, source, function, error);
}

std::optional<Timeline> readTimeline(const std::string &path,
                                     TimelineSource source,
                                     const std::string &function,
                                     std::string &error) {
  std::string text;
  if (!readFileText(path, text, error))
    return std::nullopt;
  return parseTimeline(text, path, source, function, error);
}

} // namespace diagnosis
} // namespace tandem
