#!/bin/bash
# SM residency on one GPU: does a collective issued after a full-SM GEMM
# wait for it (docs/cost-model.md, "SM residency")? Four one-rank plans of
# sm-residency.mlir in the single-GPU stand-in mode (the all-gather is a
# device copy of its per-rank volume), each with its simulated span.
#
#   bash test/benchmarks/sm-residency.sh prepare OUTDIR   # needs tandem-opt
#   bash test/benchmarks/sm-residency.sh run OUTDIR       # needs a GPU
set -euo pipefail
mode=${1:?prepare or run}
out=${2:?output directory}
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")" && pwd)
FUNCS=(serial gemm_first collective_first targeted)
mkdir -p "$out"
if [ "$mode" = prepare ]; then
  for f in "${FUNCS[@]}"; do
    "$BUILD/bin/tandem-opt" "$here/sm-residency.mlir" --tandem-assign-streams \
      --tandem-export-plan="file=$out/$f.json function=$f" -o /dev/null 2>/dev/null
  done
  echo "prepared ${#FUNCS[@]} plans in $out"
elif [ "$mode" = run ]; then
  export NCCL_NVLS_ENABLE=0
  for f in "${FUNCS[@]}"; do
    echo "=== $f"
    "$BUILD/bin/tandem-run" "$out/$f.json" --standin-collectives --iters 30 \
      --warmup 5 | grep -E "step time|predicted span"
  done
else
  echo "unknown mode '$mode' (prepare or run)" >&2
  exit 2
fi
