#!/usr/bin/env bash
# Newcomer entry point: installs what is missing, builds, and either runs the
# main example or every test.
#
#   bash tools/tandem-dev.sh example   # install, build, run the main job
#   bash tools/tandem-dev.sh test      # install, build, run every test, then
#                                      # fuzz each target FUZZ_SECONDS (30; 0
#                                      # skips) in build-fuzz
#   bash tools/tandem-dev.sh fuzz      # only the fuzzing
#
# Environment: BUILD_DIR (default build), JOBS (default 2).
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-2}
LLVM_BIN=/usr/lib/llvm-22/bin
PACKAGES=(cmake ninja-build g++ llvm-22-dev llvm-22-tools libmlir-22-dev
          mlir-22-tools libgtest-dev python3 python3-venv)
# tandem-import reads StableHLO through jaxlib's MLIR bindings: jax (CPU
# wheels from PyPI) goes into $BUILD_DIR/python-venv, which the importer's
# launcher and its lit tests use.
JAX_VERSION=0.10.2
# The fuzz mode also needs clang and its libFuzzer/sanitizer runtimes.
FUZZ_PACKAGES=(clang-22 libclang-rt-22-dev)

usage() {
  echo "usage: $0 example|test|fuzz" >&2
  exit 2
}

install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "== packages: all present"
    return
  fi
  echo "== installing: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || {
      echo "error: need root (or sudo) to install: ${missing[*]}" >&2
      exit 1
    }
    sudo=sudo
  fi
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
}

install_python_packages() {
  local venv="$BUILD_DIR/python-venv"
  if "$venv/bin/python3" -c "import sys, jax; sys.exit(jax.__version__ != '$JAX_VERSION')" \
      2>/dev/null; then
    echo "== python: jax $JAX_VERSION present"
    return
  fi
  echo "== installing jax==$JAX_VERSION into $venv"
  python3 -m venv "$venv"
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check "jax==$JAX_VERSION"
}

# cuDNN's attention in the runtime (docs/runtime.md) needs the header-only
# cudnn-frontend: where the CUDA toolkit has cuDNN, fetch it (PyPI) into
# $BUILD_DIR/cudnn-frontend, where the configure step looks. Elsewhere (CI:
# no CUDA) nothing is fetched, and the runtime builds without it either way.
fetch_cudnn_frontend() {
  local nvcc cuda
  nvcc=$(command -v nvcc || true)
  [ -n "$nvcc" ] || [ -x /usr/local/cuda/bin/nvcc ] || return 0
  cuda=$(dirname "$(dirname "$(readlink -f "${nvcc:-/usr/local/cuda/bin/nvcc}")")")
  [ -f "$cuda/include/cudnn.h" ] || [ -f /usr/include/cudnn.h ] ||
    [ -f /usr/include/x86_64-linux-gnu/cudnn.h ] || return 0
  local python=python3
  [ -x "$BUILD_DIR/python-venv/bin/python3" ] && python=$BUILD_DIR/python-venv/bin/python3
  PYTHON=$python bash tools/fetch-cudnn-frontend.sh "$BUILD_DIR/cudnn-frontend" || echo \
    "== warning: cudnn-frontend could not be fetched; the runtime builds without cuDNN attention" >&2
}

build() {
  fetch_cudnn_frontend
  echo "== configuring in $BUILD_DIR"
  mkdir -p "$BUILD_DIR"
  local log="$BUILD_DIR/configure.log"
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT="$LLVM_BIN/lit" >"$log" 2>&1 || {
    cat "$log" >&2
    exit 1
  }
  grep -E "Tandem runtime" "$log" || true
  echo "== building (-j$JOBS)"
  ninja -C "$BUILD_DIR" -j"$JOBS"
}

