// SM residency on the GPU: the same GEMM and all-gather, issued GEMM first,
// collective first, GEMM first with an SM target that leaves the
// collective its 24 SMs, and serially. Run by test/benchmarks/sm-residency.sh.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
  func.func @gemm_first(%x: tensor<1024x8192xbf16>, %a: tensor<4096x8192xbf16>, %b: tensor<8192x8192xbf16>) -> (tensor<8192x8192xbf16>, tensor<4096x8192xbf16>) {
    %y = tandem.matmul fprop %a, %b : tensor<4096x8192xbf16>, tensor<8192x8192xbf16> -> tensor<4096x8192xbf16>
    %f = tandem.all_gather_start %x on @tp dim 0 {tandem.comm_sms = 24 : i64} : tensor<1024x8192xbf16> -> !tandem.future<tensor<8192x8192xbf16>>
    %g = tandem.wait %f : !tandem.future<tensor<8192x8192xbf16>>
    return %g, %y : tensor<8192x8192xbf16>, tensor<4096x8192xbf16>
  }
  func.func @collective_first(%x: tensor<1024x8192xbf16>, %a: tensor<4096x8192xbf16>, %b: tensor<8192x8192xbf16>) -> (tensor<8192x8192xbf16>, tensor<4096x8192xbf16>) {
    %f = tandem.all_gather_start %x on @tp dim 0 {tandem.comm_sms = 24 : i64} : tensor<1024x8192xbf16> -> !tandem.future<tensor<8192x8192xbf16>>
    %y = tandem.matmul fprop %a, %b : tensor<4096x8192xbf16>, tensor<8192x8192xbf16> -> tensor<4096x8192xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<8192x8192xbf16>>
    return %g, %y : tensor<8192x8192xbf16>, tensor<4096x8192xbf16>
  }
  func.func @targeted(%x: tensor<1024x8192xbf16>, %a: tensor<4096x8192xbf16>, %b: tensor<8192x8192xbf16>) -> (tensor<8192x8192xbf16>, tensor<4096x8192xbf16>) {
    %y = tandem.matmul fprop %a, %b {tandem.sm_target = 108 : i64} : tensor<4096x8192xbf16>, tensor<8192x8192xbf16> -> tensor<4096x8192xbf16>
    %f = tandem.all_gather_start %x on @tp dim 0 {tandem.comm_sms = 24 : i64} : tensor<1024x8192xbf16> -> !tandem.future<tensor<8192x8192xbf16>>
    %g = tandem.wait %f : !tandem.future<tensor<8192x8192xbf16>>
    return %g, %y : tensor<8192x8192xbf16>, tensor<4096x8192xbf16>
  }
  func.func @serial(%x: tensor<1024x8192xbf16>, %a: tensor<4096x8192xbf16>, %b: tensor<8192x8192xbf16>) -> (tensor<8192x8192xbf16>, tensor<4096x8192xbf16>) {
    %y = tandem.matmul fprop %a, %b : tensor<4096x8192xbf16>, tensor<8192x8192xbf16> -> tensor<4096x8192xbf16>
    %g = tandem.all_gather %x on @tp dim 0 {tandem.comm_sms = 24 : i64} : tensor<1024x8192xbf16> -> tensor<8192x8192xbf16>
    return %g, %y : tensor<8192x8192xbf16>, tensor<4096x8192xbf16>
  }
}
