#!/usr/bin/env bash
# A/B check for refactors: writes, for a fixed set of generated steps and
# every --tandem-overlap strategy, the scheduled IR, the pass's remarks and
# the simulator's report, so that two builds can be compared file by file.
#
#   test/benchmarks/ab-schedules.sh BUILD_DIR OUT_DIR
#   diff -r OUT_A OUT_B      # no output: both builds schedule identically
#
# lit never runs this file (test/lit.cfg.py excludes benchmarks/). About
# 3-6 minutes on 2 cores.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
bin=$1/bin
out=$2
mkdir -p "$out"

strategies=(none bulk reschedule pipeline pipeline+reschedule te-preset
            te-preset+reschedule auto)
cases=(
  "gpt3-175b 2 8 2048 switch"
  "gpt3-175b 2 4 4096 full-mesh"
  "gpt3-175b 4 8 2048 switch"
  "llama3-70b 2 8 4096 switch"
  "llama3-70b 2 8 8192 full-mesh"
  "llama3-70b 2 4 2048 full-mesh"
  "llama3-70b 2 2 4096 full-mesh"
  "llama3-8b 2 8 8192 switch"
)

for c in "${cases[@]}"; do
  read -r model layers tp seq topo <<<"$c"
  name="$model-l$layers-tp$tp-s$seq-$topo"
  step="$out/$name.mlir"
  "$bin/tandem-gen" --model "$model" --layers "$layers" --tp "$tp" \
    --seq "$seq" --target h200 --topology "$topo" --print-locations -o "$step"
  for s in "${strategies[@]}"; do
    base="$out/$name.${s//+/_}"
    "$bin/tandem-opt" "$step" --mlir-print-op-on-diagnostic=false \
      --tandem-overlap="strategy=$s remarks=true" \
      --tandem-simulate="report=$base.report.json" -o "$base.ir.mlir" \
      2>"$base.remarks.txt"
  done
done
echo "wrote $(ls "$out" | wc -l) files to $out"
