// One cost model for deciding and for evaluating: --tandem-overlap prices its
// candidates with the calibration --tandem-simulate uses (the pass option, or
// the module's tandem.calibration), so a calibration that changes which
// candidate is cheapest changes auto's choice, and the span auto predicts for
// its choice is the span the simulator reports for the result (to 0.01 us:
// the remark rounds to 0.001 us).
//
// RUN: tandem-gen --model llama3-8b --layers 1 --tp 8 --seq 2048 --print-locations -o %t.mlir
// RUN: tandem-opt %t.mlir --mlir-print-op-on-diagnostic=false --tandem-overlap --tandem-simulate="report=-" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUILTIN
// RUN: tandem-opt %t.mlir --mlir-print-op-on-diagnostic=false --tandem-overlap="calibration=%S/../Inputs/slow-contention.json" --tandem-simulate="report=- calibration=%S/../Inputs/slow-contention.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLOW
// RUN: sed -e 's|^module attributes {|module attributes {tandem.calibration = "%S/../Inputs/slow-contention.json", |' %t.mlir > %t.calibrated.mlir
// RUN: tandem-opt %t.calibrated.mlir --mlir-print-op-on-diagnostic=false --tandem-overlap --tandem-simulate="report=-" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLOW
//
// The built-in contention table (H200 probe, x1.0-1.13) makes AG-WGRAD pay.
// BUILTIN: strategy reschedule chosen; predicted spans: none {{[0-9.]+}} us bulk {{[0-9.]+}} us reschedule [[SPAN:[0-9]+\.[0-9][0-9]]]{{[0-9]}} us
// BUILTIN: "span_us": [[SPAN]]
//
// Inputs/slow-contention.json slows both sides of every overlap x2: hiding
// costs more than it saves, and the step is left as it is.
// SLOW: strategy none chosen; predicted spans: none [[SPAN:[0-9]+\.[0-9][0-9]]]{{[0-9]}} us
// SLOW: "span_us": [[SPAN]]
