//===- TimelineBuilder.h - Hand-built timelines for the tests ---*- C++ -*-===//

#ifndef TANDEM_TEST_UNIT_DIAGNOSIS_TIMELINEBUILDER_H
#define TANDEM_TEST_UNIT_DIAGNOSIS_TIMELINEBUILDER_H

#include "tandem/Diagnosis/Timeline.h"

#include <map>
#include <string>

namespace tandem {
namespace diagnosis {

/// Ops appended in issue order; occurrences numbered as the readers do.
struct TimelineBuilder {
  Timeline t;
  std::map<std::string, int64_t> seen;

  explicit TimelineBuilder(std::string origin) {
    t.origin = std::move(origin);
    t.function = "step";
    t.streamNames = {"compute", "comm @tp"};
  }

  TimelineOp &add(const std::string &name, int64_t stream, OpRole role,
                  double start, double dur, double alone = -1,
                  const std::string &cls = "") {
    TimelineOp op;
    op.name = name;
    op.occurrence = seen[name]++;
    op.stream = stream;
    op.role = role;
    op.category = role == OpRole::Collective ? "collective"
                  : role == OpRole::Wait     ? "wait"
                                             : "gemm";
    op.opClass = !cls.empty()                 ? cls
                 : role == OpRole::Collective ? "all_gather"
                 : role == OpRole::Wait       ? ""
                                              : "gemm";
    op.startUs = start;
    op.durUs = dur;
    op.aloneUs = alone;
    t.ops.push_back(op);
    return t.ops.back();
  }
  TimelineOp &compute(const std::string &name, double start, double dur,
                      double alone = -1) {
    return add(name, 0, OpRole::Compute, start, dur, alone);
  }
  TimelineOp &collective(const std::string &name, double start, double dur,
                         double alone = -1) {
    return add(name, 1, OpRole::Collective, start, dur, alone);
  }
};

} // namespace diagnosis
} // namespace tandem

#endif // TANDEM_TEST_UNIT_DIAGNOSIS_TIMELINEBUILDER_H
