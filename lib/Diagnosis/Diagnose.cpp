//===- Diagnose.cpp - Why a measured step lost its planned overlap --------===//

#include "tandem/Diagnosis/Diagnose.h"

#include "tandem/Diagnosis/NoiseFloor.h"
#include "tandem/Diagnosis/Overlap.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace tandem {
namespace diagnosis {

const char *anomalyKindName(AnomalyKind kind) {
  return kind == AnomalyKind::LostOverlap ? "lost_overlap" : "harmful_overlap";
}

const char *causeName(Cause cause) {
  switch (cause) {
  case Cause::ExtraKernel:
    return "extra_kernel";
  case Cause::LongerKernel:
    return "longer_kernel";
  case Cause::Wait:
    return "wait";
  case Cause::SmResidency:
    return "sm_residency";
  case Cause::LateHostLaunch:
    return "late_host_launch";
  case Cause::SlowerCollective:
    return "slower_collective";
  case Cause::ShorterCompute:
    return "shorter_compute";
  case Cause::Contention:
    return "contention";
  case Cause::Unexplained:
    return "unexplained";
  }
  return "unexplained";
}

const char *noiseQuantityName(NoiseQuantity quantity) {
  switch (quantity) {
  case NoiseQuantity::Duration:
    return "duration";
  case NoiseQuantity::Start:
    return "start";
  case NoiseQuantity::Exposed:
    return "exposed";
  case NoiseQuantity::PairLoss:
    return "pair_loss";
  }
  return "exposed";
}

namespace {

std::string us(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f us", v);
  return buf;
}

std::string quoted(const TimelineOp &op) {
  return "'" + op.name + "'" +
         (op.occurrence > 0 ? " (#" + std::to_string(op.occurrence + 1) + ")"
                            : std::string());
}

bool counts(const TimelineOp &op) {
  return op.role != OpRole::Wait && op.durUs > 0;
}

/// Lookups on one timeline: each stream's ops in issue order, and by end.
class Index {
public:
  explicit Index(const Timeline &t) : t(t) {
    for (size_t i = 0; i < t.ops.size(); ++i) {
      const TimelineOp &op = t.ops[i];
      if (!counts(op))
        continue;
      if (static_cast<int64_t>(byStream.size()) <= op.stream) {
        byStream.resize(op.stream + 1);
        byEnd.resize(op.stream + 1);
      }
      byStream[op.stream].push_back(static_cast<int64_t>(i));
    }
    position.assign(t.ops.size(), -1);
    for (auto &list : byStream)
      for (size_t k = 0; k < list.size(); ++k)
        position[list[k]] = static_cast<int64_t>(k);
    for (size_t s = 0; s < byStream.size(); ++s) {
      byEnd[s] = byStream[s];
      std::sort(byEnd[s].begin(), byEnd[s].end(), [&](int64_t a, int64_t b) {
        return t.ops[a].endUs() < t.ops[b].endUs();
      });
    }
  }

  /// The op before `i` on its stream (issue order), or -1.
  int64_t previousOnStream(int64_t i) const {
    if (position[i] <= 0)
      return -1;
    return byStream[t.ops[i].stream][position[i] - 1];
  }

  /// The op whose end is latest among those that end in [start - tol,
  /// start] (and began before `i`): what held `i` back. Ties go to `i`'s
  /// own stream. -1 when none.
  int64_t gate(int64_t i, double tol) const {
    const TimelineOp &op = t.ops[i];
    double eps = 1e-6 * std::max(1.0, std::fabs(op.startUs));
    int64_t best = -1;
    for (int64_t k : endingAt(i, tol)) {
      if (best < 0) {
        best = k;
        continue;
      }
      const TimelineOp &g = t.ops[k], &b = t.ops[best];
      double d = g.endUs() - b.endUs();
      if (d > eps || (std::fabs(d) <= eps && g.stream == op.stream &&
                      b.stream != op.stream))
        best = k;
    }
    return best;
  }

  /// Every op (other than `i`, begun before it) that ends in [start - tol,
  /// start] of `i`.
  std::vector<int64_t> endingAt(int64_t i, double tol) const {
    const TimelineOp &op = t.ops[i];
    double eps = 1e-6 * std::max(1.0, std::fabs(op.startUs));
    std::vector<int64_t> out;
    for (const std::vector<int64_t> &list : byEnd) {
      auto it = std::upper_bound(
          list.begin(), list.end(), op.startUs + eps,
          [&](double v, int64_t k) { return v < t.ops[k].endUs(); });
      while (it != list.begin()) {
        --it;
        const TimelineOp &g = t.ops[*it];
        if (g.endUs() < op.startUs - tol)
          break;
        if (*it != i && g.startUs < op.startUs)
          out.push_back(*it);
      }
    }
    return out;
  }

