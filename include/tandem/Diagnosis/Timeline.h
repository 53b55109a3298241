//===- Timeline.h - A step's ops in time, from a trace or a plan -*- C++
//-*-===//
//
// The input of tandem-diagnose: the ops of one step, in issue order, with
// the stream each ran on and when. Read from the simulator's Chrome trace
// (--tandem-simulate=trace=, docs/simulator.md), from tandem-run's trace
// (measured process or predicted process, RunTrace.h), or from an
// execution plan's prediction. Plain C++17: no MLIR needed at run time.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIAGNOSIS_TIMELINE_H
#define TANDEM_DIAGNOSIS_TIMELINE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tandem {
namespace runtime {
struct Plan;
} // namespace runtime

namespace diagnosis {

enum class OpRole { Compute, Collective, Wait };

struct TimelineOp {
  /// The name the trace gives it (the simulator's task name, or
  /// tandem-run's "<op> <label>").
  std::string name;
  /// Its index among the ops of the same name, in issue order: ops are
  /// matched across timelines by (name, occurrence).
  int64_t occurrence = 0;
  int64_t stream = 0;
  OpRole role = OpRole::Compute;
  /// The trace's category (gemm, memory, collective, ... or the plan step's
  /// kind).
  std::string category;
  /// The op class of runtime::opClassOf ("gemm", "all_gather", ...); the
  /// category when the name is not a tandem op's; empty for waits.
  std::string opClass;
  double startUs = 0, durUs = 0;
  double aloneUs = -1;        ///< args.alone_us, or the plan's; -1 = unknown
  double waitedForSmsUs = -1; ///< args.waited_for_sms_us; -1 = unknown
  double hostUs = -1;         ///< args.host_us (host launch); -1 = unknown
  int64_t step = -1;          ///< The plan step index, where known.
  double endUs() const { return startUs + durUs; }
};

struct Timeline {
  /// The file and the process the ops came from, for messages.
  std::string origin;
  std::string function;
  std::vector<std::string> streamNames;
  std::vector<TimelineOp> ops;
  std::string streamName(int64_t stream) const;
  double spanUs() const;
};

/// Which timeline of a file to take.
enum class TimelineSource {
  /// The measured process of a tandem-run trace, else the simulator's.
  Measured,
  /// The predicted process of a tandem-run trace, else the simulator's,
  /// or a plan's prediction.
  Predicted,
};

/// Reads `path`: a plan (JSON with "format": "tandem-plan"; Predicted
/// only) or a Chrome trace whose processes are named as --tandem-simulate
/// ("simulated @<f>") or tandem-run ("measured @<f> rank <r>",
/// "predicted @<f>") name them. `function` selects among several functions
/// (empty: the file must hold one). Errors name the file and the event.
std::optional<Timeline> readTimeline(const std::string &path,
                                     TimelineSource source,
                                     const std::string &function,
                                     std::string &error);
std::optional<Timeline> parseTimeline(const std::string &text,
                                      const std::string &origin,
                                      TimelineSource source,
                                      const std::string &function,
                                      std::string &error);

/// The plan's predicted timeline, under the names tandem-run's trace gives
/// its steps (runtime::stepTraceName).
std::optional<Timeline> timelineOfPlan(const runtime::Plan &plan,
                                       const std::string &origin,
                                       std::string &error);

/// Reads a whole file; false (with `error` naming it) when it cannot.
bool readFileText(const std::string &path, std::string &text,
                  std::string &error);

} // namespace diagnosis
} // namespace tandem

#endif // TANDEM_DIAGNOSIS_TIMELINE_H
