// RUN: tandem-opt %s --tandem-pipeline-collective-matmul=chunks=1 -verify-diagnostics -o /dev/null

// expected-error @+1 {{chunks must be 0 (choose) or at least 2, got 1}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
