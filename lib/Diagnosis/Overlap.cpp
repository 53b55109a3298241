//===- Overlap.cpp - Which kernels ran together, and what it cost ---------===//

#include "tandem/Diagnosis/Overlap.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace tandem {
namespace diagnosis {

IntervalSet unite(IntervalSet intervals) {
  intervals.erase(std::remove_if(intervals.begin(), intervals.end(),
                                 [](const std::pair<double, double> &i) {
                                   return !(i.second > i.first);
                                 }),
                  intervals.end());
  std::sort(intervals.begin(), intervals.end());
  IntervalSet out;
  for (const auto &i : intervals) {
    if (!out.empty() && i.first <= out.back().second)
      out.back().second = std::max(out.back().second, i.second);
    else
      out.push_back(i);
  }
  return out;
}

double coveredUs(const IntervalSet &set, double startUs, double endUs) {
  if (!(endUs > startUs))
    return 0;
  // The first interval that ends after the start.
  auto it = std::upper_bound(set.begin(), set.end(), startUs,
                             [](double t, const std::pair<double, double> &i) {
                               return t < i.second;
                             });
  double covered = 0;
  for (; it != set.end() && it->first < endUs; ++it)
    covered += std::min(endUs, it->second) - std::max(startUs, it->first);
  return covered;
}

std::vector<OverlapPair> overlappingPairs(const std::vector<Span> &spans) {
  std::vector<size_t> order;
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i].counts && spans[i].endUs > spans[i].startUs)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return spans[x].startUs < spans[y].startUs ||
           (spans[x].startUs == spans[y].startUs && x < y);
  });
  // Sweep: the spans still running when each one starts. There are about
  // as many as streams, so this is linear in practice.
  std::vector<OverlapPair> pairs;
  std::vector<size_t> active;
  for (size_t i : order) {
    const Span &s = spans[i];
    active.erase(
        std::remove_if(active.begin(), active.end(),
                       [&](size_t j) { return spans[j].endUs <= s.startUs; }),
        active.end());
    for (size_t j : active) {
      const Span &t = spans[j];
      if (t.device != s.device || t.stream == s.stream)
        continue;
      double ov = std::min(s.endUs, t.endUs) - s.startUs;
      if (ov > 0)
        pairs.push_back({std::min(i, j), std::max(i, j), ov});
    }
    active.push_back(i);
  }
  std::sort(pairs.begin(), pairs.end(),
            [](const OverlapPair &x, const OverlapPair &y) {
              return x.a < y.a || (x.a == y.a && x.b < y.b);
            });
  return pairs;
}

std::vector<double> overlappedUs(const std::vector<Span> &spans) {
  // Per device and stream, the union of everything else on the device.
  std::map<std::pair<int64_t, int64_t>, IntervalSet> byStream;
  for (const Span &s : spans)
    if (s.counts)
      byStream[{s.device, s.stream}].push_back({s.startUs, s.endUs});
  std::map<std::pair<int64_t, int64_t>, IntervalSet> others;
  for (const auto &[key, own] : byStream) {
    IntervalSet all;
    for (const auto &[otherKey, set] : byStream)
      if (otherKey.first == key.first && otherKey.second != key.second)
        all.insert(all.end(), set.begin(), set.end());
    others[key] = unite(std::move(all));
  }
  std::vector<double> out(spans.size(), 0);
  for (size_t i = 0; i < spans.size(); ++i) {
    const Span &s = spans[i];
    if (!s.counts)
      continue;
    auto it = others.find({s.device, s.stream});
    if (it != others.end())
      out[i] = coveredUs(it->second, s.startUs, s.endUs);
  }
  return out;
}

std::vector<double> isolatedMedians(const std::vector<Span> &spans,
                                    const std::vector<std::string> &keys,
                                    double isolatedFraction,
                                    std::vector<int64_t> *samples) {
  std::vector<double> overlapped = overlappedUs(spans);
  std::map<std::string, std::vector<double>> alone;
  for (size_t i = 0; i < spans.size(); ++i) {
    double dur = spans[i].endUs - spans[i].startUs;
    if (spans[i].counts && dur > 0 && overlapped[i] <= isolatedFraction * dur)
      alone[keys[i]].push_back(dur);
  }
  std::map<std::string, double> median;
  for (auto &[key, durations] : alone) {
    std::sort(durations.begin(), durations.end());
    size_t n = durations.size();
    median[key] = n % 2 ? durations[n / 2]
                        : (durations[n / 2 - 1] + durations[n / 2]) / 2;
  }
  std::vector<double> out(spans.size(), -1);
  if (samples)
    samples->assign(spans.size(), 0);
  for (size_t i = 0; i < spans.size(); ++i) {
    auto it = median.find(keys[i]);
    if (it == median.end())
      continue;
    out[i] = it->second;
    if (samples)
      (*samples)[i] = static_cast<int64_t>(alone[keys[i]].size());
  }
  return out;
}

std::vector<PairCost> pairCosts(const std::vector<Span> &spans,
                                const std::vector<OverlapPair> &pairs,
                                const std::vector<double> &aloneUs) {
  std::vector<double> overlapSum(spans.size(), 0);
  for (const OverlapPair &p : pairs) {
    overlapSum[p.a] += p.overlapUs;
    overlapSum[p.b] += p.overlapUs;
  }
  auto alone = [&](size_t i) {
    double dur = spans[i].endUs - spans[i].startUs;
    return aloneUs[i] >= 0 ? aloneUs[i] : dur;
  };
  auto share = [&](size_t i, double ov) {
    double dur = spans[i].endUs - spans[i].startUs;
    double excess = std::max(0.0, dur - alone(i));
    return overlapSum[i] > 0 ? excess * ov / overlapSum[i] : 0.0;
  };
  std::vector<PairCost> out;
  out.reserve(pairs.size());
  for (const OverlapPair &p : pairs) {
    PairCost c;
    c.serialUs = alone(p.a) + alone(p.b);
    c.combinedUs = c.serialUs + share(p.a, p.overlapUs) +
                   share(p.b, p.overlapUs) - p.overlapUs;
    out.push_back(c);
  }
  return out;
}

} // namespace diagnosis
} // namespace tandem
