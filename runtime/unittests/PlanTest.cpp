//===- PlanTest.cpp - Plan JSON, validation and memory planner tests ------===//
//
// CPU-only: these run on every machine, GPU or not.
//
//===----------------------------------------------------------------------===//

#include "tandem/runtime/Plan.h"
#include "tandem/runtime/MemoryPlanner.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace tandem::runtime;

namespace {

int64_t addBuffer(Plan &plan, std::vector<int64_t> shape,
                  Buffer::Role role = Buffer::Role::Temp) {
  Buffer b;
  b.name = "b" + std::to_string(plan.buffers.size());
  b.shape = std::move(shape);
  b.role = role;
  plan.buffers.push_back(b);
  if (role == Buffer::Role::Input)
    plan.inputs.push_back(plan.buffers.size() - 1);
  return plan.buffers.size() - 1;
}

Step elementwise(int64_t in, int64_t out, int64_t stream = 0) {
  Step s;
  s.kind = StepKind::Elementwise;
  s.name = "tandem.elementwise";
  s.elementwise = ElementwiseKind::Gelu;
  s.inputs = {in};
  s.outputs = {out};
  s.stream = stream;
  return s;
}

/// x -> matmul -> all_gather (stream 1) -> sync (stream 0) -> gelu.
Plan twoStreamPlan() {
  Plan plan;
  plan.function = "f";
  plan.numStreams = 2;
  plan.streamNames = {"compute", "comm @tp"};
  plan.streamPriorities = {0, -1};
  plan.numEvents = 2;
  plan.groups.push_back({"tp", 2, "switch"});
  int64_t x = addBuffer(plan, {64, 32}, Buffer::Role::Input);
  int64_t w = addBuffer(plan, {32, 16}, Buffer::Role::Input);
  int64_t y = addBuffer(plan, {64, 16});
  int64_t g = addBuffer(plan, {128, 16});
  int64_t z = addBuffer(plan, {128, 16});
  Step mm;
  mm.kind = StepKind::Matmul;
  mm.name = "tandem.matmul";
  mm.location = "loc(\"t.mlir\":3:5)";
  mm.role = "fprop";
  mm.inputs = {x, w};
  mm.outputs = {y};
  mm.recordEvent = 0;
  mm.smTarget = 108;
  plan.steps.push_back(mm);
  Step ag;
  ag.kind = StepKind::Collective;
  ag.name = "tandem.all_gather_start";
  ag.collective = CollectiveKind::AllGather;
  ag.group = 0;
  ag.stream = 1;
  ag.waitEvents = {0};
  ag.recordEvent = 1;
  ag.commSms = 24;
  ag.inputs = {y};
  ag.outputs = {g};
  plan.steps.push_back(ag);
  Step wait;
  wait.kind = StepKind::Sync;
  wait.name = "tandem.wait";
  wait.waitEvents = {1};
  plan.steps.push_back(wait);
  plan.steps.push_back(elementwise(g, z));
  plan.outputs = {z};
  return plan;
}

TEST(PlanTest, ValidPlanValidates) {
  Plan plan = twoStreamPlan();
  EXPECT_EQ(validatePlan(plan), "");
}

TEST(PlanTest, JsonRoundTripKeepsEveryField) {
  Plan plan = twoStreamPlan();
  ASSERT_EQ(planMemory(plan), "");
  Prediction p;
  p.spanUs = 12.5;
  p.boundUs = 10;
  p.target = "h200";
  plan.prediction = p;
  plan.steps[0].predictedStartUs = 0;
  plan.steps[0].predictedDurationUs = 3.25;
  plan.steps[1].predictedStartUs = 1;
  plan.steps[1].predictedDurationUs = 4;
  plan.steps[1].predictedAloneUs = 2.5; // optional: only step 1 has it
  plan.buffers[1].initScale = 0.125;
  std::string text = writePlanJson(plan);
  std::string error;
  std::optional<Plan> back = parsePlan(text, "mem", error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(writePlanJson(*back), text);
  EXPECT_EQ(back->steps[0].smTarget, 108);
  EXPECT_EQ(back->steps[0].location, "loc(\"t.mlir\":3:5)");
  EXPECT_EQ(back->steps[1].commSms, 24);
  EXPECT_EQ(back->steps[1].waitEvents, std::vector<int64_t>{0});
  EXPECT_EQ(back->streamPriorities[1], -1);
  EXPECT_DOUBLE_EQ(back->steps[0].predictedDurationUs, 3.25);
  EXPECT_LT(back->steps[0].predictedAloneUs, 0);
  EXPECT_DOUBLE_EQ(back->steps[1].predictedAloneUs, 2.5);
  ASSERT_TRUE(back->prediction);
  EXPECT_DOUBLE_EQ(back->prediction->spanUs, 12.5);
  EXPECT_EQ(back->arenaBytes, plan.arenaBytes);
  EXPECT_DOUBLE_EQ(back->buffers[1].initScale, 0.125);
  EXPECT_DOUBLE_EQ(back->buffers[0].initScale, 1.0);
}

std::string parseError(const std::string &text) {
  std::string error;
  EXPECT_FALSE(parsePlan(text, "p.json", error));
  return error;
}

TEST(PlanTest, ParseErrorsNameTheField) {
  Plan plan = twoStreamPlan();
  std::string good = writePlanJson(plan);
  EXPECT_NE(parseError("{").find("p.json: not valid JSON"), std::string::npos);
  EXPECT_NE(parseError("[]").find("must be an object"), std::string::npos);
  auto replace = [&](const std::string &from, const std::string &to) {
    std::string t = good;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  EXPECT_EQ(
      parseError(replace("\"format_version\": 1", "\"format_version\": 7")),
      "p.json.format_version: version 7 is not supported (this runtime "
      "reads version 1)");
  EXPECT_EQ(parseError(replace("\"sm_target\": 108", "\"sm_target\": \"x\"")),
            "p.json.steps[0].sm_target: must be an integer");
  EXPECT_EQ(parseError(replace("\"sm_target\": 108",
                               "\"sm_target\": 108, \"smtarget\": 1")),
            "p.json.steps[0].smtarget: unknown field");
  EXPECT_EQ(parseError(replace("\"dtype\": \"bf16\"", "\"dtype\": \"f8\"")),
            "p.json.buffers[0].dtype: unknown element type 'f8' (expected "
            "bf16, f16 or f32)");
  EXPECT_EQ(parseError(replace("\"name\": \"b1\"",
                               "\"init_scale\": 0, \"name\": \"b1\"")),
            "p.json.buffers[1].init_scale: must be a number > 0");
  EXPECT_EQ(parseError(replace("\"kind\": \"matmul\"", "\"kind\": \"conv\"")),
            "p.json.steps[0].kind: unknown value 'conv' (expected one of "
            "matmul, attention, attention_grad, norm, norm_grad, "
            "elementwise, opaque, slice, concat, ring_concat, collective, "
            "sync)");
}

/// twoStreamPlan with its all-gather on the copy engines (no CTA budget)
/// and a reduce-scatter of the gathered rows after it, also on the copy
/// engines: 64x16 -> all_gather -> 128x16 -> reduce_scatter -> 64x16.
Plan copyEnginePlan() {
  Plan plan = twoStreamPlan();
  plan.steps[1].commSms = 0;
  plan.steps[1].copyEngine = true;
  int64_t scattered = addBuffer(plan, {64, 16});
  Step rs;
  rs.kind = StepKind::Collective;
  rs.name = "tandem.reduce_scatter_start";
  rs.collective = CollectiveKind::ReduceScatter;
  rs.group = 0;
  rs.stream = 1;
  rs.copyEngine = true;
  rs.inputs = {plan.steps[1].outputs[0]};
  rs.outputs = {scattered};
  plan.steps.insert(plan.steps.begin() + 2, rs);
  plan.outputs.push_back(scattered);
  return plan;
}

TEST(PlanTest, TransportRoundTripsAndDefaultsToSms) {
  Plan plan = copyEnginePlan();
  ASSERT_EQ(validatePlan(plan), "");
  std::string text = writePlanJson(plan);
  // Written only for copy-engine steps.
  EXPECT_NE(text.find("\"transport\": \"copy_engine\""), std::string::npos);
  EXPECT_EQ(text.find("\"sms\""), std::string::npos);
  std::string error;
  std::optional<Plan> back = parsePlan(text, "mem", error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(writePlanJson(*back), text);
  EXPECT_FALSE(back->steps[0].copyEngine);
  EXPECT_TRUE(back->steps[1].copyEngine);
  EXPECT_TRUE(back->steps[2].copyEngine);

  // "sms" is the default, spelled out: read as such, not written back.
  Plan sms = twoStreamPlan();
  std::string smsText = writePlanJson(sms);
  EXPECT_EQ(smsText.find("transport"), std::string::npos);
  std::string spelled = smsText;
  size_t at = spelled.find("\"collective\": \"all_gather\"");
  ASSERT_NE(at, std::string::npos);
  spelled.insert(at, "\"transport\": \"sms\", ");
  back = parsePlan(spelled, "mem", error);
  ASSERT_TRUE(back) << error;
  EXPECT_FALSE(back->steps[1].copyEngine);
  EXPECT_EQ(writePlanJson(*back), smsText);
}

TEST(PlanTest, TransportParseErrorsNameTheStep) {
  std::string good = writePlanJson(copyEnginePlan());
  auto replaceFirst = [&](const std::string &to) {
    std::string t = good;
    const std::string from = "\"transport\": \"copy_engine\"";
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos);
    return t.replace(at, from.size(), to);
  };
  EXPECT_EQ(parseError(replaceFirst("\"transport\": \"nvlink\"")),
            "p.json.steps[1].transport: unknown value 'nvlink' (expected one "
            "of sms, copy_engine)");
  EXPECT_EQ(parseError(replaceFirst("\"transport\": \"\"")),
            "p.json.steps[1].transport: unknown value '' (expected one of "
            "sms, copy_engine)");
  EXPECT_EQ(parseError(replaceFirst("\"transport\": true")),
            "p.json.steps[1].transport: must be a string");
  // On a step that is no gather or scatter: validation names the kind.
  std::string onMatmul = good;
  size_t at = onMatmul.find("\"kind\": \"matmul\"");
  ASSERT_NE(at, std::string::npos);
  onMatmul.insert(at, "\"transport\": \"copy_engine\", ");
  EXPECT_EQ(parseError(onMatmul),
            "p.json: step 0 (tandem.matmul at loc(\"t.mlir\":3:5)): "
            "transport copy_engine is for all_gather, reduce_scatter and "
            "permute collectives only, not matmul");
}

TEST(PlanTest, CopyEngineTransportIsValidatedPerStep) {
  {
    Plan plan = copyEnginePlan();
    plan.steps[2].collective = CollectiveKind::AllReduce;
    plan.buffers[plan.steps[2].outputs[0]].shape = {128, 16};
    EXPECT_EQ(validatePlan(plan),
              "step 2 (tandem.reduce_scatter_start): transport copy_engine "
              "is for all_gather, reduce_scatter and permute collectives "
              "only, not all_reduce");
  }
  {
    Plan plan = copyEnginePlan();
    plan.steps[1].commSms = 24;
    EXPECT_EQ(validatePlan(plan),
              "step 1 (tandem.all_gather_start): transport copy_engine holds "
              "no SMs, so it takes no comm_sms (has 24)");
  }
  {
    Plan plan = copyEnginePlan();
    plan.steps[3].copyEngine = true; // the sync step
    EXPECT_EQ(validatePlan(plan),
              "step 3 (tandem.wait): transport copy_engine is for all_gather, "
              "reduce_scatter and permute collectives only, not sync");
  }
  {
    Plan plan = copyEnginePlan();
    plan.steps[4].copyEngine = true; // the gelu
    EXPECT_EQ(validatePlan(plan),
              "step 4 (tandem.elementwise): transport copy_engine is for "
              "all_gather, reduce_scatter and permute collectives only, not "
              "elementwise");
  }
}

/// Two halves of `whole` written as views on two streams (the blocks of an
/// in-place concat), then a step on stream 0 that reads all of it after
/// waiting for the second half's event.
Plan inPlaceHalvesPlan() {
  Plan plan;
  plan.function = "f";
  plan.numStreams = 2;
  plan.streamNames = {"compute", "compute 1"};
  plan.streamPriorities = {0, 0};
  plan.numEvents = 1;
  int64_t x = addBuffer(plan, {32, 16}, Buffer::Role::Input);
  int64_t whole = addBuffer(plan, {64, 16});
  int64_t top = addBuffer(plan, {32, 16}, Buffer::Role::View);
  int64_t bottom = addBuffer(plan, {32, 16}, Buffer::Role::View);
  plan.buffers[top].viewOf = whole;
  plan.buffers[bottom].viewOf = whole;
  plan.buffers[bottom].viewOffset = plan.buffers[top].bytes();
  int64_t out = addBuffer(plan, {64, 16});
  plan.steps.push_back(elementwise(x, top, /*stream=*/0));
  plan.steps.push_back(elementwise(x, bottom, /*stream=*/1));
  plan.steps.back().recordEvent = 0;
  plan.steps.push_back(elementwise(whole, out, /*stream=*/0));
  plan.steps.back().waitEvents = {0};
  plan.outputs = {out};
  return plan;
}

TEST(PlanTest, ReadsAreOrderedAfterEveryBlockTheyOverlap) {
  // The top half is ordered by stream 0, the bottom by the event: valid.
  EXPECT_EQ(validatePlan(inPlaceHalvesPlan()), "");
  // Without the event the read of the whole buffer races with the bottom
  // half's write, although the last write on its own stream came first.
  Plan unordered = inPlaceHalvesPlan();
  unordered.steps[2].waitEvents.clear();
  unordered.steps[1].recordEvent = -1;
  EXPECT_EQ(validatePlan(unordered),
            "step 2 (tandem.elementwise) reads buffer 1 ('b1') written by "
            "step 1 on another stream with no event ordering the two");
  // The top half written on stream 1 instead and the bottom on stream 0
  // (the last writer, in stream order): the top is still unordered.
  Plan swapped = inPlaceHalvesPlan();
  swapped.steps[0].stream = 1;
  swapped.steps[1].stream = 0;
  swapped.steps[1].recordEvent = -1;
  swapped.steps[2].waitEvents.clear();
  EXPECT_EQ(validatePlan(swapped),
            "step 2 (tandem.elementwise) reads buffer 1 ('b1') written by "
            "step 0 on another stream with no event ordering the two");
}

TEST(PlanTest, ValidationFindsInconsistencies) {
  {
    Plan plan = twoStreamPlan();
    plan.steps[2].waitEvents.clear(); // gelu reads the gather unordered
    EXPECT_EQ(validatePlan(plan),
              "step 3 (tandem.elementwise) reads buffer 3 ('b3') written by "
              "step 1 on another stream with no event ordering the two");
  }
  {
    Plan plan = twoStreamPlan();
    plan.steps[1].waitEvents = {1}; // waits for an event not yet recorded
    EXPECT_EQ(validatePlan(plan), "step 1 (tandem.all_gather_start) waits "
                                  "for event 1 before any step records it");
  }
  {
    Plan plan = twoStreamPlan();
    plan.buffers[2].shape = {64, 17};
    EXPECT_NE(validatePlan(plan).find("step 0 (tandem.matmul at loc(\"t.mlir\""
                                      ":3:5)): matmul shapes"),
              std::string::npos);
  }
  {
    Plan plan = twoStreamPlan();
    plan.steps[1].outputs = {0};
    EXPECT_NE(validatePlan(plan).find("a plan input (inputs are read-only)"),
              std::string::npos);
  }
  {
    Plan plan = twoStreamPlan();
    plan.steps[1].dim = 1;
    EXPECT_NE(validatePlan(plan).find("only dimension 0"), std::string::npos);
  }
  {
    Plan plan = twoStreamPlan();
    Buffer view;
    view.name = "v";
    view.shape = {65, 16};
    view.role = Buffer::Role::View;
    view.viewOf = 2;
    plan.buffers.push_back(view);
    EXPECT_NE(validatePlan(plan).find("extends past buffer 2"),
              std::string::npos);
  }
  {
    Plan plan = twoStreamPlan();
    plan.steps[1].stream = 2;
    EXPECT_EQ(validatePlan(plan), "step 1 (tandem.all_gather_start) uses "
                                  "stream 2 but the plan has 2");
  }
}

/// x (input) -> slice(dim 0, chunk 0 of 2) -> y.
Plan slicePlan() {
  Plan plan;
  plan.function = "s";
  int64_t x = addBuffer(plan, {8, 8}, Buffer::Role::Input);
  int64_t y = addBuffer(plan, {4, 8});
  Step s;
  s.kind = StepKind::Slice;
  s.name = "tandem.slice";
  s.chunks = 2;
  s.inputs = {x};
  s.outputs = {y};
  plan.steps.push_back(s);
  plan.outputs = {y};
  return plan;
}

std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

/// x (16x4, input) -> slice(dim 0, interleave 2, weights 1:3) chunk 0 -> a
/// (4x4) and chunk 1 -> b (12x4) -> concat(interleave 2) -> y (16x4), which
/// is x again.
Plan unevenPlan() {
  Plan plan;
  plan.function = "uneven";
  int64_t x = addBuffer(plan, {16, 4}, Buffer::Role::Input);
  int64_t a = addBuffer(plan, {4, 4});
  int64_t b = addBuffer(plan, {12, 4});
  int64_t y = addBuffer(plan, {16, 4});
  for (int64_t chunk : {0, 1}) {
    Step s;
    s.kind = StepKind::Slice;
    s.name = "tandem.slice";
    s.chunk = chunk;
    s.chunks = 2;
    s.interleave = 2;
    s.weights = {1, 3};
    s.inputs = {x};
    s.outputs = {chunk == 0 ? a : b};
    plan.steps.push_back(s);
  }
  Step c;
  c.kind = StepKind::Concat;
  c.name = "tandem.concat";
  c.interleave = 2;
  c.inputs = {a, b};
  c.outputs = {y};
  plan.steps.push_back(c);
  plan.outputs = {y};
  return plan;
}

/// p (4x4, input) and q (6x4, input) -> concat(dim 0) -> y (10x4).
Plan unevenConcatPlan() {
  Plan plan;
  plan.function = "uneven_concat";
  plan.groups.push_back({"tp", 2, "ring"});
  int64_t p = addBuffer(plan, {4, 4}, Buffer::Role::Input);
  int64_t q = addBuffer(plan, {6, 4}, Buffer::Role::Input);
  int64_t y = addBuffer(plan, {10, 4});
  Step c;
  c.kind = StepKind::Concat;
  c.name = "tandem.concat";
  c.inputs = {p, q};
  c.outputs = {y};
  plan.steps.push_back(c);
  plan.outputs = {y};
  return plan;
}

TEST(PlanTest, SliceWeightsRoundTripAndAreOptional) {
  Plan plan = unevenPlan();
  ASSERT_EQ(validatePlan(plan), "");
  ASSERT_EQ(planMemory(plan), "");
  std::string text = writePlanJson(plan), error;
  std::optional<Plan> back = parsePlan(text, "mem", error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(writePlanJson(*back), text);
  EXPECT_EQ(back->steps[0].weights, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(back->steps[1].weights, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(back->steps[1].chunk, 1);
  EXPECT_TRUE(back->steps[2].weights.empty());
  // Written for the two slices only.
  size_t count = 0;
  for (size_t at = text.find("\"weights\""); at != std::string::npos;
       at = text.find("\"weights\"", at + 1))
    ++count;
  EXPECT_EQ(count, 2u);
  // Equal slices write none and read as before; given, weights are read,
  // and an empty list is no weights.
  std::string equal = writePlanJson(slicePlan());
  EXPECT_EQ(equal.find("weights"), std::string::npos);
  std::optional<Plan> weighted =
      parsePlan(replaced(equal, "\"interleave\": 1",
                         "\"interleave\": 1, \"weights\": [1, 1]"),
                "p.json", error);
  ASSERT_TRUE(weighted) << error;
  EXPECT_EQ(weighted->steps[0].weights, (std::vector<int64_t>{1, 1}));
  EXPECT_NE(writePlanJson(*weighted).find("\"weights\""), std::string::npos);
  std::optional<Plan> empty =
      parsePlan(replaced(equal, "\"interleave\": 1",
                         "\"interleave\": 1, \"weights\": []"),
                "p.json", error);
  ASSERT_TRUE(empty) << error;
  EXPECT_TRUE(empty->steps[0].weights.empty());
  EXPECT_EQ(writePlanJson(*empty), equal);
}

TEST(PlanTest, SliceWeightsParseErrorsNameTheField) {
  // slicePlan: 8x8 -> chunk 0 of 2 along dimension 0 -> 4x8.
  std::string text = writePlanJson(slicePlan());
  auto with = [&](const std::string &weights) {
    return parseError(replaced(text, "\"interleave\": 1",
                               "\"interleave\": 1, \"weights\": " + weights));
  };
  const char *notAWeight = ": must be an integer in [1, inf]";
  EXPECT_EQ(with("[1, 0]"),
            std::string("p.json.steps[0].weights[1]") + notAWeight);
  EXPECT_EQ(with("[-2, 1]"),
            std::string("p.json.steps[0].weights[0]") + notAWeight);
  EXPECT_EQ(with("[1, 1.5]"),
            std::string("p.json.steps[0].weights[1]") + notAWeight);
  EXPECT_EQ(with("[1, \"2\"]"),
            std::string("p.json.steps[0].weights[1]") + notAWeight);
  EXPECT_EQ(with("[1, 18446744073709551615]"),
            std::string("p.json.steps[0].weights[1]") + notAWeight);
  EXPECT_EQ(with("3"), "p.json.steps[0].weights: must be an array of integers");
  EXPECT_EQ(with("[1, 2, 1]"),
            "p.json: step 0 (tandem.slice): slice has 3 weights for 2 "
            "chunks; weights needs one per chunk");
  EXPECT_EQ(with("[3, 1]"),
            "p.json: step 0 (tandem.slice): slice result must be [6x8]");
  EXPECT_EQ(with("[1, 2]"),
            "p.json: step 0 (tandem.slice): slice weights (sum 3) do not "
            "divide the group extent 8 of dimension 0 (extent 8, interleave "
            "1)");
  // Only slices have weights.
  EXPECT_EQ(
      parseError(replaced(writePlanJson(unevenPlan()), "\"kind\": \"concat\"",
                          "\"kind\": \"concat\", \"weights\": [1, 3]")),
      "p.json.steps[2].weights: unknown field");
}

TEST(PlanTest, SliceWeightsAreValidated) {
  auto verdict = [](void (*edit)(Plan &)) {
    Plan plan = unevenPlan();
    edit(plan);
    return validatePlan(plan);
  };
  // Proportional weights cut the same blocks; without interleave the
  // groups are the whole dimension (units of 4 rows, blocks of 4 and 12).
  EXPECT_EQ(verdict([](Plan &p) {
              p.steps[0].weights = p.steps[1].weights = {2, 6};
            }),
            "");
  EXPECT_EQ(verdict([](Plan &p) {
              p.steps[0].interleave = p.steps[1].interleave = 1;
              p.steps[2].interleave = 1;
            }),
            "");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[0].weights = {1, 3, 1}; }),
            "step 0 (tandem.slice): slice has 3 weights for 2 chunks; weights "
            "needs one per chunk");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[1].weights = {1, 0}; }),
            "step 1 (tandem.slice): slice weight 1 is 0; weights must be >= 1");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[0].weights = {-1, 5}; }),
            "step 0 (tandem.slice): slice weight 0 is -1; weights must be "
            ">= 1");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[0].weights = {INT64_MAX, 1}; }),
            "step 0 (tandem.slice): the sum of the slice weights overflows a "
            "64-bit integer");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[0].weights = {1, 2}; }),
            "step 0 (tandem.slice): slice weights (sum 3) do not divide the "
            "group extent 8 of dimension 0 (extent 16, interleave 2)");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[0].interleave = 3; }),
            "step 0 (tandem.slice): slice interleave 3 does not divide "
            "dimension 0 (extent 16)");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[0].weights = {3, 1}; }),
            "step 0 (tandem.slice): slice result must be [12x4]");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[1].weights = {1, 1}; }),
            "step 1 (tandem.slice): slice result must be [8x4]");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[1].chunk = 2; }),
            "step 1 (tandem.slice): slice needs 0 <= chunk < chunks and "
            "interleave >= 1, has chunk 2 of 2 interleave 2");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[2].weights = {1, 3}; }),
            "step 2 (tandem.concat): weights applies to slice steps only, "
            "not concat (has 2)");
}

