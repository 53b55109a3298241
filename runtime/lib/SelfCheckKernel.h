//===- SelfCheckKernel.h - Kernel used by runSelfCheck ---------*- C++ -*-===//
//
// Private to the runtime library. Keeps CUDA kernel syntax in the .cu file so
// that Environment.cpp is plain C++ compiled by the host compiler.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_SELFCHECKKERNEL_H
#define TANDEM_RUNTIME_LIB_SELFCHECKKERNEL_H

#include <cuda_runtime_api.h>

#include <cstdint>

// The pattern function is compiled for both sides when nvcc sees this header.
#ifdef __CUDACC__
#define TANDEM_HOST_DEVICE __host__ __device__
#else
#define TANDEM_HOST_DEVICE
#endif

namespace tandem {
namespace runtime {
namespace detail {

/// Value the self-check kernel stores at \p index for \p seed. Shared by the
/// kernel and the host-side verification so both agree by construction.
TANDEM_HOST_DEVICE inline std::uint32_t selfCheckPattern(std::uint32_t index,
                                                         std::uint32_t seed) {
  // A multiplicative hash rather than a constant, so that a kernel writing
  // to the wrong index or not running at all (stale memory) is detected.
  return (index * 2654435761u) ^ seed;
}

/// Enqueues the fill kernel on \p stream writing selfCheckPattern(i, seed) to
/// out[i] for i in [0, count). Returns the launch error, if any; execution
/// errors surface at the next synchronizing call.
cudaError_t launchSelfCheckFill(std::uint32_t *out, std::uint32_t count,
                                std::uint32_t seed, cudaStream_t stream);

} // namespace detail
} // namespace runtime
} // namespace tandem

#undef TANDEM_HOST_DEVICE

#endif // TANDEM_RUNTIME_LIB_SELFCHECKKERNEL_H
