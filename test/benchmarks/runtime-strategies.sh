#!/bin/bash
# Single-GPU runtime benchmark: every --tandem-overlap strategy's plan run
# by tandem-run, side by side in one session on one GPU.
#
#   bash test/benchmarks/runtime-strategies.sh prepare OUTDIR   # needs tandem-opt (MLIR)
#   bash test/benchmarks/runtime-strategies.sh run OUTDIR       # needs a GPU
#   python3 test/benchmarks/runtime-strategies.py OUTDIR        # table
#
# prepare writes, per case, the unscheduled reference plan and one plan per
# strategy. run executes each plan with --check against the reference. TP=8
# cases run in the single-GPU stand-in mode (one rank's program, collectives
# replaced by device copies of the same byte volume: NOT communication); the
# TP=1 case runs real kernels only. Set BUILD to the build directory.
set -euo pipefail
mode=${1:?prepare or run}
out=${2:?output directory}
BUILD=${BUILD:-build}
STRATEGIES=(none bulk reschedule pipeline te-preset te-preset+reschedule auto)
# name | tandem-gen arguments | tandem-run mode flag
CASES=(
  "llama3-8b-tp1-s2048|--model llama3-8b --layers 2 --tp 1 --seq 2048|"
  "llama3-70b-tp8-s4096|--model llama3-70b --layers 2 --tp 8 --seq 4096|--standin-collectives"
  "gpt3-175b-tp8-s4096|--model gpt3-175b --layers 2 --tp 8 --seq 4096|--standin-collectives"
  "llama3-70b-tp8-s8192|--model llama3-70b --layers 2 --tp 8 --seq 8192|--standin-collectives"
)
mkdir -p "$out"
for c in "${CASES[@]}"; do
  IFS='|' read -r name gen flags <<<"$c"
  if [ "$mode" = prepare ]; then
    # shellcheck disable=SC2086
    "$BUILD/bin/tandem-gen" $gen > "$out/$name.mlir"
    "$BUILD/bin/tandem-opt" "$out/$name.mlir" \
      --tandem-export-plan="file=$out/$name.ref.json" -o /dev/null 2>/dev/null
    for s in "${STRATEGIES[@]}"; do
      "$BUILD/bin/tandem-opt" "$out/$name.mlir" --tandem-overlap="strategy=$s" \
        --tandem-export-plan="file=$out/$name.$s.json" -o /dev/null 2>/dev/null
    done
    echo "prepared $name"
  elif [ "$mode" = run ]; then
    export NCCL_NVLS_ENABLE=0
    for s in "${STRATEGIES[@]}"; do
      echo "=== $name $s"
      # shellcheck disable=SC2086
      "$BUILD/bin/tandem-run" "$out/$name.$s.json" $flags --warmup 3 --iters 20 \
        --check --reference "$out/$name.ref.json" \
        --json "$out/$name.$s.result.json" --trace "$out/$name.$s.trace.json" \
        | grep -E "step time|predicted span|exposed|check:" || true
    done
  else
    echo "unknown mode '$mode' (prepare or run)" >&2
    exit 2
  fi
done
