//===- tandem-gen.cpp - Generate the IR of a training step ----------------===//
//
// Command-line front end of the step generator: reads the model, parallelism
// and target options, rejects combinations that Megatron TP+SP cannot run
// with a one-line error, builds the step, verifies it and prints it.
//
//===----------------------------------------------------------------------===//

#include "StepGenerator.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;
using namespace mlir::tandem::gen;
namespace cl = llvm::cl;

static cl::OptionCategory genCategory("tandem-gen options");

/// Reports a bad boolean value in tandem-gen's one-line form
/// ("tandem-gen: error: ..."), naming the flag and the value, instead of
/// LLVM's option-parser wording. Returning true makes ParseCommandLineOptions
/// exit with code 1 after the line. (Integer options are read as text and
/// converted in readOptions for the same reason: cl::parser<int64_t> is
/// final.)
namespace {
struct BoolParser : cl::parser<bool> {
  using cl::parser<bool>::parser;
  bool parse(cl::Option &option, StringRef, StringRef arg, bool &value) {
    if (arg.empty() || arg == "true" || arg == "1") {
      value = true;
      return false;
    }
    if (arg == "false" || arg == "0") {
      value = false;
      return false;
    }
    llvm::errs() << "tandem-gen: error: invalid --" << option.ArgStr << " '"
                 << arg << "': expected true, false, 1 or 0\n";
    return true;
  }
};
using BoolOpt = cl::opt<bool, false, BoolParser>;
} // namespace

/// An integer option, read as text (see BoolParser).
using IntOpt = cl::opt<std::string>;

static cl::opt<std::string> modelName(
    "model",
    cl::desc("Model preset: gpt3-175b (default), llama3-70b, llama3-8b, or "
             "custom (which needs --hidden, --heads and --ffn)"),
    cl::value_desc("name"), cl::init("gpt3-175b"), cl::cat(genCategory));
static IntOpt hidden("hidden", cl::desc("Hidden size (overrides the preset's)"),
                     cl::value_desc("n"), cl::cat(genCategory));
static IntOpt heads("heads",
                    cl::desc("Attention heads (overrides the preset's)"),
                    cl::value_desc("n"), cl::cat(genCategory));
static IntOpt
    kvHeads("kv-heads",
            cl::desc("Key/value heads, fewer than --heads for grouped-query "
                     "attention (default: the preset's, or --heads for custom "
                     "and for presets without grouped-query attention, whose "
                     "KV heads follow an overridden --heads)"),
            cl::value_desc("n"), cl::cat(genCategory));
static IntOpt ffn("ffn", cl::desc("FFN inner size (overrides the preset's)"),
                  cl::value_desc("n"), cl::cat(genCategory));
static cl::opt<std::string>
    mlpName("mlp",
            cl::desc("MLP: gelu (2 matrices) or swiglu (3 matrices, gate and "
                     "up fused in fc1) (default: the preset's; custom: gelu)"),
            cl::value_desc("kind"), cl::cat(genCategory));
static cl::opt<std::string>
    normName("norm",
             cl::desc("Normalisation: layer or rms (default: the preset's; "
                      "custom: layer)"),
             cl::value_desc("kind"), cl::cat(genCategory));
static IntOpt
    layers("layers",
           cl::desc("Transformer layers (default: the preset's; custom: 1)"),
           cl::value_desc("n"), cl::cat(genCategory));
static IntOpt seq("seq", cl::desc("Tokens per sequence (default 2048)"),
                  cl::value_desc("n"), cl::init("2048"), cl::cat(genCategory));
static IntOpt
    sequences("sequences",
              cl::desc("Sequences per micro-batch (default 1); attention runs "
                       "once per sequence"),
              cl::value_desc("n"), cl::init("1"), cl::cat(genCategory));
static IntOpt
    segments("segments",
             cl::desc("Causal segments per sequence (default 1): each rank "
                      "holds a block of every segment, and segment j's "
                      "attention attends to segments 0..j"),
             cl::value_desc("n"), cl::init("1"), cl::cat(genCategory));
static IntOpt
    microBatches("micro-batches",
                 cl::desc("Micro-batches accumulated in one step (default 1)"),
                 cl::value_desc("n"), cl::init("1"), cl::cat(genCategory));
