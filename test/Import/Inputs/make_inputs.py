#!/usr/bin/env python3
"""Writes the StableHLO inputs of test/Import (run by hand, never by lit).

Each program is one rank's training step written the way JAX users write
Megatron-style parallelism: explicit collectives under `jax.shard_map`, the
gradient taken with `jax.value_and_grad` inside the mapped function. Only
lowering runs (no arrays are allocated), so the shapes are realistic.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 \
        python3 test/Import/Inputs/make_inputs.py [OUT_DIR]

Files: <name>.stablehlo.mlir (`lowered.as_text(debug_info=True)`, the pretty
form with sdy.mesh and sdy.manual_computation) and, for one program,
<name>.generic.mlir (the generic form of the same module).
"""
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import Mesh, PartitionSpec as P  # noqa: E402

BF16 = jnp.bfloat16


def rmsnorm(x, w):
    xf = x.astype(jnp.float32)
    r = lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + 1e-5)
    return (xf * r).astype(x.dtype) * w


def layernorm(x, w, b):
    xf = x.astype(jnp.float32)
    mu = jnp.mean(xf, axis=-1, keepdims=True)
    var = jnp.mean((xf - mu) ** 2, axis=-1, keepdims=True)
    return ((xf - mu) * lax.rsqrt(var + 1e-5)).astype(x.dtype) * w + b


def attention(qkv, nh, nkv, d):
    """Causal softmax attention on packed q|k|v, grouped-query when nkv < nh."""
    s = qkv.shape[0]
    g = nh // nkv
    q = qkv[:, : nh * d].reshape(s, nkv, g, d)
    k = qkv[:, nh * d:(nh + nkv) * d].reshape(s, nkv, d)
    v = qkv[:, (nh + nkv) * d:].reshape(s, nkv, d)
    scores = jnp.einsum("skgd,tkd->kgst", q, k) * (d ** -0.5)
    mask = jnp.tril(jnp.ones((s, s), bool))
    scores = jnp.where(mask, scores, jnp.asarray(-1e9, scores.dtype))
    p = jax.nn.softmax(scores.astype(jnp.float32), axis=-1).astype(qkv.dtype)
    o = jnp.einsum("kgst,tkd->skgd", p, v)
    return o.reshape(s, nh * d)


def tp_sp_layer(x, p, cfg, axis="tp"):
    """One decoder layer under Megatron TP + SP: x is this rank's [s/tp, h]."""
    nh, nkv, d = cfg["heads_local"], cfg["kv_local"], cfg["head_dim"]
    with jax.named_scope("attn"):
        if cfg["norm"] == "rms":
            h = rmsnorm(x, p["ln1_w"])
        else:
            h = layernorm(x, p["ln1_w"], p["ln1_b"])
        a = lax.all_gather(h, axis, axis=0, tiled=True)
        with jax.named_scope("qkv"):
            qkv = a @ p["qkv"]
        o = attention(qkv, nh, nkv, d)
        with jax.named_scope("proj"):
            y = o @ p["proj"]
        x = x + lax.psum_scatter(y, axis, scatter_dimension=0, tiled=True)
    with jax.named_scope("mlp"):
        if cfg["norm"] == "rms":
            h = rmsnorm(x, p["ln2_w"])
        else:
            h = layernorm(x, p["ln2_w"], p["ln2_b"])
        a = lax.all_gather(h, axis, axis=0, tiled=True)
        with jax.named_scope("fc1"):
            f = a @ p["fc1"]
        if cfg["mlp"] == "swiglu":
            gate, up = jnp.split(f, 2, axis=-1)
            f = jax.nn.silu(gate) * up
        else:
            f = jax.nn.gelu(f)
        with jax.named_scope("fc2"):
            y = f @ p["fc2"]
        x = x + lax.psum_scatter(y, axis, scatter_dimension=0, tiled=True)
    return x


def layer_params(cfg, tp, stack=None):
    """Global parameter shapes and their PartitionSpecs (column / row split)."""
    h, d, f = cfg["hidden"], cfg["head_dim"], cfg["ffn"]
    qkv_cols = (cfg["heads"] + 2 * cfg["kv_heads"]) * d
    f1 = 2 * f if cfg["mlp"] == "swiglu" else f
    shapes = {
        "ln1_w": ((h,), P()), "qkv": ((h, qkv_cols), P(None, "tp")),
        "proj": ((cfg["heads"] * d, h), P("tp", None)),
        "ln2_w": ((h,), P()), "fc1": ((h, f1), P(None, "tp")),
        "fc2": ((f, h), P("tp", None)),
    }
    if cfg["norm"] == "layer":
        shapes["ln1_b"] = ((h,), P())
        shapes["ln2_b"] = ((h,), P())
    out, specs = {}, {}
    for k, (shape, spec) in shapes.items():
        if stack:
            shape = (stack,) + shape
            spec = P(None, *spec)
        out[k] = jax.ShapeDtypeStruct(shape, BF16)
        specs[k] = spec
    return out, specs


