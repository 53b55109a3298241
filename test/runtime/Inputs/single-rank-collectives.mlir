// Every NCCL collective kind the runtime issues, on a one-rank group, so
// that the real NCCL code path runs on a single GPU.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @g size(1) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
  func.func @step(%x: tensor<1024x2048xbf16>, %w: tensor<2048x4096xbf16>, %w2: tensor<4096x2048xbf16>) -> (tensor<1024x2048xbf16>, tensor<1024x4096xbf16>) {
    %a = tandem.all_gather %x on @g dim 0 : tensor<1024x2048xbf16> -> tensor<1024x2048xbf16>
    %y = tandem.matmul fprop %a, %w {layer = "l0.fc1"} : tensor<1024x2048xbf16>, tensor<2048x4096xbf16> -> tensor<1024x4096xbf16>
    %g = tandem.elementwise gelu %y : tensor<1024x4096xbf16> -> tensor<1024x4096xbf16>
    %z = tandem.matmul fprop %g, %w2 {layer = "l0.fc2"} : tensor<1024x4096xbf16>, tensor<4096x2048xbf16> -> tensor<1024x2048xbf16>
    %r = tandem.reduce_scatter %z on @g dim 0 : tensor<1024x2048xbf16> -> tensor<1024x2048xbf16>
    %s = tandem.all_reduce %r on @g : tensor<1024x2048xbf16> -> tensor<1024x2048xbf16>
    %t = tandem.all_to_all %s on @g split 0 concat 0 : tensor<1024x2048xbf16> -> tensor<1024x2048xbf16>
    %dw = tandem.matmul wgrad %x, %y transpose_lhs {layer = "l0.fc1"} : tensor<1024x2048xbf16>, tensor<1024x4096xbf16> -> tensor<2048x4096xbf16>
    return %t, %g : tensor<1024x2048xbf16>, tensor<1024x4096xbf16>
  }
}
