//===- Contention.cpp - Slowdowns of kernels overlapping a collective -----===//

#include "tandem/Engine/Contention.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

using namespace mlir::tandem;

ContentionTable ContentionTable::defaults() {
  // shared/data/h200-probe.md (H200, 2026-12-02): cuBLASLt bf16 8192^3 GEMM
  // next to a copy kernel holding C SMs. gemmSlowdown is the "smcut" column
  // (GEMM sized for the free SMs), i.e. interference without the wave effect;
  // the 0.98 measured at C=8 is noise and is taken as 1.00. commSlowdown is
  // the mean of the two copy-slowdown columns. No bandwidth-bound kernel was
  // measured next to a collective: memorySlowdown assumes the copy kernel's
  // own slowdown (both sides stream HBM).
  ContentionTable t;
  t.origin = "built-in (shared/data/h200-probe.md, H200, 2026-12-02)";
  t.table = {{8, 1.00, 1.13, 1.13},
             {16, 1.11, 1.135, 1.135},
             {24, 1.12, 1.13, 1.13},
             {32, 1.10, 1.145, 1.145}};
  return t;
}

ContentionPoint ContentionTable::defaultCopyEnginePoint() {
  // Assumed until tandem-calibrate's copy_engine_pairs measure it: a
  // copy-engine collective writes what arrives over NVLink (about 0.38 TB/s
  // on an H100/H200, docs/cost-model.md) into HBM, about a tenth of the
  // ~3.8 TB/s a bandwidth-bound kernel streams, and holds no SMs. So a
  // GEMM keeps every SM (1.00), a bandwidth-bound kernel loses about a
  // tenth of HBM (1.10), and the copies lose a little to the kernel's
  // traffic (1.05).
  return ContentionPoint{0, 1.00, 1.10, 1.05};
}

void ContentionTable::setCopyEnginePoint(ContentionPoint point,
                                         llvm::StringRef source) {
  point.commSms = 0;
  copyEngine = point;
  copyEngineOrigin = source.str();
}

ContentionTable ContentionTable::fromPoints(std::vector<ContentionPoint> points,
                                            llvm::StringRef origin) {
  assert(
      llvm::is_sorted(points,
                      [](const ContentionPoint &a, const ContentionPoint &b) {
                        return a.commSms < b.commSms;
                      }) &&
      "contention points must be sorted by comm_sms");
  ContentionTable t;
  t.table = std::move(points);
  t.origin = origin.str();
  return t;
}

ContentionPoint ContentionTable::lookup(int64_t commSms) const {
  if (table.empty())
    return ContentionPoint{commSms, 1.0, 1.0, 1.0};
  if (commSms <= table.front().commSms)
    return table.front();
  if (commSms >= table.back().commSms)
    return table.back();
  for (size_t i = 1; i < table.size(); ++i) {
    const ContentionPoint &hi = table[i];
    if (commSms > hi.commSms)
      continue;
    const ContentionPoint &lo = table[i - 1];
    double f = double(commSms - lo.commSms) / double(hi.commSms - lo.commSms);
    auto mix = [&](double a, double b) { return a + f * (b - a); };
    return ContentionPoint{commSms, mix(lo.gemmSlowdown, hi.gemmSlowdown),
                           mix(lo.memorySlowdown, hi.memorySlowdown),
                           mix(lo.commSlowdown, hi.commSlowdown)};
  }
  return table.back();
}
