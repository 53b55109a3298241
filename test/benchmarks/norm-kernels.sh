#!/bin/bash
# The runtime's norm and norm_grad kernels alone (RMS, bf16), one plan per
# shape with both ops, through tandem-run: measured against the model per
# op class (docs/cost-model.md, "Bandwidth-bound ops").
#
#   bash test/benchmarks/norm-kernels.sh prepare OUTDIR   # tandem-opt (MLIR)
#   bash test/benchmarks/norm-kernels.sh run OUTDIR       # a GPU, tandem-run
#   bash test/benchmarks/norm-kernels.sh compare OUTDIR   # tandem-opt (MLIR)
# 'run' also writes OUTDIR/summary.json (measured and modelled per shape).
# 'compare' prices the same plans again with CAL (say, the calibration
# tandem-fit made from the same batch's tandem-calibrate run) and writes
# OUTDIR/compare.json: what 'run' measured against that model.
#
# BUILD: the build directory whose bin/ holds the tools (default build);
# CAL: the calibration the plans are priced with (default the H200's of
# 2026-12-04). lit never runs this file.
set -euo pipefail
mode=${1:?prepare, run or compare}
out=${2:?output directory}
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")" && pwd)
CAL=${CAL-$here/results/h200-2026-12-04/calibration.json}
SHAPES=(512x8192 512x12288 2048x4096 4096x8192)
mkdir -p "$out"
case "$mode" in
prepare)
  for shape in "${SHAPES[@]}"; do
    r=${shape%x*}; c=${shape#*x}
    cat > "$out/n$shape.mlir" <<MLIR
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @train_step(%x: tensor<${r}x${c}xbf16>, %w: tensor<${c}xbf16>, %dy: tensor<${r}x${c}xbf16>) -> (tensor<${r}x${c}xbf16>, tensor<${r}x${c}xbf16>, tensor<${c}xbf16>) {
    %y = tandem.norm rms %x, %w {layer = "l0.ln1"} : tensor<${r}x${c}xbf16>, tensor<${c}xbf16>
    %dx, %dw = tandem.norm_grad rms %dy, %x, %w {layer = "l0.ln1"} : tensor<${r}x${c}xbf16>, tensor<${c}xbf16>
    return %y, %dx, %dw : tensor<${r}x${c}xbf16>, tensor<${r}x${c}xbf16>, tensor<${c}xbf16>
  }
}
MLIR
    "$BUILD/bin/tandem-opt" "$out/n$shape.mlir" \
      --tandem-export-plan="file=$out/n$shape.json${CAL:+ calibration=$CAL}" \
      -o /dev/null 2>/dev/null
  done
  echo "prepared ${SHAPES[*]} in $out" ;;
run)
  for shape in "${SHAPES[@]}"; do
    "$BUILD/bin/tandem-run" "$out/n$shape.json" --warmup 5 --iters 50 \
      --json "$out/n$shape.result.json" > "$out/n$shape.txt" 2>&1
  done
  python3 - "$out" "${SHAPES[@]}" <<'PY'
import json, sys
out, shapes = sys.argv[1], sys.argv[2:]
rows = []
for s in shapes:
    r = json.load(open(f"{out}/n{s}.result.json"))
    for c in r["op_classes"]:
        rows.append({"shape": s, "class": c["class"],
                     "measured_us": c["measured_us"],
                     "predicted_us": c["predicted_us"],
                     "measured_over_predicted": c["measured_over_predicted"]})
        print(f"{s:>10} {c['class']:>9}: {c['measured_us']:7.1f} us "
              f"measured, {c['predicted_us']:6.1f} us modelled")
json.dump({"what": "norm-kernels.sh: RMS norm and norm_grad kernels alone, "
           "bf16, tandem-run median of 50", "results": rows},
          open(f"{out}/summary.json", "w"), indent=1)
PY
  ;;
compare)
  priced=$(mktemp -d)
  trap 'rm -rf "$priced"' EXIT
  bash "$0" prepare "$priced" > /dev/null
  python3 - "$out" "$priced" "${CAL:-none}" "${SHAPES[@]}" <<'PY'
import json, sys
out, priced, cal, shapes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = []
for s in shapes:
    measured = {c["class"]: c["measured_us"] for c in
                json.load(open(f"{out}/n{s}.result.json"))["op_classes"]}
    for step in json.load(open(f"{priced}/n{s}.json"))["steps"]:
        kind = step["kind"]
        predicted = step["predicted"]["alone_us"]
        ratio = measured[kind] / predicted
        rows.append({"shape": s, "class": kind, "measured_us": measured[kind],
                     "predicted_us": predicted,
                     "measured_over_predicted": ratio})
        print(f"{s:>10} {kind:>9}: {measured[kind]:7.1f} us measured, "
              f"{predicted:6.1f} us modelled ({ratio:.2f}x)")
json.dump({"what": "norm-kernels.sh compare: the measured times of 'run' "
           "against the plans priced again", "calibration": cal,
           "results": rows}, open(f"{out}/compare.json", "w"), indent=1)
PY
  ;;
*) echo "unknown mode '$mode' (prepare, run or compare)" >&2; exit 2 ;;
esac
