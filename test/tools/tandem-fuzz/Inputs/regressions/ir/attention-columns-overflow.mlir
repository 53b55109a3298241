// (heads + 2 * kv_heads) * head_dim overflowed int64 in the verifier.
func.func @f(%qkv: tensor<4x12xbf16>) -> tensor<4x4xbf16> {
  %o = tandem.attention %qkv heads(4611686018427387904, 4611686018427387904) head_dim(1) : tensor<4x12xbf16> -> tensor<4x4xbf16>
  return %o : tensor<4x4xbf16>
}