run_example() {
  local out="$BUILD_DIR/example"
  mkdir -p "$out"
  local args=(--model gpt3-175b --layers 4 --tp 8 --target h200 --topology switch)
  local step="$out/gpt3-175b-4l-tp8.mlir"
  echo "== tandem-gen ${args[*]}"
  "$BUILD_DIR/bin/tandem-gen" "${args[@]}" -o "$step"
  echo "== before: the step as generated (serial: every collective blocks)"
  "$BUILD_DIR/bin/tandem-opt" "$step" -o /dev/null \
    --tandem-simulate="summary=true report=$out/before.json trace=$out/before-trace.json"
  echo
  echo "== after: --tandem-overlap (strategy auto)"
  # The remark's text only: its location line would echo the function's
  # signature (thousands of characters), the line the function starts on.
  "$BUILD_DIR/bin/tandem-opt" "$step" -o "$out/scheduled.mlir" \
    --mlir-print-op-on-diagnostic=false --tandem-overlap \
    --tandem-simulate="summary=true report=$out/after.json trace=$out/after-trace.json" \
    2>"$out/overlap-remarks.txt" || { cat "$out/overlap-remarks.txt" >&2; exit 1; }
  sed -n -e 's/.*remark: /auto: /p' "$out/overlap-remarks.txt"
  echo
  echo "== execution plans for the runtime (reference and scheduled)"
  # Only the remark's text: the location line would echo the signature.
  "$BUILD_DIR/bin/tandem-opt" "$step" -o /dev/null \
    --mlir-print-op-on-diagnostic=false \
    --tandem-export-plan="file=$out/reference-plan.json" 2>&1 |
    sed -n -e 's/.*remark: /reference /p' -e '/error:/p'
  "$BUILD_DIR/bin/tandem-opt" "$out/scheduled.mlir" -o /dev/null \
    --mlir-print-op-on-diagnostic=false \
    --tandem-export-plan="file=$out/plan.json" 2>&1 |
    sed -n -e 's/.*remark: /scheduled /p' -e '/error:/p'
  echo
  echo "IR:      $step -> $out/scheduled.mlir"
  echo "reports: $out/before.json $out/after.json"
  echo "traces:  $out/before-trace.json $out/after-trace.json (open in https://ui.perfetto.dev)"
  echo "plans:   $out/reference-plan.json $out/plan.json"
  if [ -x "$BUILD_DIR/bin/tandem-run" ]; then
    echo "         on a GPU machine (one rank's program, stand-in collectives):"
    echo "         $BUILD_DIR/bin/tandem-run $out/plan.json --standin-collectives --check --reference $out/reference-plan.json"
  fi
}

run_tests() {
  echo "== running every test (lit: FileCheck, unit and GPU tests)"
  local log="$BUILD_DIR/check-tandem.log"
  set +e
  ninja -C "$BUILD_DIR" -j"$JOBS" check-tandem 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  set -e
  # One closing line in the form CI reads: "N passed, N failed, N skipped".
  local passed failed skipped
  # awk alone, so that a category lit did not print counts as 0.
  passed=$(awk -F: '/^ *Passed *:/ {s+=$2} END {print s+0}' "$log")
  failed=$(awk -F: '/^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *:/ {s+=$2} END {print s+0}' "$log")
  skipped=$(awk -F: '/^ *(Skipped|Unsupported|Expectedly Failed) *:/ {s+=$2} END {print s+0}' "$log")
  SUMMARY="$passed passed, $failed failed, $skipped skipped"
  echo "$SUMMARY"
  if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
    exit 1
  fi
}

# A time-boxed run of every fuzz target (docs/testing.md), in a build
# directory of its own: the IR, simulator, overlap and calibration targets
# (test/benchmarks/fuzz-ir.sh), then the plan target
# (test/benchmarks/fuzz-plan.sh), FUZZ_SECONDS each (30 by default; 0 skips
# the fuzzing, with a line that says so). The long runs use the scripts
# directly.
run_fuzz() {
  local secs=${FUZZ_SECONDS:-30}
  local dir=${FUZZ_BUILD_DIR:-build-fuzz}
  if [ "$secs" = 0 ]; then
    echo "== fuzzing: skipped (FUZZ_SECONDS=0)"
    return
  fi
  echo "== fuzzing: $secs s per target in $dir"
  FUZZ_BUILD_DIR=$dir JOBS=$JOBS bash test/benchmarks/fuzz-ir.sh "$secs"
  ninja -C "$dir" -j"$JOBS" tandem-plan-fuzzer >/dev/null
  case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
  BUILD="$dir" WORKERS=1 RUNS=0 SECONDS_PER_RUN="$secs" \
    bash test/benchmarks/fuzz-plan.sh
}

[ $# -eq 1 ] || usage
case "$1" in
example) install_missing; install_python_packages; build; run_example ;;
test)
  install_missing "${FUZZ_PACKAGES[@]}"; install_python_packages; build
  run_tests; run_fuzz
  echo "$SUMMARY" ;; # The closing line again, after the fuzzing.
fuzz) install_missing "${FUZZ_PACKAGES[@]}"; run_fuzz ;;
*) usage ;;
esac
