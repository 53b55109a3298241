//===- CalibrationTest.cpp - Reading and checking calibration files -------===//

#include "tandem/Analysis/CostModel.h"

#include "gtest/gtest.h"

using namespace mlir::tandem;

namespace {
TEST(Calibration, ParsesCalibration) {
  std::string error;
  auto c = Calibration::parse(
      R"({"version": 1, "source": "bench", "contention": [
           {"comm_sms": 8, "gemm_slowdown": 1.2, "memory_slowdown": 1.1,
            "comm_slowdown": 1.05},
           {"comm_sms": 16, "gemm_slowdown": 1.4, "memory_slowdown": 1.3,
            "comm_slowdown": 1.15}]})",
      "cal.json", error);
  ASSERT_TRUE(c.has_value()) << error;
  const ContentionTable *t = &c->contention;
  EXPECT_NEAR(t->lookup(12).gemmSlowdown, 1.3, 1e-12);
  EXPECT_NEAR(t->lookup(12).commSlowdown, 1.10, 1e-12);
  EXPECT_EQ(t->source(), "cal.json (bench)");
}

TEST(Calibration, RejectsBadCalibration) {
  struct Case {
    const char *json;
    const char *message;
  } cases[] = {
      {"{", "not valid JSON"},
      {"[]", "must be a JSON object"},
      {R"({"contention": []})", "\"version\" must be 1"},
      {R"({"version": 1, "contention": []})", "non-empty array"},
      {R"({"version": 1, "contention": [{"gemm_slowdown": 1.1}]})",
       "\"comm_sms\" must be an integer in [1, 4096]"},
      {R"({"version": 1, "contention": [{"comm_sms": 8, "gemm_slowdown": 0.5,
           "memory_slowdown": 1, "comm_slowdown": 1}]})",
       "\"gemm_slowdown\" must be a number in [1, 1000]"},
      {R"({"version": 1, "contention": [
           {"comm_sms": 16, "gemm_slowdown": 1, "memory_slowdown": 1,
            "comm_slowdown": 1},
           {"comm_sms": 8, "gemm_slowdown": 1, "memory_slowdown": 1,
            "comm_slowdown": 1}]})",
       "strictly increasing comm_sms"},
  };
  for (const Case &c : cases) {
    std::string error;
    EXPECT_FALSE(Calibration::parse(c.json, "cal.json", error).has_value())
        << c.json;
    EXPECT_NE(error.find(c.message), std::string::npos)
        << "error was: " << error;
    EXPECT_EQ(error.rfind("cal.json", 0), 0u) << "error must name the file";
  }
}

TEST(Calibration, LoadReportsMissingFile) {
  std::string error;
  EXPECT_FALSE(
      Calibration::load("/nonexistent/cal.json", error).has_value());
  EXPECT_NE(error.find("cannot read calibration file"), std::string::npos);
}
} // namespace