static IntOpt
    tp("tp", cl::desc("Tensor-parallel degree, at most one node (default 8)"),
       cl::value_desc("n"), cl::init("8"), cl::cat(genCategory));
static IntOpt dp("dp", cl::desc("Data-parallel degree (default 1)"),
                 cl::value_desc("n"), cl::init("1"), cl::cat(genCategory));
static cl::opt<std::string>
    dtypeName("dtype", cl::desc("Element type: bf16 or f16 (default bf16)"),
              cl::value_desc("type"), cl::init("bf16"), cl::cat(genCategory));
static cl::opt<std::string>
    targetName("target",
               cl::desc("Target GPU: h100, h200 or mi300x (default h200)"),
               cl::value_desc("name"), cl::init("h200"), cl::cat(genCategory));
static cl::opt<std::string> topologyName(
    "topology",
    cl::desc("How one node's GPUs are linked: switch, full-mesh or ring "
             "(default: full-mesh for mi300x, switch otherwise)"),
    cl::value_desc("kind"), cl::cat(genCategory));
static cl::opt<std::string> outputFilename("o",
                                           cl::desc("Output file (default "
                                                    "stdout)"),
                                           cl::value_desc("file"),
                                           cl::init("-"), cl::cat(genCategory));
static BoolOpt printNames(
    "print-names",
    cl::desc("Name each value after its location, e.g. %l0.fc1.fprop.mb0 "
             "(default true; =false prints %0, %1, ...)"),
    cl::init(true), cl::cat(genCategory));
static BoolOpt
    printLocations("print-locations",
                   cl::desc("Print every op's and argument's location "
                            "(its NameLoc) as loc(...)"),
                   cl::init(false), cl::cat(genCategory));

/// Prints a one-line error in the form tests match and returns the exit code.
static int fail(const llvm::Twine &message) {
  llvm::errs() << "tandem-gen: error: " << message << "\n";
  return 1;
}

/// Names of a list, comma-separated, for error messages.
template <typename Range, typename NameFn>
static std::string joinNames(const Range &range, NameFn nameOf) {
  return llvm::join(llvm::map_range(range, nameOf), ", ");
}

/// Converts an integer option's text into `value`; on failure returns the
/// message, naming the flag and the value.
static std::optional<std::string> readInteger(const IntOpt &option,
                                              int64_t &value) {
  if (llvm::to_integer(StringRef(option.getValue()), value, /*Base=*/10))
    return std::nullopt;
  return ("invalid --" + option.ArgStr + " '" + option.getValue() +
          "': expected a decimal integer in [-2^63, 2^63)")
      .str();
}

