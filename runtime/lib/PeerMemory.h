//===- PeerMemory.h - Other ranks' memory for copy-engine collectives -*- C++
//-*-===//
//
// Private to the runtime library. In NCCL mode, a copy-engine collective
// (Step::copyEngine) pulls the peers' inputs with this device's copy engines
// instead of running NCCL: every rank must address the others' buffers and
// signal slots. PeerMemory exchanges one record per rank through the
// launcher's all-gather (ExecutorOptions::exchange) and maps each peer:
//
//  - a peer in this process: its pointers as they are (UVA), with peer
//    access enabled where it is on another device (cudaDeviceCanAccessPeer
//    must allow it);
//  - a peer in another process on this node: CUDA IPC
//    (cudaIpcGetMemHandle / cudaIpcOpenMemHandle) of each region;
//  - a peer on another node: an error, since neither reaches its memory.
//
// It also owns this rank's signal array (the slots launchPeerSignalWait
// stores into and waits on) and the step epoch.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LIB_PEERMEMORY_H
#define TANDEM_RUNTIME_LIB_PEERMEMORY_H

#include "tandem/runtime/Executor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tandem {
namespace runtime {
namespace detail {

class PeerMemory {
public:
  /// Exchanges this rank's `regions` (device allocations made with
  /// cudaMalloc on `device`, the same list in the same order on every rank)
  /// and a signal array of `signalSlots` slots it allocates, and maps every
  /// peer's. Fails with an error naming the rank and the reason (a peer on
  /// another node, no peer access between two devices, an IPC handle that
  /// does not open, records that disagree).
  static std::unique_ptr<PeerMemory>
  connect(int rank, int worldSize, int device,
          const std::vector<void *> &regions, int64_t signalSlots,
          const RankExchange &exchange, std::string &error);
  ~PeerMemory();

  /// Region `k` of rank `p` as this device addresses it.
  char *region(int p, size_t k) const { return regionPtr[p][k]; }
  /// Device array of worldSize pointers: rank p's signal array.
  uint64_t *const *signalTable() const { return table; }
  /// This rank's step epoch (device memory).
  uint64_t *epoch() const { return epochSlot; }
  /// "N peer(s) in this process (M by peer access), K by CUDA IPC".
  const std::string &summary() const { return how; }

private:
  PeerMemory() = default;
  std::vector<std::vector<char *>> regionPtr;
  std::vector<void *> ipcOpened;
  uint64_t *signals = nullptr;
  uint64_t *epochSlot = nullptr;
  uint64_t **table = nullptr;
  std::string how;
};

} // namespace detail
} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_LIB_PEERMEMORY_H
