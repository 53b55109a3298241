//===- RawMeasurements.h - tandem-calibrate's raw.json, read ----*- C++ -*-===//
//
// The measurements runtime/tools/tandem-calibrate writes (docs/cost-model.md,
// "Calibrating"), as tandem-fit reads them. The parser checks every field a
// fit uses and names the file, the entry and the field in its errors; fields
// it does not use are ignored, so the raw format can grow.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEM_FIT_RAWMEASUREMENTS_H
#define TANDEM_TOOLS_TANDEM_FIT_RAWMEASUREMENTS_H

#include "tandem/Analysis/CostModel.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace tandem {
namespace fit {

/// One bf16 GEMM C[m,n] = A[m,k] B[k,n] alone, median time.
struct GemmSample {
  int64_t m = 0, n = 0, k = 0;
  int64_t smTarget = 0; ///< CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET; 0 = all.
  double us = 0;
};

/// The collective stand-in kernel alone on `ctas` CTAs.
struct CopySample {
  int64_t ctas = 0;
  int64_t bytes = 0; ///< Traffic it streams.
  double us = 0;
};

/// A full-device element-wise copy: `bytes` read + written.
struct HbmSample {
  int64_t bytes = 0;
  double us = 0;
};

/// `kernels` empty kernels queued back to back on one stream.
struct LaunchSample {
  int64_t kernels = 0;
  double us = 0; ///< All of them.
};

/// `gemmCount` GEMMs in a row on one stream next to the stand-in kernel
/// on `commCtas` CTAs (a higher-priority stream), and the same work serial.
struct GemmPair {
  int64_t m = 0, n = 0, k = 0;
  int64_t gemmCount = 1;
  int64_t gemmSmTarget = 0;
  int64_t commCtas = 0;
  int64_t bytes = 0; ///< The stand-in's traffic.
  double gemmAloneUs = 0, copyAloneUs = 0;
  double gemmOverlappedUs = 0, copyOverlappedUs = 0;
  double spanUs = 0, serialUs = 0;
};

/// `memCount` full-device element-wise copies of `memBytes` each next to the
/// stand-in kernel on `commCtas` CTAs.
struct MemoryPair {
  int64_t commCtas = 0;
  int64_t bytes = 0;
  int64_t memBytes = 0, memCount = 1;
  double memAloneUs = 0, copyAloneUs = 0;
  double memOverlappedUs = 0, copyOverlappedUs = 0;
  double spanUs = 0, serialUs = 0;
};

/// A kernel next to a copy-engine collective (tandem-calibrate's
/// `copy_engine_pairs`: the emulated fabric's device copies, paced to about
/// the kernel's time): `gemm` (m x n x k) or `memory` (`memBytes`) side.
/// GEMM rows with a nonzero `gemm_sm_target` are skipped when read.
struct CopyEnginePair {
  bool gemmSide = true;
  int64_t m = 0, n = 0, k = 0, memBytes = 0;
  int64_t bytes = 0;
  double computeAloneUs = 0, ceAloneUs = 0;
  double computeOverlappedUs = 0, ceOverlappedUs = 0;
  double spanUs = 0, serialUs = 0;
};

/// One bandwidth-bound kernel of the runtime alone, queued back to back
/// (tandem-calibrate's `norm` and `strided_copy` sections): `bytes` is
/// what the cost model counts for the op it runs, `us` the time per kernel.
struct KernelSample {
  MemoryKernel kernel = MemoryKernel::generic;
  std::string shape; ///< "512 x 8192" (norm) or "4096 x 16384 B" (copy).
  int64_t bytes = 0;
  double us = 0;
};

struct RawMeasurements {
  std::string deviceName;
  int64_t deviceSms = 0;
  std::optional<LaunchSample> launch;
  std::vector<HbmSample> hbm;
  std::vector<GemmSample> gemm;
  std::vector<CopySample> standaloneCopy;
  std::vector<GemmPair> pairs;
  std::vector<MemoryPair> memoryPairs;
  /// "comm_kernel": "emulated": the pairs' communication side was the
  /// emulated fabric's paced collective kernel, not the stand-in copy.
  bool emulatedComm = false;
  /// "event_latency": what one cross-stream event gate adds (per_gate_us).
  std::optional<double> eventLatencyUs;
  /// "copy_engine_latency": one small device-to-device cudaMemcpyAsync
  /// issued and completed (us per copy).
  std::optional<double> copyEngineLatencyUs;
  std::vector<CopyEnginePair> copyEnginePairs;
  /// "norm" (kinds norm and norm_grad) and "strided_copy", in file order.
  std::vector<KernelSample> kernels;

  /// Parses raw.json text; `origin` names it in errors. Requires "gemm" and
  /// "pairs" to be non-empty; the other sections are optional.
  static std::optional<RawMeasurements>
  parse(llvm::StringRef text, llvm::StringRef origin, std::string &error);
};

} // namespace fit
} // namespace tandem
} // namespace mlir

#endif // TANDEM_TOOLS_TANDEM_FIT_RAWMEASUREMENTS_H
