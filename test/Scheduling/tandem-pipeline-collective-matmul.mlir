// RUN: tandem-opt %s -split-input-file --tandem-pipeline-collective-matmul -verify-diagnostics | FileCheck %s
// RUN: tandem-opt %s -split-input-file --tandem-pipeline-collective-matmul=method=p2p 2>/dev/null | FileCheck %s --check-prefix=P2P
// RUN: tandem-opt %s -split-input-file --tandem-pipeline-collective-matmul="method=chunked chunks=4" 2>/dev/null | FileCheck %s --check-prefix=CHUNKED

// The proj dgrad of a GPT-3-sized layer at TP=8: a 48 MiB all-gather
// (140 us) feeding a 2048x1536x12288 GEMM (138 us). Behind a switch one
// P2P step to a neighbour uses every link, so the ring pipeline hides most
// of the transfer. Every split candidate also pays 6.9 us for assembling
// the 6 MiB output (a copy: 12 MiB at 4320 GB/s + 4 us launch).
// CHECK-LABEL: func.func @switch
// CHECK:       %[[Y0:.*]] = tandem.matmul dgrad %arg0, %arg1 transpose_rhs
// CHECK:       %[[P1:.*]] = tandem.permute %arg0 on @tp shift 1
// CHECK-NEXT:  tandem.matmul dgrad %[[P1]], %arg1 transpose_rhs
// CHECK-COUNT-6: tandem.permute
// CHECK:       tandem.ring_concat %[[Y0]], {{.*}} on @tp dim 0 : {{.*}} -> tensor<2048x1536xbf16>
// CHECK-NOT:   tandem.all_gather
// P2P-LABEL: func.func @switch
// P2P:       tandem.ring_concat
// CHUNKED-LABEL: func.func @switch
// CHUNKED:       %[[S0:.*]] = tandem.slice %arg0 dim 0 chunk 0 of 4 : tensor<256x12288xbf16> -> tensor<64x12288xbf16>
// CHUNKED-COUNT-3: tandem.slice %arg0
// CHUNKED:       tandem.all_gather %[[S0]] on @tp dim 0 : tensor<64x12288xbf16> -> tensor<512x12288xbf16>
// CHUNKED:       tandem.concat {{.*}} dim 0 interleave 8 : {{.*}} -> tensor<2048x1536xbf16>
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @switch(%x: tensor<256x12288xbf16>, %w: tensor<1536x12288xbf16>) -> tensor<2048x1536xbf16> {
    // expected-remark @+1 {{all-gather -> matmul pipelined as 8 P2P ring steps; predicted: unsplit 278.6 us chunkedx2 245.6 us chunkedx4 253.3 us chunkedx8 312.8 us p2p 210.8 us}}
    %g = tandem.all_gather %x on @tp dim 0 : tensor<256x12288xbf16> -> tensor<2048x12288xbf16>
    %y = tandem.matmul dgrad %g, %w transpose_rhs {layer = "l0.proj"} : tensor<2048x12288xbf16>, tensor<1536x12288xbf16> -> tensor<2048x1536xbf16>
    return %y : tensor<2048x1536xbf16>
  }
}

// -----

// The same pair on a full mesh: a P2P step reaches its neighbour over one of
// the seven links, so the ring is refused (it would take four times as long
// as the unsplit pair) and the chunked native pipeline wins; method=p2p
// forces the ring anyway.
// CHECK-LABEL: func.func @on_mesh
// CHECK:       tandem.all_gather {{.*}} on @mesh dim 0 : tensor<64x12288xbf16> -> tensor<512x12288xbf16>
// CHECK:       tandem.concat {{.*}} dim 0 interleave 8
// P2P-LABEL: func.func @on_mesh
// P2P:       tandem.permute
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @mesh size(8) full_mesh links(7 x 64.0 GBps, 2.0 us)
  func.func @on_mesh(%x: tensor<256x12288xbf16>, %w: tensor<1536x12288xbf16>) -> tensor<2048x1536xbf16> {
    // expected-remark @+1 {{all-gather -> matmul pipelined as 4 chunked native all-gathers; predicted: unsplit 267.2 us chunkedx2 224.8 us chunkedx4 207.3 us chunkedx8 217.3 us p2p 948.6 us (full mesh: one link per step, P2P only when forced)}}
    %g = tandem.all_gather %x on @mesh dim 0 : tensor<256x12288xbf16> -> tensor<2048x12288xbf16>
    %y = tandem.matmul dgrad %g, %w transpose_rhs {layer = "l0.proj"} : tensor<2048x12288xbf16>, tensor<1536x12288xbf16> -> tensor<2048x1536xbf16>
    return %y : tensor<2048x1536xbf16>
  }
}

// -----

// GEMM -> reduce-scatter: chunk j of the GEMM computes the rows every rank's
// shard chunk j reduces (slice ... interleave 8), so each chunk's
// reduce-scatter can start as soon as its GEMM ends.
// CHECK-LABEL: func.func @rs
// CHECK:       %[[A0:.*]] = tandem.slice %arg0 dim 0 chunk 0 of 2 interleave 8 : tensor<2048x1536xbf16> -> tensor<1024x1536xbf16>
// CHECK:       %[[M0:.*]] = tandem.matmul fprop %[[A0]], %arg1
// CHECK-NEXT:  %[[R0:.*]] = tandem.reduce_scatter %[[M0]] on @tp dim 0 : tensor<1024x12288xbf16> -> tensor<128x12288xbf16>
// CHECK:       tandem.concat %[[R0]], {{.*}} dim 0 : {{.*}} -> tensor<256x12288xbf16>
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @rs(%a: tensor<2048x1536xbf16>, %w: tensor<1536x12288xbf16>) -> tensor<256x12288xbf16> {
    %y = tandem.matmul fprop %a, %w {layer = "l0.proj"} : tensor<2048x1536xbf16>, tensor<1536x12288xbf16> -> tensor<2048x12288xbf16>
    // expected-remark @+1 {{matmul -> reduce-scatter pipelined as 2 chunked native reduce-scatters; predicted: unsplit 245.1 us chunkedx2 232.8 us chunkedx4 265.3 us chunkedx8 340.8 us}}
    %r = tandem.reduce_scatter %y on @tp dim 0 : tensor<2048x12288xbf16> -> tensor<256x12288xbf16>
    return %r : tensor<256x12288xbf16>
  }
}

