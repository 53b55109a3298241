//===- tandem-device-info.cpp - Print the runtime's view of the machine ---===//
//
// Prints CUDA/NCCL/cuBLASLt versions and the visible devices, one fact per
// line, so that logs of a run record what it ran on. With --require-gpu the
// exit code tells scripts and CI whether GPU work can run here.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Environment.h"

#include <cstdio>
#include <cstring>
#include <string>

using namespace tandem::runtime;

namespace {

// Distinct from the "no GPU" exit code 1 so that scripts can tell a
// misconfigured invocation from a machine without a usable GPU.
constexpr int kExitUsage = 2;

void printHelp(std::FILE *out) {
  std::fputs(
      "usage: tandem-device-info [--require-gpu] [--help]\n"
      "\n"
      "Prints the CUDA runtime, CUDA driver, NCCL and cuBLASLt versions and\n"
      "every visible CUDA device (name, compute capability, SM count, "
      "memory).\n"
      "\n"
      "  --require-gpu  also run a self-check kernel on device 0; exit 0 only\n"
      "                 if a device is usable and the check passes, otherwise\n"
      "                 print the reason to stderr and exit 1\n"
      "  --help         print this message and exit 0\n"
      "\n"
      "Exit codes: 0 success, 1 --require-gpu failed, 2 bad usage.\n",
      out);
}

/// Returns the one-line reason why GPU work cannot run, or an empty string.
/// Only device 0 is checked: it is the device a single-process run uses.
std::string gpuUnusableReason(const Environment &env) {
  if (env.deviceCount == 0)
    return "no CUDA device: " + env.deviceStatus.message;
  const DeviceInfo &device0 = env.devices.front();
  if (!device0.status.ok())
    return "CUDA device 0 unusable: " + device0.status.message;
  Status check = runSelfCheck(0);
  if (!check.ok())
    return "self-check failed on device 0: " + check.message;
  return "";
}

} // namespace

int main(int argc, char **argv) {
  bool requireGpu = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--require-gpu") == 0) {
      requireGpu = true;
    } else if (std::strcmp(argv[i], "--help") == 0 ||
               std::strcmp(argv[i], "-h") == 0) {
      printHelp(stdout);
      return 0;
    } else {
      std::fprintf(stderr,
                   "tandem-device-info: unknown argument '%s' (see --help)\n",
                   argv[i]);
      return kExitUsage;
    }
  }

  Environment env = queryEnvironment();
  std::fputs(formatEnvironmentReport(env).c_str(), stdout);

  if (!requireGpu)
    return 0;

  std::string reason = gpuUnusableReason(env);
  if (!reason.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "tandem-device-info: %s\n", reason.c_str());
    return 1;
  }
  std::puts("self_check: passed on device 0");
  return 0;
}
