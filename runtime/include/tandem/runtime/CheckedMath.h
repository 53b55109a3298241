//===- CheckedMath.h - Overflow-checked int64 arithmetic --------*- C++ -*-===//
//
// Sizes, offsets and counts of a plan come from files anyone can write, so
// every product or sum of them that the validator, the memory planner or the
// executor forms goes through these: they return false instead of wrapping
// (signed overflow is undefined behaviour, and a wrapped size is how an
// out-of-range launch gets past a bounds check). Header-only, no CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_CHECKEDMATH_H
#define TANDEM_RUNTIME_CHECKEDMATH_H

#include <cstdint>
#include <initializer_list>

namespace tandem {
namespace runtime {

/// `out = a + b`; false (and `out` unchanged) when that overflows int64.
inline bool checkedAdd(int64_t a, int64_t b, int64_t &out) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return false;
  out = r;
  return true;
}

/// `out = a * b`; false (and `out` unchanged) when that overflows int64.
inline bool checkedMul(int64_t a, int64_t b, int64_t &out) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return false;
  out = r;
  return true;
}

/// `out = a - b`; false (and `out` unchanged) when that overflows int64.
inline bool checkedSub(int64_t a, int64_t b, int64_t &out) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return false;
  out = r;
  return true;
}

/// Product of all `factors`; false when any partial product overflows.
inline bool checkedProduct(std::initializer_list<int64_t> factors,
                           int64_t &out) {
  int64_t r = 1;
  for (int64_t f : factors)
    if (!checkedMul(r, f, r))
      return false;
  out = r;
  return true;
}

/// Whether the byte range [offset, offset + size) lies inside [0, limit),
/// without forming a sum that could overflow. Negative values never fit.
inline bool rangeInside(int64_t offset, int64_t size, int64_t limit) {
  return offset >= 0 && size >= 0 && limit >= 0 && offset <= limit &&
         size <= limit - offset;
}

} // namespace runtime
} // namespace tandem

#endif // TANDEM_RUNTIME_CHECKEDMATH_H
