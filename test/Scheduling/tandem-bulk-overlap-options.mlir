// RUN: tandem-opt %s --tandem-bulk-overlap=max-in-flight=-1 -verify-diagnostics -o /dev/null

// expected-error @+1 {{max-in-flight must be 0 (no limit) or positive, got -1}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
