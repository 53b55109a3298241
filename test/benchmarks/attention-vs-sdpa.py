#!/usr/bin/env python3
"""Tandem's attention kernels next to PyTorch's SDPA, in one run on one GPU.

Runs tandem-attention-bench (fused, optionally unfused, and with --cudnn
cuDNN's fused attention through Tandem's runtime, deterministic and
non-deterministic backward) on the shapes
below, then times torch.nn.functional.scaled_dot_product_attention forward
and forward+backward on the same shapes (bf16, GQA through enable_gqa, the
(batch, heads, seq, dim) view of a (seq, heads, dim) tensor as models call
it), with CUDA events: warm-up, then the median of --iters. Each backend
PyTorch offers is timed on its own (sdpa_kernel) besides the default choice.
Prints a table and writes JSON.

  python3 test/benchmarks/attention-vs-sdpa.py --bench build/bin/tandem-attention-bench \
      --json out.json [--unfused] [--cudnn] [--iters 20]
"""
import argparse
import json
import os
import subprocess
import sys

# name, seq, heads, kv heads, head dim, causal: shapes tandem-gen generates.
CASES = [
    ("llama3-70b-tp1-s4096", 4096, 64, 8, 128, True),
    ("llama3-8b-tp1-s2048", 2048, 32, 8, 128, True),
    ("llama3-8b-tp1-s2048-full", 2048, 32, 8, 128, False),
    ("gpt3-175b-tp8-s4096", 4096, 12, 12, 128, True),
    ("llama3-70b-tp8-s4096", 4096, 8, 1, 128, True),
    ("llama3-70b-tp8-s8192", 8192, 8, 1, 128, True),
    ("custom-d64-s4096", 4096, 32, 32, 64, True),
]


