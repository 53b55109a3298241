#!/usr/bin/env bash
# Long fuzz run of every target (docs/testing.md): seeds from the tests,
# then each target in turn for SECONDS on one core, with a 10 s per-input
# timeout and a 2 GiB RSS limit. Prints, per target, the inputs executed and
# the executions per second; a crash, hang or RSS overrun leaves its input in
# OUT/findings/<target>/ and makes the script exit 1.
#
#   test/benchmarks/fuzz-ir.sh [SECONDS_PER_TARGET (600)] [TARGET...]
#
# Environment: FUZZ_BUILD_DIR (default build-fuzz; configured and built if
# missing, with clang++-22), FUZZ_OUT (default $FUZZ_BUILD_DIR/fuzz-run).
# .ci/run (through tools/tandem-dev.sh fuzz) runs it for 30 s per target.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_PER_TARGET=${1:-600}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(ir-parse simulate overlap calibration)
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
OUT=${FUZZ_OUT:-$BUILD/fuzz-run}

if ! command -v clang++-22 >/dev/null; then
  echo "fuzz-ir.sh: error: clang++-22 not found (apt-get install clang-22 libclang-rt-22-dev)" >&2
  exit 1
fi
if [ ! -f "$BUILD/build.ninja" ]; then
  mkdir -p "$BUILD"
  cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit -DTANDEM_RUNTIME=OFF \
    -DTANDEM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER=clang-22 >"$BUILD/configure.log" 2>&1 || {
    cat "$BUILD/configure.log" >&2
    exit 1
  }
fi
ninja -C "$BUILD" -j"${JOBS:-2}" "${TARGETS[@]/#/tandem-fuzz-}"

mkdir -p "$OUT"
python3 tools/tandem-fuzz/seed-corpus.py . "$OUT/seeds"
status=0
for target in "${TARGETS[@]}"; do
  case "$target" in
  calibration) seeds=$OUT/seeds/calibration max_len=65536 ;;
  overlap) seeds=$OUT/seeds/ir max_len=4096 ;;
  *) seeds=$OUT/seeds/ir max_len=16384 ;;
  esac
  corpus=$OUT/corpus/$target
  findings=$OUT/findings/$target
  mkdir -p "$corpus" "$findings"
  log=$OUT/$target.log
  echo "== $target: ${SECONDS_PER_TARGET}s"
  # The corpus directory grows across runs; the seeds are read-only input.
  # ASAN_OPTIONS: a leak at exit is not a finding of these targets;
  # allow_user_poisoning=0 because LLVM's BumpPtrAllocator poisons its slabs
  # in our instrumented code but Debian's uninstrumented MLIR libraries
  # allocate from the same slabs without unpoisoning (a false
  # use-after-poison in MLIRContext's constructor otherwise).
  set +e
  ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 \
    "$BUILD/bin/tandem-fuzz-$target" \
      -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
      -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$findings/" \
      "$corpus" "$seeds" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  echo "$target: ${runs:-?} inputs executed, ${rate:-?} exec/s, peak RSS ${rss:-?} MB, exit $rc"
  if [ "$rc" -ne 0 ] || ls "$findings" | grep -q .; then
    echo "$target: FINDING, see $log and $findings/" >&2
    grep -m3 -E "ERROR|SUMMARY|timeout|out-of-memory" "$log" >&2 || true
    status=1
  fi
done
exit $status
