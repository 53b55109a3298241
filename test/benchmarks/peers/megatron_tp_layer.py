#!/usr/bin/env python3
"""Megatron-style TP+SP transformer layers in PyTorch: the peer Tandem's
step times are compared with (docs/benchmarks.md, "Multi-GPU measurement").

--layers layers (default 2) per rank, sequence parallel: the layer input is this rank's S/TP
rows; norms run on the shard; an all-gather (dim 0) feeds the column-parallel
qkv / fc1 GEMMs; the row-parallel proj / fc2 GEMMs feed a reduce-scatter
(dim 0). Attention is scaled_dot_product_attention (causal). Forward and
backward (dgrad and wgrad of every weight) are timed as one step with CUDA
events after warm-up; the median is reported.

  torchrun --nproc-per-node 8 megatron_tp_layer.py --model llama3-70b \
      --seq 4096 --out peer.json            # eager, NCCL collectives
  torchrun --nproc-per-node 8 megatron_tp_layer.py --model llama3-70b \
      --seq 4096 --compile --out peer.json  # torch.compile + async-TP

--compile enables Inductor's micro-pipelined TP (async-TP): it sets
torch._inductor.config._micro_pipeline_tp and enables symmetric memory for
the TP group (torch.distributed._symmetric_memory.enable_symm_mem_for_group,
where this torch has it). Both are private/alpha APIs; the script checks
that they exist and records what it did in the JSON ("async_tp"). Async-TP
needs TP >= 2: with one rank --compile writes a "skipped" result and says
why. Run with NCCL_NVLS_ENABLE=0 and TORCH_SYMM_MEM_DISABLE_MULTICAST=1
(set here when unset; other values are refused).
"""
import argparse
import json
import os
import statistics
import sys

MODELS = {
    # hidden, heads, kv heads, ffn, activation, norm
    "gpt3-175b": dict(hidden=12288, heads=96, kv_heads=96, ffn=49152,
                      act="gelu", norm="layer"),
    "llama3-70b": dict(hidden=8192, heads=64, kv_heads=8, ffn=28672,
                       act="swiglu", norm="rms"),
    "llama3-8b": dict(hidden=4096, heads=32, kv_heads=8, ffn=14336,
                      act="swiglu", norm="rms"),
}
REQUIRED_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=sorted(MODELS), required=True)
    p.add_argument("--seq", type=int, required=True,
                   help="sequence length (tokens of one micro-batch)")
    p.add_argument("--layers", type=int, default=2,
                   help="layers in the step (default 2, as multi-gpu.sh's "
                        "Tandem plans)")
    p.add_argument("--compile", action="store_true",
                   help="torch.compile with async-TP instead of eager")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--out", required=True, help="JSON result (rank 0)")
    a = p.parse_args(argv)
    if a.seq < 1 or a.layers < 1 or a.warmup < 0 or a.iters < 1:
        p.error("--seq, --layers and --iters must be >= 1, --warmup >= 0")
    return a


def check_env():
    for name, want in REQUIRED_ENV.items():
        have = os.environ.get(name)
        if have is None:
            os.environ[name] = want
        elif have != want:
            sys.exit("megatron_tp_layer: %s=%s, but these measurements keep "
                     "%s=%s (NVLink multicast off)" % (name, have, name, want))


def write(path, result):
    with open(path, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(result, sort_keys=True))


