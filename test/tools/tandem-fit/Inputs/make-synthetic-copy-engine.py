#!/usr/bin/env python3
"""Adds tandem-calibrate's `copy_engine_latency` and `copy_engine_pairs`
sections to a synthetic raw file, from known copy-engine slowdowns.

The copy-engine test (../copy-engine.test) checks that tandem-fit recovers
them. Both sides of a pair start together; while both run, the kernel runs
at 1/factor of its rate (GEMM_SLOWDOWN beside a GEMM, MEMORY_SLOWDOWN beside
a bandwidth-bound kernel) and the copies at 1/COMM_SLOWDOWN; the side left
alone finishes at its own rate (docs/simulator.md), written here
independently of the C++ code.

  python3 make-synthetic-copy-engine.py synthetic-plain.json > synthetic-copy-engine.json
"""
import json
import sys

GEMM_SLOWDOWN, MEMORY_SLOWDOWN, COMM_SLOWDOWN = 1.03, 1.15, 1.08
COPY_LATENCY_US = 2.75


def overlap(compute_us, ce_us, factor):
    """End times of the kernel and the copies, started together."""
    c, e = compute_us * factor, ce_us * COMM_SLOWDOWN
    if c <= e:
        return c, c + (1 - c / e) * ce_us
    return e + (1 - e / c) * compute_us, e


raw = json.load(open(sys.argv[1]))
raw["device"]["name"] = "synthetic copy engines"
raw["copy_engine_latency"] = {"copies": 1000, "bytes": 4096,
                              "us": COPY_LATENCY_US}
pairs = []
for side, compute_us, ce_us in (("gemm", 1400.0, 1300.0),
                                ("gemm", 700.0, 900.0),
                                ("memory", 500.0, 450.0),
                                ("memory", 250.0, 400.0)):
    factor = GEMM_SLOWDOWN if side == "gemm" else MEMORY_SLOWDOWN
    c_end, e_end = overlap(compute_us, ce_us, factor)
    p = {"side": side, "bytes": 1 << 28, "compute_alone_us": compute_us,
         "ce_alone_us": ce_us, "compute_overlapped_us": round(c_end, 4),
         "ce_overlapped_us": round(e_end, 4),
         "span_us": round(max(c_end, e_end), 4),
         "serial_us": compute_us + ce_us}
    if side == "gemm":
        p.update(m=8192, n=8192, k=8192)
    else:
        p["mem_bytes"] = 1 << 30
    pairs.append(p)
raw["copy_engine_pairs"] = pairs
json.dump(raw, sys.stdout, indent=1)
