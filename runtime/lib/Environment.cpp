//===- Environment.cpp - CUDA/NCCL/cuBLASLt environment query -------------===//
//
// Implements queryEnvironment() and runSelfCheck(). Every CUDA/NCCL call is
// checked and turned into a Status that names the call, because on hosts
// without a GPU or driver these calls fail by design and the caller must be
// able to report why.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Environment.h"

#include "SelfCheckKernel.h"
#include "tandem/runtime/Format.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>
#include <vector>

namespace tandem {
namespace runtime {

namespace {

StatusCode classifyCudaError(cudaError_t err) {
  switch (err) {
  case cudaSuccess:
    return StatusCode::Ok;
  case cudaErrorStubLibrary:
  case cudaErrorInsufficientDriver:
  case cudaErrorSystemDriverMismatch:
    return StatusCode::NoDriver;
  case cudaErrorNoDevice:
    return StatusCode::NoDevice;
  default:
    return StatusCode::CudaError;
  }
}

/// Builds "<call> returned <cudaErrorName>: <description>".
Status cudaStatus(const std::string &call, cudaError_t err) {
  if (err == cudaSuccess)
    return Status::success();
  // A failed runtime call is also recorded as the thread's "last error";
  // clear it so unrelated code calling cudaGetLastError() later does not
  // pick up a failure this query already reported. Sticky errors stay.
  (void)cudaGetLastError();
  return Status::error(classifyCudaError(err),
                       call + " returned " + cudaGetErrorName(err) + ": " +
                           cudaGetErrorString(err));
}

/// Restores the calling thread's current device on scope exit, so that a
/// self-check does not silently retarget the caller's later CUDA calls.
class CurrentDeviceGuard {
public:
  explicit CurrentDeviceGuard(int previous) : previous(previous) {}
  ~CurrentDeviceGuard() { (void)cudaSetDevice(previous); }
  CurrentDeviceGuard(const CurrentDeviceGuard &) = delete;
  CurrentDeviceGuard &operator=(const CurrentDeviceGuard &) = delete;

private:
  int previous;
};

/// Owns a cudaMalloc allocation. The cudaFree result is ignored: after a
/// sticky error it fails too, and the error was already reported.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (ptr)
      (void)cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void **address() { return &ptr; }
  template <typename T> T *as() const { return static_cast<T *>(ptr); }

private:
  void *ptr = nullptr;
};

} // namespace

const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::Ok:
    return "Ok";
  case StatusCode::NoDriver:
    return "NoDriver";
  case StatusCode::NoDevice:
    return "NoDevice";
  case StatusCode::CudaError:
    return "CudaError";
  case StatusCode::NcclError:
    return "NcclError";
  case StatusCode::SelfCheckMismatch:
    return "SelfCheckMismatch";
  }
  return "Unknown";
}

Environment queryEnvironment() {
  Environment env;

  env.cudaRuntimeStatus = cudaStatus(
      "cudaRuntimeGetVersion", cudaRuntimeGetVersion(&env.cudaRuntimeVersion));

  cudaError_t err = cudaDriverGetVersion(&env.cudaDriverVersion);
  if (err != cudaSuccess) {
    env.cudaDriverVersion = 0;
    env.cudaDriverStatus = cudaStatus("cudaDriverGetVersion", err);
  } else if (env.cudaDriverVersion == 0) {
    // cudaDriverGetVersion documents a 0 result as "no driver installed".
    env.cudaDriverStatus = Status::error(
        StatusCode::NoDriver, "cudaDriverGetVersion returned version 0");
  }

  ncclResult_t ncclErr = ncclGetVersion(&env.ncclVersion);
  if (ncclErr != ncclSuccess) {
    env.ncclVersion = 0;
    env.ncclStatus = Status::error(StatusCode::NcclError,
                                   std::string("ncclGetVersion returned ") +
                                       ncclGetErrorString(ncclErr));
  }

  env.cublasLtVersion = cublasLtGetVersion();

  // The one rule for "no usable device" (countDevices), so that every tool
  // says "no GPU driver found" rather than CUDA's driver-version wording.
  int count = 0;
  if (Status s = countDevices(count); !s.ok()) {
    env.deviceStatus = s;
    return env;
  }

  env.deviceCount = count;
  env.devices.reserve(count);
  for (int i = 0; i < count; ++i) {
    DeviceInfo info;
    info.index = i;
    cudaDeviceProp prop;
    err = cudaGetDeviceProperties(&prop, i);
    if (err != cudaSuccess) {
      info.status = cudaStatus(
          "cudaGetDeviceProperties(device " + std::to_string(i) + ")", err);
    } else {
      info.name = prop.name;
      info.computeMajor = prop.major;
      info.computeMinor = prop.minor;
      info.smCount = prop.multiProcessorCount;
      info.totalMemoryBytes = prop.totalGlobalMem;
    }
    env.devices.push_back(std::move(info));
  }
  return env;
}

