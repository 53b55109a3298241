//===- Format.cpp - Version decoding and size formatting ------------------===//
//
// Implements the pure formatting helpers declared in tandem/runtime/Format.h.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Format.h"

#include <cstdio>
#include <string>

namespace tandem {
namespace runtime {

Version decodeCudaVersion(int code) {
  Version v;
  v.major = code / 1000;
  v.minor = (code % 1000) / 10;
  return v;
}

Version decodeNcclVersion(int code) {
  Version v;
  // The first code of the new scheme is 20900 (2.9.0), and the old scheme
  // never reached 10000, so the magnitude alone tells them apart.
  if (code >= 10000) {
    v.major = code / 10000;
    v.minor = (code % 10000) / 100;
  } else {
    v.major = code / 1000;
    v.minor = (code % 1000) / 100;
  }
  v.patch = code % 100;
  return v;
}

int encodeNcclVersion(const Version &version) {
  // Mirrors the NCCL_VERSION(X, Y, Z) macro in nccl.h.
  if (version.major <= 2 && version.minor <= 8)
    return version.major * 1000 + version.minor * 100 + version.patch;
  return version.major * 10000 + version.minor * 100 + version.patch;
}

Version decodeCublasLtVersion(std::size_t code) {
  Version v;
  v.major = static_cast<int>(code / 10000);
  v.minor = static_cast<int>((code % 10000) / 100);
  v.patch = static_cast<int>(code % 100);
  return v;
}

std::string formatCudaVersion(int code) {
  Version v = decodeCudaVersion(code);
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

std::string formatVersion(const Version &version) {
  return std::to_string(version.major) + "." + std::to_string(version.minor) +
         "." + std::to_string(version.patch);
}

std::string formatGiB(std::uint64_t bytes) {
  constexpr std::uint64_t kGiB = std::uint64_t(1) << 30;
  std::uint64_t whole = bytes / kGiB;
  std::uint64_t remainder = bytes % kGiB;
  // remainder < 2^30, so remainder * 10 cannot overflow.
  std::uint64_t tenths = (remainder * 10 + kGiB / 2) / kGiB;
  if (tenths == 10) {
    ++whole;
    tenths = 0;
  }
  return std::to_string(whole) + "." + std::to_string(tenths);
}

std::string formatComputeCapability(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::string jsonQuote(const std::string &s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

} // namespace runtime
} // namespace tandem
