//===- Format.h - Version decoding and size formatting ---------*- C++ -*-===//
//
// Pure helpers that turn the integer encodings used by CUDA, NCCL and
// cuBLASLt into readable text. They have no CUDA dependency so that they can
// be unit tested on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_FORMAT_H
#define TANDEM_RUNTIME_FORMAT_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace tandem {
namespace runtime {

/// A decoded major.minor.patch version.
struct Version {
  int major = 0;
  int minor = 0;
  int patch = 0;

  bool operator==(const Version &other) const {
    return major == other.major && minor == other.minor && patch == other.patch;
  }
  bool operator!=(const Version &other) const { return !(*this == other); }
};

/// Decodes a CUDA runtime or driver version as returned by
/// cudaRuntimeGetVersion/cudaDriverGetVersion: 1000 * major + 10 * minor
/// (e.g. 12080 is 12.8). The patch level is not encoded and is always 0.
Version decodeCudaVersion(int code);

/// Decodes an NCCL version code as returned by ncclGetVersion. NCCL changed
/// its encoding in 2.9: up to 2.8 it is 1000 * major + 100 * minor + patch
/// (2.8.4 is 2804), since then 10000 * major + 100 * minor + patch (2.18.1 is
/// 21801).
Version decodeNcclVersion(int code);

/// Encodes \p version the way ncclGetVersion would report it (inverse of
/// decodeNcclVersion).
int encodeNcclVersion(const Version &version);

/// Decodes a cuBLASLt version as returned by cublasLtGetVersion:
/// 10000 * major + 100 * minor + patch (e.g. 130100 is 13.1.0).
Version decodeCublasLtVersion(std::size_t code);

/// Formats a CUDA version code as "major.minor", e.g. "12.8".
std::string formatCudaVersion(int code);

/// Formats a version as "major.minor.patch".
std::string formatVersion(const Version &version);

/// Formats a byte count in GiB (2^30 bytes) with one decimal, rounded to
/// nearest, e.g. 1610612736 -> "1.5". Computed in integers so the result does
/// not depend on floating-point rounding.
std::string formatGiB(std::uint64_t bytes);

/// Formats a compute capability as the matching SASS target name, e.g.
/// (9, 0) -> "sm_90", (10, 0) -> "sm_100".
std::string formatComputeCapability(int major, int minor);

/// `s` as a JSON string literal: quoted, with '"', '\\' and control
/// characters escaped. For the runtime tools' hand-assembled JSON output.
std::string jsonQuote(const std::string &s);

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_FORMAT_H
