//===- FuzzEntries.h - What each fuzz target runs on one input --*- C++ -*-===//
//
// The entry functions the libFuzzer targets (fuzz-*.cpp, built with
// -DTANDEM_FUZZ=ON) and the regression replayer (tandem-fuzz-replay, built
// always and run by check-tandem on test/tools/tandem-fuzz/regressions) call
// on one input. An entry must return normally on any input: a diagnostic or
// an error is a correct answer; a crash, a hang or an unbounded allocation
// is a bug. docs/testing.md says what each target covers.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEM_FUZZ_FUZZENTRIES_H
#define TANDEM_TOOLS_TANDEM_FUZZ_FUZZENTRIES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>

namespace mlir {
namespace tandem {
namespace fuzz {

/// The targets, by the name the replayer and the scripts use.
enum class Target { IrParse, Simulate, Overlap, Calibration };

/// Largest input each target runs; longer inputs are skipped (libFuzzer's
/// -max_len keeps mutations below it too). --tandem-overlap tries every
/// strategy, so its inputs are kept small for the target to stay fast.
constexpr size_t kMaxIrBytes = 16384;
constexpr size_t kMaxOverlapBytes = 4096;
constexpr size_t kMaxCalibrationBytes = 1 << 20;

/// Parses `name` ("ir-parse", "simulate", "overlap", "calibration").
bool parseTarget(llvm::StringRef name, Target &target);

/// Runs `target` on one input. Returns 0 (libFuzzer's convention) whatever
/// the input's verdict.
int runOne(Target target, llvm::ArrayRef<uint8_t> input);

} // namespace fuzz
} // namespace tandem
} // namespace mlir

#endif // TANDEM_TOOLS_TANDEM_FUZZ_FUZZENTRIES_H