  /// Compute ops of other streams running at `i`'s start.
  std::vector<int64_t> runningAtStart(int64_t i) const {
    const TimelineOp &op = t.ops[i];
    double eps = 1e-6 * std::max(1.0, std::fabs(op.startUs));
    std::vector<int64_t> out;
    for (size_t s = 0; s < byStream.size(); ++s) {
      if (static_cast<int64_t>(s) == op.stream)
        continue;
      for (int64_t k : byStream[s]) {
        const TimelineOp &x = t.ops[k];
        if (x.role == OpRole::Compute && x.startUs <= op.startUs + eps &&
            x.endUs() > op.startUs + eps)
          out.push_back(k);
      }
    }
    return out;
  }

private:
  const Timeline &t;
  std::vector<std::vector<int64_t>> byStream, byEnd;
  std::vector<int64_t> position;
};

std::vector<Span> spansOf(const Timeline &t) {
  std::vector<Span> spans;
  spans.reserve(t.ops.size());
  for (const TimelineOp &op : t.ops)
    spans.push_back({op.startUs, op.endUs(), op.stream, 0, counts(op)});
  return spans;
}

/// Each op's kind for its time alone: its class and model alone time (ops
/// of one kind and shape share one), else its name less the simulator's
/// position suffix. `model` receives the model alone times.
std::vector<std::string> kindKeys(const Timeline &t,
                                  const std::vector<double> &fallbackAlone,
                                  std::vector<double> &model) {
  std::vector<std::string> keys;
  keys.reserve(t.ops.size());
  model.assign(t.ops.size(), -1);
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const TimelineOp &op = t.ops[i];
    model[i] = op.aloneUs >= 0 ? op.aloneUs : fallbackAlone[i];
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", model[i]);
    keys.push_back(op.opClass + "|" +
                   (model[i] >= 0 ? std::string(buf)
                                  : op.name.substr(0, op.name.find('#'))));
  }
  return keys;
}

/// The isolated median of every kind in a reference run.
std::map<std::string, double> referenceMedians(const Timeline &ref,
                                               double isolatedFraction) {
  std::vector<double> model;
  std::vector<std::string> keys =
      kindKeys(ref, std::vector<double>(ref.ops.size(), -1), model);
  std::vector<double> medians =
      isolatedMedians(spansOf(ref), keys, isolatedFraction);
  std::map<std::string, double> out;
  for (size_t i = 0; i < keys.size(); ++i)
    if (medians[i] >= 0)
      out[keys[i]] = medians[i];
  return out;
}

/// Each op's time alone: the isolated median of its kind in this timeline,
/// else in the reference run, else the model's alone time (its own, else
/// `fallback`'s), else unknown (-1).
std::vector<double> aloneTimes(const Timeline &t,
                               const std::vector<Span> &spans,
                               const std::vector<double> &fallbackAlone,
                               double isolatedFraction,
                               const std::map<std::string, double> &reference) {
  std::vector<double> model;
  std::vector<std::string> keys = kindKeys(t, fallbackAlone, model);
  std::vector<double> medians = isolatedMedians(spans, keys, isolatedFraction);
  for (size_t i = 0; i < medians.size(); ++i) {
    if (medians[i] >= 0)
      continue;
    auto it = reference.find(keys[i]);
    medians[i] = it != reference.end() ? it->second : model[i];
  }
  return medians;
}

/// A deviation that decided a candidate anomaly, on measured op `op` (and,
/// for a pair loss, `partner`): with a noise floor, the candidate is within
/// noise when the deviation lies within the band of that quantity.
struct NoiseCheck {
  NoiseQuantity quantity;
  int64_t op, partner;
  double deviationUs;
};

struct LateCause {
  Cause cause;
  std::vector<int64_t> ops; // measured
  std::string detail;
  /// The anomaly (index) of an earlier collective this one waited behind
  /// on its stream: its loss joins that anomaly instead of a new one.
  int64_t joins = -1;
  /// The deviations the walk decided the cause by (a longer gate).
  std::vector<NoiseCheck> checks = {};
};

/// The overlapped pairs of both timelines and what each cost.
struct PairLosses {
  std::vector<OverlapPair> ep, mp;
  std::vector<PairCost> mCost;
  std::vector<double> mAlone;
  /// Per pair of expected ops overlapped in EXPECTED (lower index first),
  /// the plan's loss on it.
  std::map<std::pair<int64_t, int64_t>, double> plannedLoss;
  /// The plan's loss on the pair of expected ops (x, y), 0 if it gained or
  /// they did not overlap.
  double planned(int64_t x, int64_t y) const {
    auto it = plannedLoss.find({std::min(x, y), std::max(x, y)});
    return it != plannedLoss.end() ? std::max(0.0, it->second) : 0.0;
  }
};

class Diagnoser {
public:
  Diagnoser(const Timeline &e, const Timeline &m, const Matching &match,
            const DiagnosisOptions &o)
      : e(e), m(m), match(match), o(o), ei(e), mi(m) {}

  double threshold(double durUs) const {
    return std::max(o.minLostUs, o.minLostFraction * durUs);
  }

  /// The ops whose end the plan had `i` (expected) start after: its
  /// predecessor on its stream and every op ending just before it starts.
  std::vector<int64_t> plannedGates(int64_t i) const {
    std::vector<int64_t> out;
    if (int64_t p = ei.previousOnStream(i); p >= 0)
      out.push_back(p);
    for (int64_t g : ei.endingAt(i, o.gateToleranceUs))
      if (std::find(out.begin(), out.end(), g) == out.end())
        out.push_back(g);
    return out;
  }

  /// The measured time by which measured op `j`'s planned gates (and its
  /// predecessor on its measured stream) had ended; -inf if none.
  double readyByGates(int64_t j) const {
    double ready = -1e300;
    if (int64_t p = mi.previousOnStream(j); p >= 0)
      ready = m.ops[p].endUs();
    int64_t i = match.expectedOf[j];
    if (i >= 0)
      for (int64_t g : plannedGates(i))
        if (int64_t gm = match.measuredOf[g]; gm >= 0)
          ready = std::max(ready, m.ops[gm].endUs());
    return ready;
  }

