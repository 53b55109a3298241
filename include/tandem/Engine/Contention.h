//===- Contention.h - Slowdowns of kernels beside a collective ---*- C++
//-*-===//
//
// The contention table the cost model and the simulator's engine share: how
// much a compute-bound kernel, a bandwidth-bound kernel and the collective
// itself slow down while they overlap, as a function of the SMs the
// collective holds. Plain C++ (LLVM Support only, no MLIR), so that the
// engine that uses it stays independent of the compiler. A calibration file
// replaces the built-in table (Calibration in CostModel.h).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ENGINE_CONTENTION_H
#define TANDEM_ENGINE_CONTENTION_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace tandem {

struct Calibration;

/// Slowdowns when a kernel runs next to a collective that holds `commSms`
/// SMs. The GEMM factor excludes the wave-quantisation effect of losing SMs,
/// which the GEMM formula models itself.
struct ContentionPoint {
  int64_t commSms = 0;
  double gemmSlowdown = 1.0;   ///< compute-bound kernel
  double memorySlowdown = 1.0; ///< bandwidth-bound kernel
  double commSlowdown = 1.0;   ///< the collective itself
};

class ContentionTable {
  friend struct Calibration;

public:
  /// The built-in table: GEMM and collective columns measured on an H200
  /// (shared/data/h200-probe.md); the memory column assumed.
  static ContentionTable defaults();
  // A calibration file's table: Calibration::load(path)->contention
  // (CostModel.h).
  /// A table from `points`, which must be sorted by strictly increasing
  /// `commSms` with factors >= 1 (what a calibration file may hold).
  static ContentionTable fromPoints(std::vector<ContentionPoint> points,
                                    llvm::StringRef origin);

  /// Linear interpolation in `commSms`, clamped to the table's ends.
  ContentionPoint lookup(int64_t commSms) const;
  const std::vector<ContentionPoint> &points() const { return table; }
  llvm::StringRef source() const { return origin; }

  /// Slowdowns beside a collective on the copy engines, which holds no SMs
  /// and shares only HBM with the kernels beside it (`commSms` is 0).
  const ContentionPoint &copyEnginePoint() const { return copyEngine; }
  llvm::StringRef copyEngineSource() const { return copyEngineOrigin; }
  void setCopyEnginePoint(ContentionPoint point, llvm::StringRef source);

private:
  std::vector<ContentionPoint> table;
  std::string origin;
  ContentionPoint copyEngine = defaultCopyEnginePoint();
  std::string copyEngineOrigin = kDefaultCopyEngineOrigin;

  static ContentionPoint defaultCopyEnginePoint();
  static constexpr const char *kDefaultCopyEngineOrigin =
      "built-in (assumed from HBM shares: docs/cost-model.md, \"Copy-engine "
      "collectives\")";
};

} // namespace tandem
} // namespace mlir

#endif // TANDEM_ENGINE_CONTENTION_H
