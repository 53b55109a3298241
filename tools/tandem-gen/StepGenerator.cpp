//===- StepGenerator.cpp - IR of a Megatron TP+SP training step -----------===//
//
// Builds, with OpBuilder, the tandem IR of one training step (forward and
// backward over every micro-batch) of a transformer stack under Megatron
// tensor parallelism with sequence parallelism, plus the process groups and
// the network figures they carry.
//
//===----------------------------------------------------------------------===//

#include "StepGenerator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tandem;
using namespace mlir::tandem::gen;

//===----------------------------------------------------------------------===//
// Models and networks
//===----------------------------------------------------------------------===//

// GPT-3 175B: "Language Models are Few-Shot Learners", table 2.1 (d_ff = 4
// d_model). Llama 3 8B and 70B: "The Llama 3 Herd of Models", table 3. See
// also DESIGN.md section 4 and docs/tandem-gen.md.
static const ModelPreset kModelPresets[] = {
    {"gpt3-175b", {12288, 96, 96, 49152, MlpKind::gelu, NormKind::layer, 96}},
    {"llama3-70b", {8192, 64, 8, 28672, MlpKind::swiglu, NormKind::rms, 80}},
    {"llama3-8b", {4096, 32, 8, 14336, MlpKind::swiglu, NormKind::rms, 32}},
};

ArrayRef<ModelPreset> mlir::tandem::gen::getModelPresets() {
  return kModelPresets;
}

const ModelPreset *mlir::tandem::gen::lookupModelPreset(StringRef name) {
  for (const ModelPreset &preset : kModelPresets)
    if (preset.name == name)
      return &preset;
  return nullptr;
}

// Every network figure tandem-gen writes into a tandem.group, with its source.
//  - h100, h200: NVLink 4 gives each GPU 18 links of 25 GB/s per direction,
//    450 GB/s per direction (H100 SXM5 / H200 SXM datasheets: 900 GB/s
//    bidirectional); all 8 GPUs of an HGX node meet at NVSwitches.
//  - mi300x: Infinity Fabric, 7 links per GPU, one to each peer of the 8-GPU
//    platform, ~128 GB/s bidirectional each, so 64 GB/s per direction (MI300X
//    platform datasheet).
//  - link_latency_us 2.0: an assumption for every topology, to be calibrated
//    by the multi-GPU measurements; it only shifts small collectives.
//  - inter-node: one 400 Gb/s NIC per GPU (ConnectX-7 datasheet), 50 GB/s per
//    direction; inter_node_latency_us 5.0 is an assumption like the above.
static const NodeNetwork kNodeNetworks[] = {
    {"h100", Topology::switch_, 8, 18, 25.0, 2.0, 50.0, 5.0},
    {"h200", Topology::switch_, 8, 18, 25.0, 2.0, 50.0, 5.0},
    {"mi300x", Topology::full_mesh, 8, 7, 64.0, 2.0, 50.0, 5.0},
};

ArrayRef<NodeNetwork> mlir::tandem::gen::getNodeNetworks() {
  return kNodeNetworks;
}

