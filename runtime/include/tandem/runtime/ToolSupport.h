//===- ToolSupport.h - Helpers shared by the runtime's tools ----*- C++ -*-===//
//
// Small pieces the measuring tools (tandem-run, tandem-calibrate,
// tandem-nccl-bench) share. Header-only; needs the CUDA runtime API.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_TOOLSUPPORT_H
#define TANDEM_RUNTIME_TOOLSUPPORT_H

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace tandem {
namespace runtime {

/// The median of `v` (the mean of the middle two for an even count); 0 for
/// no values.
inline double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Holds a stream until the host has enqueued everything behind it, so that
/// host launch latency is not timed: close() enqueues a host function that
/// spins until release().
class HostGate {
public:
  cudaError_t close(cudaStream_t stream) {
    open.store(false);
    return cudaLaunchHostFunc(stream, &HostGate::wait, this);
  }
  void release() { open.store(true); }

private:
  static void CUDART_CB wait(void *self) {
    auto *gate = static_cast<HostGate *>(self);
    while (!gate->open.load())
      std::this_thread::yield();
  }
  std::atomic<bool> open{true};
};

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_TOOLSUPPORT_H
