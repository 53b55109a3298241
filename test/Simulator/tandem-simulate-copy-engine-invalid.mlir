// RUN: tandem-opt %s --tandem-simulate -verify-diagnostics -split-input-file

// A collective marked for the copy engines on a group whose GPUs cannot
// reach every peer's memory is refused where it is priced, naming why.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @dp size(32) hierarchical links(18 x 25.0 GBps, 2.0 us) {gpus_per_node = 8 : i64, inter_node_bandwidth_gbps = 50.0 : f64, inter_node_latency_us = 5.0 : f64}
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<8192x1024xbf16> {
    // expected-error @+1 {{'tandem.copy_engine' cannot apply: group @dp is a hierarchical group: the copy engines need every peer's memory within one link (a switch or a full mesh inside one node)}}
    %a = tandem.all_gather %x on @dp dim 0 {tandem.copy_engine} : tensor<256x1024xbf16> -> tensor<8192x1024xbf16>
    return %a : tensor<8192x1024xbf16>
  }
}

// -----

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @one size(1) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @f(%x: tensor<256x1024xbf16>) -> tensor<256x1024xbf16> {
    // expected-error @+1 {{'tandem.copy_engine' cannot apply: group @one has one rank: nothing to copy}}
    %a = tandem.all_gather %x on @one dim 0 {tandem.copy_engine} : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    return %a : tensor<256x1024xbf16>
  }
}
