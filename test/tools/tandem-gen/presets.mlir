// Every model preset and every target/topology combination gives IR that
// tandem-opt parses and verifies; the target attribute and the groups carry
// the documented figures (docs/tandem-gen.md). The checks read tandem-opt's
// output, so values print as %N.

// Model presets, one layer, default seq 2048, TP=8 on an H200 node.
// RUN: tandem-gen --model gpt3-175b --layers 1 | tandem-opt | FileCheck %s --check-prefix=GPT3
// RUN: tandem-gen --model llama3-70b --layers 1 | tandem-opt | FileCheck %s --check-prefix=L70B
// RUN: tandem-gen --model llama3-8b --layers 1 | tandem-opt | FileCheck %s --check-prefix=L8B

// GPT3: module attributes {tandem.target = #tandem.target<"h200">}
// GPT3-NEXT: tandem.group @tp size(8) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
// GPT3-NEXT: func.func @train_step(%arg0: tensor<256x12288xbf16>, %arg1: tensor<12288xbf16>, %arg2: tensor<12288x4608xbf16>, %arg3: tensor<1536x12288xbf16>, %arg4: tensor<12288xbf16>, %arg5: tensor<12288x6144xbf16>, %arg6: tensor<6144x12288xbf16>)
// GPT3: tandem.norm layer
// GPT3: tandem.attention {{.*}} heads(12, 12) head_dim(128) causal {{.*}} : tensor<2048x4608xbf16> -> tensor<2048x1536xbf16>
// GPT3: tandem.elementwise gelu {{.*}} : tensor<2048x6144xbf16> -> tensor<2048x6144xbf16>

// L70B: tandem.group @tp size(8) switch
// L70B-NEXT: func.func @train_step(%arg0: tensor<256x8192xbf16>, %arg1: tensor<8192xbf16>, %arg2: tensor<8192x1280xbf16>, %arg3: tensor<1024x8192xbf16>, %arg4: tensor<8192xbf16>, %arg5: tensor<8192x7168xbf16>, %arg6: tensor<3584x8192xbf16>)
// L70B: tandem.norm rms
// L70B: tandem.attention {{.*}} heads(8, 1) head_dim(128) causal
// L70B: tandem.elementwise swiglu {{.*}} : tensor<2048x7168xbf16> -> tensor<2048x3584xbf16>

// L8B: func.func @train_step(%arg0: tensor<256x4096xbf16>, %arg1: tensor<4096xbf16>, %arg2: tensor<4096x768xbf16>, %arg3: tensor<512x4096xbf16>, %arg4: tensor<4096xbf16>, %arg5: tensor<4096x3584xbf16>, %arg6: tensor<1792x4096xbf16>)
// L8B: tandem.norm rms
// L8B: tandem.attention {{.*}} heads(4, 1) head_dim(128) causal
// L8B: tandem.elementwise swiglu {{.*}} : tensor<2048x3584xbf16> -> tensor<2048x1792xbf16>

// Explicit values override a preset's: all 32 heads as KV heads, f16.
// RUN: tandem-gen --model llama3-8b --layers 1 --kv-heads 32 --dtype f16 | tandem-opt | FileCheck %s --check-prefix=OVERRIDE
// OVERRIDE: func.func @train_step(%arg0: tensor<256x4096xf16>, %arg1: tensor<4096xf16>, %arg2: tensor<4096x1536xf16>,
// OVERRIDE: tandem.attention {{.*}} heads(4, 4) head_dim(128) causal

// The preset's layer count is the default.
// RUN: tandem-gen --model llama3-8b --seq 64 | tandem-opt | FileCheck %s --check-prefix=DEPTH
// DEPTH: func.func @train_step({{.*}}%arg192: tensor<1792x4096xbf16>)
// DEPTH: tandem.norm_grad rms {{.*}} {layer = "l31.ln1"}
// DEPTH-NOT: "l32.

// Every target with every node topology, TP=8 on a small model.
// DEFINE: %{gen} = tandem-gen --model custom --hidden 512 --heads 8 --ffn 1024 --layers 1 --seq 64
// RUN: %{gen} --target h100 --topology switch | tandem-opt | FileCheck %s --check-prefix=H100-SWITCH
// RUN: %{gen} --target h100 --topology full-mesh | tandem-opt | FileCheck %s --check-prefix=H100-MESH
// RUN: %{gen} --target h100 --topology ring | tandem-opt | FileCheck %s --check-prefix=H100-RING
// RUN: %{gen} --target h200 | tandem-opt | FileCheck %s --check-prefix=H200-SWITCH
// RUN: %{gen} --target h200 --topology full-mesh | tandem-opt | FileCheck %s --check-prefix=H200-MESH
// RUN: %{gen} --target h200 --topology ring | tandem-opt | FileCheck %s --check-prefix=H200-RING
// RUN: %{gen} --target mi300x --topology switch | tandem-opt | FileCheck %s --check-prefix=MI300X-SWITCH
// RUN: %{gen} --target mi300x | tandem-opt | FileCheck %s --check-prefix=MI300X-MESH
// RUN: %{gen} --target mi300x --topology ring | tandem-opt | FileCheck %s --check-prefix=MI300X-RING

