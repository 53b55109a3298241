#!/usr/bin/env python3
"""Benchmark: cost of parsing and simulating a generated step against its size.

For GPT-3-175B-shaped steps (TP=8, h200, switch) of 1 to 96 layers and
several micro-batch counts, runs
  tandem-opt step.mlir --tandem-simulate -o /dev/null -mlir-timing
REPEAT times and reports the medians of MLIR's own timers for parsing
(parse + verify) and for the tandem-simulate pass, plus the whole command's
wall time, as a Markdown table with per-op costs. lit never runs this file
(test/lit.cfg.py excludes benchmarks/).

usage: simulate-scaling.py [--build build] [--repeat 3] [--quick]
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time


def timed(cmd, repeat):
    """Median wall time of `cmd` and medians of its -mlir-timing entries."""
    walls, timers = [], {}
    for _ in range(repeat):
        start = time.perf_counter()
        run = subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        walls.append(time.perf_counter() - start)
        for line in run.stderr.splitlines():
            m = re.match(r"\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(\S+)", line)
            if m:
                timers.setdefault(m.group(2), []).append(float(m.group(1)))
    return statistics.median(walls), {k: statistics.median(v)
                                      for k, v in timers.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="fewer sizes, for a smoke run")
    args = parser.parse_args()
    gen = os.path.join(args.build, "bin", "tandem-gen")
    opt = os.path.join(args.build, "bin", "tandem-opt")
    layers = [1, 4, 16] if args.quick else [1, 2, 4, 8, 16, 32, 48, 64, 96]
    micro_batches = [1] if args.quick else [1, 4, 8]

    print("| layers | micro-batches | ops | parse ms | simulate ms "
          "| simulate us/op | wall s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for mb in micro_batches:
            for n in layers:
                path = os.path.join(tmp, "step.mlir")
                subprocess.run([gen, "--model", "gpt3-175b", "--layers",
                                str(n), "--tp", "8", "--micro-batches",
                                str(mb), "--target", "h200", "--topology",
                                "switch", "-o", path], check=True)
                with open(path) as f:
                    ops = sum(1 for line in f if " = tandem." in line
                              or line.strip().startswith("tandem."))
                wall, timers = timed([opt, path, "--tandem-simulate", "-o",
                                      os.devnull, "-mlir-timing"],
                                     args.repeat)
                parse = timers.get("Parser", 0.0)
                sim = timers.get("TandemSimulate", 0.0)
                print(f"| {n} | {mb} | {ops} | {parse * 1e3:.1f} | "
                      f"{sim * 1e3:.1f} | {sim / ops * 1e6:.2f} | "
                      f"{wall:.3f} |", flush=True)


if __name__ == "__main__":
    main()