// -----

// Left alone, each with its reason.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @kept(%x: tensor<256x1024xbf16>, %w: tensor<1024x1024xbf16>, %t: tensor<8x2048xbf16>) -> (tensor<1024x1024xbf16>, tensor<8x256xbf16>, tensor<2048x1024xbf16>) {
    // expected-remark @+1 {{all-gather left unsplit: no matmul takes the gathered tensor as its row operand}}
    %g = tandem.all_gather %x on @tp dim 0 : tensor<256x1024xbf16> -> tensor<2048x1024xbf16>
    %dw = tandem.matmul wgrad %g, %g transpose_lhs : tensor<2048x1024xbf16>, tensor<2048x1024xbf16> -> tensor<1024x1024xbf16>
    // expected-remark @+1 {{reduce-scatter left unsplit: only scatters along dimension 0 are pipelined}}
    %r = tandem.reduce_scatter %t on @tp dim 1 : tensor<8x2048xbf16> -> tensor<8x256xbf16>
    return %dw, %r, %g : tensor<1024x1024xbf16>, tensor<8x256xbf16>, tensor<2048x1024xbf16>
  }
}

// -----

// The gathered tensor has a user before the matmul (the wgrad): the pipeline
// is built there, and the wgrad reads the tensor reassembled in rank order.
// CHECK-LABEL: func.func @earlier_user
// CHECK:       tandem.ring_concat {{.*}} -> tensor<2048x1536xbf16>
// CHECK-NEXT:  %[[X:.*]] = tandem.ring_concat %arg0, {{.*}} on @tp dim 0 : {{.*}} -> tensor<2048x12288xbf16>
// CHECK-NEXT:  tandem.matmul wgrad %arg2, %[[X]] transpose_lhs
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @earlier_user(%x: tensor<256x12288xbf16>, %w: tensor<1536x12288xbf16>, %act: tensor<2048x1536xbf16>) -> (tensor<1536x12288xbf16>, tensor<2048x1536xbf16>) {
    // expected-remark @+1 {{all-gather -> matmul pipelined as 8 P2P ring steps}}
    %g = tandem.all_gather %x on @tp dim 0 : tensor<256x12288xbf16> -> tensor<2048x12288xbf16>
    %dw = tandem.matmul wgrad %act, %g transpose_lhs {layer = "l0.proj"} : tensor<2048x1536xbf16>, tensor<2048x12288xbf16> -> tensor<1536x12288xbf16>
    %y = tandem.matmul dgrad %g, %w transpose_rhs {layer = "l0.proj"} : tensor<2048x12288xbf16>, tensor<1536x12288xbf16> -> tensor<2048x1536xbf16>
    return %dw, %y : tensor<1536x12288xbf16>, tensor<2048x1536xbf16>
  }
}

// -----

// The pairs of @switch and @rs after a diagnosis measured them slower
// together than serially (tandem.avoid_overlap, docs/diagnosis.md
// "Prevention"): a pipeline would run every chunk of one beside a chunk of
// the other, so both stay unsplit, also when a method is forced.
// CHECK-LABEL: func.func @harmful
// CHECK:       tandem.all_gather %arg0 on @tp dim 0
// CHECK:       tandem.reduce_scatter {{.*}} on @tp dim 0
// CHECK-NOT:   tandem.permute
// P2P-LABEL: func.func @harmful
// P2P-NOT:   tandem.permute
// CHUNKED-LABEL: func.func @harmful
// CHUNKED-NOT:   tandem.slice
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @harmful(%x: tensor<256x12288xbf16>, %w: tensor<1536x12288xbf16>, %a: tensor<2048x1536xbf16>, %w2: tensor<1536x12288xbf16>) -> (tensor<2048x1536xbf16>, tensor<256x12288xbf16>) {
    // expected-remark @+1 {{all-gather left unsplit: a diagnosis measured its overlap with the matmul slower than the two serially (harmful overlap #3); a pipeline would overlap their chunks}}
    %g = tandem.all_gather %x on @tp dim 0 {tandem.avoid_overlap = array<i64: 3>} : tensor<256x12288xbf16> -> tensor<2048x12288xbf16>
    %y = tandem.matmul dgrad %g, %w transpose_rhs {layer = "l0.proj", tandem.avoid_overlap = array<i64: 3>} : tensor<2048x12288xbf16>, tensor<1536x12288xbf16> -> tensor<2048x1536xbf16>
    %z = tandem.matmul fprop %a, %w2 {layer = "l0.proj", tandem.avoid_overlap = array<i64: 1, 4>} : tensor<2048x1536xbf16>, tensor<1536x12288xbf16> -> tensor<2048x12288xbf16>
    // expected-remark @+1 {{reduce-scatter left unsplit: a diagnosis measured its overlap with the matmul slower than the two serially (harmful overlap #4); a pipeline would overlap their chunks}}
    %r = tandem.reduce_scatter %z on @tp dim 0 {tandem.avoid_overlap = array<i64: 4>} : tensor<2048x12288xbf16> -> tensor<256x12288xbf16>
    return %y, %r : tensor<2048x1536xbf16>, tensor<256x12288xbf16>
  }
}
