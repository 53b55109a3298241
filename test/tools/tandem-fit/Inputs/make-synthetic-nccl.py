#!/usr/bin/env python3
"""Writes synthetic tandem-nccl-bench measurements from known parameters.

The collective fit test (../collectives.test) checks that tandem-fit
recovers these parameters. The times follow docs/cost-model.md's collective
formulas for a switch group, written here independently of the C++ code, so
a wrong fit or a drift between the two fails the test.

  python3 make-synthetic-nccl.py sweep  > synthetic-nccl-sweep.json
  python3 make-synthetic-nccl.py single > synthetic-nccl-single.json

"sweep" measures CTA budgets 0 (NCCL's choice, priced at the target's 24
collective SMs), 8 and 16, so links per CTA is identifiable (8 CTAs x 1.5
links = 12 of 18 links). "single" measures only budget 0: links per CTA
must then stay at its default and be reported as not fitted.
"""
import json
import math
import sys

# h200 preset: launch overhead 4 us, collective_sms 24. The group is the
# h200 node of tandem-gen: 8 GPUs on a switch, 18 links of 25 GB/s.
LAUNCH_US = 4.0
COLLECTIVE_SMS = 24
N, LINKS, LINK_BYTES_PER_US = 8, 18, 25.0e3
PARAMS = {
    "sweep": dict(bus_eff=0.85, alpha=3.0, links_per_cta=1.5, ctas=[0, 8, 16]),
    "single": dict(bus_eff=0.72, alpha=6.5, links_per_cta=1.0, ctas=[0]),
}


def time_us(p, kind, size, ctas):
    c = ctas if ctas > 0 else COLLECTIVE_SMS
    bw = min(LINKS, c * p["links_per_cta"]) * LINK_BYTES_PER_US * p["bus_eff"]
    a, n = p["alpha"], N
    if kind in ("all_gather", "reduce_scatter"):
        return LAUNCH_US + (n - 1) * a + (n - 1) / n * size / bw
    ring = LAUNCH_US + 2 * (n - 1) * a + 2 * (n - 1) / n * size / bw
    depth = math.ceil(math.log2(n))
    tree = LAUNCH_US + 2 * depth * a + 2 * size / bw
    return min(ring, tree)


def main():
    name = sys.argv[1]
    p = PARAMS[name]
    results = []
    for ctas in p["ctas"]:
        for kind in ("all_gather", "reduce_scatter", "all_reduce"):
            size = 1 << 20
            while size <= 1 << 30:
                us = time_us(p, kind, size, ctas)
                algbw = size / us / 1e3
                factor = (N - 1) / N * (2 if kind == "all_reduce" else 1)
                results.append({
                    "collective": kind, "bytes": size,
                    "count": size // 2 // (1 if kind == "all_reduce" else N),
                    "ctas": ctas, "algorithm": "auto",
                    "time_us": round(us, 4),
                    "algbw_gbps": round(algbw, 3),
                    "busbw_gbps": round(algbw * factor, 3)})
                size *= 2
    doc = {
        "format": "tandem-nccl-bench", "version": 1,
        "date": "synthetic", "nccl_version": "synthetic",
        "cuda_runtime": "synthetic", "cuda_driver": "synthetic",
        "ranks": N,
        "devices": [{"index": i, "name": "synthetic " + name, "sms": 132}
                    for i in range(N)],
        "dtype": "bf16", "reduce_op": "sum",
        "settings": {"iters": 1, "reps": 1, "warmup": 0},
        "results": results,
    }
    json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
