#!/bin/bash
# Whole-step fidelity benchmark (issue 14): Tandem's runtime against the
# simulator's prediction and against the PyTorch eager peer, side by side in
# one session on one GPU.
#
#   bash test/benchmarks/fidelity.sh prepare OUTDIR   # needs tandem-opt (MLIR)
#   bash test/benchmarks/fidelity.sh run OUTDIR       # needs a GPU (+ torch)
#   python3 test/benchmarks/fidelity.py OUTDIR [--json FILE] # table, JSON
#
# Cases: TP=1 steps (real kernels only, compared with the PyTorch eager peer
# test/benchmarks/peers/megatron_tp_layer.py on one rank) and TP=8 steps on
# the EMULATED fabric (tandem-run --emulate-fabric: each collective a local
# kernel paced to the plan's predicted alone time; NOT communication), every
# strategy. CAL names the calibration every pass prices with (default: the
# H200 calibration in results/h200-2026-12-04, fitted against the emulated
# fabric's kernel; CAL= for the preset alone).
# BUILD: the build directory (its bin/ holds tandem-gen, tandem-opt or
# tandem-run). ATTENTION: tandem-run's --attention (default fused; cudnn for
# cuDNN's attention, planned with a calibration that measured it, e.g.
# CAL=.../calibration-cudnn.json). ONLY: a regular expression; only cases
# whose name matches run (or are prepared). STRATS="none auto ..." runs
# those strategies only in the cases that run every strategy. COPY_ENGINES=1 adds strategy
# auto+ce (tandem-overlap strategy=auto copy-engines=true: collectives on the
# copy engines, which the emulated fabric emulates with device copies).
# lit never runs this file.
set -euo pipefail
mode=${1:?prepare or run}
out=${2:?output directory}
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")" && pwd)
CAL=${CAL-$here/results/h200-2026-12-04/calibration-emulated-run2.json}
STRATEGIES=(none bulk reschedule pipeline pipeline+reschedule te-preset
            te-preset+reschedule split split+reschedule auto)
