//===- ScheduleModelTest.cpp - The schedule model, with injected costs ----===//
//
// The model is built from parsed IR with prices injected by a TaskPricer
// (no cost model decides the times), simulated by the engine, and read back
// by op.
//
//===----------------------------------------------------------------------===//

#include "tandem/ScheduleModel/ScheduleModel.h"
#include "tandem/ScheduleModel/StreamMap.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tandem;

namespace {

// A copy under an all-gather, a matmul that needs the gathered tensor, and
// an op pinned to an explicit stream.
constexpr const char *kStep = R"mlir(
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>, %w: tensor<1024x1024xbf16>)
      -> (tensor<2048x1024xbf16>, tensor<256x1024xbf16>) {
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %c = tandem.elementwise copy %x : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    %m = tandem.matmul fprop %g, %w : tensor<2048x1024xbf16>, tensor<1024x1024xbf16> -> tensor<2048x1024xbf16>
    %e = tandem.elementwise copy %c {tandem.stream = 3 : i64} : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    return %m, %e : tensor<2048x1024xbf16>, tensor<256x1024xbf16>
  }
}
)mlir";

class ScheduleModelTest : public ::testing::Test {
protected:
  void SetUp() override {
    ctx.loadDialect<TandemDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(kStep, &ctx);
    ASSERT_TRUE(module);
    func = *module->getOps<func::FuncOp>().begin();
    for (Operation &op : func.getBody().front())
      ops.push_back(&op);
  }
  /// Each op's price by its op name: collectives 100 us, copies 10 us,
  /// matmuls 50 us (as bandwidth-bound tasks, so that no wave model
  /// applies).
  static std::optional<sim::Task> price(Operation *op) {
    sim::Task t;
    if (isa<CollectiveOpInterface>(op)) {
      t.kind = sim::TaskKind::Collective;
      t.aloneUs = 100;
      t.commSms = 16;
    } else if (isa<MatmulOp>(op)) {
      t.kind = sim::TaskKind::Memory;
      t.aloneUs = 50;
    } else if (isa<ElementwiseOp>(op)) {
      t.kind = sim::TaskKind::Memory;
      t.aloneUs = 10;
    } else {
      return std::nullopt; // the wait: the builder's own rule
    }
    return t;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  SmallVector<Operation *> ops; ///< In program order, the return last.
};

TEST_F(ScheduleModelTest, TasksAreKeyedByOpBothWays) {
  CostModel model(GpuSpec::fromAttr(TargetAttr::getPreset(&ctx, "h200")));
  ScheduleModelOptions options;
  options.pricer = price;
  FailureOr<ScheduleModel> m = ScheduleModel::build(func, model, options);
  ASSERT_TRUE(succeeded(m));
  ASSERT_EQ(m->ops().size(), ops.size() - 1); // every op but the return
  for (auto [i, op] : llvm::enumerate(m->ops())) {
    EXPECT_EQ(op, ops[i]);
    EXPECT_EQ(m->taskOf(op), std::optional<unsigned>(i));
  }
  EXPECT_FALSE(m->taskOf(ops.back()).has_value());
  // Dependences are the def-use edges, by task.
  EXPECT_EQ(m->problem().tasks[2].deps, std::vector<unsigned>{0});
  EXPECT_EQ(m->problem().tasks[3].deps, std::vector<unsigned>{2});
  EXPECT_DOUBLE_EQ(m->commUs, 100);
  EXPECT_DOUBLE_EQ(m->computeUs, 10 + 50 + 10);
  EXPECT_EQ(m->numCollectives, 1u);
}

TEST_F(ScheduleModelTest, StreamsFollowTheOneRule) {
  CostModel model(GpuSpec::fromAttr(TargetAttr::getPreset(&ctx, "h200")));
  ScheduleModelOptions options;
  options.pricer = price;
  FailureOr<ScheduleModel> m = ScheduleModel::build(func, model, options);
  ASSERT_TRUE(succeeded(m));
  FailureOr<StreamMap> streams = computeStreams(func);
  ASSERT_TRUE(succeeded(streams));
  for (auto [task, op] : llvm::enumerate(m->ops()))
    EXPECT_EQ(int64_t(m->problem().tasks[task].stream), streams->lookup(op));
  std::vector<std::string> expected = {"compute", "comm @tp", "stream 2",
                                       "stream 3"};
  EXPECT_EQ(m->problem().streamNames, expected);
  EXPECT_EQ(std::vector<std::string>(streams->names.begin(),
                                     streams->names.end()),
            expected);
}

TEST_F(ScheduleModelTest, EngineResultsReadBackByOp) {
  CostModel model(GpuSpec::fromAttr(TargetAttr::getPreset(&ctx, "h200")));
  ScheduleModelOptions options;
  options.pricer = price;
  FailureOr<ScheduleModel> m = ScheduleModel::build(func, model, options);
  ASSERT_TRUE(succeeded(m));
  sim::Problem problem = m->problem();
  problem.contention = ContentionTable::fromPoints({{16, 1.0, 2.0, 1.5}},
                                                   "test: fixed factors");
  std::string error;
  std::optional<sim::Result> r = sim::simulate(problem, error);
  ASSERT_TRUE(r.has_value()) << error;
  auto timing = [&](Operation *op) { return r->timings[*m->taskOf(op)]; };
  // The copy runs beside the all-gather at half speed (memory x2): 20 us;
  // then the copy pinned to stream 3, which needs it, for 20 us more, beside
  // the all-gather too.
  EXPECT_DOUBLE_EQ(timing(ops[1]).endUs, 20);
  // The all-gather: 40 us at 1/150 per us (comm x1.5), then alone.
  double agEnd = 40 + (1 - 40.0 / 150) * 100;
  EXPECT_NEAR(timing(ops[0]).endUs, agEnd, 1e-9);
  // The wait and the matmul follow it.
  EXPECT_NEAR(timing(ops[3]).startUs, agEnd, 1e-9);
  EXPECT_NEAR(timing(ops[3]).endUs, agEnd + 50, 1e-9);
  EXPECT_NEAR(timing(ops[4]).endUs, 40, 1e-9);
}

TEST_F(ScheduleModelTest, CostModelPricesWhatThePricerLeaves) {
  CostModel model(GpuSpec::fromAttr(TargetAttr::getPreset(&ctx, "h200")));
  FailureOr<ScheduleModel> priced = ScheduleModel::build(func, model);
  ASSERT_TRUE(succeeded(priced));
  // Without a pricer the matmul is a GEMM with a wave model.
  const sim::Task &gemm = priced->problem().tasks[3];
  EXPECT_EQ(gemm.kind, sim::TaskKind::Gemm);
  EXPECT_GT(gemm.tiles, 0);
  EXPECT_GT(gemm.aloneUs, 0);
}

} // namespace