// H100-SWITCH: module attributes {tandem.target = #tandem.target<"h100">}
// H100-SWITCH-NEXT: tandem.group @tp size(8) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
// H100-MESH: module attributes {tandem.target = #tandem.target<"h100">}
// H100-MESH-NEXT: tandem.group @tp size(8) full_mesh links(7 x 64.285714285714292 GBps, 2.000000e+00 us)
// H100-RING: module attributes {tandem.target = #tandem.target<"h100">}
// H100-RING-NEXT: tandem.group @tp size(8) ring links(2 x 2.250000e+02 GBps, 2.000000e+00 us)
// H200-SWITCH: module attributes {tandem.target = #tandem.target<"h200">}
// H200-SWITCH-NEXT: tandem.group @tp size(8) switch links(18 x 2.500000e+01 GBps, 2.000000e+00 us)
// H200-MESH: module attributes {tandem.target = #tandem.target<"h200">}
// H200-MESH-NEXT: tandem.group @tp size(8) full_mesh links(7 x 64.285714285714292 GBps, 2.000000e+00 us)
// H200-RING: module attributes {tandem.target = #tandem.target<"h200">}
// H200-RING-NEXT: tandem.group @tp size(8) ring links(2 x 2.250000e+02 GBps, 2.000000e+00 us)
// MI300X-SWITCH: module attributes {tandem.target = #tandem.target<"mi300x">}
// MI300X-SWITCH-NEXT: tandem.group @tp size(8) switch links(7 x 6.400000e+01 GBps, 2.000000e+00 us)
// MI300X-MESH: module attributes {tandem.target = #tandem.target<"mi300x">}
// MI300X-MESH-NEXT: tandem.group @tp size(8) full_mesh links(7 x 6.400000e+01 GBps, 2.000000e+00 us)
// MI300X-RING: module attributes {tandem.target = #tandem.target<"mi300x">}
// MI300X-RING-NEXT: tandem.group @tp size(8) ring links(2 x 2.240000e+02 GBps, 2.000000e+00 us)

// Smaller groups: the node is one full mesh of 8, so a group of 4 reaches its
// members over 3 of the 7 links (64 GB/s each on mi300x); a ring of 2 has
// one link carrying the GPU's whole ring bandwidth.
// RUN: %{gen} --target mi300x --tp 4 --dp 2 | tandem-opt | FileCheck %s --check-prefix=MESH4
// RUN: %{gen} --topology ring --tp 2 | tandem-opt | FileCheck %s --check-prefix=RING2
// MESH4: tandem.group @tp size(4) full_mesh links(3 x 6.400000e+01 GBps, 2.000000e+00 us)
// MESH4-NEXT: tandem.group @dp size(2) full_mesh links(1 x 6.400000e+01 GBps, 2.000000e+00 us)
// RING2: tandem.group @tp size(2) ring links(1 x 4.500000e+02 GBps, 2.000000e+00 us)

// DP across nodes: with TP=2, four members of a DP group share a node.
// RUN: %{gen} --tp 2 --dp 8 | tandem-opt | FileCheck %s --check-prefix=HIER4
// RUN: %{gen} --target mi300x --tp 8 --dp 2 | tandem-opt | FileCheck %s --check-prefix=HIER-MI300X
// HIER4: tandem.group @dp size(8) hierarchical links(18 x 2.500000e+01 GBps, 2.000000e+00 us) {gpus_per_node = 4 : i64, inter_node_bandwidth_gbps = 5.000000e+01 : f64, inter_node_latency_us = 5.000000e+00 : f64}
// HIER-MI300X: tandem.group @tp size(8) full_mesh links(7 x 6.400000e+01 GBps, 2.000000e+00 us)
// HIER-MI300X-NEXT: tandem.group @dp size(2) hierarchical links(7 x 6.400000e+01 GBps, 2.000000e+00 us) {gpus_per_node = 1 : i64, inter_node_bandwidth_gbps = 5.000000e+01 : f64, inter_node_latency_us = 5.000000e+00 : f64}
