//===- Diagnose.h - Why a measured step lost its planned overlap -*- C++
//-*-===//
//
// Compares a measured timeline with the expected one (the simulator's, or
// a clean run's) op by op and finds the two anomaly classes of broken
// overlap: lost expected overlap (a collective more exposed than planned,
// with its cause) and harmful overlap (an overlapped pair that took longer
// than it would have serially). docs/diagnosis.md defines every rule.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIAGNOSIS_DIAGNOSE_H
#define TANDEM_DIAGNOSIS_DIAGNOSE_H

#include "tandem/Diagnosis/Matching.h"
#include "tandem/Diagnosis/Timeline.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tandem {
namespace diagnosis {

struct NoiseFloor;

struct DiagnosisOptions {
  /// An anomaly must lose more than max(minLostUs, minLostFraction x the
  /// duration of the op it is about).
  double minLostUs = 10;
  double minLostFraction = 0.1;
  /// An op that ends at most this long before another starts (and not
  /// after it) may be what held it back (its gate).
  double gateToleranceUs = 10;
  /// A launch counts as late when the GPU started the op within this long
  /// of the host enqueueing it, and the host enqueued it this much later
  /// than the GPU could have started it.
  double hostToleranceUs = 20;
  /// Ops overlapped for at most this fraction of their duration count as
  /// isolated (their median duration is their kind's time alone).
  double isolatedFraction = 0.02;
  /// Below this fraction of the expected ops matched, the timelines are
  /// refused as not of the same step.
  double minMatchedFraction = 0.5;
  /// A run of the same kinds of ops without overlap (tandem-run's trace of
  /// the unscheduled reference plan): its isolated medians are the times
  /// alone of kinds that never ran isolated in the timelines diagnosed.
  /// Kinds match by op class and model alone time. Null: none.
  const Timeline *aloneReference = nullptr;
  /// The run-to-run spread of the expected timeline (NoiseFloor.h, measured
  /// against the same expected timeline): a candidate anomaly whose
  /// deviation lies within its band is reported as within noise. Null:
  /// none, every candidate is an anomaly.
  const NoiseFloor *noise = nullptr;
};

enum class AnomalyKind { LostOverlap, HarmfulOverlap };

enum class Cause {
  ExtraKernel,      ///< an op the plan does not have ran on the stream first
  LongerKernel,     ///< the op before it on its stream ran longer
  Wait,             ///< it waited for an op of another stream it should not
  SmResidency,      ///< it waited for the SMs of a GEMM launched before it
  LateHostLaunch,   ///< the host enqueued it after it could have run
  SlowerCollective, ///< it started on time but ran longer than planned
  ShorterCompute,   ///< the compute planned under it covered less of it
  Contention,       ///< harmful overlap: the pair slowed each other down
  Unexplained,      ///< it started late and nothing the trace holds says why
};

const char *anomalyKindName(AnomalyKind kind);
const char *causeName(Cause cause);

struct Anomaly {
  AnomalyKind kind = AnomalyKind::LostOverlap;
  Cause cause = Cause::Unexplained;
  /// The ops involved, as indices into the measured timeline; the first is
  /// the op the anomaly is about (the collective, or the pair's first op).
  std::vector<int64_t> ops;
  double lostUs = 0;
  /// One sentence with the numbers that decided it.
  std::string detail;
  /// The op a root cause blames (the extra or longer kernel, the op waited
  /// for, the GEMM holding the SMs, the op enqueued late; a measured op
  /// index), or -1 for a cause that names none (the effects, unexplained).
  int64_t culprit = -1;
  /// Anomalies this one caused (docs/diagnosis.md, "Consequences"): an
  /// effect (contention, a slower collective, shorter compute) on an op its
  /// culprit ran beside. Not ranked, nor counted, as root causes.
  std::vector<Anomaly> consequences;
};

/// Whether `cause` is an effect (it names no op that held the collective
/// back): contention, slower_collective, shorter_compute.
bool isEffect(Cause cause);

/// The quantities anomaly decisions compare between the measured and the
/// expected timeline, on which the noise floor sets a band
/// (docs/diagnosis.md, "Noise floor").
enum class NoiseQuantity {
  Duration, ///< an op's duration
  Start,    ///< how late it started (OpDeviation::startUs)
  Exposed,  ///< a collective's exposed time
  PairLoss, ///< an overlapped pair's loss against serial, beyond the plan's
};

const char *noiseQuantityName(NoiseQuantity quantity);

struct CollectiveExposure {
  int64_t expected = -1,
          measured = -1; ///< Op indices (measured: -1 if missing).
  double plannedExposedUs = 0, measuredExposedUs = 0;
  /// The noise band of its exposed time; -1 without a noise floor.
  double exposedBandUs = -1;
  /// The compute of the expected timeline it overlaps, by overlap in us,
  /// largest first (expected op indices).
  std::vector<std::pair<int64_t, double>> hiddenUnder;
};

struct ClassDeviation {
  std::string opClass;
  int64_t ops = 0;
  double expectedUs = 0, measuredUs = 0;
  double ratio() const { return expectedUs > 0 ? measuredUs / expectedUs : 0; }
};

/// A candidate anomaly that one of the deviations deciding it (its loss
/// first) put within the noise band of the ops involved: not reported as
/// an anomaly, but listed as within noise.
struct WithinNoise {
  /// The candidate as it would have been reported (no consequences).
  Anomaly anomaly;
  NoiseQuantity quantity = NoiseQuantity::Exposed;
  /// The measured op whose band it is (for a pair loss, both ops).
  std::vector<int64_t> ops;
  /// The deviation that decided the candidate, and its band; `spreadUs`:
  /// the largest deviation of the clean runs, before the margin.
  double deviationUs = 0, bandUs = 0, spreadUs = 0;
};

struct Diagnosis {
  Matching matching;
  std::vector<int64_t> extraOps;   ///< Measured ops without a namesake.
  std::vector<int64_t> missingOps; ///< Expected ops without one.
  std::vector<CollectiveExposure> collectives; ///< In expected issue order.
  std::vector<Anomaly> anomalies;              ///< Largest loss first.
  /// With a noise floor: the candidates within noise, largest loss first.
  std::vector<WithinNoise> withinNoise;
  /// With a noise floor: its clean runs (origins) and margin.
  bool withNoiseFloor = false;
  std::vector<std::string> noiseRuns;
  double noiseMargin = 0;
  std::vector<ClassDeviation> classes; ///< Matched ops, by class.
  double expectedSpanUs = 0, measuredSpanUs = 0;
};

/// Diagnoses `measured` against `expected`. Fails (with `error`) when the
/// timelines are not of the same step (see matchOps) or of different
/// functions, or when `options.noise` was measured against another
/// expected timeline.
std::optional<Diagnosis> diagnose(const Timeline &expected,
                                  const Timeline &measured,
                                  const DiagnosisOptions &options,
                                  std::string &error);

/// How one matched op of the measured timeline deviates from its expected
/// namesake, in the quantities the rules compare (measured minus expected;
/// a positive start is a later start).
struct OpDeviation {
  double durUs = 0;
  /// A collective: how much later than planned it started against the
  /// compute it was meant to hide under (rule 1); any other op except a
  /// wait: how much later than its planned gates allowed (rule 3).
  double startUs = 0;
  /// A collective: measured minus planned exposed time.
  double exposedUs = 0;
};

struct Deviations {
  Matching matching;
  /// Per expected op; zero for ops without a namesake.
  std::vector<OpDeviation> ops;
  /// Per pair of expected ops (lower index first) overlapped in either
  /// timeline: the measured loss against serial (0 if the pair did not
  /// overlap there) less the plan's loss on it (0 if it gained or did not
  /// overlap), as the harmful-overlap rule compares them.
  std::map<std::pair<int64_t, int64_t>, double> pairLossUs;
};

/// The deviations of `measured` from `expected` (same preconditions and
/// errors as diagnose; `options.noise` is not used).
std::optional<Deviations> measureDeviations(const Timeline &expected,
                                            const Timeline &measured,
                                            const DiagnosisOptions &options,
                                            std::string &error);

/// Per op, the time it ran with no compute op of another stream beside it
/// (zero for ops that are not collectives).
std::vector<double> exposedUs(const Timeline &timeline);

} // namespace diagnosis
} // namespace tandem

#endif // TANDEM_DIAGNOSIS_DIAGNOSE_H
