#!/bin/bash
# Correctness matrix of the runtime on one GPU: every --tandem-overlap
# strategy, plus forced P2P and chunked pipelines (blocking and async), in
# bf16 and f32, each run with tandem-run --check against the unscheduled
# reference; and the one-rank NCCL plan, with threads and (when the runtime
# was built with MPI) under mpirun.
#
#   bash test/benchmarks/runtime-check.sh prepare OUTDIR   # needs tandem-opt
#   bash test/benchmarks/runtime-check.sh run OUTDIR       # needs a GPU
#
# BUILD is the build directory with tandem-opt / tandem-run (default build);
# MPI_RUN, if set, is a tandem-run built with MPI (e.g. build-runtime/bin/
# tandem-run) and is also run under `mpirun -n 1`. TP=8 plans run in the
# single-GPU stand-in mode: their collectives are device copies. Exits 1 if
# any check fails. CHECKS, a regular expression, runs only the checks whose
# label matches (the labels the run prints; default all).
set -uo pipefail
mode=${1:?prepare or run}
out=${2:?output directory}
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
VARIANTS=(none bulk reschedule pipeline te-preset te-preset+reschedule auto
          split force-p2p force-p2p-async force-chunked force-chunked-async
          force-split2 force-split4 ce-all force-p2p-ce)
