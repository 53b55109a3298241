//===- Environment.h - CUDA/NCCL/cuBLASLt environment query ----*- C++ -*-===//
//
// Discovers what the runtime can use on this machine: library versions, the
// CUDA driver and the visible devices, plus a kernel launch self-check.
//
// Everything here must work on machines without a GPU or driver (build
// hosts, CI), so failures are returned as Status values naming the failing
// call; nothing throws or exits. The header exposes no CUDA types so that
// users need not have the CUDA headers on their include path.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_ENVIRONMENT_H
#define TANDEM_RUNTIME_ENVIRONMENT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tandem {
namespace runtime {

/// Coarse classification of a failure, so callers can tell "this machine has
/// no GPU" from "something is broken".
enum class StatusCode {
  Ok,
  /// No usable CUDA driver (not installed, stub library, or older than the
  /// CUDA runtime).
  NoDriver,
  /// A driver is present but no CUDA device is visible.
  NoDevice,
  /// Any other CUDA runtime error.
  CudaError,
  /// An NCCL call failed.
  NcclError,
  /// The self-check kernel ran but the data it produced was wrong.
  SelfCheckMismatch,
};

/// Returns a stable name for \p code, e.g. "NoDevice".
const char *statusCodeName(StatusCode code);

/// Outcome of a query. The message is empty on success and otherwise names
/// the failing call and the error it returned.
struct Status {
  StatusCode code = StatusCode::Ok;
  std::string message;

  bool ok() const { return code == StatusCode::Ok; }

  static Status success() { return Status(); }
  static Status error(StatusCode code, std::string message) {
    Status s;
    s.code = code;
    s.message = std::move(message);
    return s;
  }
};

/// Properties of one CUDA device.
struct DeviceInfo {
  /// CUDA device ordinal.
  int index = 0;
  /// Whether the properties could be read; the fields below are only
  /// meaningful if this is ok.
  Status status;
  std::string name;
  int computeMajor = 0;
  int computeMinor = 0;
  /// Number of streaming multiprocessors.
  int smCount = 0;
  /// Total global memory in bytes.
  std::uint64_t totalMemoryBytes = 0;
};

/// Everything queryEnvironment() found. Each version has its own status
/// because the libraries fail independently (e.g. NCCL and cuBLASLt answer
/// without a driver, device queries do not).
struct Environment {
  /// cudaRuntimeGetVersion encoding (1000 * major + 10 * minor).
  int cudaRuntimeVersion = 0;
  Status cudaRuntimeStatus;

  /// cudaDriverGetVersion encoding; 0 when no driver is installed, in which
  /// case cudaDriverStatus is NoDriver.
  int cudaDriverVersion = 0;
  Status cudaDriverStatus;

  /// ncclGetVersion encoding of the NCCL library loaded at run time.
  int ncclVersion = 0;
  Status ncclStatus;

  /// cublasLtGetVersion encoding of the cuBLASLt library loaded at run time.
  /// cublasLtGetVersion cannot fail, hence no status.
  std::size_t cublasLtVersion = 0;

  /// Number of devices reported by cudaGetDeviceCount; 0 on failure.
  int deviceCount = 0;
  /// Why deviceCount is 0 (never ok in that case), or ok.
  Status deviceStatus;
  /// One entry per device ordinal in [0, deviceCount).
  std::vector<DeviceInfo> devices;
};

/// Queries versions and devices. Launches no work and allocates no device
/// memory, so it is safe to call next to running jobs.
Environment queryEnvironment();

/// Counts the visible CUDA devices (cudaGetDeviceCount). Ok with \p count
/// > 0, or a status saying why there is none (noDeviceStatus).
Status countDevices(int &count);

/// The user-facing status for "no device can be used", from the code of the
/// failure and \p detail (the failing call and CUDA's words for it):
/// NoDriver says that no GPU driver was found, NoDevice that the driver
/// reports no GPU, anything else that no CUDA device is usable. CUDA's own
/// text for a missing driver ("driver version is insufficient") misleads on
/// a machine that has none, so it only follows as the detail.
Status noDeviceStatus(StatusCode code, const std::string &detail);

/// Runs a small kernel on \p device (fill a buffer, copy it back, verify it)
/// to prove that code can actually be launched there: a device can be listed
/// yet be unusable (compute mode prohibited, no matching kernel image, ...).
/// Restores the calling thread's current device afterwards.
Status runSelfCheck(int device);

/// NCCL_VERSION_CODE of the nccl.h this library was compiled against, to
/// detect a header/library mismatch against Environment::ncclVersion.
int ncclHeaderVersion();

/// CUBLAS_VERSION of the cublas_api.h this library was compiled against,
/// in the cublasLtGetVersion encoding.
std::size_t cublasHeaderVersion();

/// CUDART_VERSION of the CUDA headers this library was compiled against.
int cudaRuntimeHeaderVersion();

/// Formats \p env as the line-oriented report printed by tandem-device-info:
///   cuda_runtime: <ver>
///   cuda_driver: <ver or reason>
///   nccl: <ver>
///   cublaslt: <ver>
///   devices: <N>[ (<reason when N is 0>)]
///   device <i>: <name>, sm_<cc>, <n> SMs, <GiB> GiB
/// Every line ends in '\n'.
std::string formatEnvironmentReport(const Environment &env);

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_ENVIRONMENT_H
