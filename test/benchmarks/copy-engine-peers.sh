#!/bin/bash
# Copy-engine collectives across ranks (docs/runtime.md, "Copy-engine
# collectives across GPUs") on whatever GPUs the machine has:
#
#   bash test/benchmarks/copy-engine-peers.sh prepare DIR   # here (tandem-opt)
#   bash test/benchmarks/copy-engine-peers.sh run DIR       # on the GPU machine
#
# prepare exports test/runtime/Inputs/small-step.mlir (TP=8) with every
# collective on the copy engines (tandem-copy-engines mode=all) as
# DIR/small-ce.json. run (BUILD: a runtime build with MPI and
# TandemRuntimeTests) runs the ExecutorTest.CopyEngine* tests (two ranks
# as threads and as processes, values checked) and the plan as 8 MPI
# processes, inputs per rank
# (--rank-seeds), --check against itself. On a machine with fewer than 8
# GPUs the processes share GPUs (the plan needs no NCCL communicator), and
# without MPS their contexts take turns on the GPU, so the step time then
# measures time slicing, not copy engines: a smoke test of the exchange,
# the CUDA IPC mapping and the handshakes. NCCL_NVLS_ENABLE=0 is exported.
# lit never runs this file.
set -uo pipefail
phase=${1:-}; dir=${2:-}
[ -n "$phase" ] && [ -n "$dir" ] || { echo "usage: $0 prepare|run DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
case "$phase" in
prepare)
  BUILD=${BUILD:-build}
  mkdir -p "$dir"
  "$BUILD/bin/tandem-opt" "$root/test/runtime/Inputs/small-step.mlir" \
    --tandem-copy-engines=mode=all \
    --tandem-export-plan="file=$dir/small-ce.json function=train_step" \
    -o /dev/null 2> "$dir/remarks.txt" || exit 1
  echo "prepared $dir/small-ce.json"
  ;;
run)
  BUILD=${BUILD:-build-runtime}
  [ -f "$dir/small-ce.json" ] || { echo "$dir/small-ce.json missing: run prepare" >&2; exit 2; }
  timeout 120 "$BUILD/unittests/TandemRuntimeTests" \
    --gtest_filter='ExecutorTest.CopyEngine*' > "$dir/unit-tests.log" 2>&1
  echo "== unit tests rc $?"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" "$dir/unit-tests.log"
  timeout 120 mpirun --allow-run-as-root --oversubscribe -n 8 \
    -x NCCL_NVLS_ENABLE=0 "$BUILD/bin/tandem-run" "$dir/small-ce.json" \
    --rank-seeds --warmup 2 --iters 5 --timeout 30 \
    --check --reference "$dir/small-ce.json" > "$dir/mpi-ce.txt" 2>&1
  echo "== 8 MPI ranks rc $?"
  grep -E "step time|fabric|check" "$dir/mpi-ce.txt" | sort | uniq -c
  ;;
*) echo "usage: $0 prepare|run DIR" >&2; exit 2 ;;
esac
