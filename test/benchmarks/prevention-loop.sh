#!/bin/bash
# The prevention loop on a GPU (issue 17, item 5): plan a step, run it,
# diagnose the run against the plan, re-plan with the diagnosis (its harmful
# overlaps kept apart, its measured durations in the cost model), run both
# plans side by side. docs/diagnosis.md ("Prevention") describes the loop.
#
#   bash test/benchmarks/prevention-loop.sh prepare OUT  # here: tandem-gen, tandem-opt (MLIR)
#   bash test/benchmarks/prevention-loop.sh run-a OUT    # GPU, call 1: tandem-run plan A and the reference
#   bash test/benchmarks/prevention-loop.sh replan OUT   # here: tandem-diagnose, tandem-opt -> plan B
#   bash test/benchmarks/prevention-loop.sh run-b OUT    # GPU, call 2: plans A and B alternately
#   bash test/benchmarks/prevention-loop.sh report OUT   # anywhere (python3): before / after
#
# The GPU machine has no MLIR, and plan B needs tandem-opt on a diagnosis of
# a run of plan A, so the loop takes two device calls; tandem-diagnose needs
# no MLIR and could run on the device, but the re-plan could not, so moving
# it there saves no call. The lead's commands (the checkout's root on both
# machines; the device builds tandem-run from runtime/ into build-rt):
#
#   here:    bash test/benchmarks/prevention-loop.sh prepare test/benchmarks/results/prevention
#   call 1:  cmake -G Ninja -S runtime -B build-rt -DTANDEM_RUNTIME=ON >/dev/null &&
#            ninja -C build-rt tandem-run >/dev/null &&
#            RUN_BUILD=build-rt bash test/benchmarks/prevention-loop.sh run-a test/benchmarks/results/prevention &&
#            cp -r test/benchmarks/results/prevention "$OUT/"
#   here:    copy the call's $OUT/prevention/*.trace.json, *.run.txt and *.result.json back into
#            test/benchmarks/results/prevention/, then
#            bash test/benchmarks/prevention-loop.sh replan test/benchmarks/results/prevention
#   call 2:  (the build-rt of call 1 is gone on a fresh machine: build it again as above)
#            RUN_BUILD=build-rt bash test/benchmarks/prevention-loop.sh run-b test/benchmarks/results/prevention &&
#            cp -r test/benchmarks/results/prevention "$OUT/"
#   here:    copy back *.run.txt and *.result.json, then
#            bash test/benchmarks/prevention-loop.sh report test/benchmarks/results/prevention
#
# The step (CASE, default gpt3-175b TP=8 s4096, 2 layers, as in the H200
# validation) runs on the EMULATED fabric of one GPU (tandem-run
# --emulate-fabric: each collective a local kernel paced to its predicted
# alone time; NOT communication). Plan A is STRATEGY (default reschedule,
# what the H200 measured fastest on this step, docs/benchmarks.md; a
# strategy without pipelines, whose ops map one to one onto the input's);
# plan B is REPLAN_STRATEGY (default the same strategy, so that the
# diagnosis is the only difference; `auto` lets the measured durations
# change the choice) with diagnosis= and diagnosis-plan= (plan A, whose
# step locations resolve the report's ops in the unscheduled step). Every
# pass prices with CAL (the H200 calibration fitted against the emulated
# fabric). EXPECTED of the diagnosis is plan A's prediction, the times alone
# are the reference plan's run (--alone): the loop feeds back where the run
# left the plan. ROUNDS (3) alternations of A and B in run-b, ITERS (15)
# steps each. BUILD: the build with tandem-gen, tandem-opt and
# tandem-diagnose (default build); RUN_BUILD: the one with tandem-run
# (default BUILD). lit never runs this file.
set -euo pipefail
mode=${1:?prepare, run-a, replan, run-b or report}
out=${2:?output directory}
here=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${BUILD:-build}" 2>/dev/null && pwd || echo "${BUILD:-build}")
RUN_BUILD=$(cd "${RUN_BUILD:-$BUILD}" 2>/dev/null && pwd || echo "${RUN_BUILD:-$BUILD}")
CAL=${CAL-$here/results/h200-2026-12-04/calibration-emulated.json}
CASE=${CASE:---model gpt3-175b --layers 2 --tp 8 --seq 4096}
STRATEGY=${STRATEGY:-reschedule}
REPLAN_STRATEGY=${REPLAN_STRATEGY:-$STRATEGY}
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-15}
cal_opt=""
[ -n "$CAL" ] && cal_opt=" calibration=$CAL"
mkdir -p "$out"
# Plan steps record their ops' source locations as the parser gave them
# ("step.mlir":line:col): every tandem-opt call reads step.mlir from OUT.
cd "$out"

