//===- PlanFuzzer.cpp - libFuzzer target: plan reader, validation, planner ===//
//
// Built with -DTANDEM_FUZZ=ON and clang (docs/runtime.md, "Fuzzing"). Every
// input goes through runPlanFuzzInput; a broken invariant aborts, and so
// does anything AddressSanitizer or UndefinedBehaviorSanitizer sees.
//
//===----------------------------------------------------------------------===//

#include "PlanFuzzTarget.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string problem = tandem::runtime::runPlanFuzzInput(data, size);
  if (!problem.empty()) {
    std::fprintf(stderr, "plan fuzzer: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
