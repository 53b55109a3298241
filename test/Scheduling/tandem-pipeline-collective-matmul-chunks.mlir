// RUN: tandem-opt %s --tandem-pipeline-collective-matmul=chunks=1 -verify-diagnostics -o /dev/null
// A chunk count above the dialect's bound on tandem.slice (1024) is refused
// before the pass builds that many ops.
// RUN: sed 's/got 1}}/got 1048576}}/' %s | tandem-opt --tandem-pipeline-collective-matmul=chunks=1048576 -verify-diagnostics -o /dev/null

// expected-error @+1 {{chunks must be 0 (choose) or in [2, 1024], got 1}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
