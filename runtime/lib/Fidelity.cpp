//===- Fidelity.cpp - Measured against predicted, per op class ------------===//

#include "tandem/runtime/Fidelity.h"

namespace tandem {
namespace runtime {

std::optional<std::string> opClassOf(const Step &step) {
  switch (step.kind) {
  case StepKind::Matmul:
    return std::string("gemm");
  case StepKind::Slice:
  case StepKind::Concat:
  case StepKind::RingConcat:
    return std::string("layout");
  case StepKind::Collective:
    return std::string(collectiveKindName(step.collective));
  case StepKind::Sync:
    return std::nullopt;
  default:
    return std::string(stepKindName(step.kind));
  }
}

std::optional<std::string> opClassOfOpName(const std::string &opName) {
  const std::string prefix = "tandem.";
  if (opName.compare(0, prefix.size(), prefix) != 0)
    return std::nullopt;
  std::string mnemonic = opName.substr(prefix.size());
  const std::string start = "_start";
  if (mnemonic.size() > start.size() &&
      mnemonic.compare(mnemonic.size() - start.size(), start.size(), start) ==
          0)
    mnemonic.resize(mnemonic.size() - start.size());
  Step step;
  for (CollectiveKind kind :
       {CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
        CollectiveKind::AllReduce, CollectiveKind::AllToAll,
        CollectiveKind::Permute}) {
    if (mnemonic == collectiveKindName(kind)) {
      step.kind = StepKind::Collective;
      step.collective = kind;
      return opClassOf(step);
    }
  }
  // The launching kinds carry their op's mnemonic; the IR's wait is a sync
  // step, which has no class.
  std::optional<StepKind> kind = parseStepKind(mnemonic);
  if (!kind || *kind == StepKind::Collective || *kind == StepKind::Sync)
    return std::nullopt;
  step.kind = *kind;
  return opClassOf(step);
}

std::vector<ClassFidelity> compareByClass(const Plan &plan,
                                          const std::vector<double> &measuredUs,
                                          std::string &error) {
  if (measuredUs.size() != plan.steps.size()) {
    error = "per-op comparison needs one measured duration per step: " +
            std::to_string(measuredUs.size()) + " for " +
            std::to_string(plan.steps.size()) + " steps";
    return {};
  }
  std::vector<ClassFidelity> classes;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &step = plan.steps[i];
    std::optional<std::string> name = opClassOf(step);
    if (!name)
      continue;
    ClassFidelity *c = nullptr;
    for (ClassFidelity &existing : classes)
      if (existing.opClass == *name)
        c = &existing;
    if (!c) {
      classes.push_back(ClassFidelity{*name});
      c = &classes.back();
    }
    ++c->steps;
    if (step.predictedDurationUs < 0)
      continue;
    ++c->predictedSteps;
    c->measuredUs += measuredUs[i];
    c->predictedUs += step.predictedDurationUs;
    if (step.predictedAloneUs >= 0)
      c->predictedAloneUs += step.predictedAloneUs;
  }
  return classes;
}

} // namespace runtime
} // namespace tandem
