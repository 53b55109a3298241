// The unscheduled input that tandem-verify-schedule.mlir and
// tandem-verify-schedule-reference-invalid.mlir compare their schedules
// with (reference=<this file>).
// lit does not run it: test/lit.cfg.py excludes Inputs/.
//
// (Line numbers matter: the tests check notes at lines of this file.)

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  tandem.group @dp size(2) switch links(18 x 25.0 GBps, 2.0 us)

  // Column-parallel GEMM behind an all-gather, row-parallel GEMM in front of
  // a reduce-scatter, and an independent weight-gradient GEMM.
  func.func @layer(%x: tensor<256x1024xbf16>, %w: tensor<1024xbf16>,
                   %a: tensor<1024x512xbf16>, %b: tensor<512x1024xbf16>,
                   %xs: tensor<2048x1024xbf16>, %dy: tensor<2048x512xbf16>)
      -> (tensor<256x1024xbf16>, tensor<1024x512xbf16>) {
    %n = tandem.norm layer %x, %w : tensor<256x1024xbf16>, tensor<1024xbf16>
    %g = tandem.all_gather %n on @tp dim 0 : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    %h = tandem.matmul fprop %g, %a : tensor<2048x1024xbf16>, tensor<1024x512xbf16> -> tensor<2048x512xbf16>
    %y = tandem.matmul fprop %h, %b : tensor<2048x512xbf16>, tensor<512x1024xbf16> -> tensor<2048x1024xbf16>
    %r = tandem.reduce_scatter %y on @tp dim 0 : tensor<2048x1024xbf16> -> tensor<256x1024xbf16>
    %dw = tandem.matmul wgrad %xs, %dy transpose_lhs : tensor<2048x1024xbf16>, tensor<2048x512xbf16> -> tensor<1024x512xbf16>
    return %r, %dw : tensor<256x1024xbf16>, tensor<1024x512xbf16>
  }

  // Two gradients, scaled and all-reduced on @dp.
  func.func @grads(%g0: tensor<1024x512xbf16>, %g1: tensor<512x1024xbf16>)
      -> (tensor<1024x512xbf16>, tensor<512x1024xbf16>) {
    %c0 = tandem.elementwise copy %g0 : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    %s0 = tandem.all_reduce %c0 on @dp : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    %c1 = tandem.elementwise copy %g1 : tensor<512x1024xbf16> -> tensor<512x1024xbf16>
    %s1 = tandem.all_reduce %c1 on @dp : tensor<512x1024xbf16> -> tensor<512x1024xbf16>
    return %s0, %s1 : tensor<1024x512xbf16>, tensor<512x1024xbf16>
  }
}
