//===- RunTrace.cpp - The trace tandem-run writes -------------------------===//

#include "tandem/runtime/RunTrace.h"

#include <nlohmann/json.hpp>

namespace tandem {
namespace runtime {

std::string stepTraceName(const Step &step) {
  return step.label.empty() ? step.name : step.name + " " + step.label;
}

bool writeRunTrace(std::ostream &out, const Plan &plan,
                   const std::vector<StepTiming> &measured, int rank) {
  using nlohmann::json;
  out << "{\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const json &event) {
    if (!first)
      out << ",\n";
    first = false;
    out << event.dump();
  };
  for (int pid = 0; pid < 2; ++pid) {
    if (pid == 1 && !plan.prediction)
      break;
    std::string process = pid == 0 ? "measured @" + plan.function + " rank " +
                                         std::to_string(rank)
                                   : "predicted @" + plan.function;
    emit({{"ph", "M"},
          {"name", "process_name"},
          {"pid", pid},
          {"args", {{"name", process}}}});
    for (int64_t s = 0; s < plan.numStreams; ++s)
      emit({{"ph", "M"},
            {"name", "thread_name"},
            {"pid", pid},
            {"tid", s},
            {"args",
             {{"name", s < static_cast<int64_t>(plan.streamNames.size())
                           ? plan.streamNames[s]
                           : "stream " + std::to_string(s)}}}});
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const Step &st = plan.steps[i];
      double ts, dur;
      json args = {{"step", i}};
      if (pid == 0) {
        if (i >= measured.size())
          break;
        ts = measured[i].startUs;
        dur = measured[i].endUs - measured[i].startUs;
        if (measured[i].hostUs >= 0)
          args["host_us"] = measured[i].hostUs;
      } else {
        if (st.predictedStartUs < 0)
          continue;
        ts = st.predictedStartUs;
        dur = st.predictedDurationUs;
        if (st.predictedAloneUs >= 0)
          args["alone_us"] = st.predictedAloneUs;
      }
      emit({{"ph", "X"},
            {"name", stepTraceName(st)},
            {"cat", stepKindName(st.kind)},
            {"pid", pid},
            {"tid", st.stream},
            {"ts", ts},
            {"dur", dur},
            {"args", args}});
    }
  }
  out << "\n],\"displayTimeUnit\":\"ms\"}\n";
  return static_cast<bool>(out);
}

} // namespace runtime
} // namespace tandem
