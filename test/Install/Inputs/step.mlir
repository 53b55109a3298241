// The step tandem-client-overlap builds in memory, as text, for
// tandem-client-opt and the installed tandem-opt (out-of-tree.test).
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<256x4096xbf16>, %w: tensor<4096x4096xbf16>, %act: tensor<2048x4096xbf16>) -> (tensor<2048x4096xbf16>, tensor<4096x4096xbf16>, tensor<2048x4096xbf16>) {
    %g1 = tandem.all_gather %dy on @tp dim 0 : tensor<256x4096xbf16> -> tensor<2048x4096xbf16>
    %d1 = tandem.matmul dgrad %g1, %w transpose_rhs : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %act, %g1 transpose_lhs : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %dx2 = tandem.opaque "next_layer_grad"(%d1) flops(0.0) bytes(4194304) : (tensor<2048x4096xbf16>) -> tensor<256x4096xbf16>
    %g2 = tandem.all_gather %dx2 on @tp dim 0 : tensor<256x4096xbf16> -> tensor<2048x4096xbf16>
    %d2 = tandem.matmul dgrad %g2, %w transpose_rhs : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    return %d1, %dw, %d2 : tensor<2048x4096xbf16>, tensor<4096x4096xbf16>, tensor<2048x4096xbf16>
  }
}
