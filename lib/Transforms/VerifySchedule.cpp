//===- VerifySchedule.cpp - The tandem-verify-schedule pass ---------------===//
//
// Thin driver over verifySchedule(): verifies every function with a body,
// against the function of the same name in the `reference` module if given.
//
//===----------------------------------------------------------------------===//

#include "tandem/Scheduling/VerifySchedule.h"
#include "tandem/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMVERIFYSCHEDULE
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

namespace {
struct VerifySchedulePass
    : public mlir::tandem::impl::TandemVerifyScheduleBase<VerifySchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OwningOpRef<ModuleOp> referenceModule;
    if (!referencePath.empty()) {
      std::string error;
      std::unique_ptr<llvm::MemoryBuffer> file =
          openInputFile(referencePath, &error);
      if (!file) {
        module.emitError() << "cannot read the reference '" << referencePath
                           << "': " << error;
        return signalPassFailure();
      }
      llvm::SourceMgr sourceMgr;
      sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
      referenceModule =
          parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&getContext()));
      if (!referenceModule) {
        module.emitError() << "cannot parse the reference '" << referencePath
                           << "'";
        return signalPassFailure();
      }
    }

    VerifyScheduleOptions options;
    options.remarks = remarks;
    options.allowReorderedCollectives = allowReorderedCollectives;
    bool ok = true;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      func::FuncOp reference;
      if (referenceModule) {
        reference =
            referenceModule->lookupSymbol<func::FuncOp>(func.getSymName());
        if (!reference) {
          func.emitError() << "the reference '" << referencePath
                           << "' has no function '@" << func.getSymName()
                           << "'";
          ok = false;
          continue;
        }
      }
      if (failed(verifySchedule(func, reference, options)))
        ok = false;
      else
        ++numVerified;
    }
    if (!ok)
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