TEST(PlanTest, ConcatInputsMayDifferAlongTheirDimension) {
  auto verdict = [](void (*edit)(Plan &)) {
    Plan plan = unevenConcatPlan();
    edit(plan);
    return validatePlan(plan);
  };
  EXPECT_EQ(verdict([](Plan &) {}), "");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[0].interleave = 2; }), "");
  EXPECT_EQ(verdict([](Plan &p) {
              p.buffers[0].shape = {3, 2};
              p.buffers[1].shape = {3, 6};
              p.buffers[2].shape = {3, 8};
              p.steps[0].dim = 1;
            }),
            "");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[0].interleave = 4; }),
            "step 0 (tandem.concat): concat interleave 4 does not divide "
            "input 1's dimension 0 (extent 6)");
  EXPECT_EQ(verdict([](Plan &p) { p.buffers[2].shape = {12, 4}; }),
            "step 0 (tandem.concat): concat result must be [10x4]");
  EXPECT_EQ(verdict([](Plan &p) { p.buffers[1].shape = {6, 5}; }),
            "step 0 (tandem.concat): concat input 1 has shape [6x5]; outside "
            "dimension 0 every input must match the result's [10x4]");
  EXPECT_EQ(verdict([](Plan &p) {
              p.buffers[0].shape = {3, 2};
              p.buffers[1].shape = {4, 6};
              p.buffers[2].shape = {3, 8};
              p.steps[0].dim = 1;
            }),
            "step 0 (tandem.concat): concat input 1 has shape [4x6]; outside "
            "dimension 1 every input must match the result's [3x8]");
  EXPECT_EQ(verdict([](Plan &p) { p.buffers[1].shape = {6, 4, 1}; }),
            "step 0 (tandem.concat): concat inputs and result must have one "
            "rank");
  EXPECT_EQ(verdict([](Plan &p) { p.buffers[1].type = DType::F32; }),
            "step 0 (tandem.concat): concat input and result: element types "
            "f32 and bf16 differ");
  EXPECT_EQ(verdict([](Plan &p) { p.steps[0].interleave = 0; }),
            "step 0 (tandem.concat): concat interleave must be >= 1, has 0");
  // ring_concat keeps one shape per input (one rank's block each).
  EXPECT_EQ(verdict([](Plan &p) {
              p.steps[0].kind = StepKind::RingConcat;
              p.steps[0].name = "tandem.ring_concat";
              p.steps[0].group = 0;
            }),
            "step 0 (tandem.ring_concat): ring_concat inputs must have one "
            "shape (input 1 is [6x4], input 0 [4x4])");
  EXPECT_EQ(verdict([](Plan &p) {
              p.steps[0].kind = StepKind::RingConcat;
              p.steps[0].name = "tandem.ring_concat";
              p.steps[0].group = 0;
              p.buffers[1].shape = {4, 4};
            }),
            "step 0 (tandem.ring_concat): concat result must be [8x4]");
  EXPECT_EQ(verdict([](Plan &p) {
              p.steps[0].kind = StepKind::RingConcat;
              p.steps[0].name = "tandem.ring_concat";
              p.steps[0].group = 0;
              p.buffers[1].shape = {4, 4};
              p.buffers[2].shape = {8, 4};
            }),
            "");
  // The uneven concat round-trips through JSON.
  Plan plan = unevenConcatPlan();
  plan.steps[0].interleave = 2;
  ASSERT_EQ(planMemory(plan), "");
  std::string text = writePlanJson(plan), error;
  std::optional<Plan> back = parsePlan(text, "mem", error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(writePlanJson(*back), text);
  EXPECT_EQ(back->steps[0].interleave, 2);
}

