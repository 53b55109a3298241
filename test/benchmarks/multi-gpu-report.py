#!/usr/bin/env python3
"""Markdown tables from test/benchmarks/multi-gpu.sh's output directory.

  python3 test/benchmarks/multi-gpu-report.py OUT > report.md

Tables: the machine; NCCL bandwidth per collective and size; per case the
tandem-run step time of every strategy as a ratio to `none` and to the bound
max(compute, comm) (the simulator's, from the plan), the simulator's
prediction error, and the --check outcome; the PyTorch peers' step time as a
ratio to Tandem's `auto`; the collective calibration report when `fit` ran.
Missing results are shown as missing, never filled in.
"""
import glob
import json
import os
import statistics
import sys

# multi-gpu.sh's list; "@ce": with copy-engine collectives.
STRATEGIES = ["none", "bulk", "te-preset", "te-preset+reschedule", "reschedule",
              "pipeline", "split", "auto", "auto@ce"]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def fmt(v, spec="{:.3f}"):
    return "—" if v is None else spec.format(v)


def machine(out):
    print("## Machine\n")
    info = read(os.path.join(out, "machine", "device-info.txt"))
    torch = read(os.path.join(out, "machine", "torch.txt"))
    env = read(os.path.join(out, "machine", "env.txt"))
    topo = read(os.path.join(out, "machine", "topo.txt"))
    for title, text in (("tandem-device-info", info), ("torch", torch),
                        ("environment", env), ("nvidia-smi topo -m", topo)):
        print("%s:\n\n```\n%s\n```\n" % (title, text or "(not recorded)"))


def nccl(out):
    d = load(os.path.join(out, "nccl.json"))
    print("## NCCL bandwidth (tandem-nccl-bench)\n")
    if not d:
        print("No `nccl.json`.\n")
        return
    names = ", ".join(sorted({x["name"] for x in d["devices"]}))
    print("NCCL %s, %d rank(s), %s; NCCL_ALGO %s. Bus bandwidth in the "
          "nccl-tests convention (%s).\n" % (
              d["nccl_version"], d["ranks"], names,
              d.get("nccl_env", {}).get("NCCL_ALGO") or "auto",
              d["convention"]["busbw_gbps"]))
    ctas = sorted({r["ctas"] for r in d["results"]})
    colls = [c for c in ("all_gather", "reduce_scatter", "all_reduce")
             if any(r["collective"] == c for r in d["results"])]
    sizes = sorted({r["bytes"] for r in d["results"]})
    by = {(r["collective"], r["bytes"], r["ctas"]): r for r in d["results"]}
    head = ["bytes"] + ["%s %s" % (c, "NCCL" if k == 0 else "%d CTAs" % k)
                        for c in colls for k in ctas]
    print("Time us / bus bandwidth GB/s:\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for b in sizes:
        cells = [str(b)]
        for c in colls:
            for k in ctas:
                r = by.get((c, b, k))
                cells.append("—" if r is None else "%.1f / %.1f" % (
                    r["time_us"], r["busbw_gbps"]))
        print("| " + " | ".join(cells) + " |")
    print()


def strategies(out):
    print("## Strategies (tandem-run, NCCL, one thread per GPU)\n")
    print("Ratio to bound: measured step / the simulator's max(compute, "
          "comm) of the plan (a predicted bound). Prediction error: "
          "predicted span / measured - 1. Check: tandem-run --check against "
          "the unscheduled reference on every rank.\n")
    cases = sorted({os.path.basename(p).split(".")[0]
                    for p in glob.glob(os.path.join(out, "*.ref.json"))})
    if not cases:
        print("No prepared plans.\n")
        return {}
    print("| case | strategy | step ms | / none | / bound | prediction error "
          "| exposed comm ms | check |")
    print("|---|---|---|---|---|---|---|---|")
    autos = {}
    for case in cases:
        results = {s: load(os.path.join(out, "%s.%s.result.json" % (case, s)))
                   for s in STRATEGIES}
        none = results["none"]
        for s in STRATEGIES:
            r = results[s]
            rc = read(os.path.join(out, "%s.%s.rc" % (case, s)))
            if r is None:
                check = "not run" if rc is None else "exit %s" % rc
                print("| %s | %s | — | — | — | — | — | %s |" % (case, s, check))
                continue
            step = r["median_step_us"]
            if s == "auto":
                autos[case] = step
            vs_none = step / none["median_step_us"] if none else None
            bound = r.get("bound_us")
            vs_bound = step / bound if bound else None
            pred = r.get("predicted_span_us")
            err = pred / step - 1 if pred else None
            check = {"passed": "passed", "failed": "FAILED"}.get(
                r.get("check"), "—")
            if rc not in (None, "0") and check == "passed":
                check = "passed, exit %s" % rc
            print("| %s | %s | %.3f | %s | %s | %s | %.3f | %s |" % (
                case, s, step / 1e3, fmt(vs_none), fmt(vs_bound),
                fmt(err, "{:+.1%}"), r["exposed_comm_us"] / 1e3, check))
    print()
    return autos


def peers(out, autos):
    print("## PyTorch peers (Megatron-style TP+SP layer)\n")
    print("Forward + backward of the same layers as Tandem's plans, median "
          "step.\n")
    print("| case | peer | status | step ms | / Tandem auto | torch | "
          "async-TP |")
    print("|---|---|---|---|---|---|---|")
    cases = sorted({os.path.basename(p).split(".")[0]
                    for p in glob.glob(os.path.join(out, "*.ref.json"))})
    for case in cases:
        for peer in ("eager", "compile"):
            d = load(os.path.join(out, "%s.peer-%s.json" % (case, peer)))
            rc = read(os.path.join(out, "%s.peer-%s.rc" % (case, peer)))
            if d is None:
                print("| %s | %s | %s | — | — | — | — |" % (
                    case, peer, "not run" if rc is None else "exit " + rc))
                continue
            status = d.get("status", "?")
            if status != "measured":
                status += ": " + d.get("reason", "")
            step = d.get("median_step_us")
            auto = autos.get(case)
            ratio = step / auto if step and auto else None
            print("| %s | %s | %s | %s | %s | %s | %s |" % (
                case, peer, status, fmt(step / 1e3 if step else None),
                fmt(ratio), d.get("torch", "—"),
                json.dumps(d.get("async_tp", {}), sort_keys=True)))
    print()


def calibration(out):
    text = read(os.path.join(out, "comm-calibration.md"))
    print("## Collective model calibration\n")
    print(text.replace("\n# ", "\n### ").lstrip("# ") if text else
          "Not fitted (run `multi-gpu.sh fit OUT`; TP=1 has nothing to fit).")
    print()


def main(argv):
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        sys.exit("usage: multi-gpu-report.py OUT (the directory multi-gpu.sh "
                 "wrote)")
    out = argv[0]
    tp = read(os.path.join(out, "tp.txt"))
    print("# Multi-GPU measurement: %s (TP=%s)\n" % (out, tp or "?"))
    if tp == "1":
        print("TP=1 is a dry run: one-rank communicators, no communication "
              "is measured.\n")
    machine(out)
    nccl(out)
    autos = strategies(out)
    peers(out, autos)
    calibration(out)


if __name__ == "__main__":
    main(sys.argv[1:])
