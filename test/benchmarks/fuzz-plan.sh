#!/bin/bash
# Long, time-boxed run of the plan fuzz target (runtime/fuzz): the plan
# reader, validation and the memory planner under libFuzzer with ASan and
# UBSan. Prints the executions, executions per second and findings of every
# worker and in total; exits 1 if any worker found a crash, a hang (a single
# input over TIMEOUT seconds) or an allocation over RSS_MB.
#
#   bash test/benchmarks/fuzz-plan.sh                 # 2 workers, 25 min
#   SECONDS_PER_RUN=60 WORKERS=1 bash test/benchmarks/fuzz-plan.sh
#
# Environment: BUILD (default build-fuzz, configured with clang++-22 and
# -DTANDEM_FUZZ=ON when it has no fuzzer yet), WORKERS (2), SECONDS_PER_RUN
# (1500, the wall-clock box of each worker), RUNS (1000000 in total, split
# over the workers; 0 = only the time box), OUT (BUILD/fuzz-plan: the
# growing corpus and any crash files), TIMEOUT (10 s per input), RSS_MB (2048).
# A crash file found here belongs in runtime/fuzz/corpus/plan-regressions/
# once fixed: the unit tests replay that directory on every run.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$here/build-fuzz}
WORKERS=${WORKERS:-2}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-1500}
RUNS=${RUNS:-1000000}
OUT=${OUT:-$BUILD/fuzz-plan}
TIMEOUT=${TIMEOUT:-10}
RSS_MB=${RSS_MB:-2048}
fuzzer=$BUILD/bin/tandem-plan-fuzzer

if [ ! -x "$fuzzer" ]; then
  echo "== building $fuzzer"
  mkdir -p "$BUILD"
  CXX=${CXX:-clang++-22} CC=${CC:-clang-22} cmake -G Ninja -S "$here/runtime" \
    -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTANDEM_FUZZ=ON \
    -DTANDEM_RUNTIME=OFF >"$BUILD/configure.log" 2>&1 || {
    cat "$BUILD/configure.log" >&2
    exit 2
  }
  ninja -C "$BUILD" -j"${JOBS:-1}" tandem-plan-fuzzer || exit 2
fi

corpus=$OUT/corpus
crashes=$OUT/crashes
mkdir -p "$corpus" "$crashes"
cp -n "$here"/runtime/fuzz/corpus/plan-seeds/* "$corpus"/
runs_each=0
[ "$RUNS" -gt 0 ] && runs_each=$(((RUNS + WORKERS - 1) / WORKERS))

echo "== machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "== $WORKERS worker(s), ${SECONDS_PER_RUN} s each, runs per worker: ${runs_each} (0 = unbounded)"
pids=()
for w in $(seq 1 "$WORKERS"); do
  args=(-max_total_time="$SECONDS_PER_RUN" -timeout="$TIMEOUT"
        -rss_limit_mb="$RSS_MB" -malloc_limit_mb="$RSS_MB" -max_len=32768
        -dict="$here/runtime/fuzz/plan.dict" -print_final_stats=1
        -artifact_prefix="$crashes/" -seed="$w")
  [ "$runs_each" -gt 0 ] && args+=(-runs="$runs_each")
  "$fuzzer" "${args[@]}" "$corpus" >"$OUT/worker-$w.log" 2>&1 &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do
  wait "$p" || status=1
done

total=0
rate=0
for w in $(seq 1 "$WORKERS"); do
  log=$OUT/worker-$w.log
  execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  speed=$(grep -m1 'stat::average_exec_per_sec' "$log" | awk '{print $2}')
  rss=$(grep -m1 'stat::peak_rss_mb' "$log" | awk '{print $2}')
  echo "worker $w: ${execs:-?} executions, ${speed:-?} exec/s, peak RSS ${rss:-?} MB"
  total=$((total + ${execs:-0}))
  rate=$((rate + ${speed:-0}))
  grep -E '^==[0-9]+==ERROR|SUMMARY|plan fuzzer:|ALARM|out-of-memory|Test unit written' "$log" | head -5
done
found=$(find "$crashes" -type f | wc -l)
echo "total: $total executions, $rate exec/s (sum over workers), corpus $(ls "$corpus" | wc -l) files, $found finding(s) in $crashes"
[ "$found" -eq 0 ] && [ "$status" -eq 0 ] || exit 1
