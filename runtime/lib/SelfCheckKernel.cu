//===- SelfCheckKernel.cu - Kernel used by runSelfCheck -------------------===//
//
// A deliberately trivial kernel: its only job is to prove that device code
// built for CMAKE_CUDA_ARCHITECTURES loads and runs on the target device.
//
//===----------------------------------------------------------------------===//

#include "SelfCheckKernel.h"

namespace tandem {
namespace runtime {
namespace detail {

namespace {

__global__ void selfCheckFillKernel(std::uint32_t *out, std::uint32_t count,
                                    std::uint32_t seed) {
  std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    out[i] = selfCheckPattern(i, seed);
}

} // namespace

cudaError_t launchSelfCheckFill(std::uint32_t *out, std::uint32_t count,
                                std::uint32_t seed, cudaStream_t stream) {
  constexpr std::uint32_t kThreads = 256;
  std::uint32_t blocks = (count + kThreads - 1) / kThreads;
  if (blocks == 0)
    return cudaSuccess;
  selfCheckFillKernel<<<blocks, kThreads, 0, stream>>>(out, count, seed);
  return cudaGetLastError();
}

} // namespace detail
} // namespace runtime
} // namespace tandem
