//===- Overlap.h - Which kernels ran together, and what it cost -*- C++ -*-===//
//
// Interval arithmetic shared by the diagnosis of a Tandem step and the
// reading of PyTorch profiler traces: how long a kernel ran beside kernels
// of other streams, the median duration of a kind of kernel when it ran
// alone, the overlapped pairs, and whether a pair took longer together
// than it would have serially. Plain C++17.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIAGNOSIS_OVERLAP_H
#define TANDEM_DIAGNOSIS_OVERLAP_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tandem {
namespace diagnosis {

/// One kernel in time. Kernels overlap only within one `device` and on
/// different streams; those with `counts` false (waits, zero-length
/// markers) overlap nothing.
struct Span {
  double startUs = 0, endUs = 0;
  int64_t stream = 0;
  int64_t device = 0;
  bool counts = true;
};

/// Sorted, disjoint intervals.
using IntervalSet = std::vector<std::pair<double, double>>;

/// The union of `intervals` (any order, empty ones dropped).
IntervalSet unite(IntervalSet intervals);

/// How much of [start, end) lies inside `set`.
double coveredUs(const IntervalSet &set, double startUs, double endUs);

/// Two kernels that ran at the same time, and for how long.
struct OverlapPair {
  size_t a = 0, b = 0; ///< a < b, indices into the spans.
  double overlapUs = 0;
};

/// Every pair of counting spans on different streams of one device that
/// overlap by more than zero, ordered by (a, b).
std::vector<OverlapPair> overlappingPairs(const std::vector<Span> &spans);

/// Per span, the time it ran beside counting spans of other streams of its
/// device (at most its duration).
std::vector<double> overlappedUs(const std::vector<Span> &spans);

/// The isolated median of each span's kind: the median duration of the
/// spans with the same `keys` entry that overlapped other streams for at
/// most `isolatedFraction` of their duration. Negative where no span of
/// the kind ran isolated; `samples` (if given) receives the count.
std::vector<double> isolatedMedians(const std::vector<Span> &spans,
                                    const std::vector<std::string> &keys,
                                    double isolatedFraction,
                                    std::vector<int64_t> *samples = nullptr);

/// What running a pair together cost against running it serially. Each
/// side's excess over its time alone is shared among its overlapping
/// partners in proportion to the overlap, so for a pair that overlaps
/// nothing else `combinedUs` is the union of the two intervals and
/// `serialUs` the sum of the two alone times.
struct PairCost {
  double combinedUs = 0, serialUs = 0;
  /// combined - serial: positive when the overlap made the pair slower
  /// than running it serially.
  double lostUs() const { return combinedUs - serialUs; }
};

/// The cost of each pair in `pairs`; `aloneUs[i]` is span i's time alone
/// (a negative value: unknown, the span's own duration is used, so it has
/// no excess).
std::vector<PairCost> pairCosts(const std::vector<Span> &spans,
                                const std::vector<OverlapPair> &pairs,
                                const std::vector<double> &aloneUs);

} // namespace diagnosis
} // namespace tandem

#endif // TANDEM_DIAGNOSIS_OVERLAP_H
