//===- MemoryPlanner.cpp - Static arena plan honouring the schedule -------===//

#include "tandem/runtime/MemoryPlanner.h"
#include "tandem/runtime/CheckedMath.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace tandem {
namespace runtime {

HappensBefore::HappensBefore(const Plan &plan) {
  size_t n = plan.steps.size();
  int64_t numStreams = std::max<int64_t>(plan.numStreams, 1);
  streams.resize(n);
  positions.resize(n);
  clocks.resize(n);
  std::vector<std::vector<int64_t>> streamClock(
      numStreams, std::vector<int64_t>(numStreams, 0));
  std::map<int64_t, std::vector<int64_t>> eventClock;
  for (size_t i = 0; i < n; ++i) {
    const Step &step = plan.steps[i];
    int64_t s = std::clamp<int64_t>(step.stream, 0, numStreams - 1);
    std::vector<int64_t> &clock = streamClock[s];
    for (int64_t e : step.waitEvents) {
      auto it = eventClock.find(e);
      if (it == eventClock.end())
        continue;
      for (int64_t k = 0; k < numStreams; ++k)
        clock[k] = std::max(clock[k], it->second[k]);
    }
    streams[i] = s;
    clocks[i] = clock;
    positions[i] = ++clock[s];
    if (step.recordEvent >= 0)
      eventClock[step.recordEvent] = clock;
  }
}

bool HappensBefore::before(int64_t a, int64_t b) const {
  return clocks[b][streams[a]] >= positions[a];
}

int64_t rootBuffer(const Plan &plan, int64_t buffer) {
  // Views of views are resolved; validatePlan rejects cycles.
  for (int guard = 0; guard < 64 && buffer >= 0 &&
                      buffer < static_cast<int64_t>(plan.buffers.size()) &&
                      plan.buffers[buffer].role == Buffer::Role::View;
       ++guard)
    buffer = plan.buffers[buffer].viewOf;
  return buffer;
}

namespace {

/// `value` rounded up to kArenaAlignment; false when that overflows.
bool alignUp(int64_t value, int64_t &out) {
  int64_t padded;
  if (!checkedAdd(value, kArenaAlignment - 1, padded))
    return false;
  out = padded / kArenaAlignment * kArenaAlignment;
  return true;
}

/// Arena bytes a temporary takes: its size aligned, at least one unit.
bool slotBytes(const Buffer &b, int64_t &out) {
  int64_t bytes = b.bytes();
  return bytes >= 0 && alignUp(std::max<int64_t>(bytes, 1), out);
}

/// Per root buffer: the first step that writes it, and for every stream the
/// highest position of a step on it that touches the buffer.
struct Accesses {
  int64_t firstWrite = -1;
  int64_t firstRead = -1;
  std::vector<int64_t> lastOnStream;
  bool output = false;
};

std::vector<Accesses> collectAccesses(const Plan &plan,
                                      const HappensBefore &hb) {
  int64_t numStreams = std::max<int64_t>(plan.numStreams, 1);
  std::vector<Accesses> acc(plan.buffers.size());
  for (Accesses &a : acc)
    a.lastOnStream.assign(numStreams, 0);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &step = plan.steps[i];
    int64_t s = std::clamp<int64_t>(step.stream, 0, numStreams - 1);
    auto touch = [&](int64_t buffer, bool write) {
      int64_t root = rootBuffer(plan, buffer);
      if (root < 0 || root >= static_cast<int64_t>(acc.size()))
        return;
      Accesses &a = acc[root];
      if (write && a.firstWrite < 0)
        a.firstWrite = i;
      if (!write && a.firstRead < 0)
        a.firstRead = i;
      a.lastOnStream[s] = std::max(a.lastOnStream[s], hb.position(i));
    };
    for (int64_t b : step.inputs)
      touch(b, false);
    for (int64_t b : step.outputs)
      touch(b, true);
  }
  for (int64_t b : plan.outputs) {
    int64_t root = rootBuffer(plan, b);
    if (root >= 0 && root < static_cast<int64_t>(acc.size()))
      acc[root].output = true;
  }
  return acc;
}

/// Whether every access of `a` happens before step `step` starts.
bool deadAt(const Accesses &a, const HappensBefore &hb, int64_t step) {
  if (a.output)
    return false;
  const std::vector<int64_t> &clock = hb.startClock(step);
  for (size_t s = 0; s < clock.size(); ++s)
    if (clock[s] < a.lastOnStream[s])
      return false;
  return true;
}

} // namespace

