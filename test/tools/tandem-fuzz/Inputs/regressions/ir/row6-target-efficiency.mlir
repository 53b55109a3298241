// Issue 13 row 6, the IR's twin of gemm_efficiency 1e-308 in a calibration.
module attributes {tandem.target = #tandem.target<"h200", gemm_efficiency = 1.0e-308>} {
  func.func @f(%a: tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16> {
    %y = tandem.matmul fprop %a, %a : tensor<1024x1024xbf16>, tensor<1024x1024xbf16> -> tensor<1024x1024xbf16>
    return %y : tensor<1024x1024xbf16>
  }
}
