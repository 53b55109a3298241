//===- Engine.cpp - Discrete-event simulation of a multi-stream schedule --===//

#include "tandem/Engine/Engine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir::tandem;
using namespace mlir::tandem::sim;

double sim::gemmTimeOnSms(const Task &task, int64_t sms) {
  sms = std::max<int64_t>(sms, 1);
  int64_t waves = (task.tiles + sms - 1) / sms;
  return std::max(waves * task.waveUs, task.floorUs) + task.overheadUs;
}

namespace {
struct Running {
  unsigned task;
  double remaining = 1.0; ///< Fraction of the work left.
  double rate = 0.0;      ///< Fraction per microsecond.
  /// Collectives: false while waiting for SMs (SM-residency rule).
  bool admitted = true;
  /// GEMMs: whether the kernel occupies every SM its target allows, so that
  /// a collective launched now finds none free.
  bool holdsSms = false;
};

/// Whether GEMM `t`, once it holds its SMs, leaves none for a collective of
/// `commSms` CTAs.
bool leavesNoRoom(const Problem &p, const Task &t, int64_t commSms) {
  return t.kind == TaskKind::Gemm &&
         (t.smTarget <= 0 || t.smTarget > p.smCount - commSms);
}
} // namespace

double sim::contentionSlowdown(TaskKind kind, const ContentionPoint &c) {
  switch (kind) {
  case TaskKind::Gemm:
  case TaskKind::Compute:
    return c.gemmSlowdown;
  case TaskKind::Memory:
    return c.memorySlowdown;
  case TaskKind::Collective:
    return c.commSlowdown;
  case TaskKind::Wait:
    return 1.0;
  }
  return 1.0;
}

/// Rates of the running tasks given who runs beside whom.
static void computeRates(const Problem &problem,
                         std::vector<Running> &running) {
  int64_t commSms = 0;
  unsigned computeCount = 0, smCollectives = 0, copyEngineCollectives = 0;
  llvm::StringMap<unsigned> perFabric;
  for (const Running &r : running) {
    const Task &t = problem.tasks[r.task];
    if (t.kind == TaskKind::Collective) {
      if (!r.admitted)
        continue;
      if (t.copyEngine) {
        ++copyEngineCollectives;
      } else {
        commSms += t.commSms;
        ++smCollectives;
      }
      ++perFabric[t.fabric];
    } else {
      ++computeCount;
    }
  }
  ContentionPoint c = problem.contention.lookup(commSms);
  const ContentionPoint &ce = problem.contention.copyEnginePoint();
  int64_t freeSms = std::max<int64_t>(1, problem.smCount - commSms);
  // Concurrent compute kernels split the free SMs evenly.
  int64_t share = std::max<int64_t>(1, freeSms / std::max(1u, computeCount));

  for (Running &r : running) {
    const Task &t = problem.tasks[r.task];
    double timeUs = t.aloneUs;
    double slowdown = 1.0;
    switch (t.kind) {
    case TaskKind::Gemm: {
      int64_t sms = t.smTarget > 0 ? std::min(t.smTarget, share) : share;
      timeUs = gemmTimeOnSms(t, std::min<int64_t>(sms, problem.smCount));
      break;
    }
    case TaskKind::Compute:
      timeUs = t.aloneUs * double(problem.smCount) / double(share);
      break;
    case TaskKind::Memory:
      break;
    case TaskKind::Collective:
      if (!r.admitted) {
        r.rate = 0.0; // Launched, waiting for SMs: no progress.
        continue;
      }
      slowdown = perFabric[t.fabric];
      break;
    case TaskKind::Wait:
      break;
    }
    if (t.kind == TaskKind::Collective) {
      if (computeCount > 0)
        slowdown *= contentionSlowdown(t.kind, t.copyEngine ? ce : c);
    } else {
      // Beside SM collectives and copy-engine collectives at once, both
      // factors apply.
      if (smCollectives > 0)
        slowdown *= contentionSlowdown(t.kind, c);
      if (copyEngineCollectives > 0)
        slowdown *= contentionSlowdown(t.kind, ce);
    }
    r.rate = timeUs > 0 ? 1.0 / (timeUs * slowdown)
                        : std::numeric_limits<double>::infinity();
  }
}

