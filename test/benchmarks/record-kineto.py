#!/usr/bin/env python3
"""Records PyTorch profiler (Kineto) traces for `tandem-diagnose --kineto`
(issue 17, item 4): communication kernels overlapping GEMMs on separate
streams, plus the same kernels run alone, so that the reader has isolated
medians to compare the overlapped ones with.

    python3 test/benchmarks/record-kineto.py --out DIR         # one GPU
    torchrun --nproc-per-node N test/benchmarks/record-kineto.py --out DIR

With one GPU, NCCL cannot run two ranks on the device, and a one-rank
communicator turns most collectives into local copies: all_gather and a
sum all_reduce become memcpys (no kernel), while a PREMUL_SUM all_reduce
still launches NCCL's one-rank reduce kernel on the process group's NCCL
stream. The script therefore records two traces:

  nccl.json        torch.distributed (backend nccl, world size from the
                   launcher, 1 by default): all_reduce with PREMUL_SUM
                   (falling back to AVG and SUM) and all_gather_into_tensor,
                   issued with async_op=True beside bf16 GEMMs on the
                   default stream, and each alone. With N > 1 ranks these
                   are real ncclDevKernel_* ring kernels. On the H200
                   (NCCL 2.28.9, one rank) the PREMUL_SUM and AVG
                   all_reduces launched NCCL's one-rank reduce kernel
                   (oneRankReduce<FuncPreMulSum>); all_gather was a copy.
  side-stream.json a bandwidth-bound kernel standing in for a collective (a
                   copy on 24 CTAs, like NCCL's, on a side stream: 'copy'
                   phase; a Triton kernel, since PyTorch's own copies fill
                   every SM and then never overlap a GEMM) and a
                   second GEMM on a side stream ('gemm' phase: two GEMMs
                   sharing the SMs, the classic harmful overlap), each
                   beside GEMMs and alone. Not communication: classify
                   them with --collective-pattern.

It prints the kernel names per stream with counts and the
--collective-pattern that selects the communication kernels of each trace,
and writes DIR/summary.json. Needs torch with CUDA; nothing else.
"""

import argparse
import collections
import json
import os
import re
import sys

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

NCCL_DEFAULT = r"^nccl(Dev)?Kernel"


def kernels(path):
    with open(path) as f:
        doc = json.load(f)
    out = collections.Counter()
    for e in doc.get("traceEvents", []):
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            out[(e.get("args", {}).get("stream"), e["name"])] += 1
    return out


