//===- FuzzEntries.cpp - What each fuzz target runs on one input ----------===//

#include "FuzzEntries.h"

#include "tandem/Analysis/CostModel.h"
#include "tandem/Dialect/Tandem/TandemOps.h"
#include "tandem/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <mutex>
#include <string>

using namespace mlir;
using namespace mlir::tandem;

bool fuzz::parseTarget(llvm::StringRef name, Target &target) {
  std::optional<Target> t = llvm::StringSwitch<std::optional<Target>>(name)
                                .Case("ir-parse", Target::IrParse)
                                .Case("simulate", Target::Simulate)
                                .Case("overlap", Target::Overlap)
                                .Case("calibration", Target::Calibration)
                                .Default(std::nullopt);
  if (t)
    target = *t;
  return t.has_value();
}

/// Parses and verifies `text` in `context`; null if either fails.
static OwningOpRef<ModuleOp> parseModule(MLIRContext &context,
                                         llvm::StringRef text) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz-input"), llvm::SMLoc());
  // parseSourceFile verifies what it parsed.
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

/// Runs `pipeline` (textual, on the module) on `text`.
static void runPipeline(llvm::StringRef text, llvm::StringRef pipeline) {
  DialectRegistry registry;
  registry.insert<TandemDialect, func::FuncDialect>();
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  // Every diagnostic is a correct answer: swallow them.
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module = parseModule(context, text);
  if (!module || pipeline.empty())
    return;
  PassManager pm(&context);
  if (failed(parsePassPipeline(pipeline, pm)))
    llvm::report_fatal_error("tandem-fuzz: bad pipeline");
  (void)pm.run(*module);
}

int fuzz::runOne(Target target, llvm::ArrayRef<uint8_t> input) {
  static std::once_flag registered;
  std::call_once(registered, [] { registerTandemPasses(); });
  llvm::StringRef text(reinterpret_cast<const char *>(input.data()),
                       input.size());
  switch (target) {
  case Target::IrParse:
    if (text.size() <= kMaxIrBytes)
      runPipeline(text, "");
    break;
  case Target::Simulate:
    if (text.size() <= kMaxIrBytes)
      runPipeline(text, "builtin.module(tandem-simulate)");
    break;
  case Target::Overlap:
    if (text.size() <= kMaxOverlapBytes)
      runPipeline(text, "builtin.module(tandem-overlap{strategy=auto "
                        "copy-engines=true})");
    break;
  case Target::Calibration: {
    if (text.size() > kMaxCalibrationBytes)
      break;
    std::string error;
    (void)Calibration::parse(text, "fuzz-input", error);
    break;
  }
  }
  return 0;
}
