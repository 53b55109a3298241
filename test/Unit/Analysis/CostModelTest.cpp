//===- CostModelTest.cpp - Cost-model formulas against hand computation ---===//
//
// Every expected value below is computed by hand from the h200 preset
// (989.4 TFLOP/s bf16, 132 SMs, gemm_efficiency 0.80, 4800 GB/s HBM at 0.90,
// 128x256 tiles, 4 us launch overhead) and docs/cost-model.md's formulas.
//
//===----------------------------------------------------------------------===//

#include "tandem/Analysis/CostModel.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tandem;

namespace {
class CostModelTest : public ::testing::Test {
protected:
  CostModelTest() : model(makeSpec()) {}
  GpuSpec makeSpec() {
    ctx.loadDialect<TandemDialect>();
    return GpuSpec::fromAttr(TargetAttr::getPreset(&ctx, "h200"));
  }
  static GroupSpec group(int64_t size, Topology topology, int64_t links,
                         double gbps) {
    GroupSpec g;
    g.name = "g";
    g.size = size;
    g.topology = topology;
    g.linksPerGpu = links;
    g.linkBytesPerUs = gbps * 1e3;
    g.linkLatencyUs = 2.0;
    return g;
  }
  MLIRContext ctx;
  CostModel model;
};

// Per-SM rate: 989.4e12 * 0.80 / 132 / 1e6 FLOP/us; one 128x256 tile with
// K = 8192 is 2*128*256*8192 FLOP.
constexpr double kPerSmFlopsPerUs = 989.4e12 * 0.80 / 132 / 1e6;
constexpr double kTile8192Us = 2.0 * 128 * 256 * 8192 / kPerSmFlopsPerUs;

TEST_F(CostModelTest, PresetValues) {
  const GpuSpec &gpu = model.gpu();
  EXPECT_EQ(gpu.smCount, 132);
  EXPECT_DOUBLE_EQ(gpu.bf16Flops, 989.4e12);
  EXPECT_DOUBLE_EQ(gpu.hbmBytesPerSecond, 4800e9);
  EXPECT_EQ(gpu.collectiveSms, 24);
  Builder b(&ctx);
  EXPECT_DOUBLE_EQ(gpu.peakFlops(b.getBF16Type()), 989.4e12);
  EXPECT_DOUBLE_EQ(gpu.peakFlops(b.getF64Type()), 0.0);
}

TEST_F(CostModelTest, GemmFullSmsHasSixteenWaves) {
  Builder b(&ctx);
  double bytes = 3.0 * 8192 * 8192 * 2;
  ComputeEstimate e =
      model.gemm(GemmShape{1, 8192, 8192, 8192}, b.getBF16Type(), bytes);
  EXPECT_EQ(e.tiles, 64 * 32);
  EXPECT_EQ(e.waves, 16); // 2048 / 132 = 15.5 -> 16
  EXPECT_NEAR(e.tileUs, kTile8192Us, 1e-9);
  EXPECT_FALSE(e.memoryBound);
  EXPECT_NEAR(e.timeUs, 16 * kTile8192Us + 4.0, 1e-6);
  // About 1.44 ms: the lent H200 measured 1.395 ms on random data.
  EXPECT_NEAR(e.timeUs, 1436.5, 0.5);
}

TEST_F(CostModelTest, GemmOnFewerSmsGetsATailWave) {
  Builder b(&ctx);
  double bytes = 3.0 * 8192 * 8192 * 2;
  ComputeEstimate e = model.gemm(GemmShape{1, 8192, 8192, 8192},
                                 b.getBF16Type(), bytes, /*sms=*/108);
  EXPECT_EQ(e.waves, 19); // 2048 / 108 = 18.96 -> 19
  EXPECT_NEAR(e.timeUs, 19 * kTile8192Us + 4.0, 1e-6);
}

TEST_F(CostModelTest, SkinnyGemmIsMemoryBound) {
  Builder b(&ctx);
  // 16 x 8192 x 8192: one tile row, reads the whole 128 MiB weight. The
  // 128x256 tile gives only 32 tiles, so the tile shrinks to 64x64 (128
  // tiles, one wave of 11.2 us), below the 31 us memory floor.
  double bytes = (16.0 * 8192 + 8192.0 * 8192 + 16.0 * 8192) * 2;
  ComputeEstimate e =
      model.gemm(GemmShape{1, 16, 8192, 8192}, b.getBF16Type(), bytes);
  EXPECT_EQ(e.tiles, 128);
  EXPECT_EQ(e.waves, 1);
  EXPECT_TRUE(e.memoryBound);
  EXPECT_NEAR(e.timeUs, bytes / (4800e9 * 0.90 / 1e6) + 4.0, 1e-6);
}

TEST_F(CostModelTest, RingAllGatherOnSwitch) {
  // 18 links x 25 GB/s x 0.80 = 360 GB/s = 360000 B/us; 7/8 of 32 MiB.
  GroupSpec g = group(8, Topology::switch_, 18, 25.0);
  CollectiveEstimate e =
      model.collective(CollectiveKind::all_gather, 32 << 20, g);
  EXPECT_EQ(e.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_EQ(e.steps, 7);
  EXPECT_NEAR(e.bandwidthBytesPerUs, 360000.0, 1e-6);
  EXPECT_NEAR(e.timeUs, 4.0 + 7 * 2.0 + 7.0 / 8 * (32 << 20) / 360000.0,
              1e-6);
}

TEST_F(CostModelTest, CtaBudgetLimitsBandwidth) {
  GroupSpec g = group(8, Topology::switch_, 18, 25.0);
  CollectiveEstimate e =
      model.collective(CollectiveKind::reduce_scatter, 32 << 20, g, 8);
  EXPECT_NEAR(e.bandwidthBytesPerUs, 8 * 25e3 * 0.80, 1e-6);
}

TEST_F(CostModelTest, FullMeshUsesDirectAndPeerStepsUseOneLink) {
  GroupSpec g = group(8, Topology::full_mesh, 7, 64.0);
  double bw = 7 * 64e3 * 0.80;
  CollectiveEstimate native =
      model.collective(CollectiveKind::all_gather, 32 << 20, g);
  EXPECT_EQ(native.algorithm, CollectiveAlgorithm::Direct);
  EXPECT_NEAR(native.timeUs, 4.0 + 2.0 + 7.0 / 8 * (32 << 20) / bw, 1e-6);

  CollectiveEstimate p2p = model.collective(
      CollectiveKind::all_gather, 32 << 20, g, 0,
      CollectiveAlgorithm::PeerToPeer);
  EXPECT_EQ(p2p.algorithm, CollectiveAlgorithm::PeerToPeer);
  double linkBw = 64e3 * 0.80;
  EXPECT_NEAR(p2p.timeUs,
              4.0 + 7 * (2.0 + 4.0) + 7.0 / 8 * (32 << 20) / linkBw, 1e-6);
  // The decomposition is several times slower on a full mesh...
  EXPECT_GT(p2p.timeUs, 5 * native.timeUs);

  // ...but not through a switch, where one peer can use every link.
  GroupSpec sw = group(8, Topology::switch_, 18, 25.0);
  CollectiveEstimate swNative =
      model.collective(CollectiveKind::all_gather, 32 << 20, sw);
  CollectiveEstimate swP2p = model.collective(
      CollectiveKind::all_gather, 32 << 20, sw, 0,
      CollectiveAlgorithm::PeerToPeer);
  EXPECT_LT(swP2p.timeUs, 1.3 * swNative.timeUs);
}

TEST_F(CostModelTest, PermuteOnFullMeshAndRing) {
  GroupSpec mesh = group(8, Topology::full_mesh, 7, 64.0);
  CollectiveEstimate e =
      model.collective(CollectiveKind::permute, 4 << 20, mesh);
  EXPECT_NEAR(e.timeUs, 4.0 + 2.0 + (4 << 20) / (64e3 * 0.80), 1e-6);
  GroupSpec ring = group(8, Topology::ring, 2, 225.0);
  CollectiveEstimate far = model.collective(CollectiveKind::permute, 4 << 20,
                                            ring, 0, std::nullopt, 3);
  EXPECT_EQ(far.steps, 3);
  EXPECT_NEAR(far.timeUs, 4.0 + 3 * 2.0 + (4 << 20) / (225e3 * 0.80), 1e-6);
}

TEST_F(CostModelTest, SmallAllReduceUsesTree) {
  GroupSpec g = group(8, Topology::switch_, 18, 25.0);
  CollectiveEstimate small =
      model.collective(CollectiveKind::all_reduce, 1024, g);
  EXPECT_EQ(small.algorithm, CollectiveAlgorithm::Tree);
  EXPECT_NEAR(small.timeUs, 4.0 + 2 * 3 * 2.0 + 2 * 1024 / 360000.0, 1e-9);
  CollectiveEstimate large =
      model.collective(CollectiveKind::all_reduce, 256 << 20, g);
  EXPECT_EQ(large.algorithm, CollectiveAlgorithm::Ring);
}

TEST_F(CostModelTest, HierarchicalAllGather) {
  GroupSpec g = group(16, Topology::hierarchical, 18, 25.0);
  g.gpusPerNode = 8;
  g.interNodeBytesPerUs = 50e3;
  g.interNodeLatencyUs = 5.0;
  double b = 64 << 20;
  CollectiveEstimate e = model.collective(CollectiveKind::all_gather,
                                          int64_t(b), g);
  EXPECT_EQ(e.algorithm, CollectiveAlgorithm::Hierarchical);
  double intra = 7 * 2.0 + 7.0 / 8 * b / 360000.0;
  double inter = 1 * 5.0 + 0.5 * b / 8 / (50e3 * 0.80);
  EXPECT_NEAR(e.timeUs, 4.0 + intra + inter, 1e-6);
}
} // namespace