mkdir -p "$out"
if [ "$mode" = prepare ]; then
  set -e
  opt="$BUILD/bin/tandem-opt"
  sed 's/bf16/f32/g' "$here/runtime/Inputs/small-step.mlir" > "$out/f32.mlir"
  cp "$here/runtime/Inputs/small-step.mlir" "$out/bf16.mlir"
  for n in bf16 f32; do
    ex="function=train_step"
    "$opt" "$out/$n.mlir" --tandem-export-plan="file=$out/$n-ref.json $ex" -o /dev/null 2>/dev/null
    for s in none bulk reschedule pipeline te-preset te-preset+reschedule auto split; do
      "$opt" "$out/$n.mlir" --tandem-overlap="strategy=$s" \
        --tandem-export-plan="file=$out/$n-$s.json $ex" -o /dev/null 2>/dev/null
    done
    for m in p2p chunked; do
      "$opt" "$out/$n.mlir" --tandem-pipeline-collective-matmul="method=$m chunks=4" \
        --tandem-export-plan="file=$out/$n-force-$m.json $ex" -o /dev/null 2>/dev/null
      "$opt" "$out/$n.mlir" --tandem-pipeline-collective-matmul="method=$m chunks=4" \
        --tandem-async-collectives --tandem-bulk-overlap --tandem-assign-streams \
        --tandem-export-plan="file=$out/$n-force-$m-async.json $ex" -o /dev/null 2>/dev/null
    done
    # Every all-gather, reduce-scatter and ring step on the copy engines
    # (tandem.copy_engine): a bulk schedule, and a forced P2P pipeline.
    "$opt" "$out/$n.mlir" --tandem-overlap="strategy=reschedule" \
      --tandem-copy-engines=mode=all \
      --tandem-export-plan="file=$out/$n-ce-all.json $ex" -o /dev/null 2>/dev/null
    "$opt" "$out/$n.mlir" --tandem-pipeline-collective-matmul="method=p2p chunks=4" \
      --tandem-async-collectives --tandem-bulk-overlap --tandem-copy-engines=mode=all \
      --tandem-assign-streams \
      --tandem-export-plan="file=$out/$n-force-p2p-ce.json $ex" -o /dev/null 2>/dev/null
    # Batch splits with a forced part count, then bulk overlap (the pass
    # verifies the result against its split input).
    for k in 2 4; do
      "$opt" "$out/$n.mlir" --tandem-split-batch="parts=$k" \
        --tandem-overlap="strategy=reschedule" \
        --tandem-export-plan="file=$out/$n-force-split$k.json $ex" -o /dev/null 2>/dev/null
    done
  done
  # gen NAME ARGS...: tandem-gen ARGS into NAME.mlir, and its unscheduled
  # plan NAME-ref.json. plan NAME TAG PASSES...: NAME.mlir through PASSES
  # into NAME-TAG.json.
  gen() {
    local name=$1
    shift
    "$BUILD/bin/tandem-gen" "$@" -o "$out/$name.mlir"
    "$opt" "$out/$name.mlir" --tandem-export-plan="file=$out/$name-ref.json" -o /dev/null 2>/dev/null
  }
  plan() {
    local name=$1 tag=$2
    shift 2
    "$opt" "$out/$name.mlir" "$@" \
      --tandem-export-plan="file=$out/$name-$tag.json" -o /dev/null 2>/dev/null
  }
  # A full-size emulated TP=8 layer split in two, against its unsplit input;
  # the same layer scheduled by auto with copy-engine collectives allowed,
  # and with every collective forced onto the copy engines.
  gen l70 --model llama3-70b --layers 1 --tp 8 --seq 4096
  plan l70 split2 --tandem-split-batch=parts=2 --tandem-overlap=strategy=bulk
  plan l70 auto-ce --tandem-overlap="strategy=auto copy-engines=true"
  plan l70 ce-all --tandem-overlap="strategy=pipeline+reschedule copy-engines=true" \
    --tandem-copy-engines=mode=all
  # A TP=1 step (no collectives) split in two and in four.
  gen l8tp1 --model llama3-8b --layers 2 --tp 1 --seq 2048
  for k in 2 4; do
    plan l8tp1 split$k --tandem-split-batch=parts=$k --tandem-overlap=strategy=bulk
  done
  # Splits along whole sequences (tandem-gen --sequences): an emulated
  # TP=8 layer of 2 sequences split by sequence, the same with auto (which
  # may choose the split and copy-engine collectives), and a TP=1 step.
  gen l70seq --model llama3-70b --layers 1 --tp 8 --seq 2048 --sequences 2
  plan l70seq split2 --tandem-split-batch=parts=2 --tandem-overlap=strategy=reschedule
  plan l70seq auto-ce --tandem-overlap="strategy=auto copy-engines=true"
  gen l8seq --model llama3-8b --layers 2 --tp 1 --seq 1024 --sequences 2
  plan l8seq split2 --tandem-split-batch=parts=2 --tandem-overlap=strategy=bulk
  # The causal token split of one sequence (tandem-gen --segments 2):
  # prefix attention (queries) split into 2 parts, on an emulated TP=8 layer
  # (split and auto) and on TP=1.
  gen l70seg --model llama3-70b --layers 1 --tp 8 --seq 4096 --segments 2
  plan l70seg split2 --tandem-split-batch=parts=2 --tandem-overlap=strategy=reschedule
  plan l70seg auto-ce --tandem-overlap="strategy=auto copy-engines=true"
  gen l8seg --model llama3-8b --layers 2 --tp 1 --seq 2048 --segments 2
  plan l8seg split2 --tandem-split-batch=parts=2 --tandem-overlap=strategy=bulk
  # Uneven parts (weights [1, 3]: segment 0, then segments 1 .. 3) of a
  # sequence in 4 causal segments: emulated TP=8 and TP=1.
  gen l70seg4 --model llama3-70b --layers 1 --tp 8 --seq 4096 --segments 4
  plan l70seg4 split13 --tandem-split-batch="weights=1,3" --tandem-overlap=strategy=reschedule
  gen l8seg4 --model llama3-8b --layers 2 --tp 1 --seq 2048 --segments 4
  plan l8seg4 split13 --tandem-split-batch="weights=1,3" --tandem-overlap=strategy=bulk
  nc="$here/runtime/Inputs/single-rank-collectives.mlir"
  "$opt" "$nc" --tandem-export-plan="file=$out/nccl1-ref.json" -o /dev/null 2>/dev/null
  "$opt" "$nc" --tandem-overlap=strategy=bulk \
    --tandem-export-plan="file=$out/nccl1-bulk.json" -o /dev/null 2>/dev/null
  echo "prepared $(ls "$out"/*.json | wc -l) plans in $out"
