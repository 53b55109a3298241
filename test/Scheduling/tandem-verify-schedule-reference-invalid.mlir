// Schedules that differ from Inputs/verify-schedule-reference.mlir.
// Notes located in the reference file cannot be annotated here, so the
// first run checks the diagnostics in this file only, and the second the
// notes that point into the reference.
// RUN: tandem-opt %s -split-input-file -verify-diagnostics=only-expected \
// RUN:   --tandem-verify-schedule="reference=%S/Inputs/verify-schedule-reference.mlir" -o /dev/null
// RUN: not tandem-opt %s -split-input-file -mlir-print-op-on-diagnostic=false \
// RUN:   --tandem-verify-schedule="reference=%S/Inputs/verify-schedule-reference.mlir" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=verify-schedule-reference.mlir:
// RUN: not tandem-opt %s -split-input-file --tandem-verify-schedule="reference=%S/Inputs/no-such-file.mlir" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING
// MISSING: error: cannot read the reference '{{.*}}no-such-file.mlir': cannot open input file

// (d) A changed op: the first difference is found below the returned
// value, and the reference's op is shown.
// CHECK: verify-schedule-reference.mlir:30:11: note: the reference computes it here
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @dp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @grads(%g0: tensor<1024x512xbf16>, %g1: tensor<512x1024xbf16>)
      -> (tensor<1024x512xbf16>, tensor<512x1024xbf16>) {
    // expected-note @+1 {{first difference: 'tandem.elementwise' has attributes {kind = #tandem<ew gelu>}, in the reference {kind = #tandem<ew copy>}}}
    %c0 = tandem.elementwise gelu %g0 : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    %f0 = tandem.all_reduce_start %c0 on @dp : tensor<1024x512xbf16> -> !tandem.future<tensor<1024x512xbf16>>
    %c1 = tandem.elementwise copy %g1 : tensor<512x1024xbf16> -> tensor<512x1024xbf16>
    %f1 = tandem.all_reduce_start %c1 on @dp : tensor<512x1024xbf16> -> !tandem.future<tensor<512x1024xbf16>>
    %s0 = tandem.wait %f0 : !tandem.future<tensor<1024x512xbf16>>
    %s1 = tandem.wait %f1 : !tandem.future<tensor<512x1024xbf16>>
    // expected-error @+1 {{returned value #0 differs from the reference}}
    return %s0, %s1 : tensor<1024x512xbf16>, tensor<512x1024xbf16>
  }
}

// -----

// (d) A collective that reads a function argument where the reference
// reads a copy of it; the copy is gone too.
// CHECK: verify-schedule-reference.mlir:32:11: note: the reference computes it here
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @dp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-error @+2 {{'@grads' has 1 'tandem.elementwise' op(s), its reference 2}}
  // expected-note @+1 {{first difference: here it is function argument #1, in the reference 'tandem.elementwise'}}
  func.func @grads(%g0: tensor<1024x512xbf16>, %g1: tensor<512x1024xbf16>)
      -> (tensor<1024x512xbf16>, tensor<512x1024xbf16>) {
    %c0 = tandem.elementwise copy %g0 : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    %s0 = tandem.all_reduce %c0 on @dp : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    %s1 = tandem.all_reduce %g1 on @dp : tensor<512x1024xbf16> -> tensor<512x1024xbf16>
    // expected-error @+1 {{returned value #1 differs from the reference}}
    return %s0, %s1 : tensor<1024x512xbf16>, tensor<512x1024xbf16>
  }
}

// -----

