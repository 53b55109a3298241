//===- runtime-client.cpp - Tandem's runtime from another project ---------===//
//
// Links Tandem::TandemRuntime from the installed package (with the CUDA
// runtime, cuBLASLt and NCCL it brings) and asks it for the visible GPUs.
// Built and run by test/Install/package-runtime.test.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Environment.h"

#include <cstdio>

int main() {
  using namespace tandem::runtime;
  std::printf("compiled against NCCL %d\n", ncclHeaderVersion());
  int count = 0;
  Status status = countDevices(count);
  if (status.ok())
    std::printf("devices: %d\n", count);
  else
    std::printf("no device: %s: %s\n", statusCodeName(status.code),
                status.message.c_str());
  return 0;
}