std::optional<Result> sim::simulate(const Problem &problem,
                                    std::string &error) {
  const size_t n = problem.tasks.size();
  Result result;
  result.timings.assign(n, Timing{});
  std::vector<bool> done(n, false), started(n, false);

  // Per-stream queues in program order.
  unsigned numStreams = problem.streamNames.size();
  for (const Task &t : problem.tasks)
    numStreams = std::max(numStreams, t.stream + 1);
  std::vector<std::vector<unsigned>> queues(numStreams);
  for (unsigned i = 0; i < n; ++i)
    queues[problem.tasks[i].stream].push_back(i);
  std::vector<size_t> head(numStreams, 0);
  std::vector<bool> streamBusy(numStreams, false);

  // When task `id`, whose dependences are done, may start: a dependence on
  // another stream adds the event latency.
  auto readyAt = [&](unsigned id) {
    const Task &t = problem.tasks[id];
    double at = 0.0;
    for (unsigned d : t.deps)
      at = std::max(at, result.timings[d].endUs +
                            (problem.tasks[d].stream != t.stream
                                 ? problem.eventLatencyUs
                                 : 0.0));
    return at;
  };
  constexpr double kEpsUs = 1e-9;

  std::vector<Running> running;
  double now = 0.0;
  size_t finished = 0;
  while (finished < n) {
    // Start everything that can start now; zero-time tasks finish at once
    // and may unblock more, so iterate to a fixed point.
    bool progress = true;
    while (progress) {
      progress = false;
      for (unsigned s = 0; s < numStreams; ++s) {
        if (streamBusy[s] || head[s] >= queues[s].size())
          continue;
        unsigned id = queues[s][head[s]];
        const Task &t = problem.tasks[id];
        if (!std::all_of(t.deps.begin(), t.deps.end(),
                         [&](unsigned d) { return done[d]; }) ||
            readyAt(id) > now + kEpsUs)
          continue;
        started[id] = true;
        result.timings[id].startUs = now;
        ++head[s];
        progress = true;
        if (t.kind == TaskKind::Wait || t.aloneUs <= 0.0) {
          result.timings[id].endUs = now;
          done[id] = true;
          ++finished;
          continue;
        }
        streamBusy[s] = true;
        Running r{id};
        if (t.kind == TaskKind::Collective)
          r.admitted = false; // Decided below, once this instant's starts
                              // are known.
        running.push_back(r);
      }
    }
    // SM residency (Engine.h): SMs go to kernels in issue order. A GEMM
    // that gets them while no collective holds any keeps every SM its
    // target allows until it ends; a GEMM that started beside a collective
    // takes that collective's SMs when it ends (its CTAs were issued
    // first). Kernels that became ready at this instant are served in
    // program order.
    if (problem.gemmsHoldSms) {
      bool commResident = false;
      std::vector<unsigned> arrivals; // Indices into `running`.
      for (auto [i, r] : llvm::enumerate(running)) {
        const Task &t = problem.tasks[r.task];
        if (t.kind == TaskKind::Collective && r.admitted && !t.copyEngine)
          commResident = true;
        bool isNew =
            t.kind == TaskKind::Gemm && result.timings[r.task].startUs == now;
        if (isNew || (t.kind == TaskKind::Collective && !r.admitted))
          arrivals.push_back(i);
      }
      for (Running &r : running)
        if (problem.tasks[r.task].kind == TaskKind::Gemm)
          r.holdsSms = result.timings[r.task].startUs < now && !commResident;
      llvm::sort(arrivals, [&](unsigned a, unsigned b) {
        return running[a].task < running[b].task;
      });
      for (unsigned i : arrivals) {
        Running &r = running[i];
        const Task &t = problem.tasks[r.task];
        if (t.kind == TaskKind::Gemm) {
          r.holdsSms = !commResident;
          continue;
        }
        if (t.copyEngine) {
          // Needs no SMs: starts at once and leaves the GEMMs theirs.
          r.admitted = true;
          result.timings[r.task].admittedUs = now;
          continue;
        }
        bool blocked =
            std::any_of(running.begin(), running.end(), [&](const Running &g) {
              return g.holdsSms &&
                     leavesNoRoom(problem, problem.tasks[g.task], t.commSms);
            });
        if (!blocked) {
          r.admitted = true;
          result.timings[r.task].admittedUs = now;
          commResident = true;
        }
      }
    }
    for (Running &r : running)
      if (!r.admitted && !problem.gemmsHoldSms) {
        r.admitted = true;
        result.timings[r.task].admittedUs = now;
      }
    if (finished == n)
      break;
    // The earliest instant a stream's next task becomes ready through an
    // event that is still in flight.
    double nextReady = std::numeric_limits<double>::infinity();
    for (unsigned s = 0; s < numStreams; ++s) {
      if (streamBusy[s] || head[s] >= queues[s].size())
        continue;
      unsigned id = queues[s][head[s]];
      const Task &t = problem.tasks[id];
      if (std::all_of(t.deps.begin(), t.deps.end(),
                      [&](unsigned d) { return done[d]; }))
        nextReady = std::min(nextReady, readyAt(id));
    }
    if (running.empty() && std::isfinite(nextReady)) {
      now = nextReady;
      continue;
    }
    if (running.empty()) {
      llvm::raw_string_ostream os(error);
      os << "the schedule deadlocks at t = " << now << " us:";
      for (unsigned s = 0; s < numStreams; ++s) {
        if (head[s] >= queues[s].size())
          continue;
        const Task &t = problem.tasks[queues[s][head[s]]];
        os << " stream " << s << " waits at '" << t.name << "' for";
        for (unsigned d : t.deps)
          if (!done[d])
            os << " '" << problem.tasks[d].name << "'";
        os << ";";
      }
      return std::nullopt;
    }
    computeRates(problem, running);
    // Verified IR and calibration bounds keep every duration positive and
    // finite; a problem built elsewhere may not. A rate of 0, infinity or
    // NaN would make the step infinite or NaN and the loop never end:
    // report it instead.
    for (const Running &r : running) {
      if (!r.admitted || (r.rate > 0.0 && std::isfinite(r.rate)))
        continue;
      const Task &t = problem.tasks[r.task];
      llvm::raw_string_ostream os(error);
      os << "task '" << t.name
         << "' has no positive, finite rate at t = " << now << " us (rate "
         << r.rate << " per us, alone " << t.aloneUs
         << " us): its duration is 0, infinite or NaN";
      return std::nullopt;
    }
    double step = std::isfinite(nextReady)
                      ? nextReady - now
                      : std::numeric_limits<double>::infinity();
    for (const Running &r : running)
      if (r.rate > 0.0)
        step = std::min(step, r.remaining / r.rate);
    if (!std::isfinite(step)) {
      llvm::raw_string_ostream os(error);
      os << "no running task makes progress at t = " << now << " us";
      return std::nullopt;
    }
    now += step;
    std::vector<Running> still;
    for (Running &r : running) {
      r.remaining -= step * r.rate;
      if (r.remaining <= 1e-9) {
        result.timings[r.task].endUs = now;
        done[r.task] = true;
        streamBusy[problem.tasks[r.task].stream] = false;
        ++finished;
      } else {
        still.push_back(r);
      }
    }
    running.swap(still);
  }
  for (const Timing &t : result.timings)
    result.spanUs = std::max(result.spanUs, t.endUs);
  return result;
}