  /// How much later than its planned gates allowed measured op `j`
  /// started, less the gap the plan had there.
  double gateDelay(int64_t j) const {
    int64_t i = match.expectedOf[j];
    double ready = readyByGates(j);
    if (i < 0 || ready <= -1e299)
      return 0;
    double plannedReady = -1e300;
    for (int64_t g : plannedGates(i))
      plannedReady = std::max(plannedReady, e.ops[g].endUs());
    double gap = plannedReady <= -1e299
                     ? 0
                     : std::max(0.0, e.ops[i].startUs - plannedReady);
    return m.ops[j].startUs - ready - gap;
  }

  /// How much later than planned collective `j` started against the
  /// compute it was meant to hide under (the expected compute op that
  /// overlapped it most, else the one starting nearest it).
  double lateness(int64_t j, const CollectiveExposure &c) const {
    int64_t anchor = -1;
    for (const auto &[x, ov] : c.hiddenUnder)
      if (match.measuredOf[x] >= 0) {
        anchor = x;
        break;
      }
    if (anchor < 0) {
      double best = 1e300;
      for (size_t x = 0; x < e.ops.size(); ++x) {
        const TimelineOp &op = e.ops[x];
        double d = std::fabs(op.startUs - e.ops[c.expected].startUs);
        if (op.role == OpRole::Compute && op.durUs > 0 &&
            op.stream != e.ops[c.expected].stream && match.measuredOf[x] >= 0 &&
            d < best) {
          best = d;
          anchor = static_cast<int64_t>(x);
        }
      }
    }
    if (anchor < 0)
      return 0;
    const TimelineOp &ha = e.ops[anchor];
    const TimelineOp &hm = m.ops[match.measuredOf[anchor]];
    return (m.ops[j].startUs - hm.startUs) -
           (e.ops[c.expected].startUs - ha.startUs);
  }

  /// Whether collective `j` (measured) lost time waiting for SMs: the trace
  /// says so (waited_for_sms_us beyond the plan's), or it ran longer than
  /// planned and ended one planned duration after a GEMM launched before it
  /// and running at its start released the SMs. Sets the GEMM (or -1) and
  /// a sentence.
  bool smResidency(int64_t j, int64_t &holder, std::string &why) const {
    int64_t i = match.expectedOf[j];
    if (i < 0 || m.ops[j].role != OpRole::Collective)
      return false;
    const TimelineOp &mo = m.ops[j], &eo = e.ops[i];
    double limit = threshold(eo.durUs);
    holder = -1;
    for (int64_t x : mi.runningAtStart(j))
      if (x < j && (holder < 0 || m.ops[x].opClass == "gemm"))
        holder = x;
    if (mo.waitedForSmsUs >= 0) {
      double waited = mo.waitedForSmsUs - std::max(0.0, eo.waitedForSmsUs);
      if (!(waited > limit))
        return false;
      why = quoted(mo) + " waited " + us(mo.waitedForSmsUs) +
            " for SMs (planned " + us(std::max(0.0, eo.waitedForSmsUs)) + ")" +
            (holder >= 0 ? ", held by " + quoted(m.ops[holder]) : "");
      return true;
    }
    if (!(mo.durUs - eo.durUs > limit) || holder < 0 ||
        m.ops[holder].opClass != "gemm")
      return false;
    double after = mo.endUs() - m.ops[holder].endUs();
    if (std::fabs(after - eo.durUs) >
        std::max(o.gateToleranceUs, 0.25 * eo.durUs))
      return false;
    why = quoted(mo) + " ran " + us(mo.durUs) + " instead of " + us(eo.durUs) +
          " and ended " + us(after) + " after " + quoted(m.ops[holder]) +
          ", launched before it, released the SMs";
    return true;
  }

