// RUN: tandem-opt %s --tandem-reschedule-wgrad=fill-limit=0 -verify-diagnostics -o /dev/null

// expected-error @+1 {{fill-limit must be positive, got 0}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
