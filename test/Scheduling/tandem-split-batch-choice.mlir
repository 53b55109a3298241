// The part count is the cost model's choice: with the built-in h200 preset
// (128x256 GEMM tiles) halving a GPT-3 TP=8 layer's GEMMs costs more waves
// than the hidden collectives save, and the input reordered by the list
// scheduler is chosen, unsplit; with the H200 calibration (measured 64x128
// tiles, test/Inputs/h200-calibration-2026-12-04.json, a copy of
// test/benchmarks/results/h200-2026-12-04/calibration-emulated.json) the
// reordered input is predicted faster than the input, and 2 parts (each
// part's wgrads filling the other's waits) faster still, which is chosen;
// in `auto` that is the `split` candidate, which beats `reschedule`
// (AG-WGRAD, with the SM residency relief) here. A forced part count is
// applied whatever the prediction. One sequence has no layout of units, so
// its rows are cut freely in eighths: under the preset, parts [2, 6] fill
// the GEMM waves better than halves and are simulated too, and lose (the
// parts hide each other's collectives less).
//
// RUN: tandem-gen --model gpt3-175b --layers 1 --tp 8 --seq 2048 --print-locations -o %t.mlir
// RUN: tandem-opt %t.mlir --tandem-split-batch --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRESET
// RUN: tandem-opt %t.mlir --tandem-split-batch="calibration=%S/../Inputs/h200-calibration-2026-12-04.json" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=CALIBRATED
// RUN: tandem-opt %t.mlir --tandem-split-batch="parts=2 calibration=%S/../Inputs/h200-calibration-2026-12-04.json" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORCED
// RUN: tandem-opt %t.mlir --tandem-overlap="calibration=%S/../Inputs/h200-calibration-2026-12-04.json" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: tandem-opt %t.mlir --tandem-overlap="strategy=split remarks=true calibration=%S/../Inputs/h200-calibration-2026-12-04.json" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARKS
//
// PRESET: batch split: '@train_step' left unsplit, its ops reordered by the list scheduler{{.*}}; predicted span with bulk overlap: 1 part {{[0-9.]+}} us; 1 part reordered {{[0-9.]+}} us; 2 parts {{[0-9.]+}} us; 2 parts [2, 6] {{[0-9.]+}} us; 4 parts {{[0-9.]+}} us; 8 parts {{[0-9.]+}} us; chose 1 reordered; parts [2, 6] of 8 units fill the GEMM waves better than equal parts {{.*}}; 1 causal attention(s) over a whole sequence stay barriers between the parts (a sequence laid out in causal segments, tandem-gen --segments, splits there too){{$}}
// CALIBRATED: batch split: '@train_step' split into 2 parts:{{.*}} 1 part reordered {{[0-9.]+}} us; 2 parts {{[0-9.]+}} us;{{.*}} chose 2; {{.*}}1 causal attention(s) over a whole sequence stay barriers{{.*}}{{$}}
// FORCED: batch split: '@train_step' split into 2 parts: {{.*}} chose 2 (parts=2)
// AUTO: strategy split chosen; predicted spans: none {{.*}} split {{[0-9.]+}} us split+reschedule {{[0-9.]+}} us
// REMARKS: batch split: '@train_step' split into 2 parts
// REMARKS: schedule verified