const NodeNetwork *mlir::tandem::gen::lookupNodeNetwork(StringRef target) {
  for (const NodeNetwork &network : kNodeNetworks)
    if (network.target == target)
      return &network;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

/// Largest size or degree accepted: keeps every element and byte count of the
/// generated tensors far from int64 overflow.
static constexpr int64_t kMaxSize = int64_t(1) << 24;

/// Largest layers x micro-batches: each costs 34 to 40 ops, and more than
/// this many would take gigabytes to build and print.
static constexpr int64_t kMaxLayerPasses = 16384;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error mlir::tandem::gen::validateStepConfig(const StepConfig &config) {
  const ModelShape &m = config.model;
  struct Size {
    StringRef option;
    int64_t value;
  };
  const Size sizes[] = {{"--hidden", m.hidden},
                        {"--heads", m.heads},
                        {"--kv-heads", m.kvHeads},
                        {"--ffn", m.ffn},
                        {"--layers", m.layers},
                        {"--seq", config.seq},
                        {"--sequences", config.sequences},
                        {"--segments", config.segments},
                        {"--micro-batches", config.microBatches}};
  for (const Size &size : sizes)
    if (size.value <= 0)
      return makeError(llvm::formatv("{0} must be positive, got {1}",
                                     size.option, size.value));
  const Size degrees[] = {{"--tp", config.tp}, {"--dp", config.dp}};
  for (const Size &degree : degrees)
    if (degree.value < 1)
      return makeError(llvm::formatv("{0} must be at least 1, got {1}",
                                     degree.option, degree.value));
  for (const Size &size : llvm::concat<const Size>(sizes, degrees))
    if (size.value > kMaxSize)
      return makeError(llvm::formatv("{0} ({1}) is larger than tandem-gen "
                                     "supports ({2})",
                                     size.option, size.value, kMaxSize));
  if (m.layers * config.microBatches > kMaxLayerPasses)
    return makeError(llvm::formatv(
        "--layers ({0}) x --micro-batches ({1}) = {2} exceeds the {3} layer "
        "passes tandem-gen generates",
        m.layers, config.microBatches, m.layers * config.microBatches,
        kMaxLayerPasses));
  // The dialect refuses tensors above kMaxTensorBytes. Every generated
  // tensor has at most max(sequences x seq, hidden) rows of at most max(3 x
  // hidden, 2 x ffn) columns (q/k/v packs at most three hidden widths, a
  // swiglu fc1 two ffn widths), of at most 4 bytes: refuse a step whose bound
  // exceeds it, rather than generate IR that does not verify. Every factor is
  // below 2^26 (the tokens, a product of two, are checked first), so the
  // product cannot overflow.
  if (config.sequences * config.seq > kMaxSize)
    return makeError(llvm::formatv(
        "--sequences ({0}) x --seq ({1}) = {2} tokens per micro-batch is more "
        "than tandem-gen supports ({3})",
        config.sequences, config.seq, config.sequences * config.seq, kMaxSize));
  int64_t rows = std::max(config.sequences * config.seq, m.hidden);
  int64_t cols = std::max(3 * m.hidden, 2 * m.ffn);
  if (rows * cols * 4 > kMaxTensorBytes)
    return makeError(llvm::formatv(
        "{0}--seq ({1}), --hidden ({2}) and --ffn ({3}) give tensors of up to "
        "{4} x {5} elements, more than the dialect's {6} bytes per tensor",
        config.sequences == 1
            ? std::string()
            : llvm::formatv("--sequences ({0}) x ", config.sequences).str(),
        config.seq, m.hidden, m.ffn, rows, cols, kMaxTensorBytes));

  const NodeNetwork *network = lookupNodeNetwork(config.target);
  if (!network)
    return makeError(
        llvm::formatv("no network figures for target '{0}'", config.target));
  if (config.topology == Topology::hierarchical)
    return makeError("the node topology must be switch, full-mesh or ring; "
                     "hierarchical groups are derived from --dp");
  if (config.tp > network->gpusPerNode)
    return makeError(llvm::formatv(
        "--tp ({0}) exceeds the {1} GPUs of one {2} node: a TP group must "
        "fit in one node",
        config.tp, network->gpusPerNode, config.target));

  if (m.hidden % m.heads != 0)
    return makeError(llvm::formatv("--hidden ({0}) is not divisible by "
                                   "--heads ({1})",
                                   m.hidden, m.heads));
  if (m.heads % m.kvHeads != 0)
    return makeError(llvm::formatv("--heads ({0}) is not a multiple of "
                                   "--kv-heads ({1})",
                                   m.heads, m.kvHeads));
  if (m.heads % config.tp != 0)
    return makeError(llvm::formatv("--heads ({0}) is not divisible by --tp "
                                   "({1}): each TP rank holds heads/tp heads",
                                   m.heads, config.tp));
  if (m.kvHeads % config.tp != 0)
    return makeError(llvm::formatv(
        "--kv-heads ({0}) is not divisible by --tp ({1}): each TP rank holds "
        "kv-heads/tp KV heads",
        m.kvHeads, config.tp));
  if (m.ffn % config.tp != 0)
    return makeError(llvm::formatv("--ffn ({0}) is not divisible by --tp "
                                   "({1})",
                                   m.ffn, config.tp));
  if (config.seq % config.tp != 0)
    return makeError(llvm::formatv(
        "--seq ({0}) is not divisible by --tp ({1}): sequence parallelism "
        "gives each TP rank seq/tp tokens",
        config.seq, config.tp));
  if (config.segments > 1 && config.sequences > 1)
    return makeError(llvm::formatv(
        "--segments ({0}) needs a micro-batch of one sequence, got "
        "--sequences {1}: a micro-batch of several sequences splits along "
        "them",
        config.segments, config.sequences));
  if (config.seq % (config.tp * config.segments) != 0)
    return makeError(llvm::formatv(
        "--seq ({0}) is not divisible by --tp ({1}) x --segments ({2}): each "
        "TP rank holds seq/(tp x segments) tokens of every segment",
        config.seq, config.tp, config.segments));

  int64_t ranks = config.tp * config.dp;
  if (config.dp > 1 && ranks > network->gpusPerNode) {
    int64_t perNode = std::max<int64_t>(1, network->gpusPerNode / config.tp);
    if (config.dp % perNode != 0)
      return makeError(llvm::formatv(
          "--dp ({0}) is not a multiple of {1}, the DP ranks that share a "
          "node of {2} GPUs when --tp is {3} and tp*dp ({4}) spans nodes",
          config.dp, perNode, network->gpusPerNode, config.tp, ranks));
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Process groups
//===----------------------------------------------------------------------===//

/// A group of `size` GPUs inside one node linked by `topology`. On a switch
/// every GPU keeps all its links; on a full mesh or a ring the GPU's total
/// bandwidth is spread over the links that reach the group's other members.
static GroupSpec getIntraNodeGroup(const NodeNetwork &network,
                                   Topology topology, int64_t size) {
  GroupSpec spec;
  spec.size = size;
  spec.topology = topology;
  spec.linkLatencyUs = network.linkLatencyUs;
  switch (topology) {
  case Topology::full_mesh:
    // The node is one full mesh: each GPU's bandwidth is split over links to
    // every other GPU of the node, and a group reaches only its members.
    spec.links = std::max<int64_t>(1, size - 1);
    spec.linkGbps =
        network.totalGbps() / std::max<int64_t>(1, network.gpusPerNode - 1);
    break;
  case Topology::ring:
    spec.links = size == 2 ? 1 : 2;
    spec.linkGbps = network.totalGbps() / spec.links;
    break;
  case Topology::switch_:
  case Topology::hierarchical:
    spec.links = network.links;
    spec.linkGbps = network.linkGbps;
    break;
  }
  return spec;
}

std::optional<GroupSpec>
mlir::tandem::gen::getTpGroupSpec(const StepConfig &config) {
  if (config.tp == 1)
    return std::nullopt;
  return getIntraNodeGroup(*lookupNodeNetwork(config.target), config.topology,
                           config.tp);
}

std::optional<GroupSpec>
mlir::tandem::gen::getDpGroupSpec(const StepConfig &config) {
  if (config.dp == 1)
    return std::nullopt;
  const NodeNetwork &network = *lookupNodeNetwork(config.target);
  if (config.tp * config.dp <= network.gpusPerNode)
    return getIntraNodeGroup(network, config.topology, config.dp);
  // The DP group spans nodes. Its members on one node are the GPUs of that
  // node with the same TP rank: gpusPerNode / tp of them.
  GroupSpec spec;
  spec.size = config.dp;
  spec.topology = Topology::hierarchical;
  spec.links = network.links;
  spec.linkGbps = network.linkGbps;
  spec.linkLatencyUs = network.linkLatencyUs;
  spec.gpusPerNode = std::max<int64_t>(1, network.gpusPerNode / config.tp);
  spec.interNodeGbps = network.interNodeGbps;
  spec.interNodeLatencyUs = network.interNodeLatencyUs;
  return spec;
}

//===----------------------------------------------------------------------===//
// The step
//===----------------------------------------------------------------------===//

namespace {

/// Index of each weight within a layer: the order of the function's weight
/// arguments and of its results.
enum WeightIndex : unsigned { ln1W, qkvW, projW, ln2W, fc1W, fc2W, kWeights };

/// Name of the part of a layer each weight belongs to.
const char *const kWeightParts[kWeights] = {"ln1", "qkv", "proj",
                                            "ln2", "fc1", "fc2"};

/// Forward values of one layer that the backward pass reads.
struct LayerActivations {
  Value x, ln1, qkv, attn, x2, ln2, fc1, act;
  /// With several sequences or segments: each unit's (a segment of a
  /// sequence) rows of qkv and its attention output, in unit order.
  SmallVector<Value> qkvUnits, attnUnits;
  /// With segments: each sequence's keys in token order (the last segment's
  /// attention operand), which the backward's attention_grad reads.
  SmallVector<Value> qkvTokens;
};

/// Builds one module: the groups and func.func @train_step.
class StepBuilder {
public:
  StepBuilder(MLIRContext &context, const StepConfig &config)
      : context(context), config(config), model(config.model),
        builder(&context) {
    sequences = config.sequences;
    seq = config.sequences * config.seq;
    shard = seq / config.tp;
    heads = model.heads / config.tp;
    kvHeads = model.kvHeads / config.tp;
    headDim = model.hidden / model.heads;
    qkvCols = (heads + 2 * kvHeads) * headDim;
    ffn = model.ffn / config.tp;
    fc1Cols = model.mlp == MlpKind::swiglu ? 2 * ffn : ffn;
    elementType = config.dtype == DataType::bf16 ? Type(builder.getBF16Type())
                                                 : Type(builder.getF16Type());
  }

  OwningOpRef<ModuleOp> build();

private:
  /// A NameLoc; every op and argument gets one so that the printed IR and
  /// diagnostics say which layer and micro-batch a value belongs to.
  Location name(const Twine &text) {
    return NameLoc::get(StringAttr::get(&context, text));
  }
  /// `l<layer>.<part>.<what>.mb<mb>`.
  Location name(int64_t layer, StringRef part, StringRef what, int64_t mb) {
    return name("l" + Twine(layer) + "." + part + "." + what + ".mb" +
                Twine(mb));
  }
  /// The `layer` attribute of a matmul, attention or norm: `l<layer>.<part>`.
  StringAttr layerAttr(int64_t layer, StringRef part) {
    return builder.getStringAttr("l" + Twine(layer) + "." + part);
  }
  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elementType);
  }

  void buildGroups(ModuleOp module);
  void buildGroup(StringRef symbol, const GroupSpec &spec);

  /// Sequence-parallel all-gather of a [shard, hidden] tensor along the
  /// tokens; the value itself when there is no TP group.
  Value allGather(Value input, Location loc);
  /// Reduce-scatter of a [seq, hidden] tensor along the tokens; the value
  /// itself when there is no TP group.
  Value reduceScatter(Value input, Location loc);
  Value matmul(MatmulRole role, Value lhs, Value rhs, bool transposeLhs,
               bool transposeRhs, ArrayRef<int64_t> resultShape,
               StringAttr layer, Location loc);
  Value elementwise(ElementwiseKind kind, ValueRange inputs,
                    ArrayRef<int64_t> resultShape, Location loc);
  /// Unit `u`'s rows of a gathered [sequences x seq, cols] tensor (a unit is
  /// segment `u % segments` of sequence `u / segments`): every rank's tokens
  /// of that unit, in token order.
  Value unitRows(Value gathered, int64_t u, Location loc);
  /// The gathered layout again from one [seq / segments, cols] value per
  /// unit.
  Value joinUnits(ValueRange perUnit, Location loc);
  /// Concat of `values` along the rows in token order (interleave 1).
  Value tokenConcat(ValueRange values, Location loc);
  /// Units per micro-batch.
  int64_t units() const { return sequences * config.segments; }
  /// The interleave of a sequence's rows in a gathered tensor: its tokens
  /// are one block in each rank's shard.
  int64_t sequenceInterleave() const { return tpGroup ? config.tp : 1; }

  /// Forward pass of one layer; returns its output.
  Value forwardLayer(int64_t layer, int64_t mb, Value x,
                     LayerActivations &saved);
  /// Backward pass of one layer given the gradient of its output; returns
  /// the gradient of its input, or null for layer 0, whose input gradient
  /// nothing reads.
  Value backwardLayer(int64_t layer, int64_t mb, Value dy,
                      const LayerActivations &saved);
  /// Records this micro-batch's gradient of a weight, accumulating it onto
  /// the previous micro-batches'.
  void addGradient(int64_t layer, WeightIndex weight, int64_t mb, Value grad);

  MLIRContext &context;
  const StepConfig &config;
  const ModelShape &model;
  OpBuilder builder;

  /// Per-rank sizes (see docs/tandem-gen.md): sequences per micro-batch,
  /// tokens of the micro-batch, tokens per TP rank, heads, KV heads and head
  /// width per rank, packed q/k/v columns, FFN columns and fc1 output columns
  /// per rank.
  int64_t sequences, seq, shard, heads, kvHeads, headDim, qkvCols, ffn, fc1Cols;
  Type elementType;
  FlatSymbolRefAttr tpGroup, dpGroup;

  /// Weight arguments, kWeights per layer.
  SmallVector<Value> weights;
  /// Gradient accumulated so far for each weight argument.
  SmallVector<Value> gradients;
  /// Weight indices in the order their gradients became final.
  SmallVector<unsigned> finalOrder;
};

} // namespace

void StepBuilder::buildGroup(StringRef symbol, const GroupSpec &spec) {
  auto optionalInt = [&](std::optional<int64_t> v) {
    return v ? builder.getI64IntegerAttr(*v) : IntegerAttr();
  };
  auto optionalFloat = [&](std::optional<double> v) {
    return v ? builder.getF64FloatAttr(*v) : FloatAttr();
  };
  GroupOp::create(builder, name(symbol), builder.getStringAttr(symbol),
                  builder.getI64IntegerAttr(spec.size),
                  TopologyAttr::get(&context, spec.topology),
                  builder.getI64IntegerAttr(spec.links),
                  builder.getF64FloatAttr(spec.linkGbps),
                  builder.getF64FloatAttr(spec.linkLatencyUs),
                  optionalInt(spec.gpusPerNode),
                  optionalFloat(spec.interNodeGbps),
                  optionalFloat(spec.interNodeLatencyUs));
}

void StepBuilder::buildGroups(ModuleOp module) {
  builder.setInsertionPointToEnd(module.getBody());
  if (std::optional<GroupSpec> tp = getTpGroupSpec(config)) {
    buildGroup("tp", *tp);
    tpGroup = FlatSymbolRefAttr::get(&context, "tp");
  }
  if (std::optional<GroupSpec> dp = getDpGroupSpec(config)) {
    buildGroup("dp", *dp);
    dpGroup = FlatSymbolRefAttr::get(&context, "dp");
  }
}

Value StepBuilder::allGather(Value input, Location loc) {
  if (!tpGroup)
    return input;
  return AllGatherOp::create(builder, loc, tensor({seq, model.hidden}), input,
                             tpGroup, builder.getI64IntegerAttr(0));
}

Value StepBuilder::reduceScatter(Value input, Location loc) {
  if (!tpGroup)
    return input;
  return ReduceScatterOp::create(builder, loc, tensor({shard, model.hidden}),
                                 input, tpGroup, builder.getI64IntegerAttr(0));
}

Value StepBuilder::unitRows(Value gathered, int64_t u, Location loc) {
  auto type = cast<RankedTensorType>(gathered.getType());
  auto i64 = [&](int64_t x) { return builder.getI64IntegerAttr(x); };
  return SliceOp::create(
      builder, loc, tensor({config.seq / config.segments, type.getDimSize(1)}),
      gathered, i64(0), i64(u), i64(units()), i64(sequenceInterleave()),
      DenseI64ArrayAttr());
}

Value StepBuilder::joinUnits(ValueRange perUnit, Location loc) {
  auto type = cast<RankedTensorType>(perUnit.front().getType());
  auto i64 = [&](int64_t x) { return builder.getI64IntegerAttr(x); };
  return ConcatOp::create(builder, loc, tensor({seq, type.getDimSize(1)}),
                          perUnit, i64(0), i64(sequenceInterleave()));
}

Value StepBuilder::tokenConcat(ValueRange values, Location loc) {
  if (values.size() == 1)
    return values.front();
  int64_t rows = 0;
  for (Value v : values)
    rows += cast<RankedTensorType>(v.getType()).getDimSize(0);
  auto type = cast<RankedTensorType>(values.front().getType());
  auto i64 = [&](int64_t x) { return builder.getI64IntegerAttr(x); };
  return ConcatOp::create(builder, loc, tensor({rows, type.getDimSize(1)}),
                          values, i64(0), i64(1));
}

Value StepBuilder::matmul(MatmulRole role, Value lhs, Value rhs,
                          bool transposeLhs, bool transposeRhs,
                          ArrayRef<int64_t> resultShape, StringAttr layer,
                          Location loc) {
  return MatmulOp::create(builder, loc, tensor(resultShape), lhs, rhs, role,
                          transposeLhs, transposeRhs, layer);
}

Value StepBuilder::elementwise(ElementwiseKind kind, ValueRange inputs,
                               ArrayRef<int64_t> resultShape, Location loc) {
  return ElementwiseOp::create(builder, loc, tensor(resultShape), kind, inputs,
                               StringAttr());
}

Value StepBuilder::forwardLayer(int64_t l, int64_t mb, Value x,
                                LayerActivations &saved) {
  const int64_t h = model.hidden;
  Value *w = &weights[l * kWeights];
  saved.x = x;

  // Attention block: the norm runs on this rank's tokens, the column-parallel
  // qkv GEMM on all tokens, the row-parallel proj GEMM's partial sums are
  // reduced and scattered back to this rank's tokens.
  saved.ln1 =
      NormOp::create(builder, name(l, "ln1", "norm", mb), tensor({shard, h}),
                     model.norm, x, w[ln1W], layerAttr(l, "ln1"));
  Value a1 = allGather(saved.ln1, name(l, "qkv", "ag", mb));
  saved.qkv =
      matmul(MatmulRole::fprop, a1, w[qkvW], false, false, {seq, qkvCols},
             layerAttr(l, "qkv"), name(l, "qkv", "fprop", mb));
  // Attention runs per sequence: a sequence's tokens attend to each other
  // only. With segments, segment j's queries attend to the keys of segments
  // 0 .. j (their concat in token order).
  if (units() == 1) {
    saved.attn = AttentionOp::create(builder, name(l, "attn", "fprop", mb),
                                     tensor({seq, heads * headDim}), saved.qkv,
                                     heads, kvHeads, headDim, /*causal=*/true,
                                     /*queries=*/nullptr, layerAttr(l, "attn"));
  } else {
    const int64_t segments = config.segments, unitSeq = config.seq / segments;
    for (int64_t u = 0; u < units(); ++u) {
      std::string suffix = ".s" + std::to_string(u / segments);
      if (segments > 1)
        suffix += ".g" + std::to_string(u % segments);
      saved.qkvUnits.push_back(
          unitRows(saved.qkv, u, name(l, "qkv", "seq" + suffix, mb)));
      Value keys = saved.qkvUnits.back();
      IntegerAttr queries;
      if (segments > 1) {
        int64_t first = u - u % segments;
        keys = tokenConcat(ArrayRef<Value>(saved.qkvUnits).drop_front(first),
                           name(l, "qkv", "prefix" + suffix, mb));
        queries = builder.getI64IntegerAttr(unitSeq);
        if (u % segments == segments - 1)
          saved.qkvTokens.push_back(keys);
      }
      saved.attnUnits.push_back(AttentionOp::create(
          builder, name(l, "attn", "fprop" + suffix, mb),
          tensor({unitSeq, heads * headDim}), keys, heads, kvHeads, headDim,
          /*causal=*/true, queries, layerAttr(l, "attn")));
    }
    saved.attn = joinUnits(saved.attnUnits, name(l, "attn", "join", mb));
  }
  Value proj =
      matmul(MatmulRole::fprop, saved.attn, w[projW], false, false, {seq, h},
             layerAttr(l, "proj"), name(l, "proj", "fprop", mb));
  Value r1 = reduceScatter(proj, name(l, "proj", "rs", mb));
  saved.x2 = elementwise(ElementwiseKind::add, {x, r1}, {shard, h},
                         name(l, "attn", "residual", mb));

  // MLP block, the same pattern with fc1 (column-parallel) and fc2
  // (row-parallel).
  saved.ln2 =
      NormOp::create(builder, name(l, "ln2", "norm", mb), tensor({shard, h}),
                     model.norm, saved.x2, w[ln2W], layerAttr(l, "ln2"));
  Value a2 = allGather(saved.ln2, name(l, "fc1", "ag", mb));
  saved.fc1 =
      matmul(MatmulRole::fprop, a2, w[fc1W], false, false, {seq, fc1Cols},
             layerAttr(l, "fc1"), name(l, "fc1", "fprop", mb));
  bool swiglu = model.mlp == MlpKind::swiglu;
  saved.act = elementwise(
      swiglu ? ElementwiseKind::swiglu : ElementwiseKind::gelu, saved.fc1,
      {seq, ffn}, name(l, "act", swiglu ? "swiglu" : "gelu", mb));
  Value fc2 =
      matmul(MatmulRole::fprop, saved.act, w[fc2W], false, false, {seq, h},
             layerAttr(l, "fc2"), name(l, "fc2", "fprop", mb));
  Value r2 = reduceScatter(fc2, name(l, "fc2", "rs", mb));
  return elementwise(ElementwiseKind::add, {saved.x2, r2}, {shard, h},
                     name(l, "mlp", "residual", mb));
}

Value StepBuilder::backwardLayer(int64_t l, int64_t mb, Value dy,
                                 const LayerActivations &saved) {
  const int64_t h = model.hidden;
  Value *w = &weights[l * kWeights];
  bool swiglu = model.mlp == MlpKind::swiglu;

  // MLP block. fc2's dgrad and wgrad both need the gathered output gradient.
  Value g2 = allGather(dy, name(l, "fc2", "grad_ag", mb));
  Value dact = matmul(MatmulRole::dgrad, g2, w[fc2W], false, true, {seq, ffn},
                      layerAttr(l, "fc2"), name(l, "fc2", "dgrad", mb));
  Value dwFc2 = matmul(MatmulRole::wgrad, saved.act, g2, true, false, {ffn, h},
                       layerAttr(l, "fc2"), name(l, "fc2", "wgrad", mb));
  addGradient(l, fc2W, mb, dwFc2);
  Value dfc1 = elementwise(
      swiglu ? ElementwiseKind::swiglu_grad : ElementwiseKind::gelu_grad,
      {dact, saved.fc1}, {seq, fc1Cols},
      name(l, "act", swiglu ? "swiglu_grad" : "gelu_grad", mb));
  Value da2 = matmul(MatmulRole::dgrad, dfc1, w[fc1W], false, true, {seq, h},
                     layerAttr(l, "fc1"), name(l, "fc1", "dgrad", mb));
  // Sequence parallelism keeps only this rank's shard of fc1's input and
  // gathers it again for the wgrad instead of holding [seq, hidden].
  Value a2 = allGather(saved.ln2, name(l, "fc1", "wgrad_ag", mb));
  Value dwFc1 = matmul(MatmulRole::wgrad, a2, dfc1, true, false, {h, fc1Cols},
                       layerAttr(l, "fc1"), name(l, "fc1", "wgrad", mb));
  addGradient(l, fc1W, mb, dwFc1);
  Value dln2 = reduceScatter(da2, name(l, "fc1", "grad_rs", mb));
  auto ln2Grad = NormGradOp::create(
      builder, name(l, "ln2", "norm_grad", mb), tensor({shard, h}), tensor({h}),
      model.norm, dln2, saved.x2, w[ln2W], layerAttr(l, "ln2"));
  addGradient(l, ln2W, mb, ln2Grad.getWeightGrad());
  Value dx2 = elementwise(ElementwiseKind::add, {dy, ln2Grad.getInputGrad()},
                          {shard, h}, name(l, "mlp", "residual_grad", mb));

  // Attention block, the same pattern with proj and qkv.
  Value g1 = allGather(dx2, name(l, "proj", "grad_ag", mb));
  Value dattn = matmul(MatmulRole::dgrad, g1, w[projW], false, true,
                       {seq, heads * headDim}, layerAttr(l, "proj"),
                       name(l, "proj", "dgrad", mb));
  Value dwProj = matmul(MatmulRole::wgrad, saved.attn, g1, true, false,
                        {heads * headDim, h}, layerAttr(l, "proj"),
                        name(l, "proj", "wgrad", mb));
  addGradient(l, projW, mb, dwProj);
  Value dqkv;
  if (units() == 1) {
    dqkv = AttentionGradOp::create(builder, name(l, "attn", "dgrad", mb),
                                   tensor({seq, qkvCols}), dattn, saved.qkv,
                                   saved.attn, heads, kvHeads, headDim,
                                   /*causal=*/true, layerAttr(l, "attn"));
  } else if (config.segments == 1) {
    SmallVector<Value> perSequence;
    for (int64_t s = 0; s < sequences; ++s) {
      std::string suffix = ".s" + std::to_string(s);
      Value dout = unitRows(dattn, s, name(l, "attn", "grad_seq" + suffix, mb));
      perSequence.push_back(AttentionGradOp::create(
          builder, name(l, "attn", "dgrad" + suffix, mb),
          tensor({config.seq, qkvCols}), dout, saved.qkvUnits[s],
          saved.attnUnits[s], heads, kvHeads, headDim, /*causal=*/true,
          layerAttr(l, "attn")));
    }
    dqkv = joinUnits(perSequence, name(l, "attn", "grad_join", mb));
  } else {
    // With segments the backward runs one attention_grad per sequence, on
    // its tokens in order (the backward's collectives are hidden under the
    // wgrads without splitting it), and cuts its gradient into the
    // segments' rows again.
    const int64_t segments = config.segments, unitSeq = config.seq / segments;
    SmallVector<Value> perUnit;
    for (int64_t s = 0; s < sequences; ++s) {
      std::string suffix = ".s" + std::to_string(s);
      SmallVector<Value> douts, outs;
      for (int64_t g = 0; g < segments; ++g) {
        int64_t u = s * segments + g;
        douts.push_back(
            unitRows(dattn, u,
                     name(l, "attn",
                          "grad_seq" + suffix + ".g" + std::to_string(g), mb)));
        outs.push_back(saved.attnUnits[u]);
      }
      Value dout =
          tokenConcat(douts, name(l, "attn", "grad_tokens" + suffix, mb));
      Value out = tokenConcat(outs, name(l, "attn", "tokens" + suffix, mb));
      Value dqkvSeq = AttentionGradOp::create(
          builder, name(l, "attn", "dgrad" + suffix, mb),
          tensor({config.seq, qkvCols}), dout, saved.qkvTokens[s], out, heads,
          kvHeads, headDim, /*causal=*/true, layerAttr(l, "attn"));
      auto i64 = [&](int64_t x) { return builder.getI64IntegerAttr(x); };
      for (int64_t g = 0; g < segments; ++g)
        perUnit.push_back(SliceOp::create(
            builder,
            name(l, "attn", "grad_seg" + suffix + ".g" + std::to_string(g), mb),
            tensor({unitSeq, qkvCols}), dqkvSeq, i64(0), i64(g), i64(segments),
            i64(1), DenseI64ArrayAttr()));
    }
    dqkv = joinUnits(perUnit, name(l, "attn", "grad_join", mb));
  }
  Value da1 = matmul(MatmulRole::dgrad, dqkv, w[qkvW], false, true, {seq, h},
                     layerAttr(l, "qkv"), name(l, "qkv", "dgrad", mb));
  Value a1 = allGather(saved.ln1, name(l, "qkv", "wgrad_ag", mb));
  Value dwQkv = matmul(MatmulRole::wgrad, a1, dqkv, true, false, {h, qkvCols},
                       layerAttr(l, "qkv"), name(l, "qkv", "wgrad", mb));
  addGradient(l, qkvW, mb, dwQkv);
  Value dln1 = reduceScatter(da1, name(l, "qkv", "grad_rs", mb));
  auto ln1Grad = NormGradOp::create(
      builder, name(l, "ln1", "norm_grad", mb), tensor({shard, h}), tensor({h}),
      model.norm, dln1, saved.x, w[ln1W], layerAttr(l, "ln1"));
  addGradient(l, ln1W, mb, ln1Grad.getWeightGrad());
  // Layer 0's input is the step's input: its gradient would be dead.
  if (l == 0)
    return Value();
  return elementwise(ElementwiseKind::add, {dx2, ln1Grad.getInputGrad()},
                     {shard, h}, name(l, "attn", "residual_grad", mb));
}

void StepBuilder::addGradient(int64_t layer, WeightIndex weight, int64_t mb,
                              Value grad) {
  unsigned index = layer * kWeights + weight;
  if (mb == 0) {
    gradients[index] = grad;
  } else {
    auto type = cast<RankedTensorType>(grad.getType());
    gradients[index] = elementwise(
        ElementwiseKind::add, {gradients[index], grad}, type.getShape(),
        name(layer, kWeightParts[weight], "wgrad_acc", mb));
  }
  if (mb == config.microBatches - 1)
    finalOrder.push_back(index);
}

OwningOpRef<ModuleOp> StepBuilder::build() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(name("tandem-gen"));
  (*module)->setAttr(TandemDialect::getTargetAttrName(),
                     TargetAttr::getPreset(&context, config.target));
  buildGroups(*module);

  // Arguments: the micro-batches' inputs, then each layer's weights. The
  // results are the weights' gradients in the same order.
  const int64_t h = model.hidden;
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (int64_t mb = 0; mb < config.microBatches; ++mb) {
    argTypes.push_back(tensor({shard, h}));
    argLocs.push_back(name("x.mb" + Twine(mb)));
  }
  SmallVector<Type> weightTypes;
  for (int64_t l = 0; l < model.layers; ++l) {
    const RankedTensorType shapes[kWeights] = {
        tensor({h}), tensor({h, qkvCols}), tensor({heads * headDim, h}),
        tensor({h}), tensor({h, fc1Cols}), tensor({ffn, h})};
    for (unsigned i = 0; i < kWeights; ++i) {
      weightTypes.push_back(shapes[i]);
      argLocs.push_back(name("l" + Twine(l) + "." + kWeightParts[i] + ".w"));
    }
  }
  argTypes.append(weightTypes);

  auto func =
      func::FuncOp::create(builder, name("train_step"), "train_step",
                           builder.getFunctionType(argTypes, weightTypes));
  Block *entry = func.addEntryBlock();
  for (auto [arg, loc] : llvm::zip_equal(entry->getArguments(), argLocs))
    arg.setLoc(loc);
  builder.setInsertionPointToEnd(entry);

  ValueRange args = entry->getArguments();
  weights.assign(args.begin() + config.microBatches, args.end());
  gradients.assign(weights.size(), Value());

  // Micro-batches run one after the other, each forward then backward, as
  // in gradient accumulation without pipeline parallelism.
  SmallVector<LayerActivations> saved(model.layers);
  for (int64_t mb = 0; mb < config.microBatches; ++mb) {
    Value x = args[mb];
    for (int64_t l = 0; l < model.layers; ++l)
      x = forwardLayer(l, mb, x, saved[l]);
    // The LM head, the loss and its gradient are not modelled: an opaque op
    // with no FLOPs that reads and writes x stands for them and gives the
    // backward pass its input.
    int64_t bytes = getTensorBytes(cast<RankedTensorType>(x.getType()));
    Value dy =
        OpaqueOp::create(builder, name("loss_grad.mb" + Twine(mb)),
                         TypeRange{x.getType()}, "loss_grad", ValueRange{x},
                         APFloat(0.0), 2 * bytes, StringAttr())
            .getResult(0);
    for (int64_t l = model.layers - 1; l >= 0; --l)
      dy = backwardLayer(l, mb, dy, saved[l]);
  }

  // Data parallelism: every rank holds the whole (TP-sharded) model, so each
  // accumulated gradient is summed over the DP group once it is final.
  if (dpGroup) {
    for (unsigned index : finalOrder) {
      int64_t layer = index / kWeights;
      StringRef part = kWeightParts[index % kWeights];
      gradients[index] = AllReduceOp::create(
          builder, name("l" + Twine(layer) + "." + part + ".wgrad_ar"),
          gradients[index].getType(), gradients[index], dpGroup);
    }
  }
  func::ReturnOp::create(builder, name("train_step.return"), gradients);
  return module;
}

OwningOpRef<ModuleOp>
mlir::tandem::gen::buildTrainStep(MLIRContext &context,
                                  const StepConfig &config) {
  context.loadDialect<TandemDialect, func::FuncDialect>();
  return StepBuilder(context, config).build();
}
