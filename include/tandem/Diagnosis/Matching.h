//===- Matching.h - The same op in two timelines ----------------*- C++ -*-===//
//
// Ops of the expected and the measured timeline are the same op when they
// have the same name and the same occurrence (the k-th op of that name in
// issue order). Ops only the measured timeline has are extra (an injected
// or unplanned kernel); ops only the expected one has are missing.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIAGNOSIS_MATCHING_H
#define TANDEM_DIAGNOSIS_MATCHING_H

#include "tandem/Diagnosis/Timeline.h"

#include <optional>
#include <string>
#include <vector>

namespace tandem {
namespace diagnosis {

struct Matching {
  /// Per expected op, the index of its measured op, or -1.
  std::vector<int64_t> measuredOf;
  /// Per measured op, the index of its expected op, or -1 (extra).
  std::vector<int64_t> expectedOf;
  int64_t matched = 0;
};

/// Matches by (name, occurrence). Fails, naming the op, when a matched
/// pair differs in role (a collective against a compute op, say), or
/// when fewer than `minMatchedFraction` of the expected ops have a
/// namesake: the timelines are then not of the same step.
std::optional<Matching> matchOps(const Timeline &expected,
                                 const Timeline &measured,
                                 double minMatchedFraction, std::string &error);

} // namespace diagnosis
} // namespace tandem

#endif // TANDEM_DIAGNOSIS_MATCHING_H
