#!/bin/bash
# Validation of tandem-diagnose on a GPU (issue 17, item 3): 24 plans with
# anomalies injected on purpose (an extra kernel on the communication
# stream, an extra event wait, a full-SM GEMM issued before a collective, a
# host delay) and clean runs of two TP=8 steps on the emulated fabric of one
# GPU, then precision and recall (diagnose-validate.py says how cases are
# built and scored).
#
#   bash test/benchmarks/diagnose-validate.sh prepare OUT  # tandem-gen, tandem-opt (MLIR)
#   bash test/benchmarks/diagnose-validate.sh run OUT      # a GPU, tandem-run
#   bash test/benchmarks/diagnose-validate.sh score OUT [--single]
#       # tandem-diagnose (no MLIR); each case with its base's other clean
#       # runs as --noise, and without (--single: that scoring first)
#   bash test/benchmarks/diagnose-validate.sh dryrun OUT   # no GPU: the plans'
#       predictions stand in for the traces (host delays and event waits,
#       which the simulator does not model, then show nothing)
#
# BUILD: the build directory whose bin/ holds the tools (default build);
# CAL: the calibration every pass prices with (default the H200's of
# 2026-12-03; CAL= for the preset); TARGETS (3) collectives per class and
# base, CLEAN_RUNS (3) clean runs per base; NOISE_MARGIN the noise floor's
# margin in 'score' (default: tandem-diagnose's); ROOM_FROM=an earlier OUT that
# ran: choose the targets (those with the least room under compute) by its
# measured clean run instead of the prediction. 'run' writes <case>.trace.json
# and <case>.run.txt beside each plan; 'score' writes OUT/score.json.
# lit never runs this file.
set -euo pipefail
mode=${1:?prepare, run, score or dryrun}
out=${2:?output directory}
here=$(cd "$(dirname "$0")" && pwd)
export BUILD=${BUILD:-build}
case "$mode" in
prepare)
  python3 "$here/diagnose-validate.py" prepare "$out"
  ;;
run)
  export NCCL_NVLS_ENABLE=0
  python3 - "$out" <<'PY' > "$out/run-list.txt"
import json, sys
spec = json.load(open(sys.argv[1] + "/cases.json"))
for b in spec["bases"]:
    print("%s/reference|%s/reference.json|" % (b, b))
for c in spec["cases"]:
    print("%s|%s|%s" % (c["name"], c["plan"], c.get("host_delay", "")))
PY
  while IFS='|' read -r name plan delay; do
    extra=()
    [ -n "$delay" ] && extra=(--inject-host-delay "$delay")
    echo "=== $name${delay:+ (host delay $delay)}"
    "$BUILD/bin/tandem-run" "$out/$plan" --emulate-fabric --warmup 3 --iters 5 \
      --trace "$out/$name.trace.json" "${extra[@]}" \
      > "$out/$name.run.txt" 2>&1 || { cat "$out/$name.run.txt"; exit 1; }
    grep -E "step time" "$out/$name.run.txt" || true
  done < "$out/run-list.txt"
  ;;
score)
  python3 "$here/diagnose-validate.py" score "$out" --json "$out/score.json" "${@:3}"
  ;;
dryrun)
  python3 "$here/diagnose-validate.py" dryrun "$out"
  ;;
*)
  echo "unknown mode '$mode' (prepare, run, score or dryrun)" >&2
  exit 2
  ;;
esac
