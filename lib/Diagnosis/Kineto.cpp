//===- Kineto.cpp - Overlap in a PyTorch profiler trace -------------------===//

#include "tandem/Diagnosis/Kineto.h"

#include "JsonSupport.h"

#include "tandem/Diagnosis/Overlap.h"
#include "tandem/Diagnosis/Timeline.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>

namespace tandem {
namespace diagnosis {

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;

namespace {

/// An integer that Kineto writes as a number, or as "stream 7" in tids.
std::optional<int64_t> looseInt(const json &object, const char *key) {
  if (std::optional<int64_t> v = intField(object, key))
    return v;
  std::optional<std::string> s = stringField(object, key);
  if (!s)
    return std::nullopt;
  size_t digits = s->find_last_not_of("0123456789");
  std::string tail = digits == std::string::npos ? *s : s->substr(digits + 1);
  if (tail.empty() || tail.size() > 18)
    return std::nullopt;
  return std::stoll(tail);
}

std::string where(const KinetoKernel &k) {
  return "'" + k.name + "' (device " + std::to_string(k.device) + ", stream " +
         std::to_string(k.stream) + ", at " + fixed(k.startUs) + " us)";
}

} // namespace

std::optional<KinetoTrace> parseKinetoTrace(const std::string &text,
                                            const std::string &origin,
                                            const KinetoOptions &options,
                                            std::string &error) {
  std::regex pattern;
  try {
    pattern = std::regex(options.collectivePattern, std::regex::ECMAScript);
  } catch (const std::regex_error &e) {
    error = "the collective pattern '" + options.collectivePattern +
            "' is not a regular expression: " + e.what();
    return std::nullopt;
  }
  std::optional<json> doc = parseJson(text, origin, error);
  if (!doc)
    return std::nullopt;
  if (!doc->is_object() || !doc->contains("traceEvents") ||
      !(*doc)["traceEvents"].is_array()) {
    error = origin + ": not a Kineto trace: no \"traceEvents\" array";
    return std::nullopt;
  }
  KinetoTrace t;
  t.origin = origin;
  const json &events = (*doc)["traceEvents"];
  for (size_t i = 0; i < events.size(); ++i) {
    const json &e = events[i];
    if (!e.is_object() || e.value("ph", json()) != "X" ||
        e.value("cat", json()) != "kernel")
      continue;
    std::string at = origin + ": traceEvents[" + std::to_string(i) + "]";
    KinetoKernel k;
    std::optional<std::string> name = stringField(e, "name");
    std::optional<double> ts = numberField(e, "ts");
    std::optional<double> dur = numberField(e, "dur");
    if (!name || !ts || !dur || *dur < 0) {
      error = at + ": a kernel needs a string \"name\", a number \"ts\" and "
                   "a non-negative number \"dur\"";
      return std::nullopt;
    }
    k.name = *name;
    k.startUs = *ts;
    k.durUs = *dur;
    json args = e.value("args", json::object());
    std::optional<int64_t> device = intField(args, "device");
    std::optional<int64_t> stream = intField(args, "stream");
    if (!device)
      device = looseInt(e, "pid");
    if (!stream)
      stream = looseInt(e, "tid");
    if (!device || !stream) {
      error = at + " ('" + k.name +
              "'): a kernel needs args.device and args.stream (or an "
              "integer pid and tid)";
      return std::nullopt;
    }
    k.device = *device;
    k.stream = *stream;
    k.key = k.name;
    for (const char *dim : {"grid", "block"})
      if (args.contains(dim))
        k.key += " " + std::string(dim) + args[dim].dump();
    k.collective = std::regex_search(k.name, pattern);
    t.kernels.push_back(std::move(k));
  }
  if (t.kernels.empty()) {
    error = origin + ": no GPU kernels (events with \"cat\": \"kernel\"); "
                     "was the profiler run with ProfilerActivity.CUDA?";
    return std::nullopt;
  }
  std::stable_sort(t.kernels.begin(), t.kernels.end(),
                   [](const KinetoKernel &a, const KinetoKernel &b) {
                     return a.startUs < b.startUs;
                   });
  return t;
}

std::optional<KinetoTrace> readKinetoTrace(const std::string &path,
                                           const KinetoOptions &options,
                                           std::string &error) {
  std::string text;
  if (!readFileText(path, text, error))
    return std::nullopt;
  return parseKinetoTrace(text, path, options, error);
}

KinetoReport analyseKineto(const KinetoTrace &t, const KinetoOptions &o) {
  KinetoReport r;
  std::vector<Span> spans;
  std::vector<std::string> keys;
  for (const KinetoKernel &k : t.kernels) {
    spans.push_back({k.startUs, k.startUs + k.durUs, k.stream, k.device, true});
    keys.push_back(k.key);
  }
  // Compute per device: every kernel that is not a collective.
  std::map<int64_t, std::vector<std::pair<int64_t, std::pair<double, double>>>>
      compute;
  for (const KinetoKernel &k : t.kernels)
    if (!k.collective)
      compute[k.device].push_back({k.stream, {k.startUs, k.startUs + k.durUs}});
  for (size_t i = 0; i < t.kernels.size(); ++i) {
    const KinetoKernel &k = t.kernels[i];
    if (!k.collective)
      continue;
    IntervalSet others;
    for (const auto &[stream, interval] : compute[k.device])
      if (stream != k.stream && interval.second > k.startUs &&
          interval.first < k.startUs + k.durUs)
        others.push_back(interval);
    KinetoCollective c;
    c.kernel = i;
    c.durUs = k.durUs;
    c.underComputeUs =
        coveredUs(unite(std::move(others)), k.startUs, k.startUs + k.durUs);
    r.collectiveUs += c.durUs;
    r.underComputeUs += c.underComputeUs;
    r.collectives.push_back(c);
  }

  std::vector<int64_t> samples;
  std::vector<double> alone =
      isolatedMedians(spans, keys, o.isolatedFraction, &samples);
  std::vector<double> overlapped = overlappedUs(spans);
  for (size_t i = 0; i < t.kernels.size(); ++i) {
    double dur = t.kernels[i].durUs;
    if (alone[i] < 0 || overlapped[i] <= o.isolatedFraction * dur)
      continue;
    double slower = dur - alone[i];
    if (slower > std::max(o.minLostUs, o.minLostFraction * alone[i])) {
      KinetoSlowKernel s;
      s.kernel = i;
      s.durUs = dur;
      s.isolatedMedianUs = alone[i];
      s.isolatedSamples = samples[i];
      s.overlappedUs = overlapped[i];
      r.slowKernels.push_back(s);
    }
  }
  std::stable_sort(r.slowKernels.begin(), r.slowKernels.end(),
                   [](const KinetoSlowKernel &a, const KinetoSlowKernel &b) {
                     return a.slowdown() > b.slowdown();
                   });

  std::vector<OverlapPair> pairs = overlappingPairs(spans);
  std::vector<PairCost> costs = pairCosts(spans, pairs, alone);
  for (size_t k = 0; k < pairs.size(); ++k) {
    size_t a = pairs[k].a, b = pairs[k].b;
    // A pair is judged only where both sides' isolated times are known.
    if (alone[a] < 0 || alone[b] < 0)
      continue;
    double lost = costs[k].lostUs();
    if (!(lost > std::max(o.minLostUs, o.minLostFraction * costs[k].serialUs)))
      continue;
    if (t.kernels[b].collective && !t.kernels[a].collective)
      std::swap(a, b);
    r.harmfulPairs.push_back(
        {a, b, pairs[k].overlapUs, costs[k].combinedUs, costs[k].serialUs});
  }
  std::stable_sort(r.harmfulPairs.begin(), r.harmfulPairs.end(),
                   [](const KinetoHarmfulPair &x, const KinetoHarmfulPair &y) {
                     return x.lostUs() > y.lostUs();
                   });
  return r;
}

void printKinetoReport(const KinetoTrace &t, const KinetoReport &r,
                       std::ostream &os) {
  os << "kineto trace: " << t.origin << ", " << t.kernels.size() << " kernels, "
     << r.collectives.size() << " collective kernels\n";
  os << "collectives: " << fixed(r.collectiveUs) << " us, "
     << fixed(r.underComputeUs) << " us under compute";
  if (r.collectiveUs > 0)
    os << " (" << fixed(100 * r.underComputeUs / r.collectiveUs) << "%)";
  os << "\n\nharmful overlap: " << r.harmfulPairs.size()
     << (r.harmfulPairs.empty() ? "" : ", largest loss first") << "\n";
  for (size_t k = 0; k < r.harmfulPairs.size(); ++k) {
    const KinetoHarmfulPair &p = r.harmfulPairs[k];
    os << "  " << k + 1 << ". " << fixed(p.lostUs())
       << " us lost: " << where(t.kernels[p.a]) << " with "
       << where(t.kernels[p.b]) << "\n     together " << fixed(p.combinedUs)
       << " us, serially " << fixed(p.serialUs)
       << " us (isolated medians), overlapped " << fixed(p.overlapUs)
       << " us\n";
  }
  os << "\noverlapped kernels slower than their isolated median: "
     << r.slowKernels.size() << "\n";
  for (const KinetoSlowKernel &s : r.slowKernels)
    os << "  " << where(t.kernels[s.kernel]) << ": " << fixed(s.durUs)
       << " us, " << fixed(s.slowdown(), 2) << "x its isolated median "
       << fixed(s.isolatedMedianUs) << " us (" << s.isolatedSamples
       << " samples), overlapped " << fixed(s.overlappedUs) << " us\n";
  os << "\nper collective (us: duration, under compute, exposed):\n";
  for (const KinetoCollective &c : r.collectives)
    os << "  " << where(t.kernels[c.kernel]) << ": " << fixed(c.durUs) << ", "
       << fixed(c.underComputeUs) << ", " << fixed(c.exposedUs()) << "\n";
}

void writeKinetoJson(const KinetoTrace &t, const KinetoReport &r,
                     std::ostream &os) {
  auto kernel = [&](size_t i) {
    const KinetoKernel &k = t.kernels[i];
    return ordered_json{{"name", k.name},
                        {"device", k.device},
                        {"stream", k.stream},
                        {"start_us", k.startUs},
                        {"dur_us", k.durUs}};
  };
  ordered_json j;
  j["version"] = 1;
  j["kineto_trace"] = t.origin;
  j["kernels"] = t.kernels.size();
  j["collective_us"] = r.collectiveUs;
  j["under_compute_us"] = r.underComputeUs;
  ordered_json anomalies = ordered_json::array();
  for (const KinetoHarmfulPair &p : r.harmfulPairs)
    anomalies.push_back({{"kind", "harmful_overlap"},
                         {"cause", "contention"},
                         {"lost_us", p.lostUs()},
                         {"ops", {t.kernels[p.a].name, t.kernels[p.b].name}},
                         {"op_details", {kernel(p.a), kernel(p.b)}},
                         {"combined_us", p.combinedUs},
                         {"serial_us", p.serialUs},
                         {"overlap_us", p.overlapUs}});
  j["anomalies"] = anomalies;
  ordered_json collectives = ordered_json::array();
  for (const KinetoCollective &c : r.collectives) {
    ordered_json x = kernel(c.kernel);
    x["under_compute_us"] = c.underComputeUs;
    x["exposed_us"] = c.exposedUs();
    collectives.push_back(x);
  }
  j["collectives"] = collectives;
  ordered_json slow = ordered_json::array();
  for (const KinetoSlowKernel &s : r.slowKernels) {
    ordered_json x = kernel(s.kernel);
    x["isolated_median_us"] = s.isolatedMedianUs;
    x["isolated_samples"] = s.isolatedSamples;
    x["overlapped_us"] = s.overlappedUs;
    x["slowdown"] = s.slowdown();
    slow.push_back(x);
  }
  j["slower_kernels"] = slow;
  os << j.dump(2) << "\n";
}

} // namespace diagnosis
} // namespace tandem
