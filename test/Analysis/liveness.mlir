// RUN: tandem-opt %s --tandem-test-liveness -verify-diagnostics -o /dev/null

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)

  // Arguments: 512 KiB. At the add: arguments + gathered buffer (4 MiB, the
  // wait's result is the future's buffer, not a copy) + add result (4 MiB) +
  // %c (512 KiB, returned) = 9437184 bytes.
  // expected-remark @+2 {{peak memory 9437184 bytes (524288 in arguments) at 'tandem.elementwise'}}
  // expected-remark @+1 {{critical path 35.11 us through 3 ops}}
  func.func @wait_aliases(%x: tensor<256x1024xbf16>) -> (tensor<2048x1024xbf16>, tensor<256x1024xbf16>) {
    %f = tandem.all_gather_start %x on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    %c = tandem.elementwise copy %x : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    // expected-remark @+1 {{peak memory reached here}}
    %y = tandem.elementwise add %g, %g : tensor<2048x1024xbf16>, tensor<2048x1024xbf16> -> tensor<2048x1024xbf16>
    return %y, %c : tensor<2048x1024xbf16>, tensor<256x1024xbf16>
  }

  // The collective reads %n until its wait, so %n (512 KiB) is still live at
  // %big: arguments (4.5 MiB) + %n + future (4 MiB) + %big (4 MiB).
  // expected-remark @+2 {{peak memory 13631488 bytes (4718592 in arguments) at 'tandem.elementwise'}}
  // expected-remark @+1 {{critical path}}
  func.func @start_keeps_input(%x: tensor<256x1024xbf16>, %a: tensor<2048x1024xbf16>) -> (tensor<2048x1024xbf16>, tensor<2048x1024xbf16>) {
    %n = tandem.elementwise copy %x : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
    %f = tandem.all_gather_start %n on @tp dim 0 : tensor<256x1024xbf16> -> !tandem.future<tensor<2048x1024xbf16>>
    // expected-remark @+1 {{peak memory reached here}}
    %big = tandem.elementwise copy %a : tensor<2048x1024xbf16> -> tensor<2048x1024xbf16>
    %g = tandem.wait %f : !tandem.future<tensor<2048x1024xbf16>>
    return %g, %big : tensor<2048x1024xbf16>, tensor<2048x1024xbf16>
  }
}