/// Fills `config` from the options; on failure returns the message.
static std::optional<std::string> readOptions(StepConfig &config) {
  // Model: a preset, possibly with overrides, or custom.
  ModelShape &model = config.model;
  bool custom = modelName == "custom";
  if (custom) {
    SmallVector<StringRef> missing;
    if (!hidden.getNumOccurrences())
      missing.push_back("--hidden");
    if (!heads.getNumOccurrences())
      missing.push_back("--heads");
    if (!ffn.getNumOccurrences())
      missing.push_back("--ffn");
    if (!missing.empty())
      return "--model custom needs --hidden, --heads and --ffn; missing " +
             llvm::join(missing, ", ");
    model.layers = 1;
  } else if (const ModelPreset *preset = lookupModelPreset(modelName)) {
    model = preset->shape;
  } else {
    return "unknown --model '" + modelName + "'; valid: " +
           joinNames(getModelPresets(),
                     [](const ModelPreset &p) { return p.name; }) +
           ", custom";
  }
  if (hidden.getNumOccurrences())
    if (std::optional<std::string> error = readInteger(hidden, model.hidden))
      return error;
  // Without --kv-heads, a model without grouped-query attention (custom, or
  // a preset whose KV heads equal its heads) keeps one KV head per head when
  // --heads changes; a GQA preset keeps its KV heads.
  bool multiHead = custom || model.kvHeads == model.heads;
  if (heads.getNumOccurrences())
    if (std::optional<std::string> error = readInteger(heads, model.heads))
      return error;
  if (kvHeads.getNumOccurrences()) {
    if (std::optional<std::string> error = readInteger(kvHeads, model.kvHeads))
      return error;
  } else if (multiHead) {
    model.kvHeads = model.heads;
  }
  if (ffn.getNumOccurrences())
    if (std::optional<std::string> error = readInteger(ffn, model.ffn))
      return error;
  if (layers.getNumOccurrences())
    if (std::optional<std::string> error = readInteger(layers, model.layers))
      return error;
  if (mlpName.getNumOccurrences()) {
    if (mlpName == "gelu")
      model.mlp = MlpKind::gelu;
    else if (mlpName == "swiglu")
      model.mlp = MlpKind::swiglu;
    else
      return "unknown --mlp '" + mlpName + "'; valid: gelu, swiglu";
  }
  if (normName.getNumOccurrences()) {
    if (normName == "layer")
      model.norm = tandem::NormKind::layer;
    else if (normName == "rms")
      model.norm = tandem::NormKind::rms;
    else
      return "unknown --norm '" + normName + "'; valid: layer, rms";
  }

  for (auto [option, field] : {std::pair{&seq, &config.seq},
                               {&sequences, &config.sequences},
                               {&segments, &config.segments},
                               {&microBatches, &config.microBatches},
                               {&tp, &config.tp},
                               {&dp, &config.dp}})
    if (std::optional<std::string> error = readInteger(*option, *field))
      return error;

  // FP8 training keeps BF16 master weights and per-tensor scales, which the
  // generator does not model: only one-type steps are offered.
  if (dtypeName == "bf16")
    config.dtype = DataType::bf16;
  else if (dtypeName == "f16")
    config.dtype = DataType::f16;
  else
    return "unsupported --dtype '" + dtypeName + "'; valid: bf16, f16";

  // A target needs both a #tandem.target preset (compute, HBM) and network
  // figures for its groups.
  const NodeNetwork *network = lookupNodeNetwork(targetName);
  if (!network ||
      !llvm::is_contained(tandem::TargetAttr::getPresetNames(), targetName))
    return "unknown --target '" + targetName + "'; valid: " +
           joinNames(getNodeNetworks(),
                     [](const NodeNetwork &n) { return n.target; });
  config.target = targetName;

  if (!topologyName.getNumOccurrences())
    config.topology = network->nativeTopology;
  else if (topologyName == "switch")
    config.topology = tandem::Topology::switch_;
  else if (topologyName == "full-mesh")
    config.topology = tandem::Topology::full_mesh;
  else if (topologyName == "ring")
    config.topology = tandem::Topology::ring;
  else
    return "unknown --topology '" + topologyName +
           "'; valid: switch, full-mesh, ring";
  return std::nullopt;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(genCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Writes the tandem IR of one training step (forward and backward) of "
      "a\ntransformer stack under Megatron tensor parallelism with sequence\n"
      "parallelism, with optional data parallelism and gradient "
      "accumulation.\n");

  StepConfig config;
  if (std::optional<std::string> error = readOptions(config))
    return fail(*error);
  if (llvm::Error error = validateStepConfig(config))
    return fail(llvm::toString(std::move(error)));

  MLIRContext context;
  // The generator must only ever produce valid IR: a diagnostic is a bug in
  // tandem-gen. Print each with its notes (the verifier's "see current
  // operation" note shows the op) so that the bug can be found.
  ScopedDiagnosticHandler diagnostics(&context, [](Diagnostic &diag) {
    DiagnosticSeverity kind = diag.getSeverity();
    StringRef severity = kind == DiagnosticSeverity::Error     ? "error"
                         : kind == DiagnosticSeverity::Warning ? "warning"
                                                               : "remark";
    llvm::errs() << diag.getLocation() << ": " << severity << ": " << diag
                 << "\n";
    for (Diagnostic &note : diag.getNotes())
      llvm::errs() << note.getLocation() << ": note: " << note << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = buildTrainStep(context, config);
  if (failed(verify(*module)))
    return fail("the generated IR does not verify; this is a tandem-gen bug");

  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output)
    return fail(errorMessage);
  OpPrintingFlags flags;
  flags.printNameLocAsPrefix(printNames);
  if (printLocations)
    flags.enableDebugInfo();
  module->print(output->os(), flags);
  output->os() << "\n";
  output->keep();
  return 0;
}
