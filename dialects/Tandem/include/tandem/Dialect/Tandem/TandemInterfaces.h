//===- TandemInterfaces.h - Compute and collective interfaces ----*- C++ -*-===//
//
// Interfaces through which ops describe their work to the cost model.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_TANDEM_TANDEMINTERFACES_H
#define TANDEM_DIALECT_TANDEM_TANDEMINTERFACES_H

#include "tandem/Dialect/Tandem/TandemDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace tandem {

/// A (batched) GEMM problem: `batch` independent `M x N x K` products.
struct GemmShape {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
};

} // namespace tandem
} // namespace mlir

#include "tandem/Dialect/Tandem/TandemInterfaces.h.inc"

#endif // TANDEM_DIALECT_TANDEM_TANDEMINTERFACES_H
