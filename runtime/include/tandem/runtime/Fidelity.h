//===- Fidelity.h - Measured against predicted, per op class ----*- C++ -*-===//
//
// Where a measured step and the simulator's prediction of it differ: the
// steps of a plan grouped by op class (GEMMs, attention forward and
// backward, norms, element-wise, layout copies, opaque ops, and each
// collective kind), with the sum of their measured durations beside the sum
// of their predicted durations in the schedule (contention included) and
// alone. Plain C++ (TandemPlan): tandem-run reports it, and it is tested
// without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_FIDELITY_H
#define TANDEM_RUNTIME_FIDELITY_H

#include "tandem/runtime/Plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tandem {
namespace runtime {

struct ClassFidelity {
  std::string opClass;
  int64_t steps = 0;
  /// Steps of the class that carry a predicted duration (the sums below
  /// cover only those; a plan without a prediction has none).
  int64_t predictedSteps = 0;
  double measuredUs = 0;       ///< Sum of the predicted steps' durations.
  double predictedUs = 0;      ///< Their predicted durations in the schedule.
  double predictedAloneUs = 0; ///< Their predicted times alone (0 if none).
  /// measured / predicted (in the schedule); 0 when nothing was predicted.
  double ratio() const {
    return predictedUs > 0 ? measuredUs / predictedUs : 0;
  }
};

/// The op class a step belongs to: "gemm", "attention", "attention_grad",
/// "norm", "norm_grad", "elementwise", "layout" (slice, concat,
/// ring_concat), "opaque", or the collective's kind ("all_gather", ...).
/// Sync steps launch nothing and have no class (std::nullopt).
std::optional<std::string> opClassOf(const Step &step);

/// The op class of an IR op name as plans and traces carry it
/// ("tandem.matmul", "tandem.all_gather_start", ...), by the rule above:
/// the `_start` form of a collective is in its collective's class. A name
/// that is not a tandem op, and "tandem.wait", have no class.
std::optional<std::string> opClassOfOpName(const std::string &opName);

/// Groups the steps of `plan` by op class, in order of first appearance.
/// `measuredUs[i]` is step i's measured duration; it must have one entry
/// per step (else the result is empty and `error` says why).
std::vector<ClassFidelity> compareByClass(const Plan &plan,
                                          const std::vector<double> &measuredUs,
                                          std::string &error);

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_FIDELITY_H
