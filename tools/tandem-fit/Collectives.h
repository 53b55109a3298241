//===- Collectives.h - Fit the collective model to NCCL measurements -*-C++-*-//
//
// Reads the measurements runtime/tools/tandem-nccl-bench writes (nccl.json),
// predicts each with CostModel::collective on a given process group, and
// fits the communication parameters (CommParams: bus efficiency, link
// latency, links per CTA) to them. docs/cost-model.md, "Calibrating the
// collective model", describes the procedure.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEM_FIT_COLLECTIVES_H
#define TANDEM_TOOLS_TANDEM_FIT_COLLECTIVES_H

#include "tandem/Analysis/CostModel.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace tandem {
namespace fit {

/// One measured collective: nccl-tests size, CTA budget (0 = NCCL's
/// choice), median time.
struct CollectiveSample {
  CollectiveKind kind = CollectiveKind::all_gather;
  int64_t bytes = 0;
  int64_t ctas = 0;
  double us = 0;
  double busbwGbps = 0;
  std::string algorithm;
};

struct CollectiveMeasurements {
  std::string ncclVersion;
  std::string deviceName;
  int64_t ranks = 0;
  std::vector<CollectiveSample> samples;

  /// Whether `text` is tandem-nccl-bench output (its "format" field).
  static bool isNcclBench(llvm::StringRef text);
  /// Parses nccl.json; `origin` names it in errors.
  static std::optional<CollectiveMeasurements>
  parse(llvm::StringRef text, llvm::StringRef origin, std::string &error);
};

/// Parses "<size> <topology> <links> <GBps> <latency us>", e.g.
/// "8 switch 18 25.0 2.0" (the fields of a tandem.group op). Hierarchical
/// groups are refused: one node's measurements cannot calibrate them.
std::optional<GroupSpec> parseGroupSpec(llvm::StringRef text,
                                        std::string &error);

/// The fitted communication parameters.
struct CommFit {
  double busEfficiency = 0;
  double linkLatencyUs = 0;
  double linksPerCta = 0;
  /// Whether linksPerCta was fitted (measurements at two or more CTA
  /// budgets), or kept from the model before calibration.
  bool linksPerCtaFitted = false;
  double meanAbsError = 0;
};

/// Fits bus efficiency and link latency (and links per CTA when the
/// measurements sweep CTA budgets) minimising the mean |relative error| of
/// CostModel::collective over all samples. `model` supplies the target and
/// the starting CommParams. Fails for a group of one, whose model (a local
/// copy) has no communication parameter.
std::optional<CommFit> fitCollectives(const CollectiveMeasurements &m,
                                      const GroupSpec &group,
                                      const CostModel &model,
                                      std::string &error);

/// Writes the calibration file: `base` (another calibration file, e.g. one
/// tandem-fit wrote from tandem-calibrate's measurements) with its "comm"
/// section replaced by `fit`; without a base, the built-in contention table
/// and no "gpu" section.
void writeCommCalibrationJson(const std::optional<Calibration> &base,
                              llvm::StringRef basePath, const CommFit &fit,
                              const CollectiveMeasurements &m,
                              llvm::StringRef measurementsPath,
                              llvm::raw_ostream &os);

/// The Markdown report: parameters, and every measurement against the
/// predictions before and after calibration.
void writeCollectiveReport(const CollectiveMeasurements &m,
                           llvm::StringRef measurementsPath,
                           const GroupSpec &group, const CostModel &before,
                           const CostModel &after, const CommFit &fit,
                           llvm::raw_ostream &os);

/// Per collective kind (and "all"): |error| before and after.
struct CollectiveErrorRow {
  std::string name;
  std::vector<double> before, after;
};
std::vector<CollectiveErrorRow>
collectiveErrorRows(const CollectiveMeasurements &m, const GroupSpec &group,
                    const CostModel &before, const CostModel &after);

} // namespace fit
} // namespace tandem
} // namespace mlir

#endif // TANDEM_TOOLS_TANDEM_FIT_COLLECTIVES_H
