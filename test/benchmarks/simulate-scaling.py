#!/usr/bin/env python3
"""Benchmark: cost of parsing and simulating a generated step against its size.

For GPT-3-175B-shaped steps (TP=8, h200, switch) of 1 to 96 layers and
several micro-batch counts, times three commands, each the median of REPEAT
runs:
  gen      tandem-gen ... -o step.mlir
  parse    tandem-opt step.mlir -o /dev/null          (parse + verify + print)
  simulate tandem-opt step.mlir --tandem-simulate -o /dev/null
and prints a Markdown table with ops, times and time per op. lit never runs
this file (test/lit.cfg.py excludes benchmarks/).

usage: simulate-scaling.py [--build build] [--repeat 3] [--quick]
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time


def timed(cmd, repeat):
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


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

    print("| layers | micro-batches | ops | gen s | parse s | parse+simulate s "
          "| simulate us/op |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for mb in micro_batches:
            for n in layers:
                path = os.path.join(tmp, "step.mlir")
                gen_cmd = [gen, "--model", "gpt3-175b", "--layers", str(n),
                           "--tp", "8", "--micro-batches", str(mb),
                           "--target", "h200", "--topology", "switch",
                           "-o", path]
                t_gen = timed(gen_cmd, args.repeat)
                with open(path) as f:
                    ops = sum(1 for line in f if " = tandem." in line
                              or line.strip().startswith("tandem."))
                t_parse = timed([opt, path, "-o", os.devnull], args.repeat)
                t_sim = timed([opt, path, "--tandem-simulate", "-o",
                               os.devnull], args.repeat)
                per_op = (t_sim - t_parse) / ops * 1e6
                print(f"| {n} | {mb} | {ops} | {t_gen:.3f} | {t_parse:.3f} | "
                      f"{t_sim:.3f} | {per_op:.2f} |", flush=True)


if __name__ == "__main__":
    main()
