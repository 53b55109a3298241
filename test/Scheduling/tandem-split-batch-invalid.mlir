// RUN: tandem-opt %s --tandem-split-batch=parts=-1 -verify-diagnostics -o /dev/null
// RUN: not tandem-opt %s --tandem-split-batch=parts=1025 -o /dev/null 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: not tandem-opt %s --tandem-split-batch="memory-budget=-5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET

// LARGE: error: parts must be 0 (choose), 1 (no split) or in [2, 1024], got 1025
// BUDGET: error: memory-budget and max-in-flight must not be negative

// expected-error @+1 {{parts must be 0 (choose), 1 (no split) or in [2, 1024], got -1}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
