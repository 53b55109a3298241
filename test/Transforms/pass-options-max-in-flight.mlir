// Every pass that bounds the collectives in flight refuses a negative bound
// with the same error (lib/Transforms/PassOptions.cpp).
// RUN: tandem-opt %s --tandem-bulk-overlap=max-in-flight=-1 -verify-diagnostics -o /dev/null
// RUN: tandem-opt %s --tandem-split-batch=max-in-flight=-1 -verify-diagnostics -o /dev/null
// RUN: tandem-opt %s --tandem-overlap=max-in-flight=-1 -verify-diagnostics -o /dev/null

// expected-error @+1 {{max-in-flight must be 0 (no limit) or positive, got -1}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
