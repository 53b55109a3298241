// RUN: tandem-opt %s --tandem-split-batch=parts=-1 -verify-diagnostics -o /dev/null
// RUN: not tandem-opt %s --tandem-split-batch=parts=1025 -o /dev/null 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: not tandem-opt %s --tandem-split-batch="weights=3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: not tandem-opt %s --tandem-split-batch="weights=1,0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not tandem-opt %s --tandem-split-batch="weights=1,2000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=HEAVY
// RUN: not tandem-opt %s --tandem-split-batch="parts=4 weights=1,3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DISAGREE

// LARGE: error: parts must be 0 (choose), 1 (no split) or in [2, 1024], got 1025
// ONE: error: weights needs 2 to 1024 parts, got 1
// ZERO: error: weight 1 (0) is outside [1, 1024]
// HEAVY: error: weight 1 (2000) is outside [1, 1024]
// DISAGREE: error: parts=4 disagrees with 2 weights

// expected-error @+1 {{parts must be 0 (choose), 1 (no split) or in [2, 1024], got -1}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
