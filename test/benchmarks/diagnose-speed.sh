#!/usr/bin/env bash
# How long tandem-diagnose takes on a 96-layer GPT-3 175B step with TP=8
# (issue 17 asks for well under 10 s). The simulator's trace of the
# scheduled step is the expected timeline; the measured one is the same
# trace with an extra kernel injected on a communication stream
# (test/Diagnosis/Inputs/inject.py), so the whole attribution runs. Prints
# the ops, the anomalies and the median wall time of 5 runs writing the
# text report, the JSON and the Perfetto trace.
#
#   bash test/benchmarks/diagnose-speed.sh      (BUILD=build OUT=build/diagnose-speed)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/diagnose-speed}
mkdir -p "$OUT"
"$BUILD/bin/tandem-gen" --model gpt3-175b --layers 96 --tp 8 --seq 4096 -o "$OUT/step.mlir"
"$BUILD/bin/tandem-opt" "$OUT/step.mlir" --tandem-overlap \
  --tandem-simulate="trace=$OUT/trace.json" -o /dev/null 2>/dev/null
python3 test/Diagnosis/Inputs/inject.py "$OUT/trace.json" "$OUT/measured.json" extra-kernel
times=()
for i in 1 2 3 4 5; do
  start=$(date +%s.%N)
  "$BUILD/bin/tandem-diagnose" "$OUT/trace.json" "$OUT/measured.json" \
    --json "$OUT/report.json" --trace "$OUT/diagnosis-trace.json" > "$OUT/report.txt"
  end=$(date +%s.%N)
  times+=("$(python3 -c "print($end - $start)")")
done
python3 - "$OUT/report.json" "${times[@]}" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
t = sorted(float(x) for x in sys.argv[2:])
print("ops matched: %d, collectives: %d, anomalies: %d" %
      (r["matched_ops"], len(r["collectives"]), len(r["anomalies"])))
print("tandem-diagnose wall time: median %.3f s (min %.3f, max %.3f, 5 runs)" %
      (statistics.median(t), t[0], t[-1]))
PY
