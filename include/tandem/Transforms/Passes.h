//===- Passes.h - Tandem passes ----------------------------------*- C++ -*-===//

#ifndef TANDEM_TRANSFORMS_PASSES_H
#define TANDEM_TRANSFORMS_PASSES_H

#include "tandem/Dialect/Tandem/TandemOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace tandem {

#define GEN_PASS_DECL
#include "tandem/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tandem/Transforms/Passes.h.inc"

} // namespace tandem
} // namespace mlir

#endif // TANDEM_TRANSFORMS_PASSES_H
