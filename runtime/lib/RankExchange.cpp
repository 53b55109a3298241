//===- RankExchange.cpp - All-gather of one record per rank ---------------===//

#include "tandem/runtime/RankExchange.h"

#include <chrono>

namespace tandem {
namespace runtime {

ThreadExchange::ThreadExchange(int ranks, double timeoutSeconds)
    : slots(ranks > 0 ? ranks : 0), timeoutSeconds(timeoutSeconds) {}

bool ThreadExchange::call(int rank, const std::string &mine,
                          std::vector<std::string> &all, std::string &error) {
  std::unique_lock<std::mutex> lock(m);
  if (rank < 0 || rank >= static_cast<int>(slots.size())) {
    error = "rank " + std::to_string(rank) + " is outside the exchange's " +
            std::to_string(slots.size()) + " ranks";
    return false;
  }
  if (failed) {
    error = "another rank failed before the exchange";
    return false;
  }
  // A generation cannot complete without every rank, so `result` stays this
  // call's until every waiting rank has read it.
  int64_t gen = generation;
  slots[rank] = mine;
  if (++arrived == static_cast<int>(slots.size())) {
    result = slots;
    arrived = 0;
    ++generation;
    cv.notify_all();
  } else if (!cv.wait_for(lock, std::chrono::duration<double>(timeoutSeconds),
                          [&] { return generation != gen || failed; })) {
    error = "not every rank reached the exchange within " +
            std::to_string(timeoutSeconds) + " s";
    return false;
  }
  if (generation == gen) {
    error = "another rank failed before the exchange";
    return false;
  }
  all = result;
  return true;
}

RankExchange ThreadExchange::forRank(int rank) {
  return
      [this, rank](const std::string &mine, std::vector<std::string> &all,
                   std::string &error) { return call(rank, mine, all, error); };
}

void ThreadExchange::fail() {
  std::lock_guard<std::mutex> lock(m);
  failed = true;
  cv.notify_all();
}

} // namespace runtime
} // namespace tandem