  /// Why measured op `j` started late: what held it back at its start,
  /// walked back along planned dependences that were themselves late.
  /// `depth` bounds the walk.
  LateCause explain(int64_t j, int depth) const {
    const TimelineOp &mo = m.ops[j];
    double ready = readyByGates(j);
    if (mo.hostUs >= 0 && ready > -1e299 &&
        mo.hostUs > ready + o.hostToleranceUs &&
        mo.startUs <= mo.hostUs + o.hostToleranceUs)
      return LateCause{Cause::LateHostLaunch,
                       {j},
                       quoted(mo) + " was enqueued by the host at " +
                           us(mo.hostUs) + ", " + us(mo.hostUs - ready) +
                           " after the GPU could have started it, and "
                           "started at " +
                           us(mo.startUs)};
    int64_t g = mi.gate(j, o.gateToleranceUs);
    if (g < 0)
      return LateCause{Cause::Unexplained,
                       {j},
                       "no op ends when " + quoted(mo) + " starts" +
                           (mo.hostUs < 0 ? " and the trace has no host "
                                            "launch times"
                                          : "")};
    const TimelineOp &go = m.ops[g];
    bool sameStream = go.stream == mo.stream;
    int64_t ge = match.expectedOf[g];
    if (ge < 0)
      return LateCause{sameStream ? Cause::ExtraKernel : Cause::Wait,
                       {j, g},
                       quoted(mo) + " started after " + quoted(go) + " (" +
                           us(go.durUs) + ") on " + m.streamName(go.stream) +
                           ", which the plan does not have"};
    if (auto root = anomalyOf.find(g); root != anomalyOf.end())
      return LateCause{Cause::Unexplained, {j}, "", root->second};
    int64_t i = match.expectedOf[j];
    std::vector<int64_t> planned =
        i >= 0 ? plannedGates(i) : std::vector<int64_t>{};
    bool wasPlanned =
        std::find(planned.begin(), planned.end(), ge) != planned.end();
    if (!wasPlanned && !sameStream)
      return LateCause{Cause::Wait,
                       {j, g},
                       quoted(mo) + " started when " + quoted(go) + " on " +
                           m.streamName(go.stream) +
                           " ended; the plan has it wait for no such op"};
    double longer = go.durUs - e.ops[ge].durUs;
    int64_t holder = -1;
    std::string held;
    if (sameStream && smResidency(g, holder, held)) {
      LateCause c{Cause::SmResidency,
                  {j, g},
                  quoted(mo) + " started after " + quoted(go) +
                      ", which ran long: " + held};
      if (holder >= 0)
        c.ops.push_back(holder);
      c.checks.push_back({NoiseQuantity::Duration, g, -1, longer});
      return c;
    }
    if (longer > threshold(e.ops[ge].durUs)) {
      LateCause c{Cause::LongerKernel,
                  {j, g},
                  quoted(mo) + " started after " + quoted(go) + " on " +
                      m.streamName(go.stream) + ", which ran " + us(go.durUs) +
                      " instead of " + us(e.ops[ge].durUs)};
      c.checks.push_back({NoiseQuantity::Duration, g, -1, longer});
      return c;
    }
    if (depth > 0) {
      LateCause up = explain(g, depth - 1);
      if (up.joins >= 0)
        return up;
      up.ops.insert(up.ops.begin(), j);
      up.detail = quoted(mo) + " started after " + quoted(go) +
                  ", which was late: " + up.detail;
      return up;
    }
    return LateCause{Cause::Unexplained,
                     {j, g},
                     quoted(mo) + " started after " + quoted(go) +
                         ", and the walk back stops there"};
  }

  /// The overlapped pairs of both timelines, each op's time alone, and
  /// what each pair cost against serial.
  PairLosses pairLosses() const {
    PairLosses p;
    std::vector<Span> es = spansOf(e), ms = spansOf(m);
    p.ep = overlappingPairs(es);
    p.mp = overlappingPairs(ms);
    std::map<std::string, double> reference;
    if (o.aloneReference)
      reference = referenceMedians(*o.aloneReference, o.isolatedFraction);
    std::vector<double> eAlone =
        aloneTimes(e, es, std::vector<double>(e.ops.size(), -1),
                   o.isolatedFraction, reference);
    std::vector<double> fallback(m.ops.size(), -1);
    for (size_t j = 0; j < m.ops.size(); ++j)
      if (match.expectedOf[j] >= 0)
        fallback[j] = e.ops[match.expectedOf[j]].aloneUs;
    p.mAlone = aloneTimes(m, ms, fallback, o.isolatedFraction, reference);
    std::vector<PairCost> eCost = pairCosts(es, p.ep, eAlone);
    p.mCost = pairCosts(ms, p.mp, p.mAlone);
    for (size_t k = 0; k < p.ep.size(); ++k)
      p.plannedLoss[{static_cast<int64_t>(p.ep[k].a),
                     static_cast<int64_t>(p.ep[k].b)}] = eCost[k].lostUs();
    return p;
  }

  /// Per expected collective, in issue order, its planned and measured
  /// exposure and the compute it was meant to hide under.
  std::vector<CollectiveExposure>
  collectiveExposures(const std::vector<OverlapPair> &ep) const {
    std::vector<double> eExposed = exposedUs(e), mExposed = exposedUs(m);
    std::map<int64_t, std::vector<std::pair<int64_t, double>>> under;
    for (const OverlapPair &p : ep) {
      int64_t a = p.a, b = p.b;
      for (int k = 0; k < 2; ++k, std::swap(a, b))
        if (e.ops[a].role == OpRole::Collective &&
            e.ops[b].role == OpRole::Compute)
          under[a].push_back({b, p.overlapUs});
    }
    std::vector<CollectiveExposure> out;
    for (size_t i = 0; i < e.ops.size(); ++i) {
      if (e.ops[i].role != OpRole::Collective)
        continue;
      CollectiveExposure c;
      c.expected = static_cast<int64_t>(i);
      c.measured = match.measuredOf[i];
      c.plannedExposedUs = eExposed[i];
      c.measuredExposedUs = c.measured >= 0 ? mExposed[c.measured] : 0;
      c.hiddenUnder = under[i];
      std::stable_sort(
          c.hiddenUnder.begin(), c.hiddenUnder.end(),
          [](const auto &x, const auto &y) { return x.second > y.second; });
      if (o.noise)
        c.exposedBandUs = o.noise->bandUs(NoiseQuantity::Exposed, c.expected);
      out.push_back(std::move(c));
    }
    return out;
  }

