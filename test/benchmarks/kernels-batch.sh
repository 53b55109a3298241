#!/bin/bash
# One device batch for the norm and layout-copy kernels (issue 14 item 4
# and the layout copies): build the runtime, the kernel unit tests (GPU and
# host), compute-sanitizer memcheck on the copy and norm tests, a full
# tandem-calibrate (its `norm` and `strided_copy` sections time the kernels
# alone over shapes), and norm-kernels.sh (the kernels through tandem-run,
# alone and queued behind a GEMM).
# Everything measured lands in one tarball under $OUT.
#
#   bash test/benchmarks/kernels-batch.sh prepare DIR   # here (tandem-opt)
#   bash test/benchmarks/kernels-batch.sh run DIR       # on the GPU machine
#   bash test/benchmarks/kernels-batch.sh fit RESULTS   # here (tandem-fit)
#
# prepare writes the norm-kernels.sh plans into DIR/norms (BUILD: the MLIR
# build, default build; CAL as in norm-kernels.sh). run builds the runtime
# into build-kb, writes DIR's results to $OUT/kernels (or DIR/results
# without $OUT) and tars them as $OUT/kernels.tgz. Each step has a timeout
# (build 190 s, unit tests 55 s, memcheck 50 s, calibrate 110 s,
# norm-kernels 40 s: 445 s, plus the configure and the tarball), so the run
# ends within 8 minutes; a step that fails or times out is reported and the
# rest still run (calibrate.log keeps every measurement tandem-calibrate
# printed even if it is stopped before it writes its file). Afterwards,
# where MLIR is, `fit RESULTS` (RESULTS: the unpacked kernels/ directory)
# runs tandem-fit on RESULTS/calibrate-raw.json (RESULTS/calibration.json
# and calibration-fit.md; docs/cost-model.md) and `norm-kernels.sh compare`
# of RESULTS/norms against it (RESULTS/norms/compare.json).
#
# CALIBRATE_ARGS are extra tandem-calibrate arguments (e.g. `--comm emulated`
# for the calibration the emulated-fabric fidelity runs plan with).
#
# The device command (from the repository root, DIR = devrun/kernels, which
# /.gitignore ignores, so the run carries it):
#   bash test/benchmarks/kernels-batch.sh prepare devrun/kernels   # here
#   run(command="NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 bash test/benchmarks/kernels-batch.sh run devrun/kernels", carry=["devrun/kernels"], kind="nvidia-h200", timeout_s=540)
#
# lit never runs this file.
set -uo pipefail
mode=${1:?prepare, run or fit}
dir=${2:?directory}
here=$(cd "$(dirname "$0")" && pwd)
case "$mode" in
prepare)
  set -e
  mkdir -p "$dir"
  bash "$here/norm-kernels.sh" prepare "$dir/norms"
  echo "prepared $dir" ;;
run)
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
  [ -d "$dir/norms" ] || { echo "no $dir/norms: run 'prepare $dir' first" >&2; exit 2; }
  if [ -n "${OUT:-}" ]; then R=$OUT/kernels; else R=$dir/results; fi
  mkdir -p "$R"
  B=build-kb
  t0=$(date +%s)
  stamp() { echo "$1 rc $2 at $(( $(date +%s) - t0 ))s"; }
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem \
    --format=csv > "$R/gpu.txt" 2>&1
  jobs=$(nproc)
  { cmake -G Ninja -S runtime -B $B -DCMAKE_BUILD_TYPE=Release \
      -DTANDEM_RUNTIME=ON &&
    timeout 190 ninja -C $B -j"$jobs" tandem-run tandem-calibrate \
      TandemRuntimeTests; } > "$R/build.log" 2>&1
  rc=$?; stamp build $rc
  if [ $rc -ne 0 ]; then
    tail -40 "$R/build.log"
  else
    timeout 55 $B/unittests/TandemRuntimeTests --gtest_filter='Kernels*' \
      > "$R/kernels-test.log" 2>&1
    stamp "unit tests (Kernels*)" $?; tail -3 "$R/kernels-test.log"
    timeout 50 compute-sanitizer --tool memcheck \
      $B/unittests/TandemRuntimeTests \
      --gtest_filter='KernelsTest.Copy2D*:KernelsTest.NormAndNormGrad*' \
      > "$R/memcheck.log" 2>&1
    stamp memcheck $?; tail -2 "$R/memcheck.log"
    # shellcheck disable=SC2086
    timeout 110 $B/bin/tandem-calibrate --out "$R/calibrate-raw.json" \
      ${CALIBRATE_ARGS:-} > "$R/calibrate.log" 2>&1
    stamp "tandem-calibrate (full)" $?
    grep -E "^(launch|hbm|norm|norm_grad|copy)[: ]" "$R/calibrate.log"
    cp -r "$dir/norms" "$R/norms"
    timeout 40 env BUILD=$B bash "$here/norm-kernels.sh" run "$R/norms" \
      > "$R/norm-kernels.txt" 2>&1
    stamp norm-kernels.sh $?; cat "$R/norm-kernels.txt"
    rm -f "$R"/norms/*.mlir
  fi
  echo "total $(( $(date +%s) - t0 ))s"
  if [ -n "${OUT:-}" ]; then
    (cd "$OUT" && tar czf kernels.tgz kernels && rm -rf kernels)
  fi ;;
fit)
  set -e
  BUILD=${BUILD:-build}
  "$BUILD/bin/tandem-fit" "$dir/calibrate-raw.json" \
    --out "$dir/calibration.json" --report "$dir/calibration-fit.md"
  CAL=$(cd "$dir" && pwd)/calibration.json BUILD=$BUILD \
    bash "$here/norm-kernels.sh" compare "$dir/norms" ;;
*) echo "unknown mode '$mode' (prepare, run or fit)" >&2; exit 2 ;;
esac
