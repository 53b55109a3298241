"""Writes the PyTorch FX fixtures of test/Import/FX (lit never runs this).

A Megatron-style tensor-parallel + sequence-parallel Llama layer (RMSNorm,
GQA attention through scaled_dot_product_attention, SwiGLU MLP), written
with torch.distributed's functional collectives on a fake process group (no
GPU, no other process), is compiled by torch.compile with Inductor on the
CPU; tandem_import.fx_dump records the forward and backward graphs Inductor
schedules and the order its compute-communication pass gives them. Needs
torch (a CPU run; see docs/import.md):

    /work/torch-venv/bin/python test/Import/Inputs/make_fx_inputs.py

Also importable: the benchmark test/benchmarks/fx-inductor-peer.py captures
the full-size layers through `capture`.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "tandem-import"))

# Layer shapes: hidden, heads, kv heads, head dim, ffn, sequence.
SHAPES = {
    "small": (512, 16, 8, 32, 1024, 256),
    "llama3-8b": (4096, 32, 8, 128, 14336, 8192),
    "llama3-70b": (8192, 64, 8, 128, 28672, 8192),
}


def build(shape, tp, layers=1, norm="rms"):
    import torch
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol
    import torch.nn as nn
    import torch.nn.functional as F

    hidden, heads, kv, hd, ffn, seq = shape
    if heads % tp or kv % tp or ffn % tp or seq % tp:
        raise ValueError(f"shape {shape} does not split over TP={tp}")
    group = dist.group.WORLD

    def Norm():
        return nn.RMSNorm(hidden, eps=1e-5) if norm == "rms" else nn.LayerNorm(hidden)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(hidden, (heads + 2 * kv) * hd // tp, bias=False)
            self.proj = nn.Linear(heads * hd // tp, hidden, bias=False)

        def forward(self, x):
            # Sequence parallel: gather the sequence, attend on this rank's
            # heads, reduce-scatter the projection back to sequence shards.
            h = funcol.all_gather_tensor(x, 0, group)
            q, k, v = self.qkv(h).split([heads * hd // tp, kv * hd // tp,
                                         kv * hd // tp], dim=-1)
            q = q.view(seq, heads // tp, hd).transpose(0, 1).unsqueeze(0)
            k = k.view(seq, kv // tp, hd).transpose(0, 1).unsqueeze(0)
            v = v.view(seq, kv // tp, hd).transpose(0, 1).unsqueeze(0)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               enable_gqa=kv != heads)
            a = a.squeeze(0).transpose(0, 1).reshape(seq, heads * hd // tp)
            return funcol.reduce_scatter_tensor(self.proj(a), "sum", 0, group)

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(hidden, 2 * ffn // tp, bias=False)
            self.fc2 = nn.Linear(ffn // tp, hidden, bias=False)

        def forward(self, x):
            h = funcol.all_gather_tensor(x, 0, group)
            g, u = self.fc1(h).chunk(2, dim=-1)
            return funcol.reduce_scatter_tensor(self.fc2(F.silu(g) * u), "sum", 0,
                                                group)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn_norm = Norm()
            self.attn = Attention()
            self.mlp_norm = Norm()
            self.mlp = Mlp()

        def forward(self, x):
            x = x + self.attn(self.attn_norm(x))
            return x + self.mlp(self.mlp_norm(x))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Layer() for _ in range(layers)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return (x.float().pow(2).mean(),)

    model = Model().to(torch.bfloat16)
    x = torch.zeros(seq // tp, hidden, dtype=torch.bfloat16)
    return model, x


def init_fake(tp):
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore
    if dist.is_initialized():
        if dist.get_world_size() == tp:
            return
        dist.destroy_process_group()
    dist.init_process_group("fake", rank=0, world_size=tp, store=FakeStore())


# Inductor's FX-level overlap scheduler (opt-in in this torch) with its
# analytical estimators; without a GPU here, the roofline reads the
# datasheet figures given below (Inductor's own H100 entry for the peak
# FLOP/s, which the H200 shares; the H200's 4.8 TB/s HBM).
OVERLAP_SCHEDULING = {
    "aten_distributed_optimizations.enable_overlap_scheduling": True,
    "aten_distributed_optimizations.compute_estimator": "analytical",
    "aten_distributed_optimizations.collective_estimator": "analytical",
    "aten_distributed_optimizations.insert_overlap_deps": False,
}
H200_FIGURES = {"tops_of": "NVIDIA H100", "dram_gbps": 4800.0}


def capture(shape_name, tp, layers=1, norm="rms", seq=None, overlap_scheduling=False):
    """The dump of one TP+SP step, captured through Inductor."""
    import torch.distributed as dist
    from tandem_import import fx_dump
    init_fake(tp)
    shape = SHAPES[shape_name]
    if seq:
        shape = shape[:5] + (seq,)
    model, x = build(shape, tp, layers, norm)
    group = dist.group.WORLD.group_name
    note = (f"{shape_name} Llama layer x{layers} ({norm} norm, sequence {shape[5]}), "
            f"TP={tp} + sequence "
            "parallel, functional collectives on a fake process group; torch.compile "
            "(Inductor, CPU)")
    if overlap_scheduling:
        return fx_dump.capture_inductor_step(model, [x], {"axes": [["tp", tp]]},
                                             {group: "tp"}, note=note,
                                             inductor_config=OVERLAP_SCHEDULING,
                                             device=H200_FIGURES)
    return fx_dump.capture_inductor_step(model, [x], {"axes": [["tp", tp]]},
                                         {group: "tp"}, note=note)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=HERE)
    p.add_argument("--capture", nargs=5, metavar=("SHAPE", "TP", "LAYERS", "SEQ", "FILE"),
                   help="capture one case into FILE instead of the fixtures "
                        f"(SHAPE: {', '.join(SHAPES)}; SEQ 0 keeps the shape's)")
    p.add_argument("--overlap-scheduling", action="store_true",
                   help="with --capture: turn on Inductor's FX overlap scheduler")
    args = p.parse_args()
    if args.capture:
        shape, tp, layers, seq, path = args.capture
        d = capture(shape, int(tp), int(layers), "rms", int(seq) or None,
                    args.overlap_scheduling)
        with open(path, "w") as f:
            json.dump(d, f, separators=(",", ":"))
            f.write("\n")
        print(f"wrote {path}: {d['note']}; Inductor's {d['inductor']['pass']} changed "
              f"{d['inductor']['positions_changed']} scheduler node position(s)")
        return
    cases = [("llama-small-tp8", "small", 8, 1, "rms"),
             ("llama-small-tp4-2l", "small", 4, 2, "rms"),
             ("gpt-small-tp8", "small", 8, 1, "layer")]
    for name, shape, tp, layers, norm in cases:
        d = capture(shape, tp, layers, norm)
        path = os.path.join(args.out, f"{name}.fx.json")
        with open(path, "w") as f:
            json.dump(d, f, separators=(",", ":"))
            f.write("\n")
        print(f"wrote {path} ({os.path.getsize(path)} bytes; Inductor moved "
              f"{d['inductor']['positions_changed']} scheduler node(s))")


if __name__ == "__main__":
    main()
