//===- TandemBounds.cpp - Checked tensor sizes ---------------------------===//

#include "tandem/Dialect/Tandem/TandemBounds.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::tandem;

std::optional<int64_t>
mlir::tandem::getBoundedTensorBytes(llvm::ArrayRef<int64_t> shape,
                                    Type elementType) {
  if (!elementType || !elementType.isIntOrFloat())
    return std::nullopt;
  int64_t elementBytes = (int64_t(elementType.getIntOrFloatBitWidth()) + 7) / 8;
  std::optional<int64_t> bytes = elementBytes;
  for (int64_t dim : shape) {
    // Negative covers ShapedType::kDynamic. A dimension above the bound is
    // refused even beside a 0: code that multiplies one dimension by a count
    // must not overflow either.
    if (dim < 0 || dim > kMaxTensorBytes)
      return std::nullopt;
    bytes = checkedProduct(*bytes, dim);
    if (!bytes)
      return std::nullopt;
    // Stop as soon as the bound is passed: a later 0 must not turn an
    // overflowing product into an accepted one.
    if (*bytes > kMaxTensorBytes)
      return std::nullopt;
  }
  return bytes;
}

bool mlir::tandem::isBoundedTensorType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         getBoundedTensorBytes(tensor.getShape(), tensor.getElementType())
             .has_value();
}
