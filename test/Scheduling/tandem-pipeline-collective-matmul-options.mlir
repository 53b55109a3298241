// RUN: tandem-opt %s --tandem-pipeline-collective-matmul=method=ring -verify-diagnostics -o /dev/null

// expected-error @+1 {{unknown method 'ring'; expected auto, unsplit, chunked or p2p}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
