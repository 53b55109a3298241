//===- NoiseFloor.h - Run-to-run spread of a step, from clean runs -*- C++
//-*-===//
//
// One clean run taken as the expected timeline is one sample: another clean
// run of the same plan differs from it (a GEMM 50 us shorter, a collective
// slower after an idle GPU), and the rules of Diagnose.h would report that
// difference as an anomaly. The noise floor measures it: EXPECTED against
// several other clean runs of the same plan, per op, the largest deviation
// of every quantity an anomaly decision compares (docs/diagnosis.md, "Noise
// floor"). A candidate anomaly whose deviation lies within that band is
// reported as within noise instead.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIAGNOSIS_NOISEFLOOR_H
#define TANDEM_DIAGNOSIS_NOISEFLOOR_H

#include "tandem/Diagnosis/Diagnose.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tandem {
namespace diagnosis {

/// Per expected op, the largest absolute deviation from EXPECTED that the
/// clean runs showed, before the margin (OpDeviation defines each).
struct OpSpread {
  double durUs = 0, startUs = 0, exposedUs = 0;
};

struct NoiseFloor {
  /// The expected timeline it was measured against (its origin and op
  /// count): a floor is valid for that timeline only.
  std::string expectedOrigin;
  size_t expectedOps = 0;
  /// The clean runs, by origin.
  std::vector<std::string> runs;
  /// A band is `margin` x the largest deviation.
  double margin = 1.5;
  /// Per expected op.
  std::vector<OpSpread> ops;
  /// Per pair of expected ops (lower index first) that overlapped in
  /// EXPECTED or in a clean run: the largest |pair loss deviation|.
  std::map<std::pair<int64_t, int64_t>, double> pairLossUs;

  /// The band of `quantity` of expected op `i` (for PairLoss, of the pair
  /// (i, partner)); the deviation before the margin in `spread` if given.
  double bandUs(NoiseQuantity quantity, int64_t i, int64_t partner = -1,
                double *spread = nullptr) const;
};

/// The noise floor of `expected` from `cleanRuns`: clean runs of the same
/// plan, each diagnosed against `expected` as a measurement (with
/// `options`: the same thresholds, times alone and reference). Fails, with
/// `error` naming the run, when a run is of another function, is not of
/// the same step (matchOps), or lacks an op of `expected` or has one it
/// does not: a clean run of the same plan runs exactly its ops.
std::optional<NoiseFloor> measureNoiseFloor(
    const Timeline &expected, const std::vector<const Timeline *> &cleanRuns,
    const DiagnosisOptions &options, double margin, std::string &error);

} // namespace diagnosis
} // namespace tandem

#endif // TANDEM_DIAGNOSIS_NOISEFLOOR_H
