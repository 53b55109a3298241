#!/bin/bash
# Multi-GPU measurement of Tandem on one node (docs/benchmarks.md,
# "Multi-GPU measurement"): the machine, NCCL bandwidth, every overlap
# strategy's plan under tandem-run with --check, and the PyTorch peers.
#
#   TP=8 bash test/benchmarks/multi-gpu.sh prepare OUT  # needs tandem-gen/-opt (MLIR)
#   bash test/benchmarks/multi-gpu.sh run OUT           # on the GPU machine
#   bash test/benchmarks/multi-gpu.sh fit OUT           # needs tandem-fit (MLIR)
#   python3 test/benchmarks/multi-gpu-report.py OUT     # Markdown tables
#
# TP defaults to the number of visible GPUs (nvidia-smi -L, restricted by
# CUDA_VISIBLE_DEVICES); TP=1 is a dry run of the whole procedure on one GPU
# (one-rank communicators: no communication is measured). prepare writes
# OUT/tp.txt and OUT/cases.txt; run refuses a different TP and runs the
# prepared cases (MODELS and SEQS apply to prepare only). Environment:
#   BUILD    build directory with bin/ (default build)
#   TP       tensor-parallel size (default: visible GPUs)
#   SEQS     sequence lengths (default "4096 8192")
#   MODELS   models (default "gpt3-175b llama3-70b")
#   TARGET   tandem-gen/tandem-fit target preset (default h200)
#   CALIBRATION  a calibration file for the plans' predictions (prepare)
#   NCCL_CTAS    tandem-nccl-bench --ctas list (default 0,8,16)
#   GROUP    tandem-fit --group (default "$TP switch 18 25.0 2.0", the h200
#            node of tandem-gen's network table)
#   PYTHON   python with torch for the peers (default python3)
# NCCL_NVLS_ENABLE=0 and TORCH_SYMM_MEM_DISABLE_MULTICAST=1 on every run.
set -euo pipefail
mode=${1:?usage: multi-gpu.sh prepare|run|fit OUT}
out=${2:?usage: multi-gpu.sh prepare|run|fit OUT}
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-build}
SEQS=${SEQS:-"4096 8192"}
MODELS=${MODELS:-"gpt3-175b llama3-70b"}
TARGET=${TARGET:-h200}
PYTHON=${PYTHON:-python3}
# A name ending in "@ce" is that strategy with copy-engine collectives
# (tandem-overlap's copy-engines=true: the runtime pulls the peers' buffers
# on the copy engines, docs/runtime.md "Copy-engine collectives across GPUs").
STRATEGIES=(none bulk te-preset te-preset+reschedule reschedule pipeline split
  auto auto@ce)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1

die() { echo "multi-gpu.sh: $*" >&2; exit 2; }

visible_gpus() {
  command -v nvidia-smi >/dev/null ||
    die "nvidia-smi not found: set TP to the tensor-parallel size"
  local n
  n=$(nvidia-smi -L | grep -c '^GPU ') || true
  if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    local v
    v=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .) || true
    [ "$v" -lt "$n" ] && n=$v
  fi
  [ "$n" -ge 1 ] || die "no GPU visible: set TP"
  echo "$n"
}

cases() {
  for m in $MODELS; do for s in $SEQS; do echo "$m-tp$TP-s$s|$m|$s"; done; done
}

case "$mode" in
prepare)
  TP=${TP:-$(visible_gpus)}
  mkdir -p "$out"
  echo "$TP" > "$out/tp.txt"
  cases > "$out/cases.txt" # run takes these, not its own MODELS/SEQS
  cal=()
  if [ -n "${CALIBRATION:-}" ]; then
    [ -f "$CALIBRATION" ] || die "CALIBRATION=$CALIBRATION does not exist"
    cal=(" calibration=$CALIBRATION")
    cp "$CALIBRATION" "$out/plans-calibration.json"
  fi
  for c in $(cases); do
    IFS='|' read -r name model seq <<<"$c"
    "$BUILD/bin/tandem-gen" --model "$model" --layers 2 --tp "$TP" \
      --seq "$seq" --target "$TARGET" -o "$out/$name.mlir"
    "$BUILD/bin/tandem-opt" "$out/$name.mlir" \
      --tandem-export-plan="file=$out/$name.ref.json${cal[*]:-}" -o /dev/null \
      2> "$out/$name.ref.remarks.txt"
    for s in "${STRATEGIES[@]}"; do
      opts="strategy=${s%@ce}"
      [[ "$s" == *@ce ]] && opts+=" copy-engines=true"
      "$BUILD/bin/tandem-opt" "$out/$name.mlir" \
        --tandem-overlap="$opts" \
        --tandem-export-plan="file=$out/$name.$s.json${cal[*]:-}" -o /dev/null \
        2> "$out/$name.$s.remarks.txt"
    done
    echo "prepared $name (TP=$TP): reference + ${STRATEGIES[*]}"
  done
  ;;