Status runSelfCheck(int device) {
  int previous = 0;
  if (Status s = cudaStatus("cudaGetDevice", cudaGetDevice(&previous)); !s.ok())
    return s;
  if (Status s = cudaStatus("cudaSetDevice(" + std::to_string(device) + ")",
                            cudaSetDevice(device));
      !s.ok())
    return s;
  CurrentDeviceGuard restoreDevice(previous);

  constexpr std::uint32_t kCount = 4096;
  constexpr std::size_t kBytes = kCount * sizeof(std::uint32_t);
  // Differs per device so that a copy that reads another device's buffer
  // would not verify.
  const std::uint32_t seed = 0x7a9d3e51u ^ static_cast<std::uint32_t>(device);

  DeviceBuffer buffer;
  if (Status s = cudaStatus("cudaMalloc", cudaMalloc(buffer.address(), kBytes));
      !s.ok())
    return s;
  // Zeroed first so that a kernel that silently does nothing leaves data the
  // verification rejects.
  if (Status s =
          cudaStatus("cudaMemset", cudaMemset(buffer.as<void>(), 0, kBytes));
      !s.ok())
    return s;

  // Discard errors left by earlier, unrelated calls on this thread so that
  // the launch check below only reports the launch itself.
  (void)cudaGetLastError();
  if (Status s = cudaStatus(
          "self-check kernel launch",
          detail::launchSelfCheckFill(buffer.as<std::uint32_t>(), kCount, seed,
                                      /*stream=*/nullptr));
      !s.ok())
    return s;
  if (Status s = cudaStatus("cudaDeviceSynchronize after self-check kernel",
                            cudaDeviceSynchronize());
      !s.ok())
    return s;

  std::vector<std::uint32_t> host(kCount);
  if (Status s = cudaStatus("cudaMemcpy (device to host)",
                            cudaMemcpy(host.data(), buffer.as<void>(), kBytes,
                                       cudaMemcpyDeviceToHost));
      !s.ok())
    return s;

  for (std::uint32_t i = 0; i < kCount; ++i) {
    std::uint32_t expected = detail::selfCheckPattern(i, seed);
    if (host[i] != expected)
      return Status::error(
          StatusCode::SelfCheckMismatch,
          "self-check kernel wrote " + std::to_string(host[i]) + " at index " +
              std::to_string(i) + ", expected " + std::to_string(expected));
  }
  return Status::success();
}

int ncclHeaderVersion() { return NCCL_VERSION_CODE; }

std::size_t cublasHeaderVersion() { return CUBLAS_VERSION; }

int cudaRuntimeHeaderVersion() { return CUDART_VERSION; }

Status noDeviceStatus(StatusCode code, const std::string &detail) {
  std::string what;
  switch (code) {
  case StatusCode::NoDriver:
    what = "no GPU driver found (no NVIDIA driver is installed, or it is "
           "older than this CUDA runtime needs)";
    break;
  case StatusCode::NoDevice:
    what = "no GPU found (the driver reports no CUDA device)";
    break;
  default:
    code = StatusCode::CudaError;
    what = "no usable CUDA device";
    break;
  }
  return Status::error(code, detail.empty() ? what : what + ": " + detail);
}

Status countDevices(int &count) {
  count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    count = 0;
    Status s = cudaStatus("cudaGetDeviceCount", err);
    return noDeviceStatus(s.code, s.message);
  }
  if (count <= 0) {
    count = 0;
    return noDeviceStatus(StatusCode::NoDevice,
                          "cudaGetDeviceCount reported 0 devices");
  }
  return Status::success();
}

std::string formatEnvironmentReport(const Environment &env) {
  std::string out;

  out += "cuda_runtime: ";
  if (env.cudaRuntimeStatus.ok())
    out += formatCudaVersion(env.cudaRuntimeVersion);
  else
    out += "unavailable (" + env.cudaRuntimeStatus.message + ")";
  out += "\n";

  out += "cuda_driver: ";
  if (env.cudaDriverStatus.ok())
    out += formatCudaVersion(env.cudaDriverVersion);
  else if (env.cudaDriverStatus.code == StatusCode::NoDriver)
    out += "no driver (" + env.cudaDriverStatus.message + ")";
  else
    out += "unavailable (" + env.cudaDriverStatus.message + ")";
  out += "\n";

  out += "nccl: ";
  if (env.ncclStatus.ok())
    out += formatVersion(decodeNcclVersion(env.ncclVersion));
  else
    out += "unavailable (" + env.ncclStatus.message + ")";
  out += "\n";

  out +=
      "cublaslt: " + formatVersion(decodeCublasLtVersion(env.cublasLtVersion)) +
      "\n";

  out += "devices: " + std::to_string(env.deviceCount);
  if (!env.deviceStatus.ok())
    out += " (" + env.deviceStatus.message + ")";
  out += "\n";

  for (const DeviceInfo &device : env.devices) {
    out += "device " + std::to_string(device.index) + ": ";
    if (device.status.ok())
      out += device.name + ", " +
             formatComputeCapability(device.computeMajor, device.computeMinor) +
             ", " + std::to_string(device.smCount) + " SMs, " +
             formatGiB(device.totalMemoryBytes) + " GiB";
    else
      out += "unavailable (" + device.status.message + ")";
    out += "\n";
  }
  return out;
}

} // namespace runtime
} // namespace tandem
