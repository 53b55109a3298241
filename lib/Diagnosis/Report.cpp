//===- Report.cpp - A diagnosis as text, JSON and a Perfetto trace --------===//

#include "tandem/Diagnosis/Report.h"

#include "JsonSupport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace tandem {
namespace diagnosis {

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;

namespace {

std::string label(const TimelineOp &op) {
  return op.name + (op.occurrence > 0
                        ? " (#" + std::to_string(op.occurrence + 1) + ")"
                        : std::string());
}

ordered_json opRef(const Timeline &t, int64_t i) {
  const TimelineOp &op = t.ops[i];
  ordered_json j;
  j["name"] = op.name;
  j["occurrence"] = op.occurrence;
  j["stream"] = t.streamName(op.stream);
  j["start_us"] = op.startUs;
  j["dur_us"] = op.durUs;
  if (op.step >= 0)
    j["step"] = op.step;
  return j;
}

/// The noise floor and the candidates it put within noise.
void printWithinNoise(const Diagnosis &d, const Timeline &m, std::ostream &os) {
  os << "\nnoise floor: " << d.noiseRuns.size() << " clean run"
     << (d.noiseRuns.size() == 1 ? "" : "s")
     << "; band = " << fixed(d.noiseMargin, 2)
     << " x the largest deviation of EXPECTED's clean runs\n";
  for (const std::string &run : d.noiseRuns)
    os << "  " << run << "\n";
  os << "within noise: " << d.withinNoise.size()
     << (d.withinNoise.empty() ? "" : " (not anomalies), largest loss first")
     << "\n";
  for (size_t k = 0; k < d.withinNoise.size(); ++k) {
    const WithinNoise &w = d.withinNoise[k];
    const Anomaly &a = w.anomaly;
    os << "  " << k + 1 << ". " << anomalyKindName(a.kind) << " ("
       << causeName(a.cause) << "), " << fixed(a.lostUs) << " us: ";
    for (size_t x = 0; x < a.ops.size(); ++x)
      os << (x ? ", " : "") << "'" << label(m.ops[a.ops[x]]) << "'";
    static const char *const what[] = {"duration", "start delay",
                                       "exposed time", "loss"};
    os << "\n     within noise: the " << what[static_cast<int>(w.quantity)]
       << " of ";
    for (size_t x = 0; x < w.ops.size(); ++x)
      os << (x ? " and " : "") << "'" << label(m.ops[w.ops[x]]) << "'";
    os << " deviates " << fixed(w.deviationUs) << " us from EXPECTED, its band "
       << fixed(w.bandUs) << " us (the clean runs deviated up to "
       << fixed(w.spreadUs) << " us)\n     " << a.detail << "\n";
  }
}

} // namespace

void printReport(const Diagnosis &d, const Timeline &e, const Timeline &m,
                 bool allCollectives, std::ostream &os) {
  os << "expected: " << e.origin << ", " << e.ops.size() << " ops\n";
  os << "measured: " << m.origin << ", " << m.ops.size() << " ops\n";
  os << "matched " << d.matching.matched << " ops by name; "
     << d.extraOps.size() << " extra in the measured timeline";
  for (size_t k = 0; k < d.extraOps.size() && k < 3; ++k)
    os << (k ? ", " : " (") << "'" << m.ops[d.extraOps[k]].name << "'";
  os << (d.extraOps.empty() ? "" : d.extraOps.size() > 3 ? ", ...)" : ")");
  os << ", " << d.missingOps.size() << " missing\n";
  os << "span: expected " << fixed(d.expectedSpanUs) << " us, measured "
     << fixed(d.measuredSpanUs) << " us";
  if (d.expectedSpanUs > 0)
    os << " (" << fixed(d.measuredSpanUs / d.expectedSpanUs, 3) << "x)";
  os << "\n";
  double planned = 0, measured = 0;
  for (const CollectiveExposure &c : d.collectives) {
    planned += c.plannedExposedUs;
    measured += c.measuredExposedUs;
  }
  os << "collectives: " << d.collectives.size() << ", exposed "
     << fixed(measured) << " us (planned " << fixed(planned) << " us)\n";

  os << "\nanomalies: " << d.anomalies.size()
     << (d.anomalies.empty() ? "" : ", largest loss first") << "\n";
  for (size_t k = 0; k < d.anomalies.size(); ++k) {
    const Anomaly &a = d.anomalies[k];
    os << "  " << k + 1 << ". " << anomalyKindName(a.kind) << " ("
       << causeName(a.cause) << "), " << fixed(a.lostUs) << " us lost: ";
    for (size_t x = 0; x < a.ops.size(); ++x)
      os << (x ? ", " : "") << "'" << label(m.ops[a.ops[x]]) << "'";
    os << "\n     " << a.detail << "\n";
    for (const Anomaly &c : a.consequences) {
      os << "     consequence: " << anomalyKindName(c.kind) << " ("
         << causeName(c.cause) << "), " << fixed(c.lostUs) << " us: ";
      for (size_t x = 0; x < c.ops.size(); ++x)
        os << (x ? ", " : "") << "'" << label(m.ops[c.ops[x]]) << "'";
      os << "\n       " << c.detail << "\n";
    }
  }

  if (d.withNoiseFloor)
    printWithinNoise(d, m, os);

  os << "\nper collective (exposed us: planned -> measured; hidden under):\n";
  size_t quiet = 0;
  for (const CollectiveExposure &c : d.collectives) {
    double change = c.measuredExposedUs - c.plannedExposedUs;
    bool missing = c.measured < 0;
    if (!allCollectives && !missing && std::fabs(change) < 1.0) {
      ++quiet;
      continue;
    }
    const TimelineOp &op = e.ops[c.expected];
    os << "  " << label(op) << " on " << e.streamName(op.stream) << ": "
       << fixed(c.plannedExposedUs) << " -> "
       << (missing ? std::string("missing") : fixed(c.measuredExposedUs));
    for (size_t k = 0; k < c.hiddenUnder.size() && k < 3; ++k)
      os << (k ? ", " : "; under ") << "'"
         << label(e.ops[c.hiddenUnder[k].first]) << "' "
         << fixed(c.hiddenUnder[k].second);
    if (c.hiddenUnder.size() > 3)
      os << ", +" << c.hiddenUnder.size() - 3 << " more";
    if (c.exposedBandUs >= 0)
      os << "; noise band " << fixed(c.exposedBandUs);
    os << "\n";
  }
  if (quiet)
    os << "  (" << quiet
       << " more exposed as planned, within 1 us; --all-collectives or "
          "--json lists them)\n";

  os << "\nper op class (matched ops; us: expected -> measured):\n";
  for (const ClassDeviation &c : d.classes)
    os << "  " << c.opClass << ": " << c.ops << " ops, " << fixed(c.expectedUs)
       << " -> " << fixed(c.measuredUs)
       << (c.expectedUs > 0 ? " (" + fixed(c.ratio(), 3) + "x)" : std::string())
       << "\n";
}

void writeReportJson(const Diagnosis &d, const Timeline &e, const Timeline &m,
                     std::ostream &os) {
  ordered_json j;
  j["version"] = 1;
  j["expected"] = e.origin;
  j["measured"] = m.origin;
  j["function"] = m.function;
  j["expected_span_us"] = d.expectedSpanUs;
  j["measured_span_us"] = d.measuredSpanUs;
  j["matched_ops"] = d.matching.matched;
  auto anomalyJson = [&](const Anomaly &a) {
    ordered_json x;
    x["kind"] = anomalyKindName(a.kind);
    x["cause"] = causeName(a.cause);
    x["lost_us"] = a.lostUs;
    ordered_json names = ordered_json::array(), refs = ordered_json::array();
    for (int64_t i : a.ops) {
      names.push_back(m.ops[i].name);
      refs.push_back(opRef(m, i));
    }
    x["ops"] = names;
    x["op_details"] = refs;
    x["detail"] = a.detail;
    return x;
  };
  ordered_json anomalies = ordered_json::array();
  for (const Anomaly &a : d.anomalies) {
    ordered_json x = anomalyJson(a);
    ordered_json consequences = ordered_json::array();
    for (const Anomaly &c : a.consequences)
      consequences.push_back(anomalyJson(c));
    x["consequences"] = consequences;
    anomalies.push_back(x);
  }
  j["anomalies"] = anomalies;
  if (d.withNoiseFloor) {
    j["noise"] = {{"runs", d.noiseRuns}, {"margin", d.noiseMargin}};
    ordered_json within = ordered_json::array();
    for (const WithinNoise &w : d.withinNoise) {
      ordered_json x = anomalyJson(w.anomaly);
      ordered_json refs = ordered_json::array();
      for (int64_t i : w.ops)
        refs.push_back(opRef(m, i));
      x["within_noise"] = {{"quantity", noiseQuantityName(w.quantity)},
                           {"ops", refs},
                           {"deviation_us", w.deviationUs},
                           {"band_us", w.bandUs},
                           {"clean_spread_us", w.spreadUs}};
      within.push_back(x);
    }
    j["within_noise"] = within;
  }
  ordered_json collectives = ordered_json::array();
  for (const CollectiveExposure &c : d.collectives) {
    ordered_json x;
    const TimelineOp &op = e.ops[c.expected];
    x["name"] = op.name;
    x["occurrence"] = op.occurrence;
    x["stream"] = e.streamName(op.stream);
    x["class"] = op.opClass;
    x["planned_exposed_us"] = c.plannedExposedUs;
    if (c.measured >= 0) {
      x["measured_exposed_us"] = c.measuredExposedUs;
      x["expected_dur_us"] = op.durUs;
      x["measured_dur_us"] = m.ops[c.measured].durUs;
    } else {
      x["measured_exposed_us"] = nullptr;
    }
    ordered_json under = ordered_json::array();
    for (const auto &[i, ov] : c.hiddenUnder)
      under.push_back({{"name", e.ops[i].name},
                       {"occurrence", e.ops[i].occurrence},
                       {"overlap_us", ov}});
    x["hidden_under"] = under;
    if (c.exposedBandUs >= 0)
      x["exposed_band_us"] = c.exposedBandUs;
    collectives.push_back(x);
  }
  j["collectives"] = collectives;
  ordered_json classes = ordered_json::array();
  for (const ClassDeviation &c : d.classes)
    classes.push_back({{"class", c.opClass},
                       {"ops", c.ops},
                       {"expected_us", c.expectedUs},
                       {"measured_us", c.measuredUs},
                       {"measured_over_expected", c.ratio()}});
  j["op_classes"] = classes;
  ordered_json extra = ordered_json::array(), missing = ordered_json::array();
  for (int64_t i : d.extraOps)
    extra.push_back(opRef(m, i));
  for (int64_t i : d.missingOps)
    missing.push_back(opRef(e, i));
  j["extra_ops"] = extra;
  j["missing_ops"] = missing;
  os << j.dump(2) << "\n";
}

void writeDiagnosisTrace(const Diagnosis &d, const Timeline &e,
                         const Timeline &m, std::ostream &os) {
  // Which anomalies each measured op is part of.
  std::map<int64_t, std::vector<std::string>> marks;
  for (size_t k = 0; k < d.anomalies.size(); ++k) {
    const Anomaly &a = d.anomalies[k];
    std::string tag = "#" + std::to_string(k + 1) + " " +
                      anomalyKindName(a.kind) + " (" + causeName(a.cause) + ")";
    for (int64_t i : a.ops)
      marks[i].push_back(tag);
    for (const Anomaly &c : a.consequences)
      for (int64_t i : c.ops)
        marks[i].push_back(tag + ", consequence: " + anomalyKindName(c.kind) +
                           " (" + causeName(c.cause) + ")");
  }
  json events = json::array();
  auto process = [&](int pid, const Timeline &t, const std::string &what,
                     bool withMarks) {
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", pid},
                      {"args", {{"name", what + " @" + t.function}}}});
    int64_t streams = static_cast<int64_t>(t.streamNames.size());
    for (const TimelineOp &op : t.ops)
      streams = std::max(streams, op.stream + 1);
    for (int64_t s = 0; s < streams; ++s)
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", pid},
                        {"tid", s},
                        {"args", {{"name", t.streamName(s)}}}});
    for (size_t i = 0; i < t.ops.size(); ++i) {
      const TimelineOp &op = t.ops[i];
      json args = {{"class", op.opClass}};
      if (op.aloneUs >= 0)
        args["alone_us"] = op.aloneUs;
      if (op.step >= 0)
        args["step"] = op.step;
      auto it = withMarks ? marks.find(static_cast<int64_t>(i)) : marks.end();
      if (it != marks.end())
        args["anomalies"] = it->second;
      json x = {{"ph", "X"},       {"name", op.name},  {"cat", op.category},
                {"pid", pid},      {"tid", op.stream}, {"ts", op.startUs},
                {"dur", op.durUs}, {"args", args}};
      if (it != marks.end())
        x["cname"] = "terrible";
      events.push_back(x);
    }
    return streams;
  };
  int64_t streams = process(0, m, "measured (diagnosed)", true);
  process(1, e, "expected", false);
  // One slice per anomaly on a track of its own, over the ops it involves.
  int64_t track = streams;
  events.push_back({{"ph", "M"},
                    {"name", "thread_name"},
                    {"pid", 0},
                    {"tid", track},
                    {"args", {{"name", "anomalies"}}}});
  for (size_t k = 0; k < d.anomalies.size(); ++k) {
    const Anomaly &a = d.anomalies[k];
    double begin = m.ops[a.ops.front()].startUs, end = begin;
    json names = json::array();
    for (int64_t i : a.ops) {
      begin = std::min(begin, m.ops[i].startUs);
      end = std::max(end, m.ops[i].endUs());
      names.push_back(m.ops[i].name);
    }
    events.push_back(
        {{"ph", "X"},
         {"name", "#" + std::to_string(k + 1) + " " + anomalyKindName(a.kind) +
                      ": " + causeName(a.cause) + " (" + fixed(a.lostUs) +
                      " us)"},
         {"cat", "anomaly"},
         {"pid", 0},
         {"tid", track},
         {"ts", begin},
         {"dur", end - begin},
         {"cname", "terrible"},
         {"args",
          {{"kind", anomalyKindName(a.kind)},
           {"cause", causeName(a.cause)},
           {"lost_us", a.lostUs},
           {"ops", names},
           {"detail", a.detail}}}});
  }
  os << json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() << "\n";
}

} // namespace diagnosis
} // namespace tandem
