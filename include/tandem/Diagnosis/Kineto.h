//===- Kineto.h - Overlap in a PyTorch profiler trace ------------*- C++
//-*-===//
//
// For jobs Tandem did not schedule: reads the GPU kernels of a Kineto trace
// (torch.profiler's export_chrome_trace: "traceEvents" with "ph": "X",
// "cat": "kernel", args.device and args.stream) and reports, per
// collective kernel (NCCL's ncclDevKernel_* / ncclKernel_*), how much of it
// ran under compute, and which overlapped kernels ran slower than their
// isolated median, with the pairs whose overlap made them slower than
// running serially (harmful overlap). There is no plan, so no lost
// expected overlap.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIAGNOSIS_KINETO_H
#define TANDEM_DIAGNOSIS_KINETO_H

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tandem {
namespace diagnosis {

struct KinetoKernel {
  std::string name;
  /// Kernels of one kind: the name and, when the trace gives them, the
  /// grid and block dimensions.
  std::string key;
  int64_t device = 0, stream = 0;
  double startUs = 0, durUs = 0;
  bool collective = false;
};

struct KinetoTrace {
  std::string origin;
  std::vector<KinetoKernel> kernels; ///< In start order.
};

struct KinetoOptions {
  /// ECMAScript regular expression a collective kernel's name matches
  /// (searched, not anchored).
  std::string collectivePattern = "^nccl(Dev)?Kernel";
  double minLostUs = 5;
  double minLostFraction = 0.1;
  double isolatedFraction = 0.02;
};

/// Reads the kernels; fails on malformed events or a trace without any
/// kernel, naming the file and event. `options` decides what a collective
/// is (an invalid pattern is an error).
std::optional<KinetoTrace> readKinetoTrace(const std::string &path,
                                           const KinetoOptions &options,
                                           std::string &error);
std::optional<KinetoTrace> parseKinetoTrace(const std::string &text,
                                            const std::string &origin,
                                            const KinetoOptions &options,
                                            std::string &error);

struct KinetoCollective {
  size_t kernel = 0;
  double durUs = 0;
  double underComputeUs = 0; ///< Beside compute kernels of other streams.
  double exposedUs() const { return durUs - underComputeUs; }
};

struct KinetoSlowKernel {
  size_t kernel = 0;
  double isolatedMedianUs = 0;
  int64_t isolatedSamples = 0;
  double durUs = 0, overlappedUs = 0;
  double slowdown() const {
    return isolatedMedianUs > 0 ? durUs / isolatedMedianUs : 0;
  }
};

struct KinetoHarmfulPair {
  size_t a = 0, b = 0; ///< The collective first when there is one.
  double overlapUs = 0, combinedUs = 0, serialUs = 0;
  double lostUs() const { return combinedUs - serialUs; }
};

struct KinetoReport {
  std::vector<KinetoCollective> collectives;
  std::vector<KinetoSlowKernel> slowKernels;   ///< Slowest first.
  std::vector<KinetoHarmfulPair> harmfulPairs; ///< Largest loss first.
  double collectiveUs = 0, underComputeUs = 0;
};

KinetoReport analyseKineto(const KinetoTrace &trace,
                           const KinetoOptions &options);

void printKinetoReport(const KinetoTrace &trace, const KinetoReport &report,
                       std::ostream &os);
/// JSON with a top-level `anomalies` list (kind harmful_overlap, cause
/// contention, ops, lost_us) as tandem-diagnose writes for Tandem steps.
void writeKinetoJson(const KinetoTrace &trace, const KinetoReport &report,
                     std::ostream &os);

} // namespace diagnosis
} // namespace tandem

#endif // TANDEM_DIAGNOSIS_KINETO_H