// (d) The same values, but the two all-reduces on @dp swapped: the ranks
// would pair them wrongly if another rank kept the original order. Without
// tandem.seq only the reference shows it.
// CHECK: verify-schedule-reference.mlir:31:11: note: collective #0 on @dp in the reference
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @dp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  func.func @grads(%g0: tensor<1024x512xbf16>, %g1: tensor<512x1024xbf16>)
      -> (tensor<1024x512xbf16>, tensor<512x1024xbf16>) {
    %c0 = tandem.elementwise copy %g0 : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    %c1 = tandem.elementwise copy %g1 : tensor<512x1024xbf16> -> tensor<512x1024xbf16>
    // expected-error @+1 {{collective #0 on @dp differs from the reference's: the group's issue order or the collective's value changed}}
    %f1 = tandem.all_reduce_start %c1 on @dp : tensor<512x1024xbf16> -> !tandem.future<tensor<512x1024xbf16>>
    %f0 = tandem.all_reduce_start %c0 on @dp : tensor<1024x512xbf16> -> !tandem.future<tensor<1024x512xbf16>>
    %s1 = tandem.wait %f1 : !tandem.future<tensor<512x1024xbf16>>
    %s0 = tandem.wait %f0 : !tandem.future<tensor<1024x512xbf16>>
    return %s0, %s1 : tensor<1024x512xbf16>, tensor<512x1024xbf16>
  }
}

// -----

// (d) An extra op that reaches no result changes no returned value, but
// the op counts differ.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @dp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-error @+1 {{'@grads' has 3 'tandem.elementwise' op(s), its reference 2}}
  func.func @grads(%g0: tensor<1024x512xbf16>, %g1: tensor<512x1024xbf16>)
      -> (tensor<1024x512xbf16>, tensor<512x1024xbf16>) {
    %c0 = tandem.elementwise copy %g0 : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    %s0 = tandem.all_reduce %c0 on @dp : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    %c1 = tandem.elementwise copy %g1 : tensor<512x1024xbf16> -> tensor<512x1024xbf16>
    %dead = tandem.elementwise copy %g1 : tensor<512x1024xbf16> -> tensor<512x1024xbf16>
    %s1 = tandem.all_reduce %c1 on @dp : tensor<512x1024xbf16> -> tensor<512x1024xbf16>
    return %s0, %s1 : tensor<1024x512xbf16>, tensor<512x1024xbf16>
  }
}

// -----

// (d) An extra collective that reaches no result.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @dp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-error @+1 {{'@grads' issues 3 collective(s) on @dp, its reference 2}}
  func.func @grads(%g0: tensor<1024x512xbf16>, %g1: tensor<512x1024xbf16>)
      -> (tensor<1024x512xbf16>, tensor<512x1024xbf16>) {
    %c0 = tandem.elementwise copy %g0 : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    %s0 = tandem.all_reduce %c0 on @dp : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    %c1 = tandem.elementwise copy %g1 : tensor<512x1024xbf16> -> tensor<512x1024xbf16>
    %s1 = tandem.all_reduce %c1 on @dp : tensor<512x1024xbf16> -> tensor<512x1024xbf16>
    %extra = tandem.all_reduce %c1 on @dp : tensor<512x1024xbf16> -> tensor<512x1024xbf16>
    return %s0, %s1 : tensor<1024x512xbf16>, tensor<512x1024xbf16>
  }
}

// -----

// (d) A different signature.
module attributes {tandem.target = #tandem.target<"h200">} {
  tandem.group @dp size(2) switch links(18 x 25.0 GBps, 2.0 us)
  // expected-error @+1 {{'@grads' has type '(tensor<1024x512xbf16>, tensor<512x1024xbf16>) -> tensor<1024x512xbf16>', its reference '(tensor<1024x512xbf16>, tensor<512x1024xbf16>) -> (tensor<1024x512xbf16>, tensor<512x1024xbf16>)'}}
  func.func @grads(%g0: tensor<1024x512xbf16>, %g1: tensor<512x1024xbf16>) -> tensor<1024x512xbf16> {
    %c0 = tandem.elementwise copy %g0 : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    %s0 = tandem.all_reduce %c0 on @dp : tensor<1024x512xbf16> -> tensor<1024x512xbf16>
    return %s0 : tensor<1024x512xbf16>
  }
}

// -----

// (d) No function of that name in the reference.
module attributes {tandem.target = #tandem.target<"h200">} {
  // expected-error-re @+1 {{the reference '{{.*}}verify-schedule-reference.mlir' has no function '@nope'}}
  func.func @nope(%x: tensor<8xbf16>) -> tensor<8xbf16> {
    return %x : tensor<8xbf16>
  }
}