/// qkv (16 rows, 4 heads / 2 kv heads of 8) -> attention -> out, with
/// `queries` query rows (0: all 16), then attention_grad of the full
/// attention when `grad` is set (it needs a full forward output).
Plan attentionPlan(int64_t queries, bool grad = false) {
  Plan plan;
  plan.function = "prefix_attention";
  int64_t qkv = addBuffer(plan, {16, (4 + 2 * 2) * 8}, Buffer::Role::Input);
  int64_t out = addBuffer(plan, {queries > 0 ? queries : 16, 4 * 8});
  Step a;
  a.kind = StepKind::Attention;
  a.name = "tandem.attention";
  a.heads = 4;
  a.kvHeads = 2;
  a.headDim = 8;
  a.causal = true;
  a.queries = queries;
  a.inputs = {qkv};
  a.outputs = {out};
  plan.steps.push_back(a);
  plan.outputs = {out};
  if (grad) {
    int64_t dout = addBuffer(plan, {16, 4 * 8}, Buffer::Role::Input);
    int64_t dqkv = addBuffer(plan, {16, (4 + 2 * 2) * 8});
    Step g = a;
    g.kind = StepKind::AttentionGrad;
    g.name = "tandem.attention_grad";
    g.queries = 0;
    g.inputs = {dout, qkv, out};
    g.outputs = {dqkv};
    plan.steps.push_back(g);
    plan.outputs.push_back(dqkv);
  }
  return plan;
}

