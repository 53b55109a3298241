//===- AsyncCollectives.cpp - The tandem-async-collectives pass -----------===//

#include "tandem/Scheduling/Overlap.h"
#include "tandem/Transforms/Passes.h"

namespace mlir {
namespace tandem {
#define GEN_PASS_DEF_TANDEMASYNCCOLLECTIVES
#include "tandem/Transforms/Passes.h.inc"
} // namespace tandem
} // namespace mlir

using namespace mlir;
using namespace mlir::tandem;

namespace {
struct AsyncCollectivesPass
    : public mlir::tandem::impl::TandemAsyncCollectivesBase<
          AsyncCollectivesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      numConverted += convertToAsyncCollectives(func);
  }
};
} // namespace
