//===- TandemBounds.h - Bounds on sizes, counts and rates -------*- C++ -*-===//
//
// The bounds the dialect's verifiers enforce on every quantity that sizes an
// allocation or a loop, or that becomes a duration or a rate: tensor bytes,
// chunk and group counts, link figures, declared work. They make every size
// computation fit in int64_t (each product is also checked) and every time
// the cost model derives from verified IR positive and finite. The op and
// attribute descriptions in the .td files state the same numbers; the
// calibration file's bounds (docs/cost-model.md) reuse the rate bounds.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_TANDEM_TANDEMBOUNDS_H
#define TANDEM_DIALECT_TANDEM_TANDEMBOUNDS_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/MathExtras.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace tandem {

/// Largest tensor, in bytes (2^48 = 256 TiB): far above any GPU's memory,
/// and small enough that sums and small multiples of tensor sizes fit in
/// int64_t and are exact in a double.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// a * b, or std::nullopt when it overflows int64_t. The compiler's
/// overflow builtin (llvm::MulOverflow), not llvm::checkedMul, which goes
/// through APInt: this runs for every tensor type the verifier sees.
inline std::optional<int64_t> checkedProduct(int64_t a, int64_t b) {
  int64_t result;
  if (llvm::MulOverflow(a, b, result))
    return std::nullopt;
  return result;
}
/// a + b, or std::nullopt when it overflows int64_t.
inline std::optional<int64_t> checkedSum(int64_t a, int64_t b) {
  int64_t result;
  if (llvm::AddOverflow(a, b, result))
    return std::nullopt;
  return result;
}
/// Most chunks a tandem.slice splits a tensor into (a pipeline's depth).
/// TandemOps.td states the same number (IntMaxValue) on `chunks`.
constexpr int64_t kMaxChunks = 1024;
/// Largest weight of one tandem.slice block, and largest sum of a slice's
/// weights (its units per group).
constexpr int64_t kMaxChunkWeight = 1024;
constexpr int64_t kMaxWeightSum = int64_t(1) << 20;
/// Most ranks in a process group, and most links per GPU; also the largest
/// `interleave` of tandem.slice / tandem.concat (it is a group size).
/// TandemOps.td states the same number on `size`, `links_per_gpu` and
/// `interleave`.
constexpr int64_t kMaxGroupSize = int64_t(1) << 20;

/// Link figures of a tandem.group (intra- and inter-node): bandwidth per
/// link in [kMinBandwidthGbps, kMaxBandwidthGbps] GB/s, latency in
/// [0, kMaxLatencyUs] us. Outside them a transfer time would underflow to 0
/// or overflow to infinity.
constexpr double kMinBandwidthGbps = 1e-3;
constexpr double kMaxBandwidthGbps = 1e7;
constexpr double kMaxLatencyUs = 1e6;

/// Target figures (#tandem.target) and calibrated values: peaks in
/// [kMinRate, kMaxRate] TFLOP/s or GB/s, efficiencies in
/// [kMinEfficiency, 1], overheads in [0, kMaxLatencyUs] us, GEMM tiles in
/// [1, kMaxGemmTile].
constexpr double kMinRate = 1e-3;
constexpr double kMaxRate = 1e7;
constexpr double kMinEfficiency = 1e-3;
constexpr int64_t kMaxGemmTile = 4096;
/// Largest slowdown factor of a contention table row.
constexpr double kMaxSlowdown = 1e3;

/// Largest FLOP count a tandem.opaque may declare (10^24: a thousand
/// exaflop-seconds, a whole training run).
constexpr double kMaxDeclaredFlops = 1e24;

/// Bytes of a tensor of `shape` and `elementType` (each element rounded up
/// to whole bytes), or std::nullopt if the shape is dynamic or negative,
/// the element type has no bit width, or the size exceeds kMaxTensorBytes.
/// Every product is checked, so no shape can make it overflow.
std::optional<int64_t> getBoundedTensorBytes(llvm::ArrayRef<int64_t> shape,
                                             Type elementType);

/// Whether `type` is a ranked tensor whose getBoundedTensorBytes is set (the
/// predicate of Tandem_AnyTensor and of !tandem.future's value type).
bool isBoundedTensorType(Type type);

} // namespace tandem
} // namespace mlir

#endif // TANDEM_DIALECT_TANDEM_TANDEMBOUNDS_H
