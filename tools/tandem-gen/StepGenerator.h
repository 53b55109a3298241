//===- StepGenerator.h - IR of a Megatron TP+SP training step ---*- C++ -*-===//
//
// The model, parallelism and network description that tandem-gen turns into
// the tandem IR of one training step, and the function that builds it. Kept
// apart from the command line so that tests and other tools can generate
// steps without going through llvm::cl.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEM_GEN_STEPGENERATOR_H
#define TANDEM_TOOLS_TANDEM_GEN_STEPGENERATOR_H

#include "tandem/Dialect/Tandem/TandemOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
namespace tandem {
namespace gen {

/// Feed-forward block: GELU with two matrices, or SwiGLU whose gate and up
/// projections are fused into one fc1 GEMM of twice the width (as Megatron
/// does), followed by fc2.
enum class MlpKind { gelu, swiglu };

/// Element type of activations, weights and gradients.
enum class DataType { bf16, f16 };

/// Shape of a decoder-only transformer. Sizes are global, before tensor
/// parallelism splits them.
struct ModelShape {
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kvHeads = 0;
  int64_t ffn = 0;
  MlpKind mlp = MlpKind::gelu;
  mlir::tandem::NormKind norm = mlir::tandem::NormKind::layer;
  int64_t layers = 0;
};

/// A named model (GPT-3 paper, Llama 3 model cards).
struct ModelPreset {
  llvm::StringRef name;
  ModelShape shape;
};

/// The model presets, in the order `--help` lists them.
llvm::ArrayRef<ModelPreset> getModelPresets();

/// The preset called `name`, or null.
const ModelPreset *lookupModelPreset(llvm::StringRef name);

/// Scale-up and scale-out network of one GPU of a target and of its node:
/// what the process groups are built from. One entry per target preset.
struct NodeNetwork {
  /// Name of the #tandem.target preset.
  llvm::StringRef target;
  /// How the GPUs of one node are linked, when the user does not say.
  mlir::tandem::Topology nativeTopology;
  /// GPUs in one node; a TP group must fit in one.
  int64_t gpusPerNode;
  /// Scale-up links per GPU and bandwidth per link per direction (GB/s).
  int64_t links;
  double linkGbps;
  /// Fixed cost of one intra-node communication step (us).
  double linkLatencyUs;
  /// Scale-out bandwidth per GPU per direction (GB/s) and its step latency.
  double interNodeGbps;
  double interNodeLatencyUs;

  /// Total scale-up bandwidth of one GPU per direction (GB/s).
  double totalGbps() const { return links * linkGbps; }
};

/// The network of the target preset called `target`, or null.
const NodeNetwork *lookupNodeNetwork(llvm::StringRef target);

/// The network table: one entry per target tandem-gen can generate for.
llvm::ArrayRef<NodeNetwork> getNodeNetworks();

/// Everything that decides the generated step.
struct StepConfig {
  ModelShape model;
  /// Tokens per sequence (the full sequence, before sequence parallelism).
  int64_t seq = 2048;
  /// Sequences per micro-batch: each rank holds seq/tp tokens of every
  /// sequence, and attention runs once per sequence.
  int64_t sequences = 1;
  /// Causal segments per sequence: each rank holds seq/(tp x segments)
  /// tokens of every segment, and segment j's attention attends to the keys
  /// of segments 0 .. j (`tandem.attention ... queries(n)`), so that a batch
  /// split along segments keeps the forward's attention per part.
  int64_t segments = 1;
  int64_t microBatches = 1;
  /// Tensor-parallel and data-parallel degrees.
  int64_t tp = 8;
  int64_t dp = 1;
  DataType dtype = DataType::bf16;
  /// A #tandem.target preset that has a NodeNetwork.
  std::string target = "h200";
  /// How the GPUs of one node are linked: switch, full_mesh or ring.
  mlir::tandem::Topology topology = mlir::tandem::Topology::switch_;
};

/// Checks that `config` describes a step that can be generated. The message
/// of the error names the offending options and values, for example
/// "--heads (6) is not divisible by --tp (4)".
llvm::Error validateStepConfig(const StepConfig &config);

/// The attributes of a tandem.group.
struct GroupSpec {
  int64_t size = 1;
  mlir::tandem::Topology topology = mlir::tandem::Topology::switch_;
  int64_t links = 1;
  double linkGbps = 0.0;
  double linkLatencyUs = 0.0;
  /// Set only for a hierarchical group.
  std::optional<int64_t> gpusPerNode;
  std::optional<double> interNodeGbps;
  std::optional<double> interNodeLatencyUs;
};

/// The @tp group, or std::nullopt when tp == 1. `config` must be valid.
std::optional<GroupSpec> getTpGroupSpec(const StepConfig &config);

/// The @dp group, or std::nullopt when dp == 1. `config` must be valid.
std::optional<GroupSpec> getDpGroupSpec(const StepConfig &config);

/// Builds the module holding the groups and `func.func @train_step`: one
/// forward and backward pass over every micro-batch, in the unoptimised order
/// that the overlap passes start from. `config` must have passed
/// validateStepConfig. The module is not verified here.
mlir::OwningOpRef<mlir::ModuleOp> buildTrainStep(mlir::MLIRContext &context,
                                                 const StepConfig &config);

} // namespace gen
} // namespace tandem
} // namespace mlir

#endif // TANDEM_TOOLS_TANDEM_GEN_STEPGENERATOR_H