elif [ "$mode" = run ]; then
  export NCCL_NVLS_ENABLE=0
  run="$BUILD/bin/tandem-run"
  failed=0
  check() { # label, tandem-run arguments...
    local label=$1; shift
    [[ "$label" =~ ${CHECKS:-.} ]] || return 0
    local line
    line=$(timeout 120 "$@" 2>&1 | grep -E "^  check:|tandem-run:" | head -1)
    printf "%-32s %s\n" "$label" "${line:-no check line (exit ${PIPESTATUS[0]})}"
    case $line in *"check: PASSED"*) ;; *) failed=1 ;; esac
  }
  for n in bf16 f32; do
    for v in "${VARIANTS[@]}"; do
      check "$n $v" "$run" "$out/$n-$v.json" --standin-collectives \
        --check --reference "$out/$n-ref.json" --iters 2 --warmup 1
    done
  done
  check "bf16 te-preset rank 5 graph" "$run" "$out/bf16-te-preset.json" \
    --standin-collectives --standin-rank 5 --graph \
    --check --reference "$out/bf16-ref.json" --iters 3
  check "llama3-70b TP8 split2 emulated" "$run" "$out/l70-split2.json" \
    --emulate-fabric --check --reference "$out/l70-ref.json" --iters 2 --warmup 1
  for v in auto-ce ce-all; do
    check "llama3-70b TP8 $v emulated" "$run" "$out/l70-$v.json" \
      --emulate-fabric --check --reference "$out/l70-ref.json" --iters 2 --warmup 1
  done
  for k in 2 4; do
    check "llama3-8b TP1 split$k" "$run" "$out/l8tp1-split$k.json" \
      --check --reference "$out/l8tp1-ref.json" --iters 3 --warmup 1
  done
  for v in split2 auto-ce; do
    check "llama3-70b TP8 2 seqs $v emulated" "$run" "$out/l70seq-$v.json" \
      --emulate-fabric --check --reference "$out/l70seq-ref.json" --iters 2 --warmup 1
  done
  check "llama3-8b TP1 2 seqs split2" "$run" "$out/l8seq-split2.json" \
    --check --reference "$out/l8seq-ref.json" --iters 3 --warmup 1
  for v in split2 auto-ce; do
    check "llama3-70b TP8 2 segs $v emulated" "$run" "$out/l70seg-$v.json" \
      --emulate-fabric --check --reference "$out/l70seg-ref.json" --iters 2 --warmup 1
  done
  check "llama3-8b TP1 2 segs split2" "$run" "$out/l8seg-split2.json" \
    --check --reference "$out/l8seg-ref.json" --iters 3 --warmup 1
  check "llama3-70b TP8 4 segs [1,3] emulated" "$run" "$out/l70seg4-split13.json" \
    --emulate-fabric --check --reference "$out/l70seg4-ref.json" --iters 2 --warmup 1
  check "llama3-8b TP1 4 segs [1,3]" "$run" "$out/l8seg4-split13.json" \
    --check --reference "$out/l8seg4-ref.json" --iters 3 --warmup 1
  # On TP=1 a sequence's segments are its rows in token order: the
  # segmented step (prefix attention, token-order attention_grad) against
  # the plain step of the same model and sequence.
  check "llama3-8b TP1 2 segs vs plain" "$run" "$out/l8seg-ref.json" \
    --check --reference "$out/l8tp1-ref.json" --iters 3 --warmup 1
  check "one-rank NCCL (threads)" "$run" "$out/nccl1-bulk.json" \
    --check --reference "$out/nccl1-ref.json" --iters 3
  if [ -n "${MPI_RUN:-}" ]; then
    check "one-rank NCCL (mpirun -n 1)" mpirun --allow-run-as-root -n 1 \
      -x NCCL_NVLS_ENABLE=0 "$MPI_RUN" "$out/nccl1-bulk.json" \
      --check --reference "$out/nccl1-ref.json" --iters 3
  else
    echo "one-rank NCCL (mpirun)           skipped: set MPI_RUN to a tandem-run built with MPI"
  fi
  [ $failed = 0 ] && echo "all checks passed" || echo "SOME CHECKS FAILED"
  exit $failed
else
  echo "unknown mode '$mode' (prepare or run)" >&2
  exit 2
fi
