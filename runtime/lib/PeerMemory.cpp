//===- PeerMemory.cpp - Other ranks' memory for copy-engine collectives ---===//

#include "PeerMemory.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstring>
#include <sstream>

namespace tandem {
namespace runtime {
namespace detail {

namespace {

constexpr char kMagic[8] = {'T', 'N', 'D', 'M', 'P', 'M', '0', '1'};
constexpr size_t kHostBytes = 64;

/// One exported allocation: its address in the exporting process and, where
/// the driver gave one, its CUDA IPC handle.
struct Export {
  uint64_t address = 0;
  uint8_t hasHandle = 0;
  cudaIpcMemHandle_t handle;
};

struct Record {
  int32_t rank = 0, device = 0;
  int64_t pid = 0;
  char host[kHostBytes] = {};
  int64_t signalSlots = 0;
  std::vector<Export> exports; ///< The regions, then the signal array.
};

template <typename T> void put(std::string &out, const T &v) {
  out.append(reinterpret_cast<const char *>(&v), sizeof(T));
}

template <typename T> bool take(const std::string &in, size_t &at, T &v) {
  if (at > in.size() || in.size() - at < sizeof(T))
    return false;
  std::memcpy(&v, in.data() + at, sizeof(T));
  at += sizeof(T);
  return true;
}

std::string encode(const Record &r) {
  std::string out(kMagic, sizeof(kMagic));
  put(out, r.rank);
  put(out, r.device);
  put(out, r.pid);
  out.append(r.host, kHostBytes);
  put(out, r.signalSlots);
  put(out, static_cast<int64_t>(r.exports.size()));
  for (const Export &e : r.exports) {
    put(out, e.address);
    put(out, e.hasHandle);
    put(out, e.handle);
  }
  return out;
}

bool decode(const std::string &in, Record &r) {
  if (in.size() < sizeof(kMagic) ||
      std::memcmp(in.data(), kMagic, sizeof(kMagic)) != 0)
    return false;
  size_t at = sizeof(kMagic);
  int64_t count = 0;
  if (!take(in, at, r.rank) || !take(in, at, r.device) ||
      !take(in, at, r.pid) || in.size() - at < kHostBytes)
    return false;
  std::memcpy(r.host, in.data() + at, kHostBytes);
  r.host[kHostBytes - 1] = '\0';
  at += kHostBytes;
  if (!take(in, at, r.signalSlots) || !take(in, at, count) || count < 0 ||
      count > 1 << 20)
    return false;
  r.exports.resize(count);
  for (Export &e : r.exports)
    if (!take(in, at, e.address) || !take(in, at, e.hasHandle) ||
        !take(in, at, e.handle))
      return false;
  return at == in.size();
}

std::string cudaText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

} // namespace

std::unique_ptr<PeerMemory>
PeerMemory::connect(int rank, int worldSize, int device,
                    const std::vector<void *> &regions, int64_t signalSlots,
                    const RankExchange &exchange, std::string &error) {
  auto fail = [&](const std::string &message) {
    error = "copy-engine collectives (rank " + std::to_string(rank) + " of " +
            std::to_string(worldSize) + "): " + message;
    return nullptr;
  };
  if (!exchange)
    return fail("the launcher gave no exchange of the ranks' buffer "
                "addresses (ExecutorOptions::exchange)");
  std::unique_ptr<PeerMemory> pm(new PeerMemory());
  void *raw = nullptr;
  size_t signalBytes = (signalSlots + 1) * sizeof(uint64_t);
  if (cudaError_t e = cudaMalloc(&raw, signalBytes); e != cudaSuccess)
    return fail("cudaMalloc of the signal slots: " + cudaText(e));
  pm->signals = static_cast<uint64_t *>(raw);
  pm->epochSlot = pm->signals + signalSlots;
  if (cudaError_t e = cudaMemset(raw, 0, signalBytes); e != cudaSuccess)
    return fail("cudaMemset of the signal slots: " + cudaText(e));

  Record mine;
  mine.rank = rank;
  mine.device = device;
  mine.pid = static_cast<int64_t>(getpid());
  if (gethostname(mine.host, kHostBytes - 1) != 0)
    std::strcpy(mine.host, "?");
  mine.signalSlots = signalSlots;
  std::vector<void *> all = regions;
  all.push_back(pm->signals);
  for (void *p : all) {
    Export e;
    e.address = reinterpret_cast<uint64_t>(p);
    std::memset(&e.handle, 0, sizeof(e.handle));
    if (p && cudaIpcGetMemHandle(&e.handle, p) == cudaSuccess)
      e.hasHandle = 1;
    else
      cudaGetLastError(); // Only a peer in another process needs it.
    mine.exports.push_back(e);
  }
  std::vector<std::string> records;
  std::string exchangeError;
  if (!exchange(encode(mine), records, exchangeError))
    return fail("exchanging the buffer addresses: " + exchangeError);
  if (records.size() != static_cast<size_t>(worldSize))
    return fail("the exchange returned " + std::to_string(records.size()) +
                " record(s) for " + std::to_string(worldSize) + " ranks");

  int inProcess = 0, byPeerAccess = 0, byIpc = 0;
  pm->regionPtr.assign(worldSize, {});
  std::vector<uint64_t *> signalOf(worldSize, nullptr);
  for (int p = 0; p < worldSize; ++p) {
    Record r;
    if (!decode(records[p], r))
      return fail("rank " + std::to_string(p) +
                  "'s record is not one this runtime writes");
    if (r.rank != p || r.exports.size() != all.size() ||
        r.signalSlots != signalSlots)
      return fail("rank " + std::to_string(p) +
                  "'s record disagrees with this rank's (rank " +
                  std::to_string(r.rank) + ", " +
                  std::to_string(r.exports.size()) + " regions for " +
                  std::to_string(all.size()) +
                  "): do all ranks run the same plan?");
    std::vector<char *> ptrs(r.exports.size(), nullptr);
    if (p == rank) {
      for (size_t k = 0; k < all.size(); ++k)
        ptrs[k] = static_cast<char *>(all[k]);
    } else if (r.pid == mine.pid && std::strcmp(r.host, mine.host) == 0) {
      ++inProcess;
      if (r.device != device) {
        int can = 0;
        if (cudaError_t e = cudaDeviceCanAccessPeer(&can, device, r.device);
            e != cudaSuccess || !can)
          return fail("GPU " + std::to_string(device) +
                      " cannot access the memory of GPU " +
                      std::to_string(r.device) + " (rank " + std::to_string(p) +
                      "): cudaDeviceCanAccessPeer says no peer access");
        cudaError_t e = cudaDeviceEnablePeerAccess(r.device, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
          cudaGetLastError();
        else if (e != cudaSuccess)
          return fail("cudaDeviceEnablePeerAccess(" + std::to_string(r.device) +
                      "): " + cudaText(e));
        ++byPeerAccess;
      }
      for (size_t k = 0; k < all.size(); ++k)
        ptrs[k] = reinterpret_cast<char *>(r.exports[k].address);
    } else if (std::strcmp(r.host, mine.host) != 0) {
      return fail("rank " + std::to_string(p) + " runs on host '" + r.host +
                  "', this rank on '" + mine.host +
                  "': copy-engine collectives reach only ranks of one node");
    } else {
      ++byIpc;
      for (size_t k = 0; k < all.size(); ++k) {
        if (!r.exports[k].address)
          continue;
        if (!r.exports[k].hasHandle)
          return fail("rank " + std::to_string(p) +
                      " could not export region " + std::to_string(k) +
                      " by CUDA IPC (cudaIpcGetMemHandle failed there)");
        void *opened = nullptr;
        cudaError_t e = cudaIpcOpenMemHandle(&opened, r.exports[k].handle,
                                             cudaIpcMemLazyEnablePeerAccess);
        if (e != cudaSuccess)
          return fail("cudaIpcOpenMemHandle of rank " + std::to_string(p) +
                      "'s region " + std::to_string(k) + ": " + cudaText(e));
        pm->ipcOpened.push_back(opened);
        ptrs[k] = static_cast<char *>(opened);
      }
    }
    signalOf[p] = reinterpret_cast<uint64_t *>(ptrs.back());
    ptrs.pop_back();
    pm->regionPtr[p] = std::move(ptrs);
  }
  void *tableRaw = nullptr;
  if (cudaError_t e = cudaMalloc(&tableRaw, worldSize * sizeof(uint64_t *));
      e != cudaSuccess)
    return fail("cudaMalloc of the signal table: " + cudaText(e));
  pm->table = static_cast<uint64_t **>(tableRaw);
  if (cudaError_t e =
          cudaMemcpy(pm->table, signalOf.data(), worldSize * sizeof(uint64_t *),
                     cudaMemcpyHostToDevice);
      e != cudaSuccess)
    return fail("cudaMemcpy of the signal table: " + cudaText(e));
  std::ostringstream os;
  os << inProcess << " peer(s) in this process";
  if (byPeerAccess > 0)
    os << " (" << byPeerAccess << " on other GPUs by peer access)";
  os << ", " << byIpc << " in other processes by CUDA IPC";
  pm->how = os.str();
  return pm;
}

PeerMemory::~PeerMemory() {
  for (void *p : ipcOpened)
    cudaIpcCloseMemHandle(p);
  if (table)
    cudaFree(table);
  if (signals)
    cudaFree(signals);
}

} // namespace detail
} // namespace runtime
} // namespace tandem
