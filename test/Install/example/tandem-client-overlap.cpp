//===- tandem-client-overlap.cpp - Tandem's passes from another compiler --===//
//
// What a compiler that links the installed Tandem package does with it: it
// builds a training step's IR in memory with OpBuilder (a backward step in
// miniature: an all-gather feeding a dgrad and a wgrad, then a second
// all-gather whose result the next dgrad needs at once), runs module passes
// on it through its own PassManager (by default `tandem-overlap`; the first
// argument replaces them, in the textual form of the passes inside
// `builtin.module(...)`, e.g. `tandem-overlap{strategy=bulk}`), and
// reports what the pipeline said and did: its remarks, each op's stream and
// CTA budget, whether the result verifies, and the step's span and exposed
// communication before and after as Tandem's simulator predicts them.
//
// Built against the installed package by test/Install/out-of-tree.test.
//
//===----------------------------------------------------------------------===//

#include "tandem/Analysis/Target.h"
#include "tandem/Dialect/Tandem/ScheduleAttributes.h"
#include "tandem/Dialect/Tandem/TandemOps.h"
#include "tandem/Simulator/Simulate.h"
#include "tandem/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace mlir;
using namespace mlir::tandem;

namespace {

/// The step described in the file comment, on an 8-GPU switch group of the
/// h200 preset. Per-rank shapes: the gathered activations are 2048x4096.
OwningOpRef<ModuleOp> buildStep(MLIRContext &context) {
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr(TandemDialect::getTargetAttrName(),
                     TargetAttr::getPreset(&context, "h200"));

  builder.setInsertionPointToEnd(module->getBody());
  GroupOp::create(builder, loc, "tp", /*size=*/8, Topology::switch_,
                  /*links_per_gpu=*/18, llvm::APFloat(25.0), llvm::APFloat(2.0),
                  IntegerAttr(), FloatAttr(), FloatAttr());

  Type bf16 = builder.getBF16Type();
  auto shard = RankedTensorType::get({256, 4096}, bf16);
  auto full = RankedTensorType::get({2048, 4096}, bf16);
  auto weight = RankedTensorType::get({4096, 4096}, bf16);
  auto func = func::FuncOp::create(
      builder, loc, "step",
      builder.getFunctionType({shard, weight, full}, {full, weight, full}));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToEnd(entry);
  Value dy = entry->getArgument(0), w = entry->getArgument(1),
        act = entry->getArgument(2);

  Value g1 = AllGatherOp::create(builder, loc, full, dy, "tp", /*dim=*/0);
  Value d1 = MatmulOp::create(builder, loc, full, g1, w, MatmulRole::dgrad,
                              /*transpose_lhs=*/false, /*transpose_rhs=*/true,
                              StringAttr());
  Value dw = MatmulOp::create(builder, loc, weight, act, g1, MatmulRole::wgrad,
                              /*transpose_lhs=*/true, /*transpose_rhs=*/false,
                              StringAttr());
  Value dx2 =
      OpaqueOp::create(builder, loc, TypeRange{shard}, "next_layer_grad",
                       ValueRange{d1}, llvm::APFloat(0.0),
                       /*declared_bytes=*/4194304, StringAttr())
          ->getResult(0);
  Value g2 = AllGatherOp::create(builder, loc, full, dx2, "tp", /*dim=*/0);
  Value d2 = MatmulOp::create(builder, loc, full, g2, w, MatmulRole::dgrad,
                              /*transpose_lhs=*/false, /*transpose_rhs=*/true,
                              StringAttr());
  func::ReturnOp::create(builder, loc, ValueRange{d1, dw, d2});
  return module;
}

/// The step's predicted span and exposed communication, or nullopt after
/// the simulator emitted its error.
struct Prediction {
  double spanUs, exposedCommUs;
};
std::optional<Prediction> predict(ModuleOp module) {
  FailureOr<CostModel> model = buildCostModel(module);
  if (failed(model))
    return std::nullopt;
  auto func = module.lookupSymbol<func::FuncOp>("step");
  FailureOr<SimulationReport> report = simulateFunction(func, *model);
  if (failed(report))
    return std::nullopt;
  return Prediction{report->spanUs, report->exposedCommUs};
}

void printPrediction(StringRef when, const Prediction &p) {
  llvm::outs() << when << ": span " << llvm::format("%.3f", p.spanUs)
               << " us, exposed communication "
               << llvm::format("%.3f", p.exposedCommUs) << " us\n";
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 2) {
    llvm::errs() << "usage: " << argv[0] << " [MODULE-PASSES]\n";
    return 2;
  }
  StringRef pipeline = argc == 2 ? StringRef(argv[1]) : "tandem-overlap";

