//===- JsonSupport.h - Reading trace JSON safely ---------------*- C++ -*-===//
//
// Private to lib/Diagnosis: nlohmann/json parsing that reports errors as
// messages (never exceptions past this library) and refuses nesting deeper
// than traces ever need, and typed field lookups that return nothing
// instead of throwing on a missing key or a wrong type.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LIB_DIAGNOSIS_JSONSUPPORT_H
#define TANDEM_LIB_DIAGNOSIS_JSONSUPPORT_H

#include "tandem/runtime/Plan.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace tandem {
namespace diagnosis {

/// Traces nest four levels (object, event list, event, args); 64 leaves
/// room for any writer and keeps the recursive parser's stack bounded.
constexpr int kMaxJsonDepth = 64;

/// `v` with `digits` decimals, as the text report prints times.
inline std::string fixed(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

inline std::optional<nlohmann::json> parseJson(const std::string &text,
                                               const std::string &origin,
                                               std::string &error) {
  // Depth first, before the recursive parser runs (the plan reader's rule).
  if (runtime::jsonNestingExceeds(text, kMaxJsonDepth) != std::string::npos) {
    error = origin + ": JSON nested deeper than " +
            std::to_string(kMaxJsonDepth) + " levels";
    return std::nullopt;
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception &e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    size_t at = what.find("] ");
    error = origin + ": not valid JSON: " +
            (at == std::string::npos ? what : what.substr(at + 2));
    return std::nullopt;
  }
}

inline std::optional<double> numberField(const nlohmann::json &object,
                                         const char *key) {
  if (!object.is_object())
    return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number())
    return std::nullopt;
  double v = it->get<double>();
  if (!std::isfinite(v))
    return std::nullopt;
  return v;
}

inline std::optional<int64_t> intField(const nlohmann::json &object,
                                       const char *key) {
  if (!object.is_object())
    return std::nullopt;
  auto it = object.find(key);
  if (it == object.end())
    return std::nullopt;
  if (it->is_number_integer())
    return it->get<int64_t>();
  if (it->is_number_unsigned() &&
      it->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX))
    return static_cast<int64_t>(it->get<uint64_t>());
  return std::nullopt;
}

inline std::optional<std::string> stringField(const nlohmann::json &object,
                                              const char *key) {
  if (!object.is_object())
    return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_string())
    return std::nullopt;
  return it->get<std::string>();
}

} // namespace diagnosis
} // namespace tandem

#endif // TANDEM_LIB_DIAGNOSIS_JSONSUPPORT_H