  /// What every matched op deviates by, in the quantities the rules
  /// compare (OpDeviation), and every overlapped pair's loss beyond the
  /// plan's.
  Deviations deviations() const {
    Deviations dv;
    dv.matching = match;
    dv.ops.assign(e.ops.size(), OpDeviation());
    PairLosses p = pairLosses();
    std::vector<CollectiveExposure> exposures = collectiveExposures(p.ep);
    for (const CollectiveExposure &c : exposures)
      if (c.measured >= 0) {
        dv.ops[c.expected].startUs = lateness(c.measured, c);
        dv.ops[c.expected].exposedUs = c.measuredExposedUs - c.plannedExposedUs;
      }
    for (size_t i = 0; i < e.ops.size(); ++i) {
      int64_t j = match.measuredOf[i];
      if (j < 0)
        continue;
      dv.ops[i].durUs = m.ops[j].durUs - e.ops[i].durUs;
      if (e.ops[i].role == OpRole::Compute)
        dv.ops[i].startUs = gateDelay(j);
    }
    // A pair the plan overlapped counts with no loss where the measurement
    // does not overlap it.
    for (const auto &[pair, loss] : p.plannedLoss)
      dv.pairLossUs[pair] = -p.planned(pair.first, pair.second);
    for (size_t k = 0; k < p.mp.size(); ++k) {
      int64_t ea = match.expectedOf[p.mp[k].a],
              eb = match.expectedOf[p.mp[k].b];
      if (ea < 0 || eb < 0)
        continue;
      dv.pairLossUs[{std::min(ea, eb), std::max(ea, eb)}] =
          p.mCost[k].lostUs() - p.planned(ea, eb);
    }
    return dv;
  }

