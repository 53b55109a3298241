module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
  func.func @train_step(%x.mb0: tensor<512x8192xbf16>, %l0.ln1.w: tensor<8192xbf16>, %l0.qkv.w: tensor<8192x1280xbf16>, %l0.proj.w: tensor<1024x8192xbf16>, %l0.ln2.w: tensor<8192xbf16>, %l0.fc1.w: tensor<8192x7168xbf16>, %l0.fc2.w: tensor<3584x8192xbf16>, %l1.ln1.w: tensor<8192xbf16>, %l1.qkv.w: tensor<8192x1280xbf16>, %l1.proj.w: tensor<1024x8192xbf16>, %l1.ln2.w: tensor<8192xbf16>, %l1.fc1.w: tensor<8192x7168xbf16>, %l1.fc2.w: tensor<3584x8192xbf16>) -> (tensor<8192xbf16>, tensor<8192x1280xbf16>, tensor<1024x8192xbf16>, tensor<8192xbf16>, tensor<8192x7168xbf16>, tensor<3584x8192xbf16>, tensor<8192xbf16>, tensor<8192x1280xbf16>, tensor<1024x8192xbf16>, tensor<8192xbf16>, tensor<8192x7168xbf16>, tensor<3584x8192xbf16>) {
    %l0.ln1.norm.mb0 = tandem.norm rms %x.mb0, %l0.ln1.w {layer = "l0.ln1"} : tensor<512x8192xbf16>, tensor<8192xbf16>
    %l0.qkv.ag.mb0 = tandem.all_gather %l0.ln1.norm.mb0 on @tp dim 0 : tensor<512x8192xbf16> -> tensor<4096x8192xbf16>
    %l0.qkv.fprop.mb0 = tandem.matmul fprop %l0.qkv.ag.mb0, %l0.qkv.w {layer = "l0.qkv"} : tensor<4096x8192xbf16>, tensor<8192x1280xbf16> -> tensor<4096x1280xbf16>
    %l0.attn.fprop.mb0 = tandem.attention %l0.qkv.fprop.mb0 heads(8, 1) head_dim(128) causal {layer = "l0.attn"} : tensor<4096x1280xbf16> -> tensor<4096x1024xbf16>
    %l0.proj.fprop.mb0 = tandem.matmul fprop %l0.attn.fprop.mb0, %l0.proj.w {layer = "l0.proj"} : tensor<4096x1024xbf16>, tensor<1024x8192xbf16> -> tensor<4096x8192xbf16>
    %l0.proj.rs.mb0 = tandem.reduce_scatter %l0.proj.fprop.mb0 on @tp dim 0 : tensor<4096x8192xbf16> -> tensor<512x8192xbf16>
    %l0.attn.residual.mb0 = tandem.elementwise add %x.mb0, %l0.proj.rs.mb0 : tensor<512x8192xbf16>, tensor<512x8192xbf16> -> tensor<512x8192xbf16>
    %l0.ln2.norm.mb0 = tandem.norm rms %l0.attn.residual.mb0, %l0.ln2.w {layer = "l0.ln2"} : tensor<512x8192xbf16>, tensor<8192xbf16>
    %l0.fc1.ag.mb0 = tandem.all_gather %l0.ln2.norm.mb0 on @tp dim 0 : tensor<512x8192xbf16> -> tensor<4096x8192xbf16>
    %l0.fc1.fprop.mb0 = tandem.matmul fprop %l0.fc1.ag.mb0, %l0.fc1.w {layer = "l0.fc1"} : tensor<4096x8192xbf16>, tensor<8192x7168xbf16> -> tensor<4096x7168xbf16>
    %l0.act.swiglu.mb0 = tandem.elementwise swiglu %l0.fc1.fprop.mb0 : tensor<4096x7168xbf16> -> tensor<4096x3584xbf16>
    %l0.fc2.fprop.mb0 = tandem.matmul fprop %l0.act.swiglu.mb0, %l0.fc2.w {layer = "l0.fc2"} : tensor<4096x3584xbf16>, tensor<3584x8192xbf16> -> tensor<4096x8192xbf16>
    %l0.fc2.rs.mb0 = tandem.reduce_scatter %l0.fc2.fprop.mb0 on @tp dim 0 : tensor<4096x8192xbf16> -> tensor<512x8192xbf16>
    %l0.mlp.residual.mb0 = tandem.elementwise add %l0.attn.residual.mb0, %l0.fc2.rs.mb0 : tensor<512x8192xbf16>, tensor<512x8192xbf16> -> tensor<512x8192xbf16>
    %l1.ln1.norm.mb0 = tandem.norm rms %l0.mlp.residual.mb0, %l1.ln1.w {layer = "l1.ln1"} : tensor<512x8192xbf16>, tensor<8192xbf16>
    %l1.qkv.ag.mb0 = tandem.all_gather %l1.ln1.norm.mb0 on @tp dim 0 : tensor<512x8192xbf16> -> tensor<4096x8192xbf16>
    %l1.qkv.fprop.mb0 = tandem.matmul fprop %l1.qkv.ag.mb0, %l1.qkv.w {layer = "l1.qkv"} : tensor<4096x8192xbf16>, tensor<8192x1280xbf16> -> tensor<4096x1280xbf16>
    %l1.attn.fprop.mb0 = tandem.attention %l1.qkv.fprop.mb0 heads(8, 1) head_dim(128) causal {layer = "l1.attn"} : tensor<4096x1280xbf16> -> tensor<4096x1024xbf16>
    %l1.proj.fprop.mb0 = tandem.matmul fprop %l1.attn.fprop.mb0, %l1.proj.w {layer = "l1.proj"} : tensor<4096x1024xbf16>, tensor<1024x8192xbf16> -> tensor<4096x8192xbf16>
    %l1.proj.rs.mb0 = tandem.reduce_scatter %l1.proj.fprop.mb0 on @tp dim 0 : tensor<4096x8192xbf16> -> tensor<512x8192xbf16>
    %l1.attn.residual.mb0 = tandem.elementwise add %l0.mlp.residual.mb0, %l1.proj.rs.mb0 : tensor<512x8192xbf16>, tensor<512x8192xbf16> -> tensor<512x8192xbf16>
    %l1.ln2.norm.mb0 = tandem.norm rms %l1.attn.residual.mb0, %l1.ln2.w {layer = "l1.ln2"} : tensor<512x8192xbf16>, tensor<8192xbf16>
    %l1.fc1.ag.mb0 = tandem.all_gather %l1.ln2.norm.mb0 on @tp dim 0 : tensor<512x8192xbf16> -> tensor<4096x8192xbf16>
    %l1.fc1.fprop.mb0 = tandem.matmul fprop %l1.fc1.ag.mb0, %l1.fc1.w {layer = "l1.fc1"} : tensor<4096x8192xbf16>, tensor<8192x7168xbf16> -> tensor<4096x7168xbf16>
    %l1.act.swiglu.mb0 = tandem.elementwise swiglu %l1.fc1.fprop.mb0 : tensor<4096x7168xbf16> -> tensor<4096x3584xbf16>
    %l1.fc2.fprop.mb0 = tandem.matmul fprop %l1.act.swiglu.mb0, %l1.fc2.w {layer = "l1.fc2"} : tensor<4096x3584xbf16>, tensor<3584x8192xbf16> -> tensor<4096x8192xbf16>
    %l1.fc2.rs.mb0 = tandem.reduce_scatter %l1.fc2.fprop.mb0 on @tp dim 0 : tensor<4096x8192xbf16> -> tensor<512x8192xbf16>
    %l1.mlp.residual.mb0 = tandem.elementwise add %l1.attn.residual.mb0, %l1.fc2.rs.mb0 : tensor<512x8192xbf16>, tensor<512x8192xbf16> -> tensor<512x8192xbf16>
    %loss_grad.mb0 = tandem.opaque "loss_grad"(%l1.mlp.residual.mb0) flops(0.000000e+00) bytes(16777216) : (tensor<512x8192xbf16>) -> tensor<512x8192xbf16>
    %l1.fc2.grad_ag.mb0 = tandem.all_gather %loss_grad.mb0 on @tp dim 0 : tensor<512x8192xbf16> -> tensor<4096x8192xbf16>
    %l1.fc2.dgrad.mb0 = tandem.matmul dgrad %l1.fc2.grad_ag.mb0, %l1.fc2.w transpose_rhs {layer = "l1.fc2"} : tensor<4096x8192xbf16>, tensor<3584x8192xbf16> -> tensor<4096x3584xbf16>
    %l1.fc2.wgrad.mb0 = tandem.matmul wgrad %l1.act.swiglu.mb0, %l1.fc2.grad_ag.mb0 transpose_lhs {layer = "l1.fc2"} : tensor<4096x3584xbf16>, tensor<4096x8192xbf16> -> tensor<3584x8192xbf16>
    %l1.act.swiglu_grad.mb0 = tandem.elementwise swiglu_grad %l1.fc2.dgrad.mb0, %l1.fc1.fprop.mb0 : tensor<4096x3584xbf16>, tensor<4096x7168xbf16> -> tensor<4096x7168xbf16>
    %l1.fc1.dgrad.mb0 = tandem.matmul dgrad %l1.act.swiglu_grad.mb0, %l1.fc1.w transpose_rhs {layer = "l1.fc1"} : tensor<4096x7168xbf16>, tensor<8192x7168xbf16> -> tensor<4096x8192xbf16>
    %l1.fc1.wgrad_ag.mb0 = tandem.all_gather %l1.ln2.norm.mb0 on @tp dim 0 : tensor<512x8192xbf16> -> tensor<4096x8192xbf16>
    %l1.fc1.wgrad.mb0 = tandem.matmul wgrad %l1.fc1.wgrad_ag.mb0, %l1.act.swiglu_grad.mb0 transpose_lhs {layer = "l1.fc1"} : tensor<4096x8192xbf16>, tensor<4096x7168xbf16> -> tensor<8192x7168xbf16>
    %l1.fc1.grad_rs.mb0 = tandem.reduce_scatter %l1.fc1.dgrad.mb0 on @tp dim 0 : tensor<4096x8192xbf16> -> tensor<512x8192xbf16>
    %l1.ln2.norm_grad.mb0, %l1.ln2.norm_grad.mb0_0 = tandem.norm_grad rms %l1.fc1.grad_rs.mb0, %l1.attn.residual.mb0, %l1.ln2.w {layer = "l1.ln2"} : tensor<512x8192xbf16>, tensor<8192xbf16>
    %l1.mlp.residual_grad.mb0 = tandem.elementwise add %loss_grad.mb0, %l1.ln2.norm_grad.mb0 : tensor<512x8192xbf16>, tensor<512x8192xbf16> -> tensor<512x8192xbf16>
    %l1.proj.grad_ag.mb0 = tandem.all_gather %l1.mlp.residual_grad.mb0 on @tp dim 0 : tensor<512x8192xbf16> -> tensor<4096x8192xbf16>
    %l1.proj.dgrad.mb0 = tandem.matmul dgrad %l1.proj.grad_ag.mb0, %l1.proj.w transpose_rhs {layer = "l1.proj"} : tensor<4096x8192xbf16>, tensor<1024x8192xbf16> -> tensor<4096x1024xbf16>
    %l1.proj.wgrad.mb0 = tandem.matmul wgrad %l1.attn.fprop.mb0, %l1.proj.grad_ag.mb0 transpose_lhs {layer = "l1.proj"} : tensor<4096x1024xbf16>, tensor<4096x8192xbf16> -> tensor<1024x8192xbf16>
    %l1.attn.dgrad.mb0 = tandem.attention_grad %l1.proj.dgrad.mb0, %l1.qkv.fprop.mb0, %l1.attn.fprop.mb0 heads(8, 1) head_dim(128) causal {layer = "l1.attn"} : tensor<4096x1024xbf16>, tensor<4096x1280xbf16>, tensor<4096x1024xbf16> -> tensor<4096x1280xbf16>
    %l1.qkv.dgrad.mb0 = tandem.matmul dgrad %l1.attn.dgrad.mb0, %l1.qkv.w transpose_rhs {layer = "l1.qkv"} : tensor<4096x1280xbf16>, tensor<8192x1280xbf16> -> tensor<4096x8192xbf16>
    %l1.qkv.wgrad_ag.mb0 = tandem.all_gather %l1.ln1.norm.mb0 on @tp dim 0 : tensor<512x8192xbf16> -> tensor<4096x8192xbf16>
    %l1.qkv.wgrad.mb0 = tandem.matmul wgrad %l1.qkv.wgrad_ag.mb0, %l1.attn.dgrad.mb0 transpose_lhs {layer = "l1.qkv"} : tensor<4096x8192xbf16>, tensor<4096x1280xbf16> -> tensor<8192x1280xbf16>
    %l1.qkv.grad_rs.mb0 = tandem.reduce_scatter %l1.qkv.dgrad.mb0 on @tp dim 0 : tensor<4096x8192xbf16> -> tensor<512x8192xbf16>
    %l1.ln1.norm_grad.mb0, %l1.ln1.norm_grad.mb0_1 = tandem.norm_grad rms %l1.qkv.grad_rs.mb0, %l0.mlp.residual.mb0, %l1.ln1.w {layer = "l1.ln1"} : tensor<512x8192xbf16>, tensor<8192xbf16>
    %l1.attn.residual_grad.mb0 = tandem.elementwise add %l1.mlp.residual_grad.mb0, %l1.ln1.norm_grad.mb0 : tensor<512x8192xbf16>, tensor<512x8192xbf16> -> tensor<512x8192xbf16>
    %l0.fc2.grad_ag.mb0 = tandem.all_gather %l1.attn.residual_grad.mb0 on @tp dim 0 : tensor<512x8192xbf16> -> tensor<4096x8192xbf16>
    %l0.fc2.dgrad.mb0 = tandem.matmul dgrad %l0.fc2.grad_ag.mb0, %l0.fc2.w transpose_rhs {layer = "l0.fc2"} : tensor<4096x8192xbf16>, tensor<3584x8192xbf16> -> tensor<4096x3584xbf16>
    %l0.fc2.wgrad.mb0 = tandem.matmul wgrad %l0.act.swiglu.mb0, %l0.fc2.grad_ag.mb0 transpose_lhs {layer = "l0.fc2"} : tensor<4096x3584xbf16>, tensor<4096x8192xbf16> -> tensor<3584x8192xbf16>
    %l0.act.swiglu_grad.mb0 = tandem.elementwise swiglu_grad %l0.fc2.dgrad.mb0, %l0.fc1.fprop.mb0 : tensor<4096x3584xbf16>, tensor<4096x7168xbf16> -> tensor<4096x7168xbf16>
    %l0.fc1.dgrad.mb0 = tandem.matmul dgrad %l0.act.swiglu_grad.mb0, %l0.fc1.w transpose_rhs {layer = "l0.fc1"} : tensor<4096x7168xbf16>, tensor<8192x7168xbf16> -> tensor<4096x8192xbf16>
    %l0.fc1.wgrad_ag.mb0 = tandem.all_gather %l0.ln2.norm.mb0 on @tp dim 0 : tensor<512x8192xbf16> -> tensor<4096x8192xbf16>
    %l0.fc1.wgrad.mb0 = tandem.matmul wgrad %l0.fc1.wgrad_ag.mb0, %l0.act.swiglu_grad.mb0 transpose_lhs {layer = "l0.fc1"} : tensor<4096x8192xbf16>, tensor<4096x7168xbf16> -> tensor<8192x7168xbf16>
    %l0.fc1.grad_rs.mb0 = tandem.reduce_scatter %l0.fc1.dgrad.mb0 on @tp dim 0 : tensor<4096x8192xbf16> -> tensor<512x8192xbf16>
    %l0.ln2.norm_grad.mb0, %l0.ln2.norm_grad.mb0_2 = tandem.norm_grad rms %l0.fc1.grad_rs.mb0, %l0.attn.residual.mb0, %l0.ln2.w {layer = "l0.ln2"} : tensor<512x8192xbf16>, tensor<8192xbf16>
    %l0.mlp.residual_grad.mb0 = tandem.elementwise add %l1.attn.residual_grad.mb0, %l0.ln2.norm_grad.mb0 : tensor<512x8192xbf16>, tensor<512x8192xbf16> -> tensor<512x8192xbf16>
    %l0.proj.grad_ag.mb0 = tandem.all_gather %l0.mlp.residual_grad.mb0 on @tp dim 0 : tensor<512x8192xbf16> -> tensor<4096x8192xbf16>
    %l0.proj.dgrad.mb0 = tandem.matmul dgrad %l0.proj.grad_ag.mb0, %l0.proj.w transpose_rhs {layer = "l0.proj"} : tensor<4096x8192xbf16>, tensor<1024x8192xbf16> -> tensor<4096x1024xbf16>
    %l0.proj.wgrad.mb0 = tandem.matmul wgrad %l0.attn.fprop.mb0, %l0.proj.grad_ag.mb0 transpose_lhs {layer = "l0.proj"} : tensor<4096x1024xbf16>, tensor<4096x8192xbf16> -> tensor<1024x8192xbf16>
    %l0.attn.dgrad.mb0 = tandem.attention_grad %l0.proj.dgrad.mb0, %l0.qkv.fprop.mb0, %l0.attn.fprop.mb0 heads(8, 1) head_dim(128) causal {layer = "l0.attn"} : tensor<4096x1024xbf16>, tensor<4096x1280xbf16>, tensor<4096x1024xbf16> -> tensor<4096x1280xbf16>
    %l0.qkv.dgrad.mb0 = tandem.matmul dgrad %l0.attn.dgrad.mb0, %l0.qkv.w transpose_rhs {layer = "l0.qkv"} : tensor<4096x1280xbf16>, tensor<8192x1280xbf16> -> tensor<4096x8192xbf16>
    %l0.qkv.wgrad_ag.mb0 = tandem.all_gather %l0.ln1.norm.mb0 on @tp dim 0 : tensor<512x8192xbf16> -> tensor<4096x8192xbf16>
    %l0.qkv.wgrad.mb0 = tandem.matmul wgrad %l0.qkv.wgrad_ag.mb0, %l0.attn.dgrad.mb0 transpose_lhs {layer = "l0.qkv"} : tensor<4096x8192xbf16>, tensor<4096x1280xbf16> -> tensor<8192x1280xbf16>
    %l0.qkv.grad_rs.mb0 = tandem.reduce_scatter %l0.qkv.dgrad.mb0 on @tp dim 0 : tensor<4096x8192xbf16> -> tensor<512x8192xbf16>
    %l0.ln1.norm_grad.mb0, %l0.ln1.norm_grad.mb0_3 = tandem.norm_grad rms %l0.qkv.grad_rs.mb0, %x.mb0, %l0.ln1.w {layer = "l0.ln1"} : tensor<512x8192xbf16>, tensor<8192xbf16>
    return %l0.ln1.norm_grad.mb0_3, %l0.qkv.wgrad.mb0, %l0.proj.wgrad.mb0, %l0.ln2.norm_grad.mb0_2, %l0.fc1.wgrad.mb0, %l0.fc2.wgrad.mb0, %l1.ln1.norm_grad.mb0_1, %l1.qkv.wgrad.mb0, %l1.proj.wgrad.mb0, %l1.ln2.norm_grad.mb0_0, %l1.fc1.wgrad.mb0, %l1.fc2.wgrad.mb0 : tensor<8192xbf16>, tensor<8192x1280xbf16>, tensor<1024x8192xbf16>, tensor<8192xbf16>, tensor<8192x7168xbf16>, tensor<3584x8192xbf16>, tensor<8192xbf16>, tensor<8192x1280xbf16>, tensor<1024x8192xbf16>, tensor<8192xbf16>, tensor<8192x7168xbf16>, tensor<3584x8192xbf16>
  }
}