def main(argv):
    args = parse_args(argv)
    check_env()
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        sys.exit("megatron_tp_layer: no CUDA device visible to torch")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank, tp = dist.get_rank(), dist.get_world_size()
    group = dist.group.WORLD
    cfg = MODELS[args.model]
    H, heads, kv, ffn = cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["ffn"]
    hd = H // heads

    result = {
        "model": args.model, "seq": args.seq, "tp": tp, "layers": args.layers,
        "mode": "compile-async-tp" if args.compile else "eager",
        "torch": torch.__version__,
        "nccl": ".".join(map(str, torch.cuda.nccl.version())),
        "device": torch.cuda.get_device_name(),
        "env": {k: os.environ.get(k) for k in REQUIRED_ENV},
        "warmup": args.warmup, "iters": args.iters,
    }

    def problem(reason):
        """Writes a result that says why this mode was not measured."""
        result.update(status="skipped", reason=reason)
        if rank == 0:
            write(args.out, result)
            print("megatron_tp_layer: skipped: " + reason, file=sys.stderr)
        dist.destroy_process_group()
        return 0

    errors = []
    if args.seq % tp:
        errors.append("--seq %d is not divisible by TP %d" % (args.seq, tp))
    if heads % tp:
        errors.append("%d heads are not divisible by TP %d" % (heads, tp))
    if ffn % tp:
        errors.append("ffn %d is not divisible by TP %d" % (ffn, tp))
    if errors:
        sys.exit("megatron_tp_layer: " + "; ".join(errors))

    async_tp = {"requested": args.compile}
    if args.compile:
        if tp < 2:
            return problem("async-TP (micro-pipelined TP) needs TP >= 2: "
                           "with one rank there is no collective to overlap")
        import torch._inductor.config as inductor_config
        if not hasattr(inductor_config, "_micro_pipeline_tp"):
            return problem("torch %s has no torch._inductor.config."
                           "_micro_pipeline_tp" % torch.__version__)
        inductor_config._micro_pipeline_tp = True
        async_tp["micro_pipeline_tp"] = True
        try:
            from torch.distributed import _symmetric_memory as symm
        except ImportError as e:
            return problem("torch.distributed._symmetric_memory is missing: %s"
                           % e)
        if hasattr(symm, "enable_symm_mem_for_group"):
            symm.enable_symm_mem_for_group(group.group_name)
            async_tp["symm_mem"] = "enable_symm_mem_for_group(%s)" % \
                group.group_name
        else:
            # Newer releases may enable symmetric memory without this call;
            # record that it was not made rather than guess a replacement.
            async_tp["symm_mem"] = ("torch.distributed._symmetric_memory has "
                                    "no enable_symm_mem_for_group in this "
                                    "torch; not called")
            print("megatron_tp_layer: warning: " + async_tp["symm_mem"],
                  file=sys.stderr)
        from torch.distributed import _functional_collectives as funcol
        for name in ("all_gather_tensor_autograd",
                     "reduce_scatter_tensor_autograd"):
            if not hasattr(funcol, name):
                return problem("torch.distributed._functional_collectives."
                               "%s is missing in torch %s (needed for "
                               "differentiable traced collectives)"
                               % (name, torch.__version__))

        def all_gather(x):
            return funcol.all_gather_tensor_autograd(x, 0, group)

        def reduce_scatter(x):
            return funcol.reduce_scatter_tensor_autograd(x, "sum", 0, group)
    else:
        class AllGather(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x.new_empty((x.shape[0] * tp,) + tuple(x.shape[1:]))
                dist.all_gather_into_tensor(out, x.contiguous(), group=group)
                return out

            @staticmethod
            def backward(ctx, g):
                out = g.new_empty((g.shape[0] // tp,) + tuple(g.shape[1:]))
                dist.reduce_scatter_tensor(out, g.contiguous(), group=group)
                return out

        class ReduceScatter(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x.new_empty((x.shape[0] // tp,) + tuple(x.shape[1:]))
                dist.reduce_scatter_tensor(out, x.contiguous(), group=group)
                return out

            @staticmethod
            def backward(ctx, g):
                out = g.new_empty((g.shape[0] * tp,) + tuple(g.shape[1:]))
                dist.all_gather_into_tensor(out, g.contiguous(), group=group)
                return out

        all_gather, reduce_scatter = AllGather.apply, ReduceScatter.apply
    result["async_tp"] = async_tp

    dev, dt = torch.device("cuda", local_rank), torch.bfloat16
    gen = torch.Generator(device=dev).manual_seed(1234 + rank)

    def param(*shape):
        w = torch.randn(*shape, device=dev, dtype=dt, generator=gen)
        return (w * shape[-1] ** -0.5).requires_grad_()

    q_local = heads // tp
    kv_local = max(1, kv // tp)  # GQA: KV heads replicated when TP > kv
    up = 2 * ffn // tp if cfg["act"] == "swiglu" else ffn // tp
    weights = [dict(norm1=param(H), norm2=param(H), bias1=param(H),
                    bias2=param(H), qkv=param((q_local + 2 * kv_local) * hd, H),
                    proj=param(H, q_local * hd), fc1=param(up, H),
                    fc2=param(H, ffn // tp)) for _ in range(args.layers)]
    params = [p for w in weights for p in w.values()]

    def norm(x, w, b):
        if cfg["norm"] == "layer":
            return F.layer_norm(x, (H,), w, b)
        if hasattr(F, "rms_norm"):
            return F.rms_norm(x, (H,), w)
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) +
                               1e-6).to(x.dtype) * w

    gqa_kw = {}
    if kv_local != q_local:
        # scaled_dot_product_attention is a builtin without an introspectable
        # signature: probe `enable_gqa` (PyTorch >= 2.5) with a tiny call.
        try:
            probe = torch.zeros(1, 2, 1, 8, device=dev, dtype=dt)
            probe_kv = torch.zeros(1, 1, 1, 8, device=dev, dtype=dt)
            F.scaled_dot_product_attention(probe, probe_kv, probe_kv,
                                           enable_gqa=True)
            gqa_kw = {"enable_gqa": True}
        except TypeError:
            gqa_kw = {}

    def attention(qkv):
        s = qkv.shape[0]
        q, k, v = qkv.split([q_local * hd, kv_local * hd, kv_local * hd], -1)
        q = q.view(s, q_local, hd).transpose(0, 1).unsqueeze(0)
        k = k.view(s, kv_local, hd).transpose(0, 1).unsqueeze(0)
        v = v.view(s, kv_local, hd).transpose(0, 1).unsqueeze(0)
        if kv_local != q_local and not gqa_kw:
            k = k.repeat_interleave(q_local // kv_local, 1)
            v = v.repeat_interleave(q_local // kv_local, 1)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, **gqa_kw)
        return o.squeeze(0).transpose(0, 1).reshape(s, q_local * hd)

    def layer(x, w):
        h = all_gather(norm(x, w["norm1"], w["bias1"]))
        a = attention(h @ w["qkv"].t())
        x = x + reduce_scatter(a @ w["proj"].t())
        h = all_gather(norm(x, w["norm2"], w["bias2"]))
        u = h @ w["fc1"].t()
        if cfg["act"] == "swiglu":
            gate, val = u.chunk(2, -1)
            u = F.silu(gate) * val
        else:
            u = F.gelu(u, approximate="tanh")
        return x + reduce_scatter(u @ w["fc2"].t())

    def layers(x):
        for w in weights:
            x = layer(x, w)
        return x

    fn = torch.compile(layers, fullgraph=True) if args.compile else layers
    rows = args.seq // tp
    x = torch.randn(rows, H, device=dev, dtype=dt, generator=gen)
    x.requires_grad_()
    dy = torch.randn(rows, H, device=dev, dtype=dt, generator=gen)

    def step():
        for p in params + [x]:
            p.grad = None
        fn(x).backward(dy)

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(args.iters):
        dist.barrier()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)  # us
    # A step ends when the slowest rank ends.
    t = torch.tensor(times, device=dev, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    times = t.tolist()
    result.update(status="measured", step_us=times,
                  median_step_us=statistics.median(times),
                  peak_memory_gib=torch.cuda.max_memory_allocated() / 2**30)
    if rank == 0:
        write(args.out, result)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