[ "${COPY_ENGINES:-0}" = 1 ] && STRATEGIES+=(auto+ce)
# STRATS: a space-separated subset to run instead of every strategy.
[ -n "${STRATS:-}" ] && read -r -a STRATEGIES <<<"$STRATS"
# tandem-overlap's options for strategy $1.
overlap_of() {
  case "$1" in
    auto+ce) echo "strategy=auto copy-engines=true" ;;
    split-w*) echo "strategy=bulk" ;;
    *) echo "strategy=$1" ;;
  esac
}
# Passes before tandem-overlap for strategy $1: split-wA-B-... forces
# uneven parts of weights A, B, ... (tandem-split-batch weights=), then
# bulk overlap.
prepass_of() {
  case "$1" in
    split-w*) local w=${1#split-w}; echo "--tandem-split-batch=weights=${w//-/,}$cal_opt" ;;
  esac
}
# name | tandem-gen arguments | strategies | tandem-run flags | peer args
CASES=(
  "llama3-8b-tp1-s2048|--model llama3-8b --layers 2 --tp 1 --seq 2048|auto||--model llama3-8b --seq 2048 --layers 2"
  "llama3-70b-tp1-s4096|--model llama3-70b --layers 2 --tp 1 --seq 4096|auto||--model llama3-70b --seq 4096 --layers 2"
  "llama3-70b-tp8-s4096|--model llama3-70b --layers 2 --tp 8 --seq 4096|all|--emulate-fabric|"
  "llama3-70b-tp8-s8192|--model llama3-70b --layers 2 --tp 8 --seq 8192|all|--emulate-fabric|"
  "gpt3-175b-tp8-s4096|--model gpt3-175b --layers 2 --tp 8 --seq 4096|all|--emulate-fabric|"
  # The tokens of llama3-70b-tp8-s4096 as 2 sequences of 2048 (attention
  # per sequence; split-batch may split along them), and a TP=1 step of 2.
  "llama3-70b-tp8-s2048x2|--model llama3-70b --layers 2 --tp 8 --seq 2048 --sequences 2|all|--emulate-fabric|"
  "llama3-8b-tp1-s1024x2|--model llama3-8b --layers 2 --tp 1 --seq 1024 --sequences 2|none split auto||"
  # One sequence of 4096 in 2 causal segments (tandem-gen --segments 2:
  # segment 1's attention attends to both), split-batch along them.
  "llama3-70b-tp8-s4096g2|--model llama3-70b --layers 2 --tp 8 --seq 4096 --segments 2|all|--emulate-fabric|"
  "llama3-8b-tp1-s2048g2|--model llama3-8b --layers 2 --tp 1 --seq 2048 --segments 2|none split auto||"
  # GPT-3 TP=8 s2048 in 4 causal segments: equal halves (split) against
  # uneven parts [1, 3] (split-w1-3: segment 0, then segments 1 .. 3),
  # issue 15 item 2.
  "gpt3-175b-tp8-s2048g4|--model gpt3-175b --layers 2 --tp 8 --seq 2048 --segments 4|none split split-w1-3 auto|--emulate-fabric|"
)
cal_opt=""
[ -n "$CAL" ] && cal_opt=" calibration=$CAL"
mkdir -p "$out"
ATTENTION=${ATTENTION:-fused}
for c in "${CASES[@]}"; do
  IFS='|' read -r name gen strats flags peer <<<"$c"
  [[ "$name" =~ ${ONLY:-.} ]] || continue
  if [ "$strats" = all ]; then list=("${STRATEGIES[@]}"); else list=($strats); fi
  [ "$strats" = all ] || [ "${COPY_ENGINES:-0}" != 1 ] || list+=(auto+ce)
  if [ "$mode" = prepare ]; then
    # shellcheck disable=SC2086
    "$BUILD/bin/tandem-gen" $gen --target h200 --topology switch > "$out/$name.mlir"
    for s in "${list[@]}"; do
      pre=()
      [ -n "$(prepass_of "$s")" ] && pre=("$(prepass_of "$s")")
      "$BUILD/bin/tandem-opt" "$out/$name.mlir" "${pre[@]}" \
        --tandem-overlap="$(overlap_of "$s")$cal_opt" \
        --tandem-export-plan="file=$out/$name.$s.json$cal_opt" -o /dev/null \
        2>"$out/$name.$s.log" || { cat "$out/$name.$s.log" >&2; exit 1; }
    done
    echo "prepared $name (${list[*]})${CAL:+ with $CAL}"
  elif [ "$mode" = run ]; then
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
    for s in "${list[@]}"; do
      if [ ! -f "$out/$name.$s.json" ]; then
        echo "=== $name $s: not prepared (run prepare with the same STRATS), skipped"
        continue
      fi
      echo "=== $name $s"
      # shellcheck disable=SC2086
      "$BUILD/bin/tandem-run" "$out/$name.$s.json" $flags --attention "$ATTENTION" --warmup 3 \
        --iters 15 --json "$out/$name.$s.result.json" \
        > "$out/$name.$s.run.txt" 2>&1 || { cat "$out/$name.$s.run.txt"; exit 1; }
      grep -E "step time|predicted span" "$out/$name.$s.run.txt" || true
    done
    if [ -n "$peer" ]; then
      echo "=== $name peer (PyTorch eager)"
      # shellcheck disable=SC2086
      python3 "$here/peers/megatron_tp_layer.py" $peer --warmup 3 --iters 15 \
        --out "$out/$name.peer.json" > "$out/$name.peer.txt" 2>&1 ||
        { cat "$out/$name.peer.txt"; exit 1; }
      tail -c 300 "$out/$name.peer.txt"; echo
    fi
  else
    echo "unknown mode '$mode' (prepare or run)" >&2
    exit 2
  fi
done
