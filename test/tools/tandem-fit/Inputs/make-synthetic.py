#!/usr/bin/env python3
"""Writes synthetic tandem-calibrate measurements from known parameters.

The fit test (../fit.test) checks that tandem-fit recovers these parameters.
The times follow docs/cost-model.md's GEMM formula and the simulator's
engine semantics (docs/simulator.md; SM residency: GEMMs on all SMs issued
before the stand-in keep it off the SMs until they end), written here independently of the C++
code, so a wrong fit or a drift between the two fails the test.

  python3 make-synthetic.py plain    > synthetic-plain.json
  python3 make-synthetic.py overhead > synthetic-overhead.json
  python3 make-synthetic.py coresident > synthetic-coresident.json

"plain" has no per-wave overhead: the documented formula fits it exactly.
"overhead" adds 6 us per GEMM wave, which one efficiency cannot absorb over
K = 1536 .. 8192, so the fit must use the gemm_wave_overhead_us extension.
"coresident" is "plain" without SM residency: the stand-in gets its SMs
beside GEMMs on all SMs at once (as the emulated fabric's kernel measured
on the H100 and H200), so only `tandem-fit --residency off` fits it exactly.
"""
import json
import math
import sys

SMS = 132
PEAK_BF16 = 989.4e12  # h200 preset, FLOP/s
HBM = 4800e9  # h200 preset, B/s

PARAMS = {
    "plain": dict(eff=0.85, overhead=0.0, launch=2.5, hbm_eff=0.92),
    "overhead": dict(eff=0.82, overhead=6.0, launch=3.0, hbm_eff=0.88),
    "coresident": dict(eff=0.85, overhead=0.0, launch=2.5, hbm_eff=0.92,
                       coresident=True),
}
# comm_sms -> (gemm, memory, comm) slowdowns
CONTENTION = {8: (1.10, 1.05, 1.12), 16: (1.15, 1.08, 1.14),
              32: (1.25, 1.12, 1.18)}
TILE = (128, 256)


def gemm_parts(p, m, n, k):
    """tiles, wave time, memory floor (us) of a bf16 GEMM."""
    tm, tn = TILE
    tiles = lambda a, b: math.ceil(m / a) * math.ceil(n / b)
    while tiles(tm, tn) < SMS and (tm > 64 or tn > 64):
        if tn >= tm and tn > 64:
            tn //= 2
        else:
            tm //= 2
    per_sm = PEAK_BF16 * p["eff"] / SMS / 1e6
    wave = 2.0 * tm * tn * k / per_sm + p["overhead"]
    floor = 2 * (m * k + k * n + m * n) / (HBM * p["hbm_eff"] / 1e6)
    return tiles(tm, tn), wave, floor


def gemm_us(p, m, n, k, sms):
    tiles, wave, floor = gemm_parts(p, m, n, k)
    return max(math.ceil(tiles / sms) * wave, floor) + p["launch"]


def overlap(count, primary_alone, primary_contended, copy_alone, slow_copy):
    """count primary tasks on one stream, one copy on another, both from 0.

    primary_contended is one primary task's time while the copy runs
    (slowdown and lost SMs included); slow_copy the copy's factor while a
    primary task runs. Returns (primary end, copy end)."""
    now, done, left, copy_left = 0.0, 0, 1.0, 1.0
    copy_end = None
    while done < count:
        if copy_left > 0:
            rate_p = 1.0 / primary_contended
            rate_c = 1.0 / (copy_alone * slow_copy)
            step = min(left / rate_p, copy_left / rate_c)
            now += step
            left -= step * rate_p
            copy_left -= step * rate_c
            if copy_left <= 1e-12:
                copy_left, copy_end = 0.0, now
        else:
            now += left * primary_alone
            left = 0.0
        if left <= 1e-12:
            done, left = done + 1, 1.0
    if copy_end is None:
        copy_end = now + copy_left * copy_alone
    return now, copy_end


def main():
    p = PARAMS[sys.argv[1]]
    raw = {"version": 1,
           "device": {"name": "synthetic " + sys.argv[1], "sms": SMS},
           "launch": {"kernels": 100, "us": round(100 * p["launch"], 6)}}
    raw["hbm"] = [{"bytes": b, "us": round(b / (HBM * p["hbm_eff"] / 1e6)
                                          + p["launch"], 6)}
                  for b in (1 << 28, 1 << 30)]
    shapes = [(m, n, k) for m in (2048, 8192)
              for n, k in ((3072, 8192), (8192, 1536), (7168, 8192),
                           (8192, 7168))] + [(8192, 8192, 8192)]
    raw["gemm"] = [{"m": m, "n": n, "k": k, "sm_target": t,
                    "us": round(gemm_us(p, m, n, k, t or SMS), 6)}
                   for m, n, k in shapes
                   for t in (0, SMS - 8, SMS - 16, SMS - 24, SMS - 32, 66)]
    raw["standalone_copy"] = [{"ctas": c, "bytes": 1 << 30,
                               "us": round((1 << 30) / (c * 60e3), 3)}
                              for c in (8, 16, 24, 32)]
    pairs = []
    for m, n, k in ((8192, 8192, 8192), (2048, 3072, 8192)):
        for ctas, (g, _, c) in CONTENTION.items():
            full = gemm_us(p, m, n, k, SMS)
            count = 4
            copy_alone = round(1.3 * count * full, 3)
            for target in (0, SMS - ctas):
                alone = gemm_us(p, m, n, k, target or SMS)
                contended = gemm_us(p, m, n, k, SMS - ctas) * g
                if target == 0 and not p.get("coresident"):
                    # SM residency: GEMMs on all SMs, issued before the
                    # copy, keep it off the SMs until the last one ends.
                    g_end = count * alone
                    c_end = g_end + copy_alone
                else:
                    g_end, c_end = overlap(count, alone, contended,
                                           copy_alone, c)
                pairs.append({
                    "m": m, "n": n, "k": k, "gemm_count": count,
                    "gemm_sm_target": target, "comm_ctas": ctas,
                    "bytes": 1 << 30, "gemm_alone_us": round(count * alone, 6),
                    "copy_alone_us": copy_alone,
                    "gemm_overlapped_us": round(g_end, 6),
                    "copy_overlapped_us": round(c_end, 6),
                    "span_us": round(max(g_end, c_end), 6),
                    "serial_us": round(count * alone + copy_alone, 6)})
    raw["pairs"] = pairs
    memory = []
    for ctas, (_, mem, c) in CONTENTION.items():
        mem_bytes, count = 1 << 30, 3
        alone = mem_bytes / (HBM * p["hbm_eff"] / 1e6) + p["launch"]
        copy_alone = round(0.8 * count * alone, 3)
        m_end, c_end = overlap(count, alone, alone * mem, copy_alone, c)
        memory.append({
            "comm_ctas": ctas, "bytes": 1 << 29, "mem_bytes": mem_bytes,
            "mem_count": count, "mem_alone_us": round(count * alone, 6),
            "copy_alone_us": copy_alone,
            "mem_overlapped_us": round(m_end, 6),
            "copy_overlapped_us": round(c_end, 6),
            "span_us": round(max(m_end, c_end), 6),
            "serial_us": round(count * alone + copy_alone, 6)})
    raw["memory_pairs"] = memory
    out = json.dumps(raw, indent=1)
    print(out)


main()
