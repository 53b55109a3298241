#!/usr/bin/env bash
# Calibrates the cost model: runs tandem-calibrate (GPU side) unless --raw
# gives measurements taken before, then tandem-fit (MLIR side), and prints
# the report. docs/cost-model.md, "Calibrating", explains the steps.
#
#   test/benchmarks/calibrate.sh [--quick] [--device N] [--reps R]
#                                [--raw raw.json] [--target PRESET]
#                                [--build DIR] [--out-dir DIR]
#
# --build is the build directory holding bin/tandem-calibrate and/or
# bin/tandem-fit (default: $TANDEM_BUILD, else build). On a GPU machine
# without MLIR, build the runtime alone (cmake -S runtime) and run only the
# first step by hand; then run this script with --raw where MLIR is.
# Outputs in --out-dir (default calibration/): raw.json, calibration.json,
# report.md. lit never runs this file (test/lit.cfg.py excludes
# benchmarks/).
set -euo pipefail

build="${TANDEM_BUILD:-build}"
out_dir="calibration"
raw=""
target="h200"
calibrate_args=()

usage() {
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) calibrate_args+=(--quick); shift ;;
    --device|--reps)
      [[ $# -ge 2 ]] || { echo "calibrate.sh: $1 needs a value" >&2; exit 2; }
      calibrate_args+=("$1" "$2"); shift 2 ;;
    --raw|--target|--build|--out-dir)
      [[ $# -ge 2 ]] || { echo "calibrate.sh: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --raw) raw="$2" ;;
        --target) target="$2" ;;
        --build) build="$2" ;;
        --out-dir) out_dir="$2" ;;
      esac
      shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "calibrate.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

mkdir -p "$out_dir"
if [[ -z "$raw" ]]; then
  calibrate="$build/bin/tandem-calibrate"
  if [[ ! -x "$calibrate" ]]; then
    echo "calibrate.sh: $calibrate not found: build the runtime (it needs" \
         "CUDA, cuBLASLt and NCCL) or pass --raw with earlier measurements" >&2
    exit 1
  fi
  raw="$out_dir/raw.json"
  echo "== $calibrate ${calibrate_args[*]} --out $raw" >&2
  "$calibrate" "${calibrate_args[@]}" --out "$raw"
elif [[ ${#calibrate_args[@]} -gt 0 ]]; then
  echo "calibrate.sh: --quick, --device and --reps apply to tandem-calibrate," \
       "which --raw skips" >&2
  exit 2
fi

fit="$build/bin/tandem-fit"
if [[ ! -x "$fit" ]]; then
  echo "calibrate.sh: $fit not found: tandem-fit is built with the MLIR" \
       "side; copy $raw to a machine that has it and run this script with" \
       "--raw there" >&2
  exit 1
fi
echo "== $fit $raw --target $target --out $out_dir/calibration.json" \
     "--report $out_dir/report.md" >&2
"$fit" "$raw" --target "$target" --out "$out_dir/calibration.json" \
  --report "$out_dir/report.md" >&2
cat "$out_dir/report.md"
echo >&2
echo "Calibration file: $out_dir/calibration.json; use it with" \
     "tandem-opt --tandem-simulate=\"calibration=$out_dir/calibration.json\"" >&2
