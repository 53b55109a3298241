//===- JsonInput.h - Reading the JSON files Tandem's tools take -*- C++ -*-===//
//
// Calibration files, tandem-calibrate's and tandem-nccl-bench's
// measurements, diagnosis reports: every JSON file a Tandem tool reads goes
// through `parseJsonInput`, which refuses a file nested deeper than
// `kMaxJsonInputDepth` before llvm::json::parse sees it (that parser
// recurses once per level: a file nested 100,000 deep overflows the stack
// before it can report anything). The scan is the plan reader's
// (`runtime::jsonNestingExceeds`), so the MLIR tools and the runtime refuse
// the same files.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_JSONINPUT_H
#define TANDEM_ANALYSIS_JSONINPUT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
namespace tandem {

/// The deepest nesting of arrays and objects a JSON input may have; none of
/// Tandem's formats needs more than a handful of levels.
constexpr int kMaxJsonInputDepth = 64;

/// Parses `text`, the contents of `origin`, a `what` (e.g. "calibration
/// file"). On failure returns nullopt and sets `error` to
/// "<origin>: arrays and objects nested more than 64 levels deep: not a
/// <what>" or "<origin>: not valid JSON: <the parser's message>".
std::optional<llvm::json::Value> parseJsonInput(llvm::StringRef text,
                                                llvm::StringRef origin,
                                                llvm::StringRef what,
                                                std::string &error);

/// `parseJsonInput` for formats whose top level is an object: also fails
/// with "<origin>: the top level must be a JSON object", and, given
/// `version`, with "<origin>: \"version\" must be <version>" unless the
/// object's integer "version" is that. On success the value is an object.
std::optional<llvm::json::Value>
parseJsonObjectInput(llvm::StringRef text, llvm::StringRef origin,
                     llvm::StringRef what, std::string &error,
                     std::optional<int64_t> version = std::nullopt);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_ANALYSIS_JSONINPUT_H