def loss_of(x):
    return jnp.mean(x.astype(jnp.float32) ** 2)


def localize(cfg, tp):
    cfg = dict(cfg)
    cfg["heads_local"] = cfg["heads"] // tp
    cfg["kv_local"] = cfg["kv_heads"] // tp
    return cfg


def tp_step(cfg, layers, tp, dp=1, scan=False):
    """Lowers value_and_grad of a `layers`-layer stack under shard_map."""
    devices = np.array(jax.devices()[: dp * tp])
    if dp > 1:
        mesh = Mesh(devices.reshape(dp, tp), ("dp", "tp"))
    else:
        mesh = Mesh(devices, ("tp",))
    lcfg = localize(cfg, tp)
    if scan:
        params, specs = layer_params(cfg, tp, stack=layers)
    else:
        params, specs = {}, {}
        for i in range(layers):
            params[f"l{i}"], specs[f"l{i}"] = layer_params(cfg, tp)
    seq, h = cfg["seq"], cfg["hidden"]
    x = jax.ShapeDtypeStruct((dp, seq, h), BF16)
    xspec = P("dp" if dp > 1 else None, "tp", None)

    def local_loss(params, x):
        x = x.reshape(x.shape[1:])
        if scan:
            def body(x, p):
                return tp_sp_layer(x, p, lcfg), None
            x, _ = lax.scan(body, x, params)
        else:
            for i in range(layers):
                with jax.named_scope(f"l{i}"):
                    x = tp_sp_layer(x, params[f"l{i}"], lcfg)
        return lax.psum(loss_of(x), "tp") / tp

    def step(params, x):
        loss, grads = jax.value_and_grad(local_loss)(params, x)
        if dp > 1:
            with jax.named_scope("dp_allreduce"):
                grads = jax.tree.map(lambda g: lax.psum(g, "dp"), grads)
            loss = lax.pmean(loss, "dp")
        return loss, grads

    f = jax.shard_map(step, mesh=mesh, in_specs=(specs, xspec),
                      out_specs=(P(), specs), check_vma=False)
    return jax.jit(f).lower(params, x)


def moe_step(ep=8, tokens=1024, hidden=1024, ffn=4096):
    """One expert-parallel MoE layer (one expert per rank, top-1 routing)."""
    mesh = Mesh(np.array(jax.devices()[:ep]), ("ep",))
    experts = ep
    params = {
        "router": jax.ShapeDtypeStruct((hidden, experts), BF16),
        "w1": jax.ShapeDtypeStruct((experts, hidden, ffn), BF16),
        "w2": jax.ShapeDtypeStruct((experts, ffn, hidden), BF16),
    }
    specs = {"router": P(), "w1": P("ep"), "w2": P("ep")}
    x = jax.ShapeDtypeStruct((ep * tokens, hidden), BF16)

    def local_loss(p, x):
        with jax.named_scope("moe"):
            with jax.named_scope("router"):
                logits = x @ p["router"]
            gate = jax.nn.softmax(logits.astype(jnp.float32), axis=-1)
            mask = jax.nn.one_hot(jnp.argmax(logits, axis=-1), experts,
                                  dtype=x.dtype)
            weight = (gate * mask).astype(x.dtype)
            xe = jnp.einsum("te,th->eth", mask, x)
            xe = lax.all_to_all(xe, "ep", 0, 1, tiled=True)
            with jax.named_scope("expert_fc1"):
                hdn = jnp.einsum("eth,ehf->etf", xe, p["w1"])
            hdn = jax.nn.gelu(hdn)
            with jax.named_scope("expert_fc2"):
                ye = jnp.einsum("etf,efh->eth", hdn, p["w2"])
            ye = lax.all_to_all(ye, "ep", 1, 0, tiled=True)
            y = jnp.einsum("eth,te->th", ye, weight)
        return lax.psum(loss_of(x + y), "ep") / ep

    def step(p, x):
        loss, grads = jax.value_and_grad(local_loss)(p, x)
        grads["router"] = lax.psum(grads["router"], "ep")
        return loss, grads

    f = jax.shard_map(step, mesh=mesh, in_specs=(specs, P("ep")),
                      out_specs=(P(), specs), check_vma=False)
    return jax.jit(f).lower(params, x)


