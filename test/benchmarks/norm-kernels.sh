#!/bin/bash
# The runtime's norm and norm_grad kernels (RMS, bf16) through tandem-run,
# two plans per shape, measured against the model per op class
# (docs/cost-model.md, "Bandwidth-bound ops"):
#  - "alone": the norm and the norm_grad only. tandem-run times each op
#    between events on its stream, and the GPU reaches an op's first event
#    before the host has launched the op, so each time also holds the host's
#    launch of that op (the 2026-12-04 measurement, norm-kernels.json);
#  - "queued": the same two ops behind an 8192^3 GEMM that does not feed
#    them, so the host has enqueued them before the GPU reaches them, as in
#    a training step: the times are the GPU's.
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
# Plan file stems: n<shape> (alone) and q<shape> (queued behind a GEMM).
PLANS=()
for shape in "${SHAPES[@]}"; do PLANS+=("n$shape" "q$shape"); done
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
    cat > "$out/q$shape.mlir" <<MLIR
module attributes {tandem.target = #tandem.target<"h200">} {
  func.func @train_step(%a: tensor<8192x8192xbf16>, %x: tensor<${r}x${c}xbf16>, %w: tensor<${c}xbf16>, %dy: tensor<${r}x${c}xbf16>) -> (tensor<8192x8192xbf16>, tensor<${r}x${c}xbf16>, tensor<${r}x${c}xbf16>, tensor<${c}xbf16>) {
    %g = tandem.matmul fprop %a, %a : tensor<8192x8192xbf16>, tensor<8192x8192xbf16> -> tensor<8192x8192xbf16>
    %y = tandem.norm rms %x, %w {layer = "l0.ln1"} : tensor<${r}x${c}xbf16>, tensor<${c}xbf16>
    %dx, %dw = tandem.norm_grad rms %dy, %x, %w {layer = "l0.ln1"} : tensor<${r}x${c}xbf16>, tensor<${c}xbf16>
    return %g, %y, %dx, %dw : tensor<8192x8192xbf16>, tensor<${r}x${c}xbf16>, tensor<${r}x${c}xbf16>, tensor<${c}xbf16>
  }
}
MLIR
  done
  for p in "${PLANS[@]}"; do
    "$BUILD/bin/tandem-opt" "$out/$p.mlir" \
      --tandem-export-plan="file=$out/$p.json${CAL:+ calibration=$CAL}" \
      -o /dev/null 2> "$out/$p.remarks"
  done
  echo "prepared ${PLANS[*]} in $out" ;;
run)
  for p in "${PLANS[@]}"; do
    "$BUILD/bin/tandem-run" "$out/$p.json" --warmup 5 --iters 50 \
      --json "$out/$p.result.json" > "$out/$p.txt" 2>&1
  done
  python3 - "$out" "${PLANS[@]}" <<'PY'
import json, sys
out, plans = sys.argv[1], sys.argv[2:]
rows = []
for p in plans:
    r = json.load(open(f"{out}/{p}.result.json"))
    plan = "queued" if p[0] == "q" else "alone"
    for c in r["op_classes"]:
        if c["class"] not in ("norm", "norm_grad"):
            continue
        rows.append({"shape": p[1:], "plan": plan, "class": c["class"],
                     "measured_us": c["measured_us"],
                     "predicted_us": c["predicted_us"],
                     "measured_over_predicted": c["measured_over_predicted"]})
        print(f"{p[1:]:>10} {plan:>6} {c['class']:>9}: "
              f"{c['measured_us']:7.1f} us measured, "
              f"{c['predicted_us']:6.1f} us modelled")
json.dump({"what": "norm-kernels.sh: RMS norm and norm_grad kernels, bf16, "
           "tandem-run median of 50; plan 'alone' (the two ops only) or "
           "'queued' (behind an 8192^3 GEMM)", "results": rows},
          open(f"{out}/summary.json", "w"), indent=1)
PY
  ;;
compare)
  priced=$(mktemp -d)
  trap 'rm -rf "$priced"' EXIT
  bash "$0" prepare "$priced" > /dev/null
  python3 - "$out" "$priced" "${CAL:-none}" "${PLANS[@]}" <<'PY'
import json, os, sys
out, priced, cal, plans = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = []
for p in plans:
    path = f"{out}/{p}.result.json"
    if not os.path.exists(path):
        continue  # a run of the older script: no queued plans
    plan = "queued" if p[0] == "q" else "alone"
    measured = {c["class"]: c["measured_us"] for c in
                json.load(open(path))["op_classes"]}
    for step in json.load(open(f"{priced}/{p}.json"))["steps"]:
        kind = step["kind"]
        if kind not in ("norm", "norm_grad"):
            continue
        predicted = step["predicted"]["alone_us"]
        ratio = measured[kind] / predicted
        rows.append({"shape": p[1:], "plan": plan, "class": kind,
                     "measured_us": measured[kind], "predicted_us": predicted,
                     "measured_over_predicted": ratio})
        print(f"{p[1:]:>10} {plan:>6} {kind:>9}: {measured[kind]:7.1f} us "
              f"measured, {predicted:6.1f} us modelled ({ratio:.2f}x)")
json.dump({"what": "norm-kernels.sh compare: the measured times of 'run' "
           "against the plans priced again", "calibration": cal,
           "results": rows}, open(f"{out}/compare.json", "w"), indent=1)
PY
  ;;
*) echo "unknown mode '$mode' (prepare, run or compare)" >&2; exit 2 ;;
esac
