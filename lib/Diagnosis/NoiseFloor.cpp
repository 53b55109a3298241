//===- NoiseFloor.cpp - Run-to-run spread of a step, from clean runs ------===//

#include "tandem/Diagnosis/NoiseFloor.h"

#include <algorithm>
#include <cmath>

namespace tandem {
namespace diagnosis {

namespace {

std::string opRef(const TimelineOp &op) {
  return "'" + op.name + "' (occurrence " + std::to_string(op.occurrence + 1) +
         ")";
}

void widen(double &spread, double deviation) {
  spread = std::max(spread, std::fabs(deviation));
}

} // namespace

double NoiseFloor::bandUs(NoiseQuantity quantity, int64_t i, int64_t partner,
                          double *spread) const {
  double raw = 0;
  if (quantity == NoiseQuantity::PairLoss) {
    auto it = pairLossUs.find({std::min(i, partner), std::max(i, partner)});
    raw = it != pairLossUs.end() ? it->second : 0;
  } else if (i >= 0 && static_cast<size_t>(i) < ops.size()) {
    const OpSpread &s = ops[i];
    raw = quantity == NoiseQuantity::Duration ? s.durUs
          : quantity == NoiseQuantity::Start  ? s.startUs
                                              : s.exposedUs;
  }
  if (spread)
    *spread = raw;
  return margin * raw;
}

std::optional<NoiseFloor> measureNoiseFloor(
    const Timeline &expected, const std::vector<const Timeline *> &cleanRuns,
    const DiagnosisOptions &options, double margin, std::string &error) {
  NoiseFloor floor;
  floor.expectedOrigin = expected.origin;
  floor.expectedOps = expected.ops.size();
  floor.margin = margin;
  floor.ops.assign(expected.ops.size(), OpSpread());
  for (const Timeline *run : cleanRuns) {
    std::optional<Deviations> dv =
        measureDeviations(expected, *run, options, error);
    if (!dv)
      return std::nullopt;
    // Bands are per op of EXPECTED: every op needs its sample from every
    // run, and an op EXPECTED lacks would be no clean run of its plan.
    for (size_t i = 0; i < expected.ops.size(); ++i)
      if (dv->matching.measuredOf[i] < 0) {
        error = run->origin + " has no op " + opRef(expected.ops[i]) +
                " of the expected timeline " + expected.origin +
                "; a clean run of the same plan runs every op of it";
        return std::nullopt;
      }
    for (size_t j = 0; j < run->ops.size(); ++j)
      if (dv->matching.expectedOf[j] < 0) {
        error = run->origin + " has op " + opRef(run->ops[j]) +
                ", which the expected timeline " + expected.origin +
                " does not have; a clean run of the same plan runs no "
                "other op";
        return std::nullopt;
      }
    for (size_t i = 0; i < expected.ops.size(); ++i) {
      widen(floor.ops[i].durUs, dv->ops[i].durUs);
      widen(floor.ops[i].startUs, dv->ops[i].startUs);
      widen(floor.ops[i].exposedUs, dv->ops[i].exposedUs);
    }
    for (const auto &[pair, loss] : dv->pairLossUs)
      widen(floor.pairLossUs[pair], loss);
    floor.runs.push_back(run->origin);
  }
  return floor;
}

} // namespace diagnosis
} // namespace tandem
