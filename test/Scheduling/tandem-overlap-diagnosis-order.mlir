// Harmful pairs where the compute op is issued before the collective's start
// (docs/diagnosis.md, "Prevention"): with max-in-flight=1 the
// reduce-scatter's start cannot pass the all-gather's wait, so it is issued
// after the independent GEMM, which it does not wait for: the two still run
// together (the simulated GEMM spans the collective). With
// Inputs/diagnosis/harmful-before-start.json saying that overlap was
// harmful, the GEMM moves below the reduce-scatter's wait.
//
// RUN: tandem-opt %s --tandem-overlap="strategy=bulk max-in-flight=1" | FileCheck %s --check-prefix=PLAIN
// PLAIN-LABEL: func.func @step
// PLAIN:      tandem.all_gather_start
// PLAIN-NEXT: tandem.matmul fprop
// PLAIN-NEXT: tandem.wait %
// PLAIN-NEXT: tandem.reduce_scatter_start
//
// RUN: tandem-opt %s --mlir-print-op-on-diagnostic=false --tandem-overlap="strategy=bulk max-in-flight=1 remarks=true diagnosis=%S/Inputs/diagnosis/harmful-before-start.json" 2>&1 | FileCheck %s --check-prefix=HARMFUL
// HARMFUL: remark: harmful overlap #0 with 'tandem.matmul l0.y' avoided: it moved below the wait (the diagnosis measured the pair slower together than serially)
// HARMFUL-LABEL: func.func @step
// HARMFUL:      %[[RS:.*]] = tandem.reduce_scatter_start
// HARMFUL:      tandem.wait %[[RS]]
// HARMFUL-NEXT: tandem.matmul fprop
//
// The simulation agrees: the GEMM starts when the collective has ended.
// RUN: tandem-opt %s --tandem-overlap="strategy=bulk max-in-flight=1 diagnosis=%S/Inputs/diagnosis/harmful-before-start.json" --tandem-simulate=trace=%t.json -o /dev/null
// RUN: %python -c "import json; e = {x['name'].split('#')[0]: x for x in json.load(open('%t.json'))['traceEvents'] if x.get('ph') == 'X'}; rs, mm = e['tandem.reduce_scatter_start'], e['tandem.matmul']; print('apart' if mm['ts'] >= rs['ts'] + rs['dur'] - 1e-6 else 'overlapped')" | FileCheck %s --check-prefix=SIM
// SIM: apart

module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%p: tensor<256x4096xbf16>, %q: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %z: tensor<2048x4096xbf16>) -> (tensor<2048x4096xbf16>, tensor<2048x4096xbf16>, tensor<256x4096xbf16>) {
    %g = tandem.all_gather %p on @tp dim 0 : tensor<256x4096xbf16> -> tensor<2048x4096xbf16>
    %y = tandem.matmul fprop %q, %w {layer = "l0.y"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %u = tandem.elementwise copy %g : tensor<2048x4096xbf16> -> tensor<2048x4096xbf16>
    %r = tandem.reduce_scatter %z on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    return %u, %y, %r : tensor<2048x4096xbf16>, tensor<2048x4096xbf16>, tensor<256x4096xbf16>
  }
}
