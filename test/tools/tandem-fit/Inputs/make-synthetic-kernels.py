#!/usr/bin/env python3
"""Adds tandem-calibrate's `norm` and `strided_copy` sections to a synthetic
raw file, from known latencies and rates.

The kernels test (../kernels.test) checks that tandem-fit recovers them.
Each kernel takes, back to back, launch + latency + bytes / (HBM * eff)
(docs/cost-model.md, "Bandwidth-bound ops"), written here independently of
the C++ code. Bytes follow tandem-calibrate: norm x + w + y, norm_grad
dy + x + w + dx + dw (bf16), a copy its rows read and written.

  python3 make-synthetic-kernels.py synthetic-plain.json > synthetic-kernels.json
"""
import json
import sys

HBM = 4800e9  # h200 preset, B/s
LAUNCH = 2.5  # synthetic-plain.json: launch 250 us / 100 kernels
# kind -> (latency us, efficiency)
KERNELS = {"norm": (3.2, 0.80), "norm_grad": (6.5, 0.55),
           "copy": (1.1, 0.70)}


def time_us(kind, nbytes):
    latency, eff = KERNELS[kind]
    return LAUNCH + latency + nbytes / (HBM * eff / 1e6)


raw = json.load(open(sys.argv[1]))
raw["device"]["name"] = "synthetic kernels"
raw["norm"] = []
for rows in (512, 2048, 4096, 16384):
    for cols in (4096, 8192, 12288):
        tensor = 2 * rows * cols
        for kind, nbytes in (("norm", 2 * tensor + 2 * cols),
                             ("norm_grad", 3 * tensor + 4 * cols)):
            raw["norm"].append({"kind": kind, "norm": "rms", "dtype": "bf16",
                                "rows": rows, "cols": cols, "bytes": nbytes,
                                "count": 20,
                                "us": round(time_us(kind, nbytes), 6)})
raw["strided_copy"] = []
for rows, row_bytes, src, dst in ((256, 16384, 16384, 16384),
                                  (4096, 16384, 16384, 16384),
                                  (1024, 7168, 7168, 57344),
                                  (16384, 4096, 16384, 4096)):
    nbytes = 2 * rows * row_bytes
    raw["strided_copy"].append({"rows": rows, "row_bytes": row_bytes,
                                "src_pitch": src, "dst_pitch": dst,
                                "bytes": nbytes, "count": 20,
                                "us": round(time_us("copy", nbytes), 6)})
json.dump(raw, sys.stdout, indent=1)
print()
