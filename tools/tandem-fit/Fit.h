//===- Fit.h - Cost-model predictions of, and fit to, raw measurements
//-*-C++-*-//
//
// Predicts every tandem-calibrate measurement with a cost model (the GEMM
// formula for GEMMs, the HBM roofline for bandwidth-bound kernels and the
// simulator's engine for overlapped pairs, exactly as tandem-simulate would
// price them), and fits the model's measured parameters to them.
// docs/cost-model.md, "Calibrating", describes each step.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEM_FIT_FIT_H
#define TANDEM_TOOLS_TANDEM_FIT_FIT_H

#include "RawMeasurements.h"

#include "tandem/Analysis/CostModel.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace tandem {
namespace fit {

/// Signed relative error of a prediction: predicted / measured - 1.
inline double relativeError(double predicted, double measured) {
  return predicted / measured - 1.0;
}

/// Median and maximum of |error| over a set.
struct ErrorSummary {
  size_t count = 0;
  double medianAbs = 0, maxAbs = 0, meanAbs = 0;
  static ErrorSummary of(const std::vector<double> &errors);
};

/// The model's view of one overlapped pair. The stand-in kernel's alone
/// time is the measured one: the cost model prices a real collective from
/// its links, not this kernel, so only its slowdown is predicted.
struct PairPrediction {
  double primaryAloneUs = 0; ///< The GEMMs (or element-wise copies), serial.
  double primaryOverlappedUs = 0;
  double copyOverlappedUs = 0;
  double spanUs = 0;
  double serialUs = 0;
};

/// Predictions of one cost model; `bf16` is the GEMMs' element type.
class Predictor {
public:
  Predictor(const CostModel &model, Type bf16) : model(model), bf16(bf16) {}

  double gemmUs(const GemmSample &s) const;
  /// A bandwidth-bound kernel moving `bytes`, launch included.
  double memoryUs(int64_t bytes) const;
  /// One of the runtime's measured kernels (norm, norm_grad, a layout
  /// copy) moving `bytes`, launch included: what CostModel::compute gives
  /// the op it runs.
  double kernelUs(const KernelSample &s) const;
  PairPrediction pair(const GemmPair &p) const;
  PairPrediction memoryPair(const MemoryPair &p) const;

private:
  const CostModel &model;
  Type bf16;
};

/// One candidate GEMM parameter set and how well it fits the single GEMMs.
struct GemmFit {
  int64_t tileM = 0, tileN = 0;
  double efficiency = 0;
  double waveOverheadUs = 0;
  ErrorSummary errors;
};

/// A bandwidth-bound kernel's measured latency and rate (tandem-calibrate's
/// `norm` and `strided_copy`): time = launch_overhead_us + latencyUs +
/// bytes / (hbm peak * hbmEfficiency).
struct KernelFit {
  MemoryKernel kernel = MemoryKernel::generic;
  double latencyUs = 0;
  double hbmEfficiency = 1;
  size_t samples = 0;
};

/// The calibration keys' prefix of a measured kernel ("norm", "norm_grad",
/// "layout_copy"); "" for MemoryKernel::generic.
llvm::StringRef kernelKeyPrefix(MemoryKernel kernel);

struct FitResult {
  /// Measured launch overhead (from "launch"), if any.
  std::optional<double> launchOverheadUs;
  /// HBM efficiency from the element-wise copies ("hbm"), if any.
  std::optional<double> hbmEfficiency;
  /// GEMM fit without and with the per-wave overhead extension.
  GemmFit base, extended;
  bool useWaveOverhead = false;
  /// Per measured kernel (norm, norm_grad, layout_copy), in that order.
  std::vector<KernelFit> kernels;
  /// One row per stand-in CTA count measured in pairs.
  std::vector<ContentionPoint> contention;
  /// Per row: no memory pair measured at this CTA count, so the memory
  /// column repeats the comm column (the assumption of the built-in table).
  std::vector<bool> memoryAssumed;
  /// The copy-engine point, from `copy_engine_pairs` (unset without them);
  /// a side without pairs keeps the built-in factor.
  std::optional<ContentionPoint> copyEngine; /// The SM-residency rule the pairs
                                             /// were fitted with, written as
  /// `gemms_hold_sms` when set (tandem-fit --residency on|off); unset, the
  /// file leaves the target's rule.
  std::optional<bool> gemmsHoldSms;
};

/// The error threshold the fit aims for (the calibration issue's goal).
constexpr double kErrorGoal = 0.10;

/// Fits the parameters in the order that makes each step use only
/// parameters fitted before it: launch overhead, HBM efficiency, the
/// measured kernels' latency and rate, GEMM
/// (tile, efficiency, optional wave overhead), then the contention table.
/// Fails (with `error`) on measurements the model cannot represent.
/// `origin` names the raw file in errors.
std::optional<FitResult> fitCalibration(const RawMeasurements &raw,
                                        llvm::StringRef origin,
                                        const GpuSpec &target, Type bf16,
                                        std::string &error);

/// Writes the calibration file (docs/cost-model.md, "Calibration file").
/// Writes a calibration file's "copy_engine_contention" member (with its
/// leading newline and trailing comma), as tandem-fit writes every file.
void writeCopyEngineContention(const ContentionPoint &p, llvm::raw_ostream &os);

void writeCalibrationJson(const FitResult &fit, const RawMeasurements &raw,
                          llvm::StringRef rawPath, llvm::raw_ostream &os);

} // namespace fit
} // namespace tandem
} // namespace mlir

#endif // TANDEM_TOOLS_TANDEM_FIT_FIT_H