TEST(PlanTest, AttentionQueriesRoundTripAndAreOptional) {
  // The last 8 of 16 rows as queries, and every row spelled out.
  for (int64_t queries : {8, 1, 16}) {
    Plan plan = attentionPlan(queries);
    ASSERT_EQ(validatePlan(plan), "") << queries;
    std::string text = writePlanJson(plan);
    EXPECT_NE(text.find("\"queries\": " + std::to_string(queries)),
              std::string::npos)
        << text;
    std::string error;
    std::optional<Plan> back = parsePlan(text, "mem", error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(back->steps[0].queries, queries);
    EXPECT_EQ(writePlanJson(*back), text);
  }
  // Without queries nothing new is written: plans read and write as before.
  Plan full = attentionPlan(0, /*grad=*/true);
  ASSERT_EQ(validatePlan(full), "");
  std::string text = writePlanJson(full);
  EXPECT_EQ(text.find("queries"), std::string::npos) << text;
  std::string error;
  std::optional<Plan> back = parsePlan(text, "mem", error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->steps[0].queries, 0);
  EXPECT_EQ(back->steps[1].queries, 0);
  EXPECT_EQ(writePlanJson(*back), text);
  // 0 spelled out is the default: read as such, not written back.
  std::string spelled = replaced(text, "\"kind\": \"attention\"",
                                 "\"queries\": 0, \"kind\": \"attention\"");
  back = parsePlan(spelled, "mem", error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(writePlanJson(*back), text);
}

#ifdef TANDEM_PLAN_CORPUS_DIR
TEST(PlanTest, ExportedAttentionPlansRoundTripByteIdentically) {
  // Plans the compiler exported before `queries` existed (their attention
  // steps take every row as a query) read and write back unchanged.
  for (const char *name : {"small-step.json", "small-step-overlap.json"}) {
    std::string path =
        std::string(TANDEM_PLAN_CORPUS_DIR) + "/plan-seeds/" + name;
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << path;
    std::stringstream text;
    text << in.rdbuf();
    ASSERT_NE(text.str().find("\"attention\""), std::string::npos) << path;
    std::string error;
    std::optional<Plan> plan = parsePlan(text.str(), path, error);
    ASSERT_TRUE(plan) << error;
    for (const Step &s : plan->steps)
      EXPECT_EQ(s.queries, 0) << path;
    EXPECT_EQ(writePlanJson(*plan), text.str()) << path;
  }
}
#endif

TEST(PlanTest, AttentionQueriesAreValidated) {
  {
    Plan plan = attentionPlan(8);
    plan.steps[0].queries = -1;
    EXPECT_EQ(validatePlan(plan), "step 0 (tandem.attention): queries -1 "
                                  "outside [0, 16] (the rows of qkv)");
  }
  {
    Plan plan = attentionPlan(8);
    plan.steps[0].queries = 17;
    EXPECT_EQ(validatePlan(plan), "step 0 (tandem.attention): queries 17 "
                                  "outside [0, 16] (the rows of qkv)");
  }
  {
    // The output has the query rows, not the rows of qkv.
    Plan plan = attentionPlan(8);
    plan.buffers[1].shape = {16, 32};
    EXPECT_EQ(validatePlan(plan),
              "step 0 (tandem.attention): output has shape [16x32], expected "
              "[8x32] (the last 8 rows of qkv are the queries)");
    plan.steps[0].queries = 0;
    EXPECT_EQ(validatePlan(plan), "");
    plan.buffers[1].shape = {8, 32};
    EXPECT_EQ(validatePlan(plan), "step 0 (tandem.attention): output has "
                                  "shape [8x32], expected [16x32]");
  }
  {
    Plan plan = attentionPlan(0, /*grad=*/true);
    ASSERT_EQ(validatePlan(plan), "");
    plan.steps[1].queries = 16;
    EXPECT_EQ(validatePlan(plan),
              "step 1 (tandem.attention_grad): queries applies to attention "
              "steps only, not attention_grad (has 16)");
  }
  {
    Plan plan = twoStreamPlan();
    plan.steps[3].queries = 2; // the gelu
    EXPECT_EQ(validatePlan(plan),
              "step 3 (tandem.elementwise): queries applies to attention "
              "steps only, not elementwise (has 2)");
  }
  // Read from JSON: a count (>= 0), refused on other kinds by validation.
  std::string text = writePlanJson(attentionPlan(8, /*grad=*/false));
  EXPECT_EQ(parseError(replaced(text, "\"queries\": 8", "\"queries\": -8")),
            "p.json.steps[0].queries: must be in [0, inf], got -8");
  EXPECT_EQ(parseError(replaced(text, "\"queries\": 8", "\"queries\": \"8\"")),
            "p.json.steps[0].queries: must be an integer");
  EXPECT_EQ(parseError(replaced(text, "\"queries\": 8", "\"queries\": 32")),
            "p.json: step 0 (tandem.attention): queries 32 outside [0, 16] "
            "(the rows of qkv)");
  std::string grad = writePlanJson(attentionPlan(0, /*grad=*/true));
  EXPECT_EQ(parseError(replaced(grad, "\"kind\": \"attention_grad\"",
                                "\"queries\": 4, \"kind\": "
                                "\"attention_grad\"")),
            "p.json: step 1 (tandem.attention_grad): queries applies to "
            "attention steps only, not attention_grad (has 4)");
}

// Issue 13, row 2: chunks * interleave wrapped to 0 and `%` by it trapped.
TEST(PlanBoundsTest, SliceFieldsNearOverflowAreRejected) {
  Plan plan = slicePlan();
  ASSERT_EQ(validatePlan(plan), "");
  std::string text = writePlanJson(plan);
  text = replaced(text, "\"chunks\": 2", "\"chunks\": 4294967296");
  text = replaced(text, "\"interleave\": 1", "\"interleave\": 4294967296");
  EXPECT_EQ(parseError(text),
            "p.json: step 0 (tandem.slice): chunks * interleave (4294967296 "
            "* 4294967296) overflows a 64-bit integer");
  plan.steps[0].chunks = plan.steps[0].interleave = int64_t(1) << 32;
  EXPECT_NE(validatePlan(plan).find("overflows a 64-bit integer"),
            std::string::npos);
  plan.steps[0].chunks = 0; // built in memory, not read: still no trap
  EXPECT_NE(validatePlan(plan).find("0 <= chunk < chunks"), std::string::npos);
}

// Row 3: the event table was allocated at the stated size.
TEST(PlanBoundsTest, EventCountIsBounded) {
  std::string text = writePlanJson(twoStreamPlan());
  EXPECT_EQ(parseError(replaced(text, "\"num_events\": 2",
                                "\"num_events\": 1099511627776")),
            "p.json.num_events: must be in [0, 1048576], got 1099511627776");
  Plan plan = twoStreamPlan();
  plan.numEvents = int64_t(1) << 40;
  EXPECT_EQ(validatePlan(plan), "the plan has 1099511627776 events, more "
                                "than kMaxPlanEvents = 1048576");
}

// Row 5: streams x streams clocks grew without bound.
TEST(PlanBoundsTest, StreamCountIsBounded) {
  std::string text = writePlanJson(twoStreamPlan());
  EXPECT_EQ(
      parseError(replaced(text, "\"stream\": 1", "\"stream\": 2147483647")),
      "p.json.steps[1].stream: must be in [0, 63], got 2147483647");
  std::string streams = "\"streams\": [";
  for (int i = 0; i < 20000; ++i)
    streams += std::string(i ? "," : "") + "{\"name\": \"s\", \"priority\": 0}";
  std::string many = text;
  size_t from = many.find("\"streams\": [");
  size_t to = many.find(']', from);
  many.replace(from, to + 1 - from, streams + "]");
  EXPECT_EQ(parseError(many), "p.json.streams: has 20000 elements, more than "
                              "kMaxPlanStreams = 64");
  Plan plan = twoStreamPlan();
  plan.numStreams = 2147483647;
  EXPECT_EQ(validatePlan(plan), "the plan has 2147483647 streams, more than "
                                "kMaxPlanStreams = 64");
}

// Row 7: offset + bytes wrapped past 2^63 and the range check passed.
TEST(PlanBoundsTest, OffsetsNearInt64MaxAreRejected) {
  Plan plan = twoStreamPlan();
  ASSERT_EQ(planMemory(plan), "");
  ASSERT_EQ(validatePlan(plan), "");
  Plan arena = plan;
  arena.buffers[2].arenaOffset = INT64_MAX - 255; // a multiple of 256
  EXPECT_EQ(validatePlan(arena),
            "memory plan: buffer 2 ('b2') (2048 bytes at arena offset "
            "9223372036854775552) extends past the arena's " +
                std::to_string(plan.arenaBytes) + " bytes");
  std::string text = writePlanJson(arena);
  EXPECT_NE(parseError(text).find("extends past the arena"), std::string::npos);

  Plan view = plan;
  Buffer v;
  v.name = "v";
  v.shape = {1, 16};
  v.role = Buffer::Role::View;
  v.viewOf = 2;
  v.viewOffset = INT64_MAX - 1;
  view.buffers.push_back(v);
  EXPECT_EQ(validatePlan(view), "buffer 5 ('v') (32 bytes at offset "
                                "9223372036854775806) extends past buffer 2 "
                                "(2048 bytes)");
  EXPECT_NE(parseError(writePlanJson(view)).find("extends past buffer 2"),
            std::string::npos);
  // Integers past int64 are refused by the reader instead of wrapping.
  EXPECT_EQ(parseError(replaced(writePlanJson(view),
                                "\"view_offset\": 9223372036854775806",
                                "\"view_offset\": 18446744073709551615")),
            "p.json.buffers[5].view_offset: must fit a 64-bit signed integer");
}

// Row 8: an empty enum string silently meant the default kind.
TEST(PlanBoundsTest, EnumFieldsAreStrict) {
  std::string text = writePlanJson(twoStreamPlan());
  EXPECT_EQ(parseError(replaced(text, "\"elementwise\": \"gelu\"",
                                "\"elementwise\": \"\"")),
            "p.json.steps[3].elementwise: unknown value '' (expected one of "
            "add, mul, copy, cast, gelu, gelu_grad, silu, swiglu, "
            "swiglu_grad)");
  EXPECT_EQ(parseError(replaced(text, "\"collective\": \"all_gather\"",
                                "\"collective\": \"\"")),
            "p.json.steps[1].collective: unknown value '' (expected one of "
            "all_gather, reduce_scatter, all_reduce, all_to_all, permute)");
  EXPECT_EQ(parseError(replaced(text, "\"reduce\": \"sum\"", "\"reduce\": 3")),
            "p.json.steps[1].reduce: must be a string");
}

TEST(PlanBoundsTest, DeepJsonIsRefusedBeforeParsing) {
  std::string deep(100000, '[');
  EXPECT_EQ(parseError(deep), "p.json: JSON nested deeper than "
                              "kMaxPlanJsonDepth = 16 levels at byte 16");
  // Brackets inside strings do not count.
  std::string text = writePlanJson(twoStreamPlan()), error;
  EXPECT_TRUE(
      parsePlan(replaced(text, "\"function\": \"f\"",
                         "\"function\": \"" + std::string(40, '[') + "\""),
                "p.json", error))
      << error;
}

TEST(PlanBoundsTest, BuffersAndOperandTypesAreBounded) {
  Plan plan = twoStreamPlan();
  plan.buffers[2].shape = {int64_t(1) << 20, int64_t(1) << 20};
  EXPECT_EQ(validatePlan(plan),
            "buffer 2 ('b2') of shape [1048576x1048576] has 2199023255552 "
            "bytes, more than kMaxBufferBytes = 1099511627776");
  plan.buffers[2].shape = {int64_t(1) << 32, int64_t(1) << 32};
  EXPECT_NE(validatePlan(plan).find("more than 2^63 bytes"), std::string::npos);
  // A slice result narrower than its input would be overrun by the copy.
  Plan slice = slicePlan();
  slice.buffers[0].type = DType::F32;
  EXPECT_EQ(validatePlan(slice), "step 0 (tandem.slice): slice input and "
                                 "result: element types f32 and bf16 differ");
  // Without temporaries to place, the stated arena is what gets allocated.
  Plan arena = slicePlan();
  arena.buffers[1].role = Buffer::Role::Temp;
  arena.arenaBytes = int64_t(1) << 62;
  EXPECT_EQ(validatePlan(arena), "arena_bytes 4611686018427387904 exceeds "
                                 "the 256 bytes all temporary buffers take "
                                 "without any reuse");
}

TEST(MemoryPlannerTest, SerialChainReusesMemory) {
  Plan plan;
  plan.function = "chain";
  int64_t in = addBuffer(plan, {1024, 256}, Buffer::Role::Input);
  int64_t prev = in;
  for (int i = 0; i < 6; ++i) {
    int64_t next = addBuffer(plan, {1024, 256});
    plan.steps.push_back(elementwise(prev, next));
    prev = next;
  }
  plan.outputs = {prev};
  MemoryPlanStats stats;
  ASSERT_EQ(planMemory(plan, &stats), "");
  // Two buffers alive at a time (input and output of a step) suffice.
  EXPECT_EQ(stats.tempBuffers, 6);
  EXPECT_EQ(plan.arenaBytes, 2 * 1024 * 256 * 2);
  EXPECT_EQ(stats.totalTempBytes, 6 * 1024 * 256 * 2);
  EXPECT_EQ(checkMemoryPlan(plan), "");
  EXPECT_EQ(validatePlan(plan), "");
}

TEST(MemoryPlannerTest, UnorderedStreamsNeverShareBytes) {
  // Stream 1 reads `a` while stream 0 goes on; nothing orders stream 1's
  // read before stream 0's later writes, so `a` must not be reused there.
  Plan plan;
  plan.function = "race";
  plan.numStreams = 2;
  plan.numEvents = 1;
  int64_t in = addBuffer(plan, {256, 256}, Buffer::Role::Input);
  int64_t a = addBuffer(plan, {256, 256});
  int64_t b = addBuffer(plan, {256, 256});
  int64_t c = addBuffer(plan, {256, 256});
  int64_t d = addBuffer(plan, {256, 256});
  Step s0 = elementwise(in, a);
  s0.recordEvent = 0;
  plan.steps.push_back(s0);
  Step s1 = elementwise(a, b, 1);
  s1.waitEvents = {0};
  plan.steps.push_back(s1);
  plan.steps.push_back(elementwise(in, c));
  plan.steps.push_back(elementwise(c, d));
  plan.outputs = {b, d};
  ASSERT_EQ(planMemory(plan), "");
  auto overlaps = [&](int64_t x, int64_t y) {
    const Buffer &p = plan.buffers[x], &q = plan.buffers[y];
    return p.arenaOffset < q.arenaOffset + q.bytes() &&
           q.arenaOffset < p.arenaOffset + p.bytes();
  };
  EXPECT_FALSE(overlaps(a, c));
  EXPECT_FALSE(overlaps(a, d));
  EXPECT_EQ(checkMemoryPlan(plan), "");

  // The same plan with stream 0 waiting for stream 1 lets c reuse a.
  Plan ordered = plan;
  ordered.numEvents = 2;
  ordered.steps[1].recordEvent = 1;
  ordered.steps[2].waitEvents = {1};
  for (Buffer &buf : ordered.buffers)
    buf.arenaOffset = -1;
  ASSERT_EQ(planMemory(ordered), "");
  EXPECT_EQ(ordered.buffers[c].arenaOffset, ordered.buffers[a].arenaOffset);
  EXPECT_EQ(checkMemoryPlan(ordered), "");
}

TEST(MemoryPlannerTest, CheckRejectsOverlappingLiveBuffers) {
  Plan plan = twoStreamPlan();
  ASSERT_EQ(planMemory(plan), "");
  // Put the gather result on top of the matmul result it is gathered from.
  plan.buffers[3].arenaOffset = plan.buffers[2].arenaOffset;
  plan.arenaBytes = std::max<int64_t>(
      plan.arenaBytes, plan.buffers[3].arenaOffset + plan.buffers[3].bytes());
  EXPECT_EQ(checkMemoryPlan(plan),
            "buffers 2 ('b2') and 3 ('b3') share arena bytes but may be live "
            "at the same time");
  EXPECT_NE(validatePlan(plan).find("memory plan: "), std::string::npos);
}

TEST(MemoryPlannerTest, UntouchedTemporaryNeedsNoArena) {
  // Found while writing the fuzz target: a temporary no step touches is put
  // at offset 0 without growing the arena, and the check then refused the
  // planner's own plan.
  Plan plan = slicePlan();
  addBuffer(plan, {1024, 1024});
  ASSERT_EQ(planMemory(plan), "");
  EXPECT_LT(plan.arenaBytes, plan.buffers[2].bytes());
  EXPECT_EQ(validatePlan(plan), "");
}

TEST(MemoryPlannerTest, ReadBeforeWriteIsAnError) {
  Plan plan;
  plan.function = "f";
  int64_t a = addBuffer(plan, {8, 8});
  int64_t b = addBuffer(plan, {8, 8});
  plan.steps.push_back(elementwise(a, b));
  plan.outputs = {b};
  EXPECT_EQ(planMemory(plan),
            "buffer 0 ('b0') is read by step 0 but no step writes it");
  EXPECT_EQ(validatePlan(plan), "step 0 (tandem.elementwise) reads buffer 0 "
                                "('b0') before any step writes it");
}

} // namespace
