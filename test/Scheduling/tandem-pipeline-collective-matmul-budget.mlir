// RUN: tandem-opt %s --tandem-overlap="strategy=pipeline memory-budget=1" --mlir-print-op-on-diagnostic=false --tandem-test-liveness -verify-diagnostics=only-expected -o /dev/null

// A budget below the input's own peak: no phase may raise the peak, so the
// pipelines that would (the reassembled gathered tensor lives beside the
// chunks) are undone and the peak stays the input's (144703488 bytes;
// 150994944 with the P2P pipeline).
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-remark @+1 {{peak memory 144703488 bytes}}
  func.func @f(%x: tensor<256x12288xbf16>, %w: tensor<1536x12288xbf16>, %act: tensor<2048x1536xbf16>) -> (tensor<1536x12288xbf16>, tensor<2048x1536xbf16>) {
    %g = tandem.all_gather %x on @tp dim 0 : tensor<256x12288xbf16> -> tensor<2048x12288xbf16>
    %y = tandem.matmul dgrad %g, %w transpose_rhs {layer = "l0.proj"} : tensor<2048x12288xbf16>, tensor<1536x12288xbf16> -> tensor<2048x1536xbf16>
    %dw = tandem.matmul wgrad %act, %g transpose_lhs {layer = "l0.proj"} : tensor<2048x1536xbf16>, tensor<2048x12288xbf16> -> tensor<1536x12288xbf16>
    return %dw, %y : tensor<1536x12288xbf16>, tensor<2048x1536xbf16>
  }
}