def time_torch(fn, warmup, iters, torch):
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    samples = []
    for i in range(warmup + iters):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        if i >= warmup:
            samples.append(start.elapsed_time(stop) * 1000.0)
    samples.sort()
    n = len(samples)
    return samples[n // 2] if n % 2 else 0.5 * (samples[n // 2 - 1] + samples[n // 2])


def sdpa_times(case, warmup, iters, backend, torch):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    _, seq, heads, kv, dim, causal = case
    dev = "cuda"
    gen = torch.Generator(device=dev).manual_seed(1)
    def rand(h):
        t = torch.rand(1, seq, h, dim, device=dev, generator=gen) * 2 - 1
        return t.to(torch.bfloat16).transpose(1, 2).requires_grad_(True)
    q, k, v = rand(heads), rand(kv), rand(kv)
    dout = (torch.rand(1, heads, seq, dim, device=dev, generator=gen) * 2 - 1).to(torch.bfloat16)
    gqa = heads != kv
    backends = {
        "flash": SDPBackend.FLASH_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
    }
    def fwd():
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
    def fwd_bwd():
        out = fwd()
        out.backward(dout)
    try:
        if backend == "default":
            f = time_torch(lambda: fwd(), warmup, iters, torch)
            fb = time_torch(fwd_bwd, warmup, iters, torch)
        else:
            with sdpa_kernel([backends[backend]]):
                f = time_torch(lambda: fwd(), warmup, iters, torch)
                fb = time_torch(fwd_bwd, warmup, iters, torch)
    except Exception as e:  # a backend that does not take this shape
        return {"error": str(e).splitlines()[0][:200]}
    return {"fwd_us": f, "fwd_bwd_us": fb, "bwd_us": fb - f}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--unfused", action="store_true",
                    help="also time Tandem's unfused path")
    ap.add_argument("--cudnn", action="store_true",
                    help="also time cuDNN's attention through Tandem's runtime "
                         "(a runtime built with cuDNN)")
    args = ap.parse_args()
    import torch

    tandem_json = args.json + ".tandem.json"
    impls = ["fused"] + (["unfused"] if args.unfused else []) + \
        (["cudnn", "cudnn-nondeterministic"] if args.cudnn else [])
    cmd = [args.bench, "--impl", ",".join(impls),
           "--iters", str(args.iters), "--warmup", str(args.warmup),
           "--json", tandem_json]
    for name, seq, h, kv, d, causal in CASES:
        cmd += ["--case", f"{name}:{seq}:{h}:{kv}:{d}:{int(causal)}"]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    with open(tandem_json) as f:
        tandem = json.load(f)
    os.remove(tandem_json)

    rows = []
    for case in CASES:
        name = case[0]
        t = {r["impl"]: r for r in tandem["results"] if r["case"] == name}
        sd = {b: sdpa_times(case, args.warmup, args.iters, b, torch)
              for b in ("default", "flash", "cudnn", "efficient")}
        fused = t["fused"]
        fb = fused["fwd_us"] + fused["bwd_us"]
        d = sd["default"]
        row = {
            "case": name, "seq": case[1], "heads": case[2], "kv_heads": case[3],
            "head_dim": case[4], "causal": case[5], "type": "bf16",
            "tandem_fused": {"fwd_us": fused["fwd_us"], "bwd_us": fused["bwd_us"],
                             "fwd_bwd_us": fb},
            "sdpa": sd,
            "ratio_fwd_bwd_vs_sdpa_default": fb / d["fwd_bwd_us"] if "fwd_bwd_us" in d else None,
            "ratio_fwd_vs_sdpa_default": fused["fwd_us"] / d["fwd_us"] if "fwd_us" in d else None,
            "fwd_flops": fused["fwd_flops"],
        }
        for impl in ("unfused", "cudnn", "cudnn-nondeterministic"):
            if impl in t:
                u = t[impl]
                key = "tandem_" + impl.replace("-", "_")
                row[key] = {"fwd_us": u["fwd_us"], "bwd_us": u["bwd_us"],
                            "fwd_bwd_us": u["fwd_us"] + u["bwd_us"]}
                if "fwd_bwd_us" in d:
                    row[key]["ratio_fwd_bwd_vs_sdpa_default"] = \
                        row[key]["fwd_bwd_us"] / d["fwd_bwd_us"]
        rows.append(row)

    result = {
        "what": "Tandem fused attention vs torch SDPA, same shapes, same run",
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cudnn": torch.backends.cudnn.version(),
        "tandem_device": tandem["device"],
        "tandem_cudnn": tandem.get("cudnn_version", 0),
        "iters": args.iters, "warmup": args.warmup,
        "flops_convention": "fwd 4*s^2*d*heads (x0.5 causal), bwd 2.5x fwd",
        "results": rows,
    }
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)

    print(f"\n{result['device']}, torch {result['torch']}, median of {args.iters}")
    print(f"{'case':26} {'tandem fwd':>10} {'bwd':>9} {'fwd+bwd':>9} | "
          f"{'sdpa fwd':>9} {'fwd+bwd':>9} | {'ratio':>6} | best backend fwd+bwd")
    for r in rows:
        d = r["sdpa"]["default"]
        best = min(((b, v["fwd_bwd_us"]) for b, v in r["sdpa"].items()
                    if "fwd_bwd_us" in v), key=lambda x: x[1])
        tf = r["tandem_fused"]
        print(f"{r['case']:26} {tf['fwd_us']:10.1f} {tf['bwd_us']:9.1f} {tf['fwd_bwd_us']:9.1f} | "
              f"{d.get('fwd_us', float('nan')):9.1f} {d.get('fwd_bwd_us', float('nan')):9.1f} | "
              f"{r['ratio_fwd_bwd_vs_sdpa_default'] or float('nan'):6.2f} | {best[0]} {best[1]:.1f}")
        for impl in ("unfused", "cudnn", "cudnn_nondeterministic"):
            if "tandem_" + impl in r:
                u = r["tandem_" + impl]
                ratio = u.get("ratio_fwd_bwd_vs_sdpa_default") or float("nan")
                print(f"{'  (tandem ' + impl + ')':26} {u['fwd_us']:10.1f} {u['bwd_us']:9.1f} "
                      f"{u['fwd_bwd_us']:9.1f} | {'':9} {'':9} | {ratio:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
