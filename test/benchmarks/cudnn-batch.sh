#!/bin/bash
# One device batch for cuDNN's attention in the runtime (issue 14, item 1):
# builds the runtime with cuDNN (the cuDNN of the machine's PyTorch wheel,
# nvidia-cudnn-cu13, unless CUDNN_ROOT is set; cudnn-frontend's headers
# from tools/fetch-cudnn-frontend.sh, carried), runs the GPU unit tests,
# attention-vs-sdpa.py with Tandem's fused kernels and cuDNN's beside
# PyTorch's SDPA, the fidelity cases of FID (prepared here by fidelity.sh)
# with fused and with cuDNN attention side by side, and runtime-check.sh's
# matrix (prepared here) with cuDNN attention. Everything measured lands
# in RESULTS (default devrun/cudnn-results) and, as one tarball, in $OUT.
#
#   bash tools/fetch-cudnn-frontend.sh build-runtime/cudnn-frontend      # here
#   ONLY=tp1 bash test/benchmarks/fidelity.sh prepare devrun/fid1        # here
#   bash test/benchmarks/runtime-check.sh prepare devrun/rc              # here
#   run(command="FID=devrun/fid1 RC=devrun/rc bash test/benchmarks/cudnn-batch.sh",
#       carry=["build-runtime/cudnn-frontend", "devrun"], kind="nvidia-h200")
#
# FID, RC: prepared directories (either may be empty: skipped);
# FID_ATTENTION: the --attention values the fidelity cases run with
# (default "fused cudnn"); STEPS: which parts run (default "build tests
# attention fidelity check"; also "calibrate": tandem-calibrate --comm
# emulated); BUILD_TARGETS: what the build step builds (default tandem-run,
# tandem-attention-bench, tandem-calibrate, TandemRuntimeTests). Each part
# has a timeout; a part that fails is
# reported and the rest still run. lit never runs this file.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
R=${RESULTS:-devrun/cudnn-results}
mkdir -p "$R"
B=build-cudnn
STEPS=${STEPS:-build tests attention fidelity check}
t0=$(date +%s)
stamp() { echo "== $1 rc $2 at $(($(date +%s) - t0))s"; }
has() { [[ " $STEPS " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit \
  --format=csv > "$R/gpu.txt" 2>&1
cat "$R/gpu.txt"

if [ -z "${CUDNN_ROOT:-}" ]; then
  CUDNN_ROOT=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null)
fi
echo "cuDNN from ${CUDNN_ROOT:-nowhere}"

if has build; then
  { cmake -G Ninja -S runtime -B $B -DCMAKE_BUILD_TYPE=Release \
      -DTANDEM_RUNTIME=ON -DTANDEM_CUDNN=ON -DCUDNN_ROOT="$CUDNN_ROOT" \
      -DTANDEM_CUDNN_FRONTEND_DIR="$PWD/build-runtime/cudnn-frontend/include" &&
    timeout 240 ninja -C $B -j"$(nproc)" ${BUILD_TARGETS:-tandem-run \
      tandem-attention-bench tandem-calibrate TandemRuntimeTests}; } > "$R/build.log" 2>&1
  rc=$?; stamp build $rc
  grep -E "Tandem runtime:" "$R/build.log"
  [ $rc -eq 0 ] || { tail -40 "$R/build.log"; exit 1; }
fi

if has tests; then
  timeout 100 $B/unittests/TandemRuntimeTests --gtest_filter="${TESTS:-Kernels*}" \
    > "$R/unit-tests.log" 2>&1
  stamp "unit tests" $?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Cudnn" "$R/unit-tests.log" | head -30
fi

if has attention; then
  timeout 180 python3 "$here/attention-vs-sdpa.py" --bench $B/bin/tandem-attention-bench \
    --cudnn --json "$R/attention-vs-sdpa.json" > "$R/attention-vs-sdpa.log" 2>&1
  stamp attention-vs-sdpa $?
  tail -30 "$R/attention-vs-sdpa.log"
fi

# tandem-calibrate against the emulated fabric (the calibration the
# emulated fidelity steps plan with); tandem-fit runs here afterwards.
if has calibrate; then
  timeout 200 $B/bin/tandem-calibrate --comm emulated \
    --out "$R/calibrate-raw-emulated.json" > "$R/calibrate.log" 2>&1
  stamp "tandem-calibrate --comm emulated" $?
  tail -5 "$R/calibrate.log"
fi

if has fidelity && [ -n "${FID:-}" ] && [ -d "$FID" ]; then
  for att in ${FID_ATTENTION:-fused cudnn}; do
    mkdir -p "$R/fid-$att"
    cp "$FID"/*.json "$FID"/*.mlir "$R/fid-$att/" 2>/dev/null
    timeout ${FID_TIMEOUT:-420} env BUILD=$B ATTENTION=$att ONLY="${ONLY:-.}" \
      bash "$here/fidelity.sh" run "$R/fid-$att" > "$R/fid-$att.log" 2>&1
    stamp "fidelity ($att)" $?
    grep -E "^===|step time|predicted span|median" "$R/fid-$att.log" | head -60
  done
fi

if has check && [ -n "${RC:-}" ] && [ -d "$RC" ]; then
  timeout ${CHECK_TIMEOUT:-150} env BUILD=$B TANDEM_ATTENTION=cudnn \
    bash "$here/runtime-check.sh" run "$RC" > "$R/runtime-check-cudnn.log" 2>&1
  stamp "runtime-check (cuDNN attention)" $?
  tail -8 "$R/runtime-check-cudnn.log"
fi

[ -n "${OUT:-}" ] && tar czf "$OUT/cudnn-batch.tgz" -C "$R" .
echo "== done at $(($(date +%s) - t0))s"
