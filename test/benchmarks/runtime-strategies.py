#!/usr/bin/env python3
"""Table of runtime-strategies.sh results: measured median step time per
strategy, its ratio to `none` (same run, same GPU), the simulator's
prediction and the measured/predicted ratio, exposed communication and the
--check outcome."""
import json
import os
import sys

out = sys.argv[1]
strategies = ["none", "bulk", "reschedule", "pipeline", "te-preset",
              "te-preset+reschedule", "auto"]
cases = sorted({f.split(".")[0] for f in os.listdir(out) if f.endswith(".result.json")})
print("| case | strategy | step ms | vs none | predicted ms | meas/pred | exposed ms | check |")
print("|---|---|---:|---:|---:|---:|---:|---|")
for case in cases:
    base = None
    for s in strategies:
        path = os.path.join(out, f"{case}.{s}.result.json")
        if not os.path.exists(path):
            continue
        r = json.load(open(path))
        ms = r["median_step_us"] / 1000
        if s == "none":
            base = ms
        pred = r.get("predicted_span_us", 0) / 1000
        print(f"| {case} | {s} | {ms:.3f} | {ms / base if base else float('nan'):.3f} | "
              f"{pred:.3f} | {ms / pred if pred else float('nan'):.2f} | "
              f"{r['exposed_comm_us'] / 1000:.3f} | {r['check']} |")
