//===- RankExchange.h - All-gather of one record per rank -------*- C++ -*-===//
//
// How the ranks of an NCCL-mode run exchange the addresses of their buffers
// when their plan has copy-engine collectives (ExecutorOptions::exchange):
// an all-gather of one byte string per rank that the launcher provides.
// ThreadExchange is the one for ranks that are threads of one process;
// tandem-run uses MPI_Allgather between processes. No CUDA types.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_RANKEXCHANGE_H
#define TANDEM_RUNTIME_RANKEXCHANGE_H

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace tandem {
namespace runtime {

/// `mine` is this rank's record; `all` receives every rank's, in rank
/// order. Every rank calls it the same number of times, in the same order;
/// it fails (with `error` set) instead of blocking forever.
using RankExchange =
    std::function<bool(const std::string &mine, std::vector<std::string> &all,
                       std::string &error)>;

/// RankExchange between `ranks` threads of one process: each call returns
/// when every rank has made its matching call, or fails when one rank has
/// called fail() or `timeoutSeconds` pass first.
class ThreadExchange {
public:
  ThreadExchange(int ranks, double timeoutSeconds);
  bool call(int rank, const std::string &mine, std::vector<std::string> &all,
            std::string &error);
  /// The RankExchange of rank `rank` (this object must outlive it).
  RankExchange forRank(int rank);
  /// A rank failed: every rank waiting now or calling later fails.
  void fail();

private:
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::string> slots, result;
  double timeoutSeconds;
  int arrived = 0;
  int64_t generation = 0;
  bool failed = false;
};

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_RANKEXCHANGE_H
