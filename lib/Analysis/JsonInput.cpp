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

std::optional<llvm::json::Value>
mlir::tandem::parseJsonObjectInput(llvm::StringRef text, llvm::StringRef origin,
                                   llvm::StringRef what, std::string &error,
                                   std::optional<int64_t> version) {
  std::optional<llvm::json::Value> parsed =
      parseJsonInput(text, origin, what, error);
  if (!parsed)
    return std::nullopt;
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root) {
    error = (origin + ": the top level must be a JSON object").str();
    return std::nullopt;
  }
  if (version && root->getInteger("version") != *version) {
    error = (origin + ": \"version\" must be " + llvm::Twine(*version)).str();
    return std::nullopt;
  }
  return parsed;
}
