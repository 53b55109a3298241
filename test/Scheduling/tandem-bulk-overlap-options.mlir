// RUN: tandem-opt %s --tandem-bulk-overlap=max-in-flight=0 -verify-diagnostics -o /dev/null

// expected-error @+1 {{max-in-flight must be at least 1, got 0}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
