//===- KinetoTest.cpp - Overlap in a PyTorch profiler trace ---------------===//
//
// Synthetic traces in Kineto's documented layout (no GPU here to record a
// real one).
//
//===----------------------------------------------------------------------===//

#include "tandem/Diagnosis/Kineto.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tandem::diagnosis;

namespace {

std::string kernel(const std::string &name, int stream, double ts, double dur) {
  std::ostringstream os;
  os << "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" << name
     << "\", \"pid\": 0, \"tid\": " << stream << ", \"ts\": " << ts
     << ", \"dur\": " << dur
     << ", \"args\": {\"device\": 0, \"stream\": " << stream
     << ", \"correlation\": 1, \"grid\": [132, 1, 1], \"block\": "
     << "[256, 1, 1]}}";
  return os.str();
}

std::string trace(const std::vector<std::string> &events) {
  std::string s = "{\"schemaVersion\": 1, \"traceEvents\": [";
  s += "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": "
       "1, \"tid\": 1, \"ts\": 0, \"dur\": 5}";
  for (const std::string &e : events)
    s += ", " + e;
  return s + "]}";
}

TEST(Kineto, CollectiveUnderComputeAndHarmfulPair) {
  const char *gemm = "sm90_xmma_gemm_bf16bf16_bf16f32";
  const char *nccl = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL("
                     "ncclDevKernelArgsStorage<4096ul>)";
  std::string text = trace({
      kernel(gemm, 7, 1000, 100), // isolated
      kernel(gemm, 7, 1200, 100), // isolated
      kernel(nccl, 20, 1400, 80), // isolated
      kernel(gemm, 7, 2000, 250), // beside the next: both slower
      kernel(nccl, 20, 2000, 200),
  });
  KinetoOptions o;
  std::string error;
  std::optional<KinetoTrace> t = parseKinetoTrace(text, "k.json", o, error);
  ASSERT_TRUE(t) << error;
  ASSERT_EQ(t->kernels.size(), 5u);
  EXPECT_TRUE(t->kernels[2].collective);
  EXPECT_FALSE(t->kernels[0].collective);
  KinetoReport r = analyseKineto(*t, o);
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_DOUBLE_EQ(r.collectives[0].underComputeUs, 0);
  EXPECT_DOUBLE_EQ(r.collectives[1].underComputeUs, 200);
  EXPECT_DOUBLE_EQ(r.underComputeUs, 200);
  ASSERT_EQ(r.slowKernels.size(), 2u);
  EXPECT_DOUBLE_EQ(r.slowKernels[0].slowdown(), 2.5); // the GEMM, 250 / 100
  EXPECT_EQ(r.slowKernels[0].isolatedSamples, 2);
  // Serially 180 us, together 250 us.
  ASSERT_EQ(r.harmfulPairs.size(), 1u);
  EXPECT_TRUE(t->kernels[r.harmfulPairs[0].a].collective);
  EXPECT_DOUBLE_EQ(r.harmfulPairs[0].serialUs, 180);
  EXPECT_DOUBLE_EQ(r.harmfulPairs[0].combinedUs, 250);
}

TEST(Kineto, AnOverlapThatPaysIsNotHarmful) {
  const char *gemm = "gemm";
  const char *nccl = "ncclKernel_AllGather_RING_LL_Sum_int8_t";
  std::string text =
      trace({kernel(gemm, 7, 0, 100), kernel(nccl, 20, 200, 80),
             kernel(gemm, 7, 400, 115), kernel(nccl, 20, 400, 85)});
  KinetoOptions o;
  std::string error;
  std::optional<KinetoTrace> t = parseKinetoTrace(text, "k.json", o, error);
  ASSERT_TRUE(t) << error;
  KinetoReport r = analyseKineto(*t, o);
  EXPECT_TRUE(r.harmfulPairs.empty());
  ASSERT_EQ(r.slowKernels.size(), 1u); // the GEMM, 15 us slower
  EXPECT_EQ(t->kernels[r.slowKernels[0].kernel].name, "gemm");
}

TEST(Kineto, Errors) {
  KinetoOptions o;
  std::string error;
  EXPECT_FALSE(parseKinetoTrace(trace({}), "k.json", o, error));
  EXPECT_EQ(error, "k.json: no GPU kernels (events with \"cat\": \"kernel\"); "
                   "was the profiler run with ProfilerActivity.CUDA?");
  EXPECT_FALSE(parseKinetoTrace(
      "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
      "\"k\", \"ts\": 1}]}",
      "k.json", o, error));
  EXPECT_EQ(error, "k.json: traceEvents[0]: a kernel needs a string \"name\", "
                   "a number \"ts\" and a non-negative number \"dur\"");
  EXPECT_FALSE(parseKinetoTrace("[1, 2", "k.json", o, error));
  EXPECT_EQ(error.rfind("k.json: not valid JSON: ", 0), 0u);
  o.collectivePattern = "(";
  EXPECT_FALSE(parseKinetoTrace(trace({}), "k.json", o, error));
  EXPECT_EQ(error.rfind("the collective pattern '(' is not a regular "
                        "expression",
                        0),
            0u);
}

} // namespace
