// RUN: tandem-opt %s --tandem-split-batch -verify-diagnostics -o /dev/null

// Functions the batch split leaves alone, with the reason.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-remark @+1 {{batch split: '@scheduled' left alone: it already has asynchronous collectives (split before tandem-async-collectives)}}
  func.func @scheduled(%x: tensor<64x256xbf16>) -> tensor<128x256xbf16> {
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<64x256xbf16> -> !tandem.future<tensor<128x256xbf16>>
    %y = tandem.wait %f : !tandem.future<tensor<128x256xbf16>>
    return %y : tensor<128x256xbf16>
  }
  // expected-remark @+1 {{batch split: '@one_row' left alone: no row-local op has rows that divide into 2 parts}}
  func.func @one_row(%x: tensor<1x256xbf16>, %w: tensor<256x256xbf16>) -> tensor<1x256xbf16> {
    %y = tandem.matmul fprop %x, %w : tensor<1x256xbf16>, tensor<256x256xbf16> -> tensor<1x256xbf16>
    return %y : tensor<1x256xbf16>
  }
  // expected-remark @+1 {{batch split: '@marked' left alone: it is already scheduled (tandem.seq on 'tandem.all_gather')}}
  func.func @marked(%x: tensor<64x256xbf16>) -> tensor<128x256xbf16> {
    %y = tandem.all_gather %x on @tp dim 0 {tandem.seq = 0 : i64} : tensor<64x256xbf16> -> tensor<128x256xbf16>
    return %y : tensor<128x256xbf16>
  }
}