std::string planMemory(Plan &plan, MemoryPlanStats *stats) {
  HappensBefore hb(plan);
  std::vector<Accesses> acc = collectAccesses(plan, hb);

  std::vector<int64_t> temps;
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    if (plan.buffers[b].role != Buffer::Role::Temp)
      continue;
    if (acc[b].firstWrite < 0) {
      if (acc[b].firstRead >= 0)
        return "buffer " + std::to_string(b) + " ('" + plan.buffers[b].name +
               "') is read by step " + std::to_string(acc[b].firstRead) +
               " but no step writes it";
      // Never touched: needs no storage, but keep the offset valid.
      plan.buffers[b].arenaOffset = 0;
      continue;
    }
    temps.push_back(b);
  }
  std::stable_sort(temps.begin(), temps.end(), [&](int64_t x, int64_t y) {
    return acc[x].firstWrite < acc[y].firstWrite;
  });

  // Allocations that may still conflict with later buffers, by offset. An
  // allocation is retired once it is dead for every stream that still has
  // steps to come: stream order keeps it dead there.
  struct Allocation {
    int64_t buffer, offset, size;
  };
  std::vector<Allocation> active;
  std::vector<int64_t> lastStepOfStream(std::max<int64_t>(plan.numStreams, 1),
                                        -1);
  for (size_t i = 0; i < plan.steps.size(); ++i)
    lastStepOfStream[std::clamp<int64_t>(plan.steps[i].stream, 0,
                                         plan.numStreams - 1)] = i;

  // Most recent step of each stream at or before the current one.
  std::vector<int64_t> latestStepOfStream(lastStepOfStream.size(), -1);
  int64_t scanned = 0;
  MemoryPlanStats local;
  for (int64_t b : temps) {
    int64_t step = acc[b].firstWrite;
    for (; scanned <= step; ++scanned)
      latestStepOfStream[std::clamp<int64_t>(plan.steps[scanned].stream, 0,
                                             plan.numStreams - 1)] = scanned;
    int64_t size;
    if (!slotBytes(plan.buffers[b], size) ||
        !checkedAdd(local.totalTempBytes, size, local.totalTempBytes))
      return "buffer " + std::to_string(b) + " ('" + plan.buffers[b].name +
             "'): the arena size overflows a 64-bit integer";
    ++local.tempBuffers;
    // Conflicting allocations, sorted by offset; retire the dead ones whose
    // deadness can no longer change.
    std::vector<Allocation> conflicts;
    std::vector<Allocation> kept;
    for (const Allocation &a : active) {
      if (deadAt(acc[a.buffer], hb, step)) {
        // Retire it once it is dead for every stream with steps to come:
        // each such stream's latest step so far already follows all its
        // accesses, and stream order keeps that true later.
        bool permanent = true;
        for (size_t s = 0; s < lastStepOfStream.size() && permanent; ++s) {
          if (lastStepOfStream[s] <= step)
            continue;
          // The current step is dead-checked above; a stream with no step
          // yet may still start one that is not ordered after the accesses.
          int64_t latest = latestStepOfStream[s];
          permanent = latest == step ||
                      (latest >= 0 && deadAt(acc[a.buffer], hb, latest));
        }
        if (!permanent)
          kept.push_back(a);
        continue;
      }
      conflicts.push_back(a);
      kept.push_back(a);
    }
    active.swap(kept);
    std::sort(conflicts.begin(), conflicts.end(),
              [](const Allocation &x, const Allocation &y) {
                return x.offset < y.offset;
              });
    // Offsets stay below the sum of the sizes placed so far, which the
    // check above keeps from overflowing.
    int64_t offset = 0;
    for (const Allocation &a : conflicts) {
      if (a.offset >= offset + size)
        break;
      offset = std::max(offset, a.offset + a.size);
    }
    plan.buffers[b].arenaOffset = offset;
    active.push_back({b, offset, size});
    local.arenaBytes = std::max(local.arenaBytes, offset + size);
  }
  plan.arenaBytes = local.arenaBytes;
  if (stats)
    *stats = local;
  return "";
}

bool arenaUpperBound(const Plan &plan, int64_t &bytes) {
  int64_t total = 0, size;
  for (const Buffer &b : plan.buffers)
    if (b.role == Buffer::Role::Temp &&
        (!slotBytes(b, size) || !checkedAdd(total, size, total)))
      return false;
  bytes = total;
  return true;
}

std::string checkMemoryPlan(const Plan &plan) {
  HappensBefore hb(plan);
  std::vector<Accesses> acc = collectAccesses(plan, hb);
  struct Placed {
    int64_t buffer, offset, end;
  };
  std::vector<Placed> placed;
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const Buffer &buf = plan.buffers[b];
    if (buf.role != Buffer::Role::Temp)
      continue;
    std::ostringstream os;
    os << "buffer " << b << " ('" << buf.name << "')";
    if (buf.arenaOffset < 0)
      return os.str() + " has no arena offset (run the memory planner)";
    if (buf.arenaOffset % kArenaAlignment != 0)
      return os.str() + " has arena offset " + std::to_string(buf.arenaOffset) +
             ", not a multiple of " + std::to_string(kArenaAlignment);
    // A temporary no step touches needs no storage (planMemory puts it at
    // 0 without growing the arena); nothing launches with its address.
    bool touched = acc[b].firstWrite >= 0 || acc[b].firstRead >= 0;
    if (touched && !rangeInside(buf.arenaOffset, buf.bytes(), plan.arenaBytes))
      return os.str() + " (" + std::to_string(buf.bytes()) +
             " bytes at arena offset " + std::to_string(buf.arenaOffset) +
             ") extends past the arena's " + std::to_string(plan.arenaBytes) +
             " bytes";
    if (acc[b].firstWrite >= 0)
      placed.push_back({static_cast<int64_t>(b), buf.arenaOffset,
                        buf.arenaOffset + buf.bytes()});
  }
  std::sort(placed.begin(), placed.end(), [](const Placed &x, const Placed &y) {
    return x.offset < y.offset;
  });
  // Every pair that shares bytes must be separated in time: all accesses of
  // one happen before the first write of the other.
  for (size_t i = 0; i < placed.size(); ++i) {
    for (size_t j = i + 1;
         j < placed.size() && placed[j].offset < placed[i].end; ++j) {
      const Placed &x = placed[i], &y = placed[j];
      bool xFirst = deadAt(acc[x.buffer], hb, acc[y.buffer].firstWrite);
      bool yFirst = deadAt(acc[y.buffer], hb, acc[x.buffer].firstWrite);
      if (!xFirst && !yFirst)
        return "buffers " + std::to_string(x.buffer) + " ('" +
               plan.buffers[x.buffer].name + "') and " +
               std::to_string(y.buffer) + " ('" + plan.buffers[y.buffer].name +
               "') share arena bytes but may be live at the same time";
    }
  }
  return "";
}

} // namespace runtime
} // namespace tandem
