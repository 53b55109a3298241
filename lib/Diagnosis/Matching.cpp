//===- Matching.cpp - The same op in two timelines ------------------------===//

#include "tandem/Diagnosis/Matching.h"

#include <map>

namespace tandem {
namespace diagnosis {

namespace {
const char *roleName(OpRole role) {
  switch (role) {
  case OpRole::Compute:
    return "a compute op";
  case OpRole::Collective:
    return "a collective";
  case OpRole::Wait:
    return "a wait";
  }
  return "an op";
}
} // namespace

std::optional<Matching> matchOps(const Timeline &expected,
                                 const Timeline &measured,
                                 double minMatchedFraction,
                                 std::string &error) {
  Matching m;
  m.measuredOf.assign(expected.ops.size(), -1);
  m.expectedOf.assign(measured.ops.size(), -1);
  std::map<std::pair<std::string, int64_t>, int64_t> byKey;
  for (size_t i = 0; i < expected.ops.size(); ++i)
    byKey[{expected.ops[i].name, expected.ops[i].occurrence}] =
        static_cast<int64_t>(i);
  int64_t firstMissing = -1;
  for (size_t j = 0; j < measured.ops.size(); ++j) {
    const TimelineOp &op = measured.ops[j];
    auto it = byKey.find({op.name, op.occurrence});
    if (it == byKey.end())
      continue;
    const TimelineOp &e = expected.ops[it->second];
    if (e.role != op.role) {
      error = "'" + op.name + "' (occurrence " +
              std::to_string(op.occurrence + 1) + ") is " + roleName(e.role) +
              " in " + expected.origin + " but " + roleName(op.role) + " in " +
              measured.origin;
      return std::nullopt;
    }
    m.measuredOf[it->second] = static_cast<int64_t>(j);
    m.expectedOf[j] = it->second;
    ++m.matched;
  }
  for (size_t i = 0; i < expected.ops.size() && firstMissing < 0; ++i)
    if (m.measuredOf[i] < 0)
      firstMissing = static_cast<int64_t>(i);
  if (static_cast<double>(m.matched) <
      minMatchedFraction * static_cast<double>(expected.ops.size())) {
    error = "only " + std::to_string(m.matched) + " of the " +
            std::to_string(expected.ops.size()) + " ops of " + expected.origin +
            " have a namesake in " + measured.origin +
            (firstMissing >= 0 ? " (the first without one: '" +
                                     expected.ops[firstMissing].name + "')"
                               : std::string()) +
            "; they are not timelines of the same step";
    return std::nullopt;
  }
  return m;
}

} // namespace diagnosis
} // namespace tandem