  Diagnosis run() {
    Diagnosis d;
    d.matching = match;
    for (size_t j = 0; j < m.ops.size(); ++j)
      if (match.expectedOf[j] < 0)
        d.extraOps.push_back(static_cast<int64_t>(j));
    for (size_t i = 0; i < e.ops.size(); ++i)
      if (match.measuredOf[i] < 0)
        d.missingOps.push_back(static_cast<int64_t>(i));
    d.expectedSpanUs = e.spanUs();
    d.measuredSpanUs = m.spanUs();
    if (o.noise) {
      d.withNoiseFloor = true;
      d.noiseRuns = o.noise->runs;
      d.noiseMargin = o.noise->margin;
    }

    // Harmful overlap first: a collective slowed by such a pair is
    // reported there, not again as a lost overlap.
    PairLosses p = pairLosses();
    const std::vector<OverlapPair> &mp = p.mp;
    const std::vector<PairCost> &mCost = p.mCost;
    const std::vector<double> &mAlone = p.mAlone;
    std::vector<bool> inHarmfulPair(m.ops.size(), false);
    for (size_t k = 0; k < mp.size(); ++k) {
      int64_t a = mp[k].a, b = mp[k].b;
      double planned = 0;
      int64_t ea = match.expectedOf[a], eb = match.expectedOf[b];
      if (ea >= 0 && eb >= 0)
        planned = p.planned(ea, eb);
      // Beyond the plan's own loss on the pair by more than the threshold
      // of the pair's serial time, and, where the plan already lost time on
      // it, by more than that loss again (a pair that was harmful in the
      // expected timeline is that timeline's finding; run-to-run noise on
      // it is not a new one).
      double lost = mCost[k].lostUs() - planned;
      if (!(mCost[k].lostUs() > 0) ||
          !(lost > std::max(threshold(mCost[k].serialUs), planned)))
        continue;
      Anomaly an;
      an.kind = AnomalyKind::HarmfulOverlap;
      an.cause = Cause::Contention;
      // The collective first when there is one.
      if (m.ops[b].role == OpRole::Collective &&
          m.ops[a].role != OpRole::Collective)
        std::swap(a, b);
      an.ops = {a, b};
      an.lostUs = lost;
      an.detail = "together " + us(mCost[k].combinedUs) + ", serially " +
                  us(mCost[k].serialUs) + " (" + quoted(m.ops[a]) + " " +
                  us(m.ops[a].durUs) + " against " + us(mAlone[a]) +
                  " alone, " + quoted(m.ops[b]) + " " + us(m.ops[b].durUs) +
                  " against " + us(mAlone[b]) + " alone; overlapped " +
                  us(mp[k].overlapUs) + ")" +
                  (planned > 0 ? "; the plan expected a loss of " + us(planned)
                               : std::string());
      if (withinNoise(an, {{NoiseQuantity::PairLoss, a, b, lost}}, d))
        continue;
      inHarmfulPair[a] = inHarmfulPair[b] = true;
      // Collectives delayed behind this pair's collective join it.
      for (int64_t x : {a, b})
        if (m.ops[x].role == OpRole::Collective && !anomalyOf.count(x))
          anomalyOf[x] = static_cast<int64_t>(d.anomalies.size());
      d.anomalies.push_back(std::move(an));
    }

    // Exposure per collective and what it was meant to hide under.
    d.collectives = collectiveExposures(p.ep);
    for (const CollectiveExposure &c : d.collectives)
      if (c.measured >= 0)
        lostOverlap(c, inHarmfulPair, d);

    // Per op class.
    std::map<std::string, size_t> classIndex;
    for (size_t i = 0; i < e.ops.size(); ++i) {
      int64_t j = match.measuredOf[i];
      if (j < 0 || e.ops[i].role == OpRole::Wait || e.ops[i].opClass.empty())
        continue;
      auto [it, inserted] =
          classIndex.insert({e.ops[i].opClass, d.classes.size()});
      if (inserted)
        d.classes.push_back(ClassDeviation{e.ops[i].opClass});
      ClassDeviation &c = d.classes[it->second];
      ++c.ops;
      c.expectedUs += e.ops[i].durUs;
      c.measuredUs += m.ops[j].durUs;
    }

    // A collective held off the SMs by a GEMM ran long beside it without
    // contention between them: SM residency explains that pair.
    std::set<std::pair<int64_t, int64_t>> held;
    for (const Anomaly &a : d.anomalies)
      if (a.cause == Cause::SmResidency)
        for (size_t k = 1; k < a.ops.size(); ++k)
          held.insert({a.ops[k - 1], a.ops[k]});
    auto isHeld = [&](const Anomaly &a) {
      return a.kind == AnomalyKind::HarmfulOverlap && a.ops.size() == 2 &&
             held.count({a.ops[0], a.ops[1]});
    };
    d.anomalies.erase(
        std::remove_if(d.anomalies.begin(), d.anomalies.end(), isHeld),
        d.anomalies.end());
    d.withinNoise.erase(
        std::remove_if(d.withinNoise.begin(), d.withinNoise.end(),
                       [&](const WithinNoise &w) { return isHeld(w.anomaly); }),
        d.withinNoise.end());
    attachConsequences(p.ep, mp, d);
    std::stable_sort(
        d.anomalies.begin(), d.anomalies.end(),
        [](const Anomaly &x, const Anomaly &y) { return x.lostUs > y.lostUs; });
    std::stable_sort(d.withinNoise.begin(), d.withinNoise.end(),
                     [](const WithinNoise &x, const WithinNoise &y) {
                       return x.anomaly.lostUs > y.anomaly.lostUs;
                     });
    return d;
  }

private:
  /// An effect whose ops include a root's culprit, or an op that ran beside
  /// that culprit in MEASURED and not in EXPECTED (the culprit is an extra
  /// op, or their expected namesakes did not overlap), is the root's
  /// consequence: the culprit changed what that op ran with.
  void attachConsequences(const std::vector<OverlapPair> &ep,
                          const std::vector<OverlapPair> &mp, Diagnosis &d) {
    std::set<std::pair<int64_t, int64_t>> planned, beside;
    for (const OverlapPair &p : ep)
      planned.insert(
          {std::min<int64_t>(p.a, p.b), std::max<int64_t>(p.a, p.b)});
    for (const OverlapPair &p : mp) {
      beside.insert({p.a, p.b});
      beside.insert({p.b, p.a});
    }
    auto newlyBeside = [&](int64_t x, int64_t culprit) {
      if (!beside.count({x, culprit}))
        return false;
      int64_t ex = match.expectedOf[x], ec = match.expectedOf[culprit];
      return ex < 0 || ec < 0 ||
             !planned.count({std::min(ex, ec), std::max(ex, ec)});
    };
    // The op before each measured op on its stream (by start), or -1.
    std::vector<int64_t> previousOnStream(m.ops.size(), -1);
    {
      std::vector<int64_t> order(m.ops.size());
      for (size_t k = 0; k < order.size(); ++k)
        order[k] = static_cast<int64_t>(k);
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
        return m.ops[x].startUs < m.ops[y].startUs;
      });
      std::map<int64_t, int64_t> last;
      for (int64_t k : order) {
        if (m.ops[k].role == OpRole::Wait)
          continue;
        auto it = last.find(m.ops[k].stream);
        if (it != last.end())
          previousOnStream[k] = it->second;
        last[m.ops[k].stream] = k;
      }
    }
    // A late host launch left the GPU idle until its culprit started: an
    // op that is, on its stream, the first to run after that idle gap (no
    // op ran on any stream between its stream's previous op and the
    // culprit's start) ran on a GPU that had been idle, and what it lost
    // there is the late launch's consequence.
    auto afterIdleGap = [&](int64_t x, const Anomaly &root) {
      if (root.cause != Cause::LateHostLaunch || root.culprit < 0 ||
          x == root.culprit)
        return false;
      const TimelineOp &culprit = m.ops[root.culprit];
      if (m.ops[x].startUs < culprit.startUs)
        return false;
      int64_t prev = previousOnStream[x];
      if (prev == root.culprit)
        return false;
      double from = prev >= 0 ? m.ops[prev].endUs() : 0.0;
      if (from >= culprit.startUs)
        return false;
      for (const TimelineOp &o : m.ops)
        if (&o != &culprit && o.role != OpRole::Wait && o.durUs > 0 &&
            o.startUs < culprit.startUs && o.endUs() > from)
          return false;
      return true;
    };
    std::vector<int64_t> rootOf(d.anomalies.size(), -1);
    std::vector<bool> idleGap(d.anomalies.size(), false);
    for (size_t b = 0; b < d.anomalies.size(); ++b) {
      const Anomaly &effect = d.anomalies[b];
      if (!isEffect(effect.cause))
        continue;
      for (size_t a = 0; a < d.anomalies.size() && rootOf[b] < 0; ++a) {
        int64_t culprit = d.anomalies[a].culprit;
        if (a == b || culprit < 0)
          continue;
        for (int64_t x : effect.ops) {
          if (x == culprit || newlyBeside(x, culprit)) {
            rootOf[b] = static_cast<int64_t>(a);
            break;
          }
          if (afterIdleGap(x, d.anomalies[a])) {
            rootOf[b] = static_cast<int64_t>(a);
            idleGap[b] = true;
            break;
          }
        }
      }
    }
    std::vector<Anomaly> roots;
    std::vector<int64_t> newIndex(d.anomalies.size(), -1);
    for (size_t k = 0; k < d.anomalies.size(); ++k)
      if (rootOf[k] < 0) {
        newIndex[k] = static_cast<int64_t>(roots.size());
        roots.push_back(std::move(d.anomalies[k]));
      }
    for (size_t k = 0; k < d.anomalies.size(); ++k)
      if (rootOf[k] >= 0) {
        Anomaly &root = roots[newIndex[rootOf[k]]];
        d.anomalies[k].detail +=
            "; a consequence of " + quoted(m.ops[root.culprit]) +
            (idleGap[k] ? ": it ran first on its stream after the GPU sat "
                          "idle waiting for that late launch"
                        : ", which ran beside it");
        root.consequences.push_back(std::move(d.anomalies[k]));
      }
    d.anomalies = std::move(roots);
  }

  /// With a noise floor: whether one of `checks` (the candidate's loss
  /// first, then the deviations that decided its cause) lies within the
  /// band the clean runs set for it; if so the candidate is recorded as
  /// within noise. A check on an op EXPECTED does not have has no band.
  bool withinNoise(Anomaly &an, const std::vector<NoiseCheck> &checks,
                   Diagnosis &d) const {
    if (!o.noise)
      return false;
    for (const NoiseCheck &c : checks) {
      int64_t i = match.expectedOf[c.op];
      int64_t partner = c.partner >= 0 ? match.expectedOf[c.partner] : -1;
      if (i < 0 || (c.partner >= 0 && partner < 0))
        continue;
      double spread = 0;
      double band = o.noise->bandUs(c.quantity, i, partner, &spread);
      if (!(c.deviationUs <= band))
        continue;
      WithinNoise w;
      w.anomaly = std::move(an);
      w.quantity = c.quantity;
      w.ops = {c.op};
      if (c.partner >= 0)
        w.ops.push_back(c.partner);
      w.deviationUs = c.deviationUs;
      w.bandUs = band;
      w.spreadUs = spread;
      d.withinNoise.push_back(std::move(w));
      return true;
    }
    return false;
  }

  /// Records a lost overlap about its first op, or, when an earlier one
  /// has the same cause and the same culprit (its last op, e.g. the one
  /// late GEMM two collectives were planned under), adds it to that one:
  /// one root cause, one anomaly.
  void add(Anomaly an, Diagnosis &d) {
    if (an.kind == AnomalyKind::LostOverlap && !isEffect(an.cause) &&
        an.cause != Cause::Unexplained && an.ops.size() >= 2)
      an.culprit = an.ops.back();
    if (an.ops.size() >= 2) {
      for (size_t k = 0; k < d.anomalies.size(); ++k) {
        Anomaly &root = d.anomalies[k];
        if (root.kind != AnomalyKind::LostOverlap || root.cause != an.cause ||
            root.ops.size() < 2 || root.ops.back() != an.ops.back())
          continue;
        int64_t subject = an.ops.front();
        root.ops.insert(root.ops.end() - 1, subject);
        root.lostUs += an.lostUs;
        root.detail += "; the same cause exposed " + quoted(m.ops[subject]) +
                       " " + us(an.lostUs) + " more";
        anomalyOf[subject] = static_cast<int64_t>(k);
        return;
      }
    }
    anomalyOf[an.ops.front()] = static_cast<int64_t>(d.anomalies.size());
    d.anomalies.push_back(std::move(an));
  }

  void lostOverlap(const CollectiveExposure &c,
                   const std::vector<bool> &inHarmfulPair, Diagnosis &d) {
    const TimelineOp &eo = e.ops[c.expected];
    int64_t j = c.measured;
    const TimelineOp &mo = m.ops[j];
    double lost = c.measuredExposedUs - c.plannedExposedUs;
    double limit = threshold(eo.durUs);
    if (!(lost > limit))
      return;
    Anomaly an;
    an.kind = AnomalyKind::LostOverlap;
    an.lostUs = lost;
    std::string exposure = "exposed " + us(c.measuredExposedUs) +
                           " instead of " + us(c.plannedExposedUs) + ": ";
    // With a noise floor, the loss and then each deviation a rule below
    // decides by are held against their bands.
    std::vector<NoiseCheck> checks = {{NoiseQuantity::Exposed, j, -1, lost}};
    auto report = [&](Anomaly an) {
      if (!withinNoise(an, checks, d))
        add(std::move(an), d);
    };
    double late = lateness(j, c);
    if (late > limit) {
      LateCause why = explain(j, 8);
      if (why.joins >= 0) {
        Anomaly &root = d.anomalies[why.joins];
        root.ops.push_back(j);
        root.lostUs += lost;
        root.detail += "; it delayed " + quoted(mo) + " behind it on " +
                       m.streamName(mo.stream) + ", exposed " + us(lost) +
                       " more";
        anomalyOf[j] = why.joins;
        return;
      }
      an.cause = why.cause;
      an.ops = why.ops;
      if (an.ops.front() != j)
        an.ops.insert(an.ops.begin(), j);
      an.detail = exposure + "it started " + us(late) +
                  " late against the compute planned under it: " + why.detail;
      checks.push_back({NoiseQuantity::Start, j, -1, late});
      checks.insert(checks.end(), why.checks.begin(), why.checks.end());
      report(std::move(an));
      return;
    }
    double longer = mo.durUs - eo.durUs;
    // SM residency: it waited for the SMs of a GEMM launched before it.
    int64_t holder = -1;
    std::string why;
    if (smResidency(j, holder, why)) {
      an.cause = Cause::SmResidency;
      an.ops = {j};
      if (holder >= 0)
        an.ops.push_back(holder);
      an.detail = exposure + why;
      checks.push_back({NoiseQuantity::Duration, j, -1, longer});
      report(std::move(an));
      return;
    }
    // The compute planned under it started late (a late launch, a wait, a
    // kernel before it on its stream).
    for (const auto &[x, ov] : c.hiddenUnder) {
      int64_t h = match.measuredOf[x];
      if (h < 0)
        continue;
      double delay = gateDelay(h);
      if (!(delay > limit))
        continue;
      LateCause late = explain(h, 8);
      if (late.joins >= 0 || late.cause == Cause::Unexplained)
        continue;
      an.cause = late.cause;
      an.ops = {j};
      an.ops.insert(an.ops.end(), late.ops.begin(), late.ops.end());
      an.detail = exposure + "the compute planned under it, " +
                  quoted(m.ops[h]) + ", started " + us(delay) +
                  " late: " + late.detail;
      checks.push_back({NoiseQuantity::Start, h, -1, delay});
      checks.insert(checks.end(), late.checks.begin(), late.checks.end());
      report(std::move(an));
      return;
    }
    if (longer > limit) {
      if (inHarmfulPair[j])
        return; // reported as harmful overlap
      an.cause = Cause::SlowerCollective;
      an.ops = {j};
      an.detail = exposure + "it started on time but ran " + us(mo.durUs) +
                  " instead of " + us(eo.durUs);
      checks.push_back({NoiseQuantity::Duration, j, -1, longer});
      report(std::move(an));
      return;
    }
    an.cause = Cause::ShorterCompute;
    an.ops = {j};
    std::string names;
    for (size_t k = 0; k < c.hiddenUnder.size() && k < 3; ++k) {
      int64_t x = match.measuredOf[c.hiddenUnder[k].first];
      if (x >= 0)
        an.ops.push_back(x);
      names += (k ? ", " : "") + quoted(e.ops[c.hiddenUnder[k].first]);
    }
    an.detail = exposure +
                "it started on time and ran as planned, but the "
                "compute planned under it" +
                (names.empty() ? std::string() : " (" + names + ")") +
                " covered " + us(lost) + " less of it";
    report(std::move(an));
  }

  const Timeline &e, &m;
  const Matching &match;
  const DiagnosisOptions &o;
  Index ei, mi;
  /// Measured collective -> the lost-overlap anomaly it is the subject of.
  std::map<int64_t, int64_t> anomalyOf;
};

} // namespace

