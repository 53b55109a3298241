// Every pass that takes a memory budget refuses a negative one with the same
// error (lib/Transforms/PassOptions.cpp).
// RUN: tandem-opt %s --tandem-bulk-overlap=memory-budget=-5 -verify-diagnostics -o /dev/null
// RUN: tandem-opt %s --tandem-reschedule-wgrad=memory-budget=-5 -verify-diagnostics -o /dev/null
// RUN: tandem-opt %s --tandem-split-batch=memory-budget=-5 -verify-diagnostics -o /dev/null
// RUN: tandem-opt %s --tandem-copy-engines=memory-budget=-5 -verify-diagnostics -o /dev/null
// RUN: tandem-opt %s --tandem-overlap=memory-budget=-5 -verify-diagnostics -o /dev/null

// expected-error @+1 {{memory-budget must be 0 (the target's HBM) or positive, got -5}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