def standin_copy(ctas):
    """A copy on `ctas` CTAs that loop over the buffer, as NCCL's kernels
    hold a few SMs for their whole run (a PyTorch copy kernel instead fills
    every SM, so a GEMM issued after it waits for it and nothing overlaps).
    Triton when available (kernel 'comm_standin_copy'), else torch's copy."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        print("record-kineto.py: no triton; the stand-in is torch's copy kernel")
        return lambda src, dst: dst.copy_(src)

    @triton.jit
    def comm_standin_copy(src, dst, n, BLOCK: tl.constexpr, CTAS: tl.constexpr):
        pid = tl.program_id(0)
        for start in range(pid * BLOCK, n, CTAS * BLOCK):
            offs = start + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)

    def run(src, dst):
        comm_standin_copy[(ctas,)](src, dst, src.numel(), BLOCK=4096, CTAS=ctas)
    return run


def record(path, body):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        body()
        torch.cuda.synchronize()
    prof.export_chrome_trace(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=8192, help="GEMM size (n x n x n)")
    ap.add_argument("--mib", type=int, default=256,
                    help="collective payload in MiB")
    ap.add_argument("--ctas", type=int, default=24,
                    help="CTAs of the side-stream stand-in collective")
    ap.add_argument("--reps", type=int, default=8,
                    help="repetitions of each alone and overlapped pattern")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("record-kineto.py: no CUDA device")
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    os.makedirs(a.out, exist_ok=True)
    if "MASTER_ADDR" not in os.environ:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = "29517"
    dist.init_process_group("nccl", rank=rank, world_size=world,
                            device_id=dev)

    bf16 = torch.bfloat16
    x = torch.randn(a.n, a.n, device=dev, dtype=bf16)
    w = torch.randn(a.n, a.n, device=dev, dtype=bf16)
    elems = a.mib * 2**20 // 2
    buf = torch.randn(elems, device=dev, dtype=bf16)
    gathered = torch.empty(elems * world, device=dev, dtype=bf16)
    side = torch.cuda.Stream(device=dev)

    ops = []
    try:
        premul = dist._make_nccl_premul_sum(0.5)
        ops.append(("all_reduce premul_sum", lambda: dist.all_reduce(buf, op=premul, async_op=True)))
    except (AttributeError, RuntimeError, TypeError):
        pass
    ops.append(("all_reduce avg", lambda: dist.all_reduce(buf, op=dist.ReduceOp.AVG, async_op=True)))
    ops.append(("all_gather", lambda: dist.all_gather_into_tensor(gathered, buf, async_op=True)))

    def warm():
        for _ in range(3):
            torch.mm(x, w)
            for _, op in ops:
                op().wait()
        torch.cuda.synchronize()

    def nccl_body():
        for _ in range(a.reps):
            for _, op in ops:
                # Alone: nothing else on the GPU.
                op().wait()
                torch.cuda.synchronize()
            torch.mm(x, w)
            torch.cuda.synchronize()
            # Overlapped: the collective on NCCL's stream beside a GEMM.
            for _, op in ops:
                work = op()
                torch.mm(x, w)
                work.wait()
                torch.cuda.synchronize()

    warm()
    nccl_path = os.path.join(a.out, "nccl%s.json" % ("" if world == 1 else ".rank%d" % rank))
    record(nccl_path, nccl_body)

    src = torch.randn(elems, device=dev, dtype=bf16)
    dst = torch.empty(elems, device=dev, dtype=bf16)
    x2 = torch.randn(a.n, a.n, device=dev, dtype=bf16)
    standin = standin_copy(a.ctas)

    def side_body():
        for _ in range(a.reps):
            # Alone.
            standin(src, dst)
            torch.cuda.synchronize()
            torch.mm(x, w)
            torch.cuda.synchronize()
            torch.mm(x2, w)
            torch.cuda.synchronize()
            # 'copy' phase: the stand-in collective beside a GEMM.
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                standin(src, dst)
            torch.mm(x, w)
            torch.cuda.synchronize()
            # 'gemm' phase: two GEMMs on two streams share the SMs.
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                torch.mm(x2, w)
            torch.mm(x, w)
            torch.cuda.synchronize()

    side_body()  # warm-up
    side_path = os.path.join(a.out, "side-stream%s.json" % ("" if world == 1 else ".rank%d" % rank))
    record(side_path, side_body)

    summary = {"torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
               "device": torch.cuda.get_device_name(dev), "world_size": world,
               "rank": rank, "gemm_n": a.n, "payload_mib": a.mib, "reps": a.reps,
               "collectives": [name for name, _ in ops], "traces": {}}
    for path in (nccl_path, side_path):
        k = kernels(path)
        names = sorted({n for _, n in k})
        comm = [n for n in names if re.search(NCCL_DEFAULT, n)]
        print("\n%s:" % path)
        for (stream, name), count in sorted(k.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
            print("  stream %-4s %4d x %s" % (stream, count, name[:110]))
        if path == side_path:
            pattern = next((p for p in ("comm_standin_copy", "direct_copy_kernel")
                            if any(p in n for n in names)), None)
        elif comm:
            pattern = NCCL_DEFAULT
        else:
            pattern = "oneRankReduce" if any("oneRankReduce" in n for n in names) else None
        summary["traces"][os.path.basename(path)] = {
            "kernels": names, "nccl_kernels": comm, "collective_pattern": pattern}
        if pattern:
            print("  -> tandem-diagnose --kineto %s%s" % (
                path, "" if pattern == NCCL_DEFAULT else " --collective-pattern '%s'" % pattern))
        else:
            print("  -> no communication kernel in this trace (one-rank NCCL made them copies)")
    with open(os.path.join(a.out, "summary%s.json" % ("" if world == 1 else ".rank%d" % rank)), "w") as f:
        json.dump(summary, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
