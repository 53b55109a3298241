//===- JsonInput.cpp - Reading the JSON files Tandem's tools take ---------===//

#include "tandem/Analysis/JsonInput.h"
#include "tandem/runtime/Plan.h"

#include "llvm/ADT/Twine.h"

using namespace mlir;

std::optional<llvm::json::Value>
mlir::tandem::parseJsonInput(llvm::StringRef text, llvm::StringRef origin,
                             llvm::StringRef what, std::string &error) {
  if (::tandem::runtime::jsonNestingExceeds(text.str(), kMaxJsonInputDepth) !=
      std::string::npos) {
    error = (origin + ": arrays and objects nested more than " +
             llvm::Twine(kMaxJsonInputDepth) + " levels deep: not a " + what)
                .str();
    return std::nullopt;
  }
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    error = (origin + ": not valid JSON: " + llvm::toString(parsed.takeError()))
                .str();
    return std::nullopt;
  }
  return std::move(*parsed);
}
