//===- EnvironmentTest.cpp - Tests for the environment query --------------===//
//
// These run on build hosts without a GPU as well as on GPU machines, so the
// device tests assert invariants that must hold in both cases instead of a
// particular device count. The library version tests need only the NCCL and
// cuBLASLt shared libraries, which load without a driver.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Environment.h"
#include "tandem/runtime/Format.h"

#include <gtest/gtest.h>

#include <string>

using namespace tandem::runtime;

namespace {

TEST(EnvironmentTest, CudaRuntimeVersionMatchesHeaders) {
  Environment env = queryEnvironment();
  ASSERT_TRUE(env.cudaRuntimeStatus.ok()) << env.cudaRuntimeStatus.message;
  Version runtime = decodeCudaVersion(env.cudaRuntimeVersion);
  Version header = decodeCudaVersion(cudaRuntimeHeaderVersion());
  // libcudart guarantees compatibility within a major version only, and may
  // be newer than the headers; it must never be older.
  EXPECT_EQ(runtime.major, header.major);
  EXPECT_GE(env.cudaRuntimeVersion, cudaRuntimeHeaderVersion());
}

TEST(EnvironmentTest, NcclVersionIsSaneAndMatchesHeader) {
  Environment env = queryEnvironment();
  ASSERT_TRUE(env.ncclStatus.ok()) << env.ncclStatus.message;
  // The build requires NCCL >= 2.18 (see runtime/CMakeLists.txt).
  EXPECT_GE(env.ncclVersion, 21800);
  Version library = decodeNcclVersion(env.ncclVersion);
  Version header = decodeNcclVersion(ncclHeaderVersion());
  // A libnccl from a different release than nccl.h is a broken install
  // whose structs and enums may disagree with the compiled code.
  EXPECT_EQ(library.major, header.major);
  EXPECT_EQ(library.minor, header.minor);
  EXPECT_EQ(encodeNcclVersion(library), env.ncclVersion);
}

TEST(EnvironmentTest, CublasLtVersionIsSaneAndMatchesHeader) {
  Environment env = queryEnvironment();
  Version library = decodeCublasLtVersion(env.cublasLtVersion);
  Version header = decodeCublasLtVersion(cublasHeaderVersion());
  // cuBLASLt ships with CUDA 10.1 and later; the toolkits the runtime
  // targets carry cuBLAS 12 or 13.
  EXPECT_GE(library.major, 11);
  EXPECT_EQ(library.major, header.major);
  EXPECT_EQ(library.minor, header.minor);
}

TEST(EnvironmentTest, DriverStatusIsConsistent) {
  Environment env = queryEnvironment();
  if (env.cudaDriverStatus.ok()) {
    EXPECT_GT(env.cudaDriverVersion, 0);
  } else {
    EXPECT_EQ(env.cudaDriverVersion, 0);
    EXPECT_FALSE(env.cudaDriverStatus.message.empty());
  }
  // Without a driver no device can be enumerated.
  if (env.cudaDriverStatus.code == StatusCode::NoDriver) {
    EXPECT_EQ(env.deviceCount, 0);
  }
}

TEST(EnvironmentTest, DeviceListIsConsistent) {
  Environment env = queryEnvironment();
  if (env.deviceCount > 0) {
    EXPECT_TRUE(env.deviceStatus.ok()) << env.deviceStatus.message;
    ASSERT_EQ(env.devices.size(), static_cast<size_t>(env.deviceCount));
    for (size_t i = 0; i < env.devices.size(); ++i) {
      const DeviceInfo &device = env.devices[i];
      EXPECT_EQ(device.index, static_cast<int>(i));
      if (!device.status.ok()) {
        EXPECT_FALSE(device.status.message.empty());
        continue;
      }
      EXPECT_FALSE(device.name.empty());
      EXPECT_GE(device.computeMajor, 1);
      EXPECT_GT(device.smCount, 0);
      EXPECT_GT(device.totalMemoryBytes, 0u);
    }
  } else {
    EXPECT_EQ(env.deviceCount, 0);
    EXPECT_TRUE(env.devices.empty());
    EXPECT_FALSE(env.deviceStatus.ok());
    EXPECT_FALSE(env.deviceStatus.message.empty());
  }
}

TEST(EnvironmentTest, SelfCheckMatchesDeviceAvailability) {
  Environment env = queryEnvironment();
  Status status = runSelfCheck(0);
  if (env.deviceCount > 0 && env.devices[0].status.ok()) {
    // Fails on GPUs that CMAKE_CUDA_ARCHITECTURES does not cover, which is
    // the point: such a build cannot run plans there either.
    EXPECT_TRUE(status.ok()) << status.message;
  } else {
    EXPECT_FALSE(status.ok());
    EXPECT_FALSE(status.message.empty());
  }
}

TEST(EnvironmentTest, SelfCheckRejectsInvalidOrdinals) {
  Environment env = queryEnvironment();
  for (int device : {-1, env.deviceCount}) {
    Status status = runSelfCheck(device);
    EXPECT_FALSE(status.ok()) << "device " << device;
    EXPECT_NE(status.code, StatusCode::SelfCheckMismatch);
    EXPECT_FALSE(status.message.empty());
  }
}

TEST(EnvironmentTest, ReportWithoutDevices) {
  Environment env;
  env.cudaRuntimeVersion = 13000;
  env.cudaDriverStatus = Status::error(
      StatusCode::NoDriver, "cudaDriverGetVersion returned version 0");
  env.ncclVersion = 22809;
  env.cublasLtVersion = 130100;
  env.deviceStatus = Status::error(
      StatusCode::NoDriver, "cudaGetDeviceCount returned cudaErrorX: text");
  EXPECT_EQ(formatEnvironmentReport(env),
            "cuda_runtime: 13.0\n"
            "cuda_driver: no driver (cudaDriverGetVersion returned version "
            "0)\n"
            "nccl: 2.28.9\n"
            "cublaslt: 13.1.0\n"
            "devices: 0 (cudaGetDeviceCount returned cudaErrorX: text)\n");
}

TEST(EnvironmentTest, ReportWithDevices) {
  Environment env;
  env.cudaRuntimeVersion = 12080;
  env.cudaDriverVersion = 13000;
  env.ncclStatus = Status::error(StatusCode::NcclError,
                                 "ncclGetVersion returned unhandled error");
  env.cublasLtVersion = 120903;
  env.deviceCount = 2;
  DeviceInfo h200;
  h200.index = 0;
  h200.name = "NVIDIA H200";
  h200.computeMajor = 9;
  h200.computeMinor = 0;
  h200.smCount = 132;
  h200.totalMemoryBytes = 150754820096ull; // 140.40 GiB
  DeviceInfo broken;
  broken.index = 1;
  broken.status = Status::error(StatusCode::CudaError, "call returned E: e");
  env.devices = {h200, broken};
  EXPECT_EQ(formatEnvironmentReport(env),
            "cuda_runtime: 12.8\n"
            "cuda_driver: 13.0\n"
            "nccl: unavailable (ncclGetVersion returned unhandled error)\n"
            "cublaslt: 12.9.3\n"
            "devices: 2\n"
            "device 0: NVIDIA H200, sm_90, 132 SMs, 140.4 GiB\n"
            "device 1: unavailable (call returned E: e)\n");
}

// Issue 13: without a driver, tandem-run printed CUDA's "driver version is
// insufficient", which misleads on a machine that has no driver at all.
TEST(EnvironmentTest, NoDeviceStatusSaysWhatIsMissing) {
  Status driver = noDeviceStatus(StatusCode::NoDriver,
                                 "cudaGetDeviceCount returned "
                                 "cudaErrorInsufficientDriver: CUDA driver "
                                 "version is insufficient for CUDA runtime "
                                 "version");
  EXPECT_EQ(driver.code, StatusCode::NoDriver);
  EXPECT_EQ(driver.message.rfind("no GPU driver found (", 0), 0u);
  Status device = noDeviceStatus(StatusCode::NoDevice, "x");
  EXPECT_EQ(device.message,
            "no GPU found (the driver reports no CUDA device): x");
  EXPECT_EQ(noDeviceStatus(StatusCode::Ok, "y").code, StatusCode::CudaError);
}

// Holds with a GPU or without one (this test runs on both).
TEST(EnvironmentTest, CountDevicesExplainsAnEmptyCount) {
  int count = -1;
  Status s = countDevices(count);
  if (s.ok()) {
    EXPECT_GT(count, 0);
    return;
  }
  EXPECT_EQ(count, 0);
  if (s.code == StatusCode::NoDriver)
    EXPECT_EQ(s.message.rfind("no GPU driver found", 0), 0u) << s.message;
  else if (s.code == StatusCode::NoDevice)
    EXPECT_EQ(s.message.rfind("no GPU found", 0), 0u) << s.message;
  else
    EXPECT_EQ(s.message.rfind("no usable CUDA device", 0), 0u) << s.message;
}

TEST(EnvironmentTest, StatusCodeNames) {
  EXPECT_STREQ(statusCodeName(StatusCode::Ok), "Ok");
  EXPECT_STREQ(statusCodeName(StatusCode::NoDriver), "NoDriver");
  EXPECT_STREQ(statusCodeName(StatusCode::NoDevice), "NoDevice");
  EXPECT_STREQ(statusCodeName(StatusCode::SelfCheckMismatch),
               "SelfCheckMismatch");
}

} // namespace