def tp1_step(cfg):
    """The same layer on one GPU: no shard_map, no collectives."""
    lcfg = localize(cfg, 1)
    params, _ = layer_params(cfg, 1)
    x = jax.ShapeDtypeStruct((cfg["seq"], cfg["hidden"]), BF16)

    def loss_fn(p, x):
        with jax.named_scope("l0"):
            y = tp_sp_layer_nocomm(x, p, lcfg)
        return loss_of(y)

    return jax.jit(jax.value_and_grad(loss_fn)).lower(params, x)


def tp_sp_layer_nocomm(x, p, cfg):
    """tp_sp_layer with identity collectives (TP = 1)."""
    nh, nkv, d = cfg["heads_local"], cfg["kv_local"], cfg["head_dim"]
    with jax.named_scope("attn"):
        h = rmsnorm(x, p["ln1_w"])
        with jax.named_scope("qkv"):
            qkv = h @ p["qkv"]
        o = attention(qkv, nh, nkv, d)
        with jax.named_scope("proj"):
            x = x + o @ p["proj"]
    with jax.named_scope("mlp"):
        h = rmsnorm(x, p["ln2_w"])
        with jax.named_scope("fc1"):
            f = h @ p["fc1"]
        gate, up = jnp.split(f, 2, axis=-1)
        with jax.named_scope("fc2"):
            x = x + (jax.nn.silu(gate) * up) @ p["fc2"]
    return x


# Refused inputs.

def dynamic_while():
    def f(x):
        return lax.while_loop(lambda c: jnp.sum(c) < 100.0, lambda c: c * 2.0, x)
    return jax.jit(f).lower(jax.ShapeDtypeStruct((8, 8), jnp.float32))


def subgroup_psum():
    """psum over pairs of ranks of a 1-D mesh: replica groups match no axis."""
    mesh = Mesh(np.array(jax.devices()[:8]), ("tp",))

    def f(x):
        idx = lax.axis_index("tp")
        y = lax.psum(x, "tp", axis_index_groups=[[0, 1], [2, 3], [4, 5], [6, 7]])
        return y + idx.astype(x.dtype)
    g = jax.shard_map(f, mesh=mesh, in_specs=P("tp"), out_specs=P("tp"),
                      check_vma=False)
    return jax.jit(g).lower(jax.ShapeDtypeStruct((64, 16), jnp.float32))


def custom_call():
    """A forward-only program with a LAPACK custom_call (Cholesky on CPU)."""
    def f(x, w):
        a = x @ x.T + jnp.eye(x.shape[0], dtype=x.dtype)
        return jnp.linalg.cholesky(a) @ w
    return jax.jit(f).lower(jax.ShapeDtypeStruct((256, 256), jnp.float32),
                            jax.ShapeDtypeStruct((256, 512), jnp.float32))


def unknown_op():
    def f(x):
        return jnp.sort(x, axis=-1) @ x.T
    return jax.jit(f).lower(jax.ShapeDtypeStruct((16, 16), jnp.float32))


GPT = dict(hidden=4096, heads=32, kv_heads=32, head_dim=128, ffn=16384,
           seq=2048, mlp="gelu", norm="layer")
LLAMA = dict(hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336,
             seq=2048, mlp="swiglu", norm="rms")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    progs = {
        "gpt-tp8": lambda: tp_step(GPT, 1, 8),
        "llama-tp8": lambda: tp_step(LLAMA, 1, 8),
        "llama-scan-tp8": lambda: tp_step(LLAMA, 2, 8, scan=True),
        "llama-dp2-tp4": lambda: tp_step(LLAMA, 1, 4, dp=2),
        "moe-ep8": moe_step,
        "llama-tp1": lambda: tp1_step(LLAMA),
        "custom-call": custom_call,
        "error-dynamic-while": dynamic_while,
        "error-subgroup-psum": subgroup_psum,
        "error-unknown-op": unknown_op,
    }
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    for name, make in progs.items():
        lowered = make()
        # Source paths relative to this directory, as the tests see them.
        text = lowered.as_text(debug_info=True).replace(here, "")
        with open(os.path.join(out, name + ".stablehlo.mlir"), "w") as f:
            f.write(f"// Generated by make_inputs.py ({name}); jax {jax.__version__}.\n")
            f.write(text)
        if name == "llama-tp8":
            module = lowered.compiler_ir("stablehlo")
            generic = module.operation.get_asm(print_generic_op_form=True,
                                               enable_debug_info=True).replace(here, "")
            with open(os.path.join(out, name + ".generic.mlir"), "w") as f:
                f.write(f"// Generated by make_inputs.py ({name}, generic form); jax {jax.__version__}.\n")
                f.write(generic)
        print("wrote", name)


if __name__ == "__main__":
    main()
