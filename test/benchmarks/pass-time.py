#!/usr/bin/env python3
"""Side-by-side --tandem-overlap pass time of two tandem-opt builds.

Generates the 96-layer x 8-micro-batch GPT-3 step (TP 8, seq 2048, h200,
switch) and times parse-only and each strategy (default: reschedule and
auto) with each build, interleaved, 5 times; prints medians of
-mlir-timing's pass time, wall time and child CPU time. --step uses an
existing step file instead (for machines without tandem-gen's
dependencies).

usage: pass-time.py --before OLD/tandem-opt --after NEW/tandem-opt
                    [--gen build/bin/tandem-gen] [--repeat 5]
                    [--strategies reschedule,auto] [--step STEP.mlir]

lit never runs this file. Timings are of the machine it runs on.
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--gen", default="build/bin/tandem-gen")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--strategies", default="reschedule,auto")
    ap.add_argument("--step")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        step = args.step or os.path.join(tmp, "step.mlir")
        if not args.step:
            subprocess.run([args.gen, "--model", "gpt3-175b", "--layers",
                            "96", "--micro-batches", "8", "--tp", "8",
                            "--seq", "2048", "--target", "h200",
                            "--topology", "switch", "-o", step], check=True)
        bins = {"before": args.before, "after": args.after}
        cmds = {"parse": []}
        for strategy in args.strategies.split(","):
            cmds[strategy] = ["--tandem-overlap" if strategy == "auto" else
                              "--tandem-overlap=strategy=" + strategy]
        res = {}
        for _ in range(args.repeat):
            for c, extra in cmds.items():
                for b, path in bins.items():
                    if c == "parse" and b == "before":
                        continue
                    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    t = time.time()
                    p = subprocess.run(
                        [path, step, "-o", os.devnull, "-mlir-timing",
                         "--mlir-print-op-on-diagnostic=false"] + extra,
                        capture_output=True, text=True)
                    wall = time.time() - t
                    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu = (r1.ru_utime - r0.ru_utime) + \
                        (r1.ru_stime - r0.ru_stime)
                    m = re.search(r"([\d.]+) \([^)]*\)\s+TandemOverlap",
                                  p.stderr)
                    pm = re.search(r"([\d.]+) \([^)]*\)\s+Parser", p.stderr)
                    res.setdefault((c, b), []).append(
                        (float(m.group(1)) if m else 0.0, wall, cpu,
                         float(pm.group(1)) if pm else 0.0))
        for (c, b), v in res.items():
            def med(i):
                return statistics.median(x[i] for x in v)
            print("%-21s %-7s pass %.3f s  parse %.3f s  wall %.3f s  "
                  "cpu %.3f s" % (c, b, med(0), med(3), med(1), med(2)))


if __name__ == "__main__":
    main()
