// RUN: tandem-opt %s --tandem-overlap=strategy=pipeline -verify-diagnostics -o /dev/null
// RUN: tandem-opt %s --tandem-overlap=strategy=te-preset -verify-diagnostics -o /dev/null

// The chunked pipelines these strategies need are missing: an error, not a
// silent fallback to another strategy.
// expected-error @+1 {{needs chunked AG->GEMM / GEMM->RS pipelines (tandem-pipeline-collective-matmul), which are not implemented yet; use auto, none, bulk or reschedule}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