  // The passes must be registered for the pipeline parser to know them; the
  // dialects are loaded before building IR.
  registerTandemPasses();
  DialectRegistry registry;
  registry.insert<TandemDialect, func::FuncDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  // Every diagnostic (the passes explain their decisions in remarks) goes to
  // stdout, one line each, so that the test sees them in order.
  bool sawError = false;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    sawError |= diag.getSeverity() == DiagnosticSeverity::Error;
    switch (diag.getSeverity()) {
    case DiagnosticSeverity::Error:
      llvm::outs() << "error: ";
      break;
    case DiagnosticSeverity::Warning:
      llvm::outs() << "warning: ";
      break;
    case DiagnosticSeverity::Remark:
      llvm::outs() << "remark: ";
      break;
    case DiagnosticSeverity::Note:
      llvm::outs() << "note: ";
      break;
    }
    llvm::outs() << diag.str() << "\n";
    return success();
  });

  OwningOpRef<ModuleOp> module = buildStep(context);
  if (failed(verify(*module))) {
    llvm::outs() << "error: the step as built does not verify\n";
    return 1;
  }
  llvm::outs() << "built: verified\n";
  std::optional<Prediction> before = predict(*module);
  if (!before)
    return 1;
  printPrediction("before", *before);

  // A pass manager on the module; the text adds passes to it.
  auto pm = PassManager::on<ModuleOp>(&context);
  std::string parseError;
  llvm::raw_string_ostream parseErrors(parseError);
  if (failed(parsePassPipeline(pipeline, pm, parseErrors))) {
    llvm::outs() << "error: cannot parse the module passes '" << pipeline
                 << "': " << parseError << "\n";
    return 1;
  }
  llvm::outs() << "pipeline: ";
  pm.printAsTextualPipeline(llvm::outs());
  llvm::outs() << "\n";
  if (failed(pm.run(*module)) || sawError) {
    llvm::outs() << "error: the pipeline failed\n";
    return 1;
  }

  // The pass manager verified the result after each pass; say so again
  // from here, as a compiler that goes on with the IR would.
  if (failed(verify(*module))) {
    llvm::outs() << "error: the scheduled step does not verify\n";
    return 1;
  }
  llvm::outs() << "scheduled: verified\n";
  auto func = module->lookupSymbol<func::FuncOp>("step");
  if (auto streams = func->getAttrOfType<IntegerAttr>(kNumStreamsAttrName))
    llvm::outs() << "streams: " << streams.getInt() << "\n";
  for (Operation &op : func.getBody().front()) {
    llvm::outs() << "op " << op.getName().getStringRef();
    if (auto matmul = dyn_cast<MatmulOp>(op))
      llvm::outs() << " " << stringifyMatmulRole(matmul.getRole());
    if (std::optional<int64_t> stream = getStream(&op))
      llvm::outs() << " stream " << *stream;
    if (std::optional<int64_t> ctas = getCommSms(&op))
      llvm::outs() << " comm_sms " << *ctas;
    llvm::outs() << "\n";
  }

  std::optional<Prediction> after = predict(*module);
  if (!after)
    return 1;
  printPrediction("after", *after);
  llvm::outs() << "span "
               << (after->spanUs < before->spanUs ? "shorter" : "not shorter")
               << ", exposed communication "
               << (after->exposedCommUs < before->exposedCommUs ? "smaller"
                                                                : "not smaller")
               << "\n";
  return 0;
}