run_plan() { # name plan flags...
  local name=$1 plan=$2
  shift 2
  echo "=== $name"
  "$RUN_BUILD/bin/tandem-run" "$plan" --emulate-fabric "$@" \
    > "$name.run.txt" 2>&1 || { cat "$name.run.txt"; exit 1; }
  grep -E "step time|predicted span" "$name.run.txt" || true
}

case "$mode" in
prepare)
  # shellcheck disable=SC2086
  "$BUILD/bin/tandem-gen" $CASE --target h200 --topology switch > step.mlir
  "$BUILD/bin/tandem-opt" step.mlir \
    --tandem-export-plan="file=reference.json$cal_opt" -o /dev/null \
    2> reference.log || { cat reference.log >&2; exit 1; }
  "$BUILD/bin/tandem-opt" step.mlir \
    --tandem-overlap="strategy=$STRATEGY$cal_opt" \
    --tandem-export-plan="file=A.json$cal_opt" -o A.mlir --mlir-print-debuginfo \
    2> A.log || { cat A.log >&2; exit 1; }
  printf 'case=%s\nstrategy=%s\nreplan_strategy=%s\ncalibration=%s\n' \
    "$CASE" "$STRATEGY" "$REPLAN_STRATEGY" "${CAL:-preset}" > loop.txt
  echo "prepared step.mlir, reference.json and A.json ($STRATEGY) in $out"
  ;;
run-a)
  export NCCL_NVLS_ENABLE=0
  run_plan reference reference.json --warmup 3 --iters 5 \
    --trace reference.trace.json
  run_plan A A.json --warmup 3 --iters "$ITERS" --trace A.trace.json \
    --json A.result.json
  ;;
replan)
  for f in A.trace.json reference.trace.json; do
    [ -f "$f" ] || { echo "$out/$f is missing: run 'run-a' on the GPU first" >&2; exit 1; }
  done
  "$BUILD/bin/tandem-diagnose" A.json A.trace.json --alone reference.trace.json \
    --json diagnosis.json --trace diagnosis.perfetto.json > diagnosis.txt
  sed -n '/^anomalies/,/^$/p' diagnosis.txt
  # Plan A's prediction with the measured durations (the same model).
  "$BUILD/bin/tandem-opt" A.mlir \
    --tandem-simulate="report=A.measured-model.json diagnosis=diagnosis.json diagnosis-plan=A.json$cal_opt" \
    -o /dev/null
  "$BUILD/bin/tandem-opt" step.mlir --mlir-print-op-on-diagnostic=false \
    --tandem-overlap="strategy=$REPLAN_STRATEGY remarks=true diagnosis=diagnosis.json diagnosis-plan=A.json$cal_opt" \
    --tandem-export-plan="file=B.json$cal_opt" -o B.mlir 2> B.log \
    || { cat B.log >&2; exit 1; }
  grep -E "diagnosis:|harmful overlap|chosen" B.log || true
  python3 "$here/prevention-loop.py" .
  ;;
run-b)
  export NCCL_NVLS_ENABLE=0
  [ -f B.json ] || { echo "$out/B.json is missing: run 'replan' here first" >&2; exit 1; }
  for r in $(seq 1 "$ROUNDS"); do
    for p in A B; do
      run_plan "$p.round$r" "$p.json" --warmup 3 --iters "$ITERS" \
        --json "$p.round$r.result.json"
    done
  done
  ;;
report)
  python3 "$here/prevention-loop.py" . --json prevention.json
  ;;
*)
  echo "unknown mode '$mode' (prepare, run-a, replan, run-b or report)" >&2
  exit 2
  ;;
esac
