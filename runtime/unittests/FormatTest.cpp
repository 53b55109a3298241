//===- FormatTest.cpp - Tests for version decoding and formatting ---------===//
//
// Expected values are computed by hand from the encodings documented by
// CUDA, NCCL and cuBLASLt, not by calling the code under test.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Format.h"

#include <gtest/gtest.h>

#include <ostream>

namespace tandem {
namespace runtime {
// Lets gtest print versions readably when an expectation fails.
void PrintTo(const Version &version, std::ostream *os) {
  *os << formatVersion(version);
}
} // namespace runtime
} // namespace tandem

using namespace tandem::runtime;

namespace {

Version v(int major, int minor, int patch) {
  Version result;
  result.major = major;
  result.minor = minor;
  result.patch = patch;
  return result;
}

TEST(FormatTest, DecodeCudaVersion) {
  EXPECT_EQ(decodeCudaVersion(13000), v(13, 0, 0));
  EXPECT_EQ(decodeCudaVersion(12080), v(12, 8, 0));
  EXPECT_EQ(decodeCudaVersion(11020), v(11, 2, 0));
  EXPECT_EQ(formatCudaVersion(12080), "12.8");
  EXPECT_EQ(formatCudaVersion(13000), "13.0");
}

TEST(FormatTest, DecodeNcclVersionNewScheme) {
  EXPECT_EQ(decodeNcclVersion(22809), v(2, 28, 9));
  EXPECT_EQ(decodeNcclVersion(21801), v(2, 18, 1));
  // First release of the five-digit scheme.
  EXPECT_EQ(decodeNcclVersion(20900), v(2, 9, 0));
}

TEST(FormatTest, DecodeNcclVersionOldScheme) {
  EXPECT_EQ(decodeNcclVersion(2804), v(2, 8, 4));
  EXPECT_EQ(decodeNcclVersion(2708), v(2, 7, 8));
}

TEST(FormatTest, EncodeNcclVersionMatchesNcclMacro) {
  // NCCL_VERSION(X, Y, Z) from nccl.h, evaluated by hand.
  EXPECT_EQ(encodeNcclVersion(v(2, 8, 4)), 2804);
  EXPECT_EQ(encodeNcclVersion(v(2, 9, 0)), 20900);
  EXPECT_EQ(encodeNcclVersion(v(2, 28, 9)), 22809);
  for (int code : {2708, 2804, 20900, 21801, 22809})
    EXPECT_EQ(encodeNcclVersion(decodeNcclVersion(code)), code) << code;
}

TEST(FormatTest, DecodeCublasLtVersion) {
  EXPECT_EQ(decodeCublasLtVersion(130100), v(13, 1, 0));
  EXPECT_EQ(decodeCublasLtVersion(120903), v(12, 9, 3));
  EXPECT_EQ(decodeCublasLtVersion(110201), v(11, 2, 1));
  EXPECT_EQ(formatVersion(decodeCublasLtVersion(120903)), "12.9.3");
}

TEST(FormatTest, FormatGiB) {
  constexpr std::uint64_t kGiB = std::uint64_t(1) << 30;
  EXPECT_EQ(formatGiB(0), "0.0");
  EXPECT_EQ(formatGiB(kGiB), "1.0");
  EXPECT_EQ(formatGiB(3 * kGiB / 2), "1.5");
  EXPECT_EQ(formatGiB(80 * kGiB), "80.0");
  // 85045346304 / 2^30 = 79.2047 -> 79.2.
  EXPECT_EQ(formatGiB(85045346304ull), "79.2");
  // 150754820096 / 2^30 = 140.4014 -> 140.4.
  EXPECT_EQ(formatGiB(150754820096ull), "140.4");
}

TEST(FormatTest, FormatGiBRounding) {
  constexpr std::uint64_t kGiB = std::uint64_t(1) << 30;
  // 0.05 GiB is 53687091.2 bytes: one byte either side of the midpoint.
  EXPECT_EQ(formatGiB(kGiB + 53687091), "1.0");
  EXPECT_EQ(formatGiB(kGiB + 53687092), "1.1");
  // Rounding up the tenths carries into the whole part.
  EXPECT_EQ(formatGiB(kGiB - 1), "1.0");
  EXPECT_EQ(formatGiB(10694468240ull), "10.0"); // 9.96 GiB
}

TEST(FormatTest, FormatComputeCapability) {
  EXPECT_EQ(formatComputeCapability(9, 0), "sm_90");
  EXPECT_EQ(formatComputeCapability(8, 6), "sm_86");
  EXPECT_EQ(formatComputeCapability(10, 0), "sm_100");
  EXPECT_EQ(formatComputeCapability(12, 1), "sm_121");
}

TEST(FormatTest, JsonQuoteEscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(jsonQuote("plain"), "\"plain\"");
  EXPECT_EQ(jsonQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(jsonQuote(std::string("x\ny\x01")), "\"x\\u000ay\\u0001\"");
}

} // namespace