bool isEffect(Cause cause) {
  return cause == Cause::Contention || cause == Cause::SlowerCollective ||
         cause == Cause::ShorterCompute;
}

std::vector<double> exposedUs(const Timeline &t) {
  IntervalSet compute;
  for (const TimelineOp &op : t.ops)
    if (op.role == OpRole::Compute && op.durUs > 0)
      compute.push_back({op.startUs, op.endUs()});
  compute = unite(std::move(compute));
  std::vector<double> out(t.ops.size(), 0);
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const TimelineOp &op = t.ops[i];
    if (op.role == OpRole::Collective)
      out[i] = op.durUs - coveredUs(compute, op.startUs, op.endUs());
  }
  return out;
}

std::optional<Diagnosis> diagnose(const Timeline &expected,
                                  const Timeline &measured,
                                  const DiagnosisOptions &options,
                                  std::string &error) {
  if (expected.function != measured.function) {
    error = expected.origin + " is of function '" + expected.function +
            "' but " + measured.origin + " of '" + measured.function + "'";
    return std::nullopt;
  }
  if (const NoiseFloor *noise = options.noise;
      noise && (noise->expectedOrigin != expected.origin ||
                noise->expectedOps != expected.ops.size())) {
    error = "the noise floor was measured against " + noise->expectedOrigin +
            " (" + std::to_string(noise->expectedOps) + " ops), not against " +
            expected.origin + " (" + std::to_string(expected.ops.size()) +
            " ops)";
    return std::nullopt;
  }
  std::optional<Matching> match =
      matchOps(expected, measured, options.minMatchedFraction, error);
  if (!match)
    return std::nullopt;
  return Diagnoser(expected, measured, *match, options).run();
}

std::optional<Deviations> measureDeviations(const Timeline &expected,
                                            const Timeline &measured,
                                            const DiagnosisOptions &options,
                                            std::string &error) {
  if (expected.function != measured.function) {
    error = measured.origin + " is of function '" + measured.function +
            "' but " + expected.origin + " of '" + expected.function + "'";
    return std::nullopt;
  }
  std::optional<Matching> match =
      matchOps(expected, measured, options.minMatchedFraction, error);
  if (!match)
    return std::nullopt;
  DiagnosisOptions plain = options;
  plain.noise = nullptr;
  return Diagnoser(expected, measured, *match, plain).deviations();
}

} // namespace diagnosis
} // namespace tandem
