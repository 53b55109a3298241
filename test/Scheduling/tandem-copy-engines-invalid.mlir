// RUN: tandem-opt %s --tandem-copy-engines=mode=fast -verify-diagnostics
// RUN: not tandem-opt %s --tandem-copy-engines=memory-budget=-1 2>&1 | FileCheck %s --check-prefix=BUDGET

// BUDGET: error: memory-budget must not be negative

// expected-error @below {{unknown mode 'fast'; expected cost or all}}
module {
}