run)
  [ -f "$out/tp.txt" ] || die "$out/tp.txt missing: run 'prepare' first"
  TP=${TP:-$(visible_gpus)}
  [ "$TP" = "$(cat "$out/tp.txt")" ] ||
    die "plans in $out are for TP=$(cat "$out/tp.txt") but TP=$TP here"
  [ -f "$out/cases.txt" ] || die "$out/cases.txt missing: run 'prepare' again"
  mkdir -p "$out/machine"
  # The machine: topology, GPUs, driver, CUDA/NCCL/cuBLASLt as loaded.
  nvidia-smi topo -m > "$out/machine/topo.txt" 2>&1 || true
  nvidia-smi > "$out/machine/nvidia-smi.txt" 2>&1 || true
  nvidia-smi -q > "$out/machine/nvidia-smi-q.txt" 2>&1 || true
  "$BUILD/bin/tandem-device-info" > "$out/machine/device-info.txt"
  "$PYTHON" -c 'import torch; print("torch", torch.__version__);
print("torch_nccl", ".".join(map(str, torch.cuda.nccl.version())))' \
    > "$out/machine/torch.txt" 2>&1 || echo "torch unavailable" >> "$out/machine/torch.txt"
  env | grep -E '^(NCCL_|TORCH_SYMM|CUDA_VISIBLE)' | sort > "$out/machine/env.txt"
  # NCCL bandwidth, 1 MiB .. 1 GiB, at NCCL's CTA choice and a sweep.
  "$BUILD/bin/tandem-nccl-bench" --gpus "$TP" --min-bytes 1MiB \
    --max-bytes 1GiB --ctas "${NCCL_CTAS:-0,8,16}" --out "$out/nccl.json" \
    2> "$out/nccl.log"
  for c in $(cat "$out/cases.txt"); do
    IFS='|' read -r name model seq <<<"$c"
    for s in "${STRATEGIES[@]}"; do
      echo "=== $name $s"
      rc=0
      "$BUILD/bin/tandem-run" "$out/$name.$s.json" --gpus "$TP" \
        --warmup 3 --iters 20 --rank-seeds \
        --check --reference "$out/$name.ref.json" \
        --json "$out/$name.$s.result.json" \
        --trace "$out/$name.$s.trace.json" > "$out/$name.$s.log" 2>&1 || rc=$?
      echo "$rc" > "$out/$name.$s.rc"
      grep -E "step time|predicted span|bound|check:" "$out/$name.$s.log" || true
      [ "$rc" = 0 ] || echo "    tandem-run exited $rc (see $out/$name.$s.log)"
    done
    for peer in eager compile; do
      flag=(); [ "$peer" = compile ] && flag=(--compile)
      rc=0
      "$PYTHON" -m torch.distributed.run --standalone --nproc-per-node "$TP" \
        "$here/peers/megatron_tp_layer.py" --model "$model" --seq "$seq" \
        --layers 2 \
        "${flag[@]}" --out "$out/$name.peer-$peer.json" \
        > "$out/$name.peer-$peer.log" 2>&1 || rc=$?
      echo "$rc" > "$out/$name.peer-$peer.rc"
      echo "=== $name peer $peer: exit $rc"
    done
  done
  ;;
fit)
  [ -f "$out/nccl.json" ] || die "$out/nccl.json missing: run 'run' first"
  TP=$(cat "$out/tp.txt")
  if [ "$TP" = 1 ]; then
    echo "multi-gpu.sh: TP=1: one-rank collectives have no communication" \
      "parameter to fit; skipping the collective calibration" >&2
    exit 0
  fi
  "$BUILD/bin/tandem-fit" "$out/nccl.json" --target "$TARGET" \
    --group "${GROUP:-$TP switch 18 25.0 2.0}" \
    --out "$out/comm-calibration.json" --report "$out/comm-calibration.md"
  echo "wrote $out/comm-calibration.json and $out/comm-calibration.md;" \
    "CALIBRATION=$out/comm-calibration.json re-prices the plans in 'prepare'"
  ;;
*)
  die "unknown mode '$mode' (prepare, run or fit)"
  ;;
esac
