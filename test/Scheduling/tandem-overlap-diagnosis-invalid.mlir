// Errors of the `diagnosis` and `diagnosis-plan` options (docs/diagnosis.md,
// "Prevention"): an unreadable or malformed report or plan, a report or plan
// of another function, an op the function does not have (by name and
// occurrence, or at the diagnosed plan's step location), a function numbered
// differently from the diagnosed plan. Each needs its own options, so each
// case is a file of its own; the reports and plans are in
// Inputs/diagnosis/ (plan.json: this function's bulk plan, made from a file
// called step.mlir).
// RUN: split-file %s %t
// RUN: tandem-opt %t/missing.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/missing.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/not-json.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/not-json.json" -verify-diagnostics -o /dev/null
// A report nested 100,000 levels deep is refused before it is parsed.
// RUN: %python -c "print('[' * 100000)" > %t/deep.json
// RUN: tandem-opt %t/deep.mlir --tandem-overlap="diagnosis=%t/deep.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/no-function.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/no-function.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/bad-kind.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/bad-kind.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/one-op-pair.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/one-op-pair.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/wrong-function.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/wrong-function.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/wrong-function-simulate.mlir --tandem-simulate="diagnosis=%S/Inputs/diagnosis/wrong-function.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/unknown-op.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/unknown-op.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/occurrence.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/occurrence.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/pipelined.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/pipelined.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/plan-alone.mlir --tandem-overlap="diagnosis-plan=%S/Inputs/diagnosis/plan.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/plan-alone-simulate.mlir --tandem-simulate="diagnosis-plan=%S/Inputs/diagnosis/plan.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/plan-missing.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/harmful.json diagnosis-plan=%S/Inputs/diagnosis/missing.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/plan-function.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/harmful.json diagnosis-plan=%S/Inputs/diagnosis/plan-other.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/plan-step-name.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/plan-step-name.json diagnosis-plan=%S/Inputs/diagnosis/plan.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/plan-step-range.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/plan-step-range.json diagnosis-plan=%S/Inputs/diagnosis/plan.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/plan-location.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/harmful.json diagnosis-plan=%S/Inputs/diagnosis/plan.json" -verify-diagnostics -o /dev/null
// RUN: tandem-opt %t/absurd.mlir --tandem-overlap="diagnosis=%S/Inputs/diagnosis/absurd.json" -verify-diagnostics -o /dev/null

//--- missing.mlir
// expected-error @+1 {{missing.json': No such file or directory}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- not-json.mlir
// expected-error @+1 {{not-json.json: not valid JSON: [2:0, byte=16]: Unexpected EOF}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- deep.mlir
// expected-error @+1 {{deep.json: arrays and objects nested more than 64 levels deep: not a diagnosis report}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- no-function.mlir
// expected-error @+1 {{no-function.json: "function": must be a non-empty string; a diagnosis of a PyTorch trace (--kineto) names no function and cannot be fed back}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- bad-kind.mlir
// expected-error @+1 {{bad-kind.json: anomalies[0]: "kind" must be "lost_overlap" or "harmful_overlap"}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- one-op-pair.mlir
// expected-error @+1 {{one-op-pair.json: anomalies[0]: a harmful overlap names 2 ops, this one 1}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- wrong-function.mlir
// expected-error @+1 {{wrong-function.json' measured function @other, which this module does not define (it defines @step)}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- wrong-function-simulate.mlir
// expected-error @+1 {{wrong-function.json' measured function @other, which this module does not define (it defines @step)}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- unknown-op.mlir
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-error @+1 {{unknown-op.json': anomaly #0 names 'tandem.matmul l0.fc1', which @step does not have (0 op(s) of that name; names are tandem-run's: '<op> <layer>')}}
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- occurrence.mlir
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-error @+1 {{occurrence.json': anomaly #0 names 'tandem.matmul l0.fc2' (#3), which @step does not have (2 op(s) of that name; names are tandem-run's: '<op> <layer>')}}
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- pipelined.mlir
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-error @+1 {{pipelined.json': its plan has 4 'tandem.reduce_scatter_start' op(s), @step has 1: the ops are numbered differently (a pipeline strategy splits collectives); diagnose a plan of a strategy without pipelines, or re-plan the function that was diagnosed}}
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- plan-alone.mlir
// expected-error @+1 {{diagnosis-plan needs a diagnosis}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- plan-alone-simulate.mlir
// expected-error @+1 {{diagnosis-plan needs a diagnosis}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- plan-missing.mlir
// expected-error @+1 {{cannot read the diagnosed plan: cannot open plan file}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- plan-function.mlir
// expected-error @+1 {{plan-other.json' is of function @other, the diagnosis}}
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- plan-step-name.mlir
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-error @+1 {{anomaly #0 names 'tandem.reduce_scatter_start' at step 0, which the diagnosed plan calls 'tandem.matmul l0.fc2': the plan is not the one diagnosed}}
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- plan-step-range.mlir
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-error @+1 {{anomaly #0 names step 9, beyond the diagnosed plan's 5 steps}}
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- plan-location.mlir
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-error @+1 {{anomaly #0 names 'tandem.reduce_scatter_start' (step 1, at loc("step.mlir":6:10)), which @step has no op of that name at that location (the plan was made from another file or function)}}
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}

//--- absurd.mlir
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @tp size(8) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @step(%dy: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>, %x: tensor<2048x4096xbf16>, %r: tensor<256x4096xbf16>) -> (tensor<256x4096xbf16>, tensor<4096x4096xbf16>) {
    %d = tandem.matmul dgrad %dy, %w transpose_rhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<4096x4096xbf16> -> tensor<2048x4096xbf16>
    %dw = tandem.matmul wgrad %x, %dy transpose_lhs {layer = "l0.fc2"} : tensor<2048x4096xbf16>, tensor<2048x4096xbf16> -> tensor<4096x4096xbf16>
    // expected-error @+1 {{absurd.json': anomaly #0 measured 'tandem.reduce_scatter_start' at 1.000000e-05 us against 5.877796e+01 us predicted: a ratio outside [1e-06, 1e+06] is not a measurement of this op}}
    %s = tandem.reduce_scatter %d on @tp dim 0 : tensor<2048x4096xbf16> -> tensor<256x4096xbf16>
    %o = tandem.elementwise add %s, %r : tensor<256x4096xbf16>, tensor<256x4096xbf16> -> tensor<256x4096xbf16>
    return %o, %dw : tensor<256x4096xbf16>, tensor<4096x4096xbf16>
  }
}
