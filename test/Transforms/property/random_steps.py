#!/usr/bin/env python3
"""Property test: random training-step-like programs through --tandem-overlap.

A seeded generator writes random but valid tandem IR modules shaped like one
step of Megatron-style TP+SP training: 1-3 layers with random hidden size,
heads (grouped-query or not), FFN size, sequence length and micro-batch
count; a @tp group of 2, 4 or 8 GPUs on a switch, full mesh or ring (with
link counts the topology needs); an h100 or h200 target; forward
AG -> fprop GEMMs -> RS chains; a backward with dgrad/wgrad GEMMs,
gradient all-gathers and reduce-scatters, in random orders; gradient
accumulation adds; an optional data-parallel @dp group (sometimes
hierarchical) with gradient all-reduces; random extra independent compute
(elementwise, norm, opaque, small GEMMs) and occasionally independent
collectives (all_reduce, all_gather, permute, all_to_all); and sometimes
collectives that are already asynchronous (start/wait, possibly with
independent work in between).

Every program is run through
  tandem-opt prog.mlir --tandem-overlap="strategy=S[ memory-budget=B]" \
      --tandem-test-liveness --tandem-simulate=report=R.json -o out.mlir
for every strategy S that tandem-opt's help lists for tandem-overlap (none,
bulk, reschedule and auto; also pipeline, pipeline+reschedule, te-preset and
te-preset+reschedule where they exist; a strategy that answers "not implemented" is skipped),
and the input alone through --tandem-test-liveness --tandem-simulate.
Checks, per program and strategy:

  (a) tandem-opt exits 0 and its output re-parses; when tandem-opt has the
      --tandem-verify-schedule pass, it must pass on the output (with
      reference=prog.mlir when the pass has that option). An input that the
      verifier itself rejects (blocking and async collectives mixed on one
      group) may come back unchanged from `none` and `auto`: counted and
      reported, not a failure;
  (b) for a random half of the programs a memory budget
      B = input's program-order peak x U[1.0, 1.5] is passed, and the
      output's program-order peak (the --tandem-test-liveness remark) must
      be <= max(B, input peak);
  (c) the simulated span of `auto` is <= the input's span x (1 + 1e-9),
      and `none` predicts exactly the input's span. For the other
      strategies a longer span is counted and reported, not a failure, as
      is `auto` being slower than `te-preset`;
  (d) the work is unchanged: the number of compute ops (per kind, matmuls
      per role) and of collectives (per kind and group, a start+wait pair
      counted once). Strategies that split GEMMs and collectives into chunk
      pipelines (pipeline, pipeline+reschedule, te-preset, and auto when it
      chose one of them) must instead keep the non-GEMM compute ops, the
      GEMM FLOPs per role and the bytes each group moves;
  (e) when tandem-opt has --tandem-export-plan, every output (except the
      racy inputs returned unchanged) lowers to a valid runtime plan: the
      lowering checks shapes, events, cross-stream ordering and the arena.
      Refusals the runtime documents as unsupported (collectives along a
      dimension other than 0, ...) are counted, not failures.

Programs depend only on (--seed, index), so `--only I` reruns program I,
`--print-program I` prints it and --keep-failures DIR keeps the inputs,
outputs and reports of every failing program. Exit code 1 on any failure;
the last line is `N programs, M runs, K failures` (M counts the tandem-opt
runs of the input and of every strategy).

usage: random_steps.py [--count N] [--seed S] [--tandem-opt PATH]
                       [--jobs J] [--keep-failures DIR] [--only I]
                       [--print-program I] [--strategies S,S,...]
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

# Used when tandem-opt's help does not list the strategies; the list it
# gives (e.g. with pipeline, pipeline+reschedule, te-preset) wins.
STRATEGIES = ["none", "bulk", "reschedule", "auto"]
# Strategies that may split GEMMs and collectives into chunk pipelines.
SPLITTING = {"pipeline", "pipeline+reschedule", "te-preset",
             "te-preset+reschedule"}
# Batch splitting runs every row-local op as parts and adds weight-gradient
# parts up: the ops it cannot split (attention, opaque kernels), GEMM FLOPs
# per role and the bytes moved on each group must stay.
BATCH_SPLITTING = {"split", "split+reschedule"}

COMPUTE_OPS = {"matmul", "attention", "attention_grad", "norm", "norm_grad",
               "elementwise", "opaque"}
COLLECTIVE_OPS = {"all_gather", "reduce_scatter", "all_reduce", "all_to_all",
                  "permute"}

# ---------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------


def fmt_float(x):
    return "%.3f" % x


class Value:
    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype

    @property
    def type(self):
        return "tensor<%sx%s>" % ("x".join(str(d) for d in self.shape),
                                  self.dtype)

    @property
    def bytes(self):
        n = 1
        for d in self.shape:
            n *= d
        return n * (4 if self.dtype == "f32" else 2)


class Program:
    """Builds one module as text. Values are SSA names with shapes."""

    def __init__(self, rng):
        self.rng = rng
        self.args = []          # Value
        self.lines = []         # body lines
        self.results = []       # Value
        self.counter = 0
        self.pool = []          # values extra ops may read
        self.groups = {}        # name -> size
        self.async_prob = {}    # group -> probability of a start/wait pair
        self.noise_prob = 0.0
        self.in_window = False  # emitting ops between a start and its wait
        self.dtype = "bf16"
        self.n_extra_args = 0

    # -- values -------------------------------------------------------------
    def arg(self, name, shape, dtype):
        v = Value("%" + name, shape, dtype)
        self.args.append(v)
        return v

    def fresh(self, shape, dtype):
        self.counter += 1
        return Value("%%v%d" % self.counter, shape, dtype)

    def emit(self, text):
        self.lines.append("    " + text)

    # -- compute ------------------------------------------------------------
    def matmul(self, role, lhs, rhs, tl=False, tr=False, layer=None,
               out_dtype=None):
        m, k = (lhs.shape[1], lhs.shape[0]) if tl else lhs.shape
        k2, n = (rhs.shape[1], rhs.shape[0]) if tr else rhs.shape
        assert k == k2, (lhs.shape, rhs.shape, tl, tr)
        r = self.fresh((m, n), out_dtype or lhs.dtype)
        flags = (" transpose_lhs" if tl else "") + \
            (" transpose_rhs" if tr else "")
        attr = ' {layer = "%s"}' % layer if layer else ""
        self.emit("%s = tandem.matmul %s %s, %s%s%s : %s, %s -> %s" % (
            r.name, role, lhs.name, rhs.name, flags, attr, lhs.type,
            rhs.type, r.type))
        return r

    def ew(self, kind, inputs, shape=None, dtype=None):
        shape = shape or inputs[0].shape
        r = self.fresh(shape, dtype or inputs[0].dtype)
        self.emit("%s = tandem.elementwise %s %s : %s -> %s" % (
            r.name, kind, ", ".join(v.name for v in inputs),
            ", ".join(v.type for v in inputs), r.type))
        return r

    def norm(self, kind, x, w, layer=None):
        r = self.fresh(x.shape, x.dtype)
        attr = ' {layer = "%s"}' % layer if layer else ""
        self.emit("%s = tandem.norm %s %s, %s%s : %s, %s" % (
            r.name, kind, x.name, w.name, attr, x.type, w.type))
        return r

    def norm_grad(self, kind, dy, x, w, layer=None):
        self.counter += 1
        base = "%%v%d" % self.counter
        attr = ' {layer = "%s"}' % layer if layer else ""
        self.emit("%s:2 = tandem.norm_grad %s %s, %s, %s%s : %s, %s" % (
            base, kind, dy.name, x.name, w.name, attr, x.type, w.type))
        return (Value(base + "#0", x.shape, x.dtype),
                Value(base + "#1", w.shape, w.dtype))

    def attention(self, qkv, nh, nkv, d, layer):
        r = self.fresh((qkv.shape[0], nh * d), qkv.dtype)
        self.emit('%s = tandem.attention %s heads(%d, %d) head_dim(%d) causal'
                  ' {layer = "%s"} : %s -> %s' % (
                      r.name, qkv.name, nh, nkv, d, layer, qkv.type, r.type))
        return r

    def attention_grad(self, dout, qkv, out, nh, nkv, d, layer):
        r = self.fresh(qkv.shape, qkv.dtype)
        self.emit('%s = tandem.attention_grad %s, %s, %s heads(%d, %d) '
                  'head_dim(%d) causal {layer = "%s"} : %s, %s, %s -> %s' % (
                      r.name, dout.name, qkv.name, out.name, nh, nkv, d,
                      layer, dout.type, qkv.type, out.type, r.type))
        return r

    def opaque(self, kernel, inputs, out_shapes, dtype, flops, nbytes):
        outs = [self.fresh(s, dtype) for s in out_shapes]
        if len(outs) == 1:
            lhs, rtypes = outs[0].name, outs[0].type
        else:
            self.counter += 1
            base = "%%v%d" % self.counter
            outs = [Value("%s#%d" % (base, i), s, dtype)
                    for i, s in enumerate(out_shapes)]
            lhs = "%s:%d" % (base, len(outs))
            rtypes = "(%s)" % ", ".join(o.type for o in outs)
        self.emit('%s = tandem.opaque "%s"(%s) flops(%.6e) bytes(%d) : '
                  '(%s) -> %s' % (lhs, kernel,
                                  ", ".join(v.name for v in inputs),
                                  flops, nbytes,
                                  ", ".join(v.type for v in inputs), rtypes))
        return outs

    # -- collectives --------------------------------------------------------
    def collective(self, kind, x, group, allow_async=True, **kw):
        size = self.groups[group]
        shape = list(x.shape)
        if kind == "all_gather":
            shape[kw.get("dim", 0)] *= size
            tail = "dim %d" % kw.get("dim", 0)
        elif kind == "reduce_scatter":
            dim = kw.get("dim", 0)
            assert shape[dim] % size == 0
            shape[dim] //= size
            tail = "dim %d" % dim
        elif kind == "all_reduce":
            red = kw.get("reduce")
            tail = "reduce %s" % red if red else ""
        elif kind == "permute":
            tail = "shift %d" % kw["shift"]
        elif kind == "all_to_all":
            s, c = kw["split"], kw["concat"]
            assert shape[s] % size == 0
            shape[s] //= size
            shape[c] *= size
            tail = "split %d concat %d" % (s, c)
        else:
            raise ValueError(kind)
        r = self.fresh(shape, x.dtype)
        tail = (" " + tail) if tail else ""
        if allow_async and not self.in_window and \
                self.rng.random() < self.async_prob.get(group, 0.0):
            self.counter += 1
            fut = "%%f%d" % self.counter
            ftype = "!tandem.future<%s>" % r.type
            self.emit("%s = tandem.%s_start %s on @%s%s : %s -> %s" % (
                fut, kind, x.name, group, tail, x.type, ftype))
            # Sometimes independent work already sits in the window.
            self.in_window = True
            for _ in range(self.rng.choice([0, 0, 1, 2])):
                self.extra_op(force=True)
            self.in_window = False
            self.emit("%s = tandem.wait %s : %s" % (r.name, fut, ftype))
        else:
            self.emit("%s = tandem.%s %s on @%s%s : %s -> %s" % (
                r.name, kind, x.name, group, tail, x.type, r.type))
        return r

    # -- extra independent work ----------------------------------------------
    def extra_op(self, force=False):
        """Maybe emit one op that nothing in the step depends on; its
        results are returned from the function."""
        rng = self.rng
        if not force and rng.random() >= self.noise_prob:
            return
        dtype = self.dtype
        pool2d = [v for v in self.pool if len(v.shape) == 2]
        src = rng.choice(pool2d) if pool2d and rng.random() < 0.6 else None
        if src is None:
            rows = rng.choice([64, 128, 256, 512, 1024])
            cols = rng.choice([128, 256, 512, 1024, 2048, 4096])
            self.n_extra_args += 1
            src = self.arg("extra%d" % self.n_extra_args, (rows, cols), dtype)
        choices = ["ew", "ew", "norm", "opaque", "gemm"]
        if not self.in_window:
            choices += ["coll"] if rng.random() < 0.3 else []
        what = rng.choice(choices)
        if what == "ew":
            kind = rng.choice(["copy", "gelu", "silu", "add", "mul", "cast"])
            if kind in ("add", "mul"):
                out = self.ew(kind, [src, src])
            elif kind == "cast":
                out = self.ew("cast", [src],
                              dtype="f32" if src.dtype != "f32" else dtype)
            else:
                out = self.ew(kind, [src])
            self.results.append(out)
        elif what == "norm":
            if src.dtype == "f32":
                src = self.ew("cast", [src], dtype=dtype)
            self.n_extra_args += 1
            w = self.arg("extra%d.w" % self.n_extra_args, (src.shape[1],),
                         src.dtype)
            self.results.append(self.norm(rng.choice(["layer", "rms"]),
                                          src, w))
        elif what == "opaque":
            nouts = rng.choice([1, 1, 1, 2])
            ins = [src] if rng.random() < 0.85 else []
            outs = self.opaque(
                rng.choice(["metrics", "dropout_mask", "rng_state",
                            "custom_kernel"]),
                ins, [src.shape] * nouts, src.dtype,
                rng.choice([0.0, 1.0e6, 1.0e9, 5.0e10, 2.0e11]),
                rng.choice([0, src.bytes, 2 * src.bytes, 1 << 20]))
            self.results.extend(outs)
        elif what == "gemm":
            if src.dtype == "f32":
                src = self.ew("cast", [src], dtype=dtype)
            n = rng.choice([128, 256, 512, 1024, 2048])
            self.n_extra_args += 1
            w = self.arg("extra%d.w" % self.n_extra_args, (src.shape[1], n),
                         src.dtype)
            self.results.append(self.matmul(rng.choice(["fprop", "fprop",
                                                        "dgrad"]), src, w))
        else:
            self.independent_collective(src)

    def independent_collective(self, src):
        rng = self.rng
        groups = sorted(self.groups)
        g = rng.choice(groups)
        size = self.groups[g]
        kinds = ["all_reduce", "all_gather", "permute"]
        if src.shape[0] % size == 0:
            kinds += ["reduce_scatter", "all_to_all"]
        kind = rng.choice(kinds)
        if kind == "all_reduce":
            out = self.collective(kind, src, g, reduce=rng.choice(
                [None, None, "sum", "avg", "max"]))
        elif kind == "all_gather":
            out = self.collective(kind, src, g, dim=rng.choice([0, 1]))
        elif kind == "reduce_scatter":
            out = self.collective(kind, src, g, dim=0)
        elif kind == "permute":
            shift = rng.choice([s for s in range(1, 2 * size)
                                if s % size != 0])
            out = self.collective(kind, src, g, shift=shift)
        else:
            out = self.collective(kind, src, g, split=0, concat=1)
        self.results.append(out)


def pick_config(rng):
    """Random model, parallelism and network configuration."""
    while True:
        tp = rng.choice([2, 4, 8])
        hidden = 128 * rng.randint(2, 32)
        head_dims = [d for d in (64, 128, 256) if hidden % d == 0 and
                     (hidden // d) % tp == 0]
        if head_dims:
            break
    d = rng.choice(head_dims)
    heads = hidden // d
    kv_opts = [k for k in range(tp, heads + 1, tp)
               if heads % k == 0 and k % tp == 0]
    kv = heads if rng.random() < 0.6 else rng.choice(kv_opts)
    ffn = 128 * rng.randint(max(2, hidden // 128), 4 * hidden // 128)
    seq = rng.choice([256, 512, 1024, 2048, 4096, 8192])
    cfg = dict(
        tp=tp, hidden=hidden, heads=heads, kv=kv, head_dim=d, ffn=ffn,
        seq=seq, layers=rng.choice([1, 1, 2, 2, 3]),
        micro_batches=rng.choice([1, 1, 1, 2, 2, 3]),
        dtype=rng.choice(["bf16", "bf16", "bf16", "f16"]),
        mlp=rng.choice(["gelu", "swiglu"]),
        norm=rng.choice(["layer", "rms"]),
        target=rng.choice(["h100", "h200"]),
        topology=rng.choice(["switch", "full_mesh", "ring"]),
        dp=rng.choice([0, 0, 0, 2, 4]),
    )
    return cfg


def group_decl(rng, name, size, topology, hierarchical_gpn=None):
    lat = rng.choice([1.0, 1.5, 2.0, 2.0, 3.0])
    if hierarchical_gpn:
        return ("tandem.group @%s size(%d) hierarchical links(18 x 25.0 GBps,"
                " %s us) {gpus_per_node = %d : i64, inter_node_bandwidth_gbps"
                " = %s : f64, inter_node_latency_us = %s : f64}" % (
                    name, size, fmt_float(lat), hierarchical_gpn,
                    fmt_float(rng.choice([25.0, 50.0, 100.0])),
                    fmt_float(rng.choice([3.0, 5.0, 8.0]))))
    total = rng.choice([300.0, 450.0, 450.0, 600.0])
    if topology == "switch":
        links = rng.choice([12, 18, 18])
        bw = total / links
    elif topology == "full_mesh":
        # At least size - 1 links per GPU (the verifier's rule); the node's
        # bandwidth is spread over 7 peers.
        links = rng.randint(size - 1, 7)
        bw = total / 7
    else:
        links = 1 if size == 2 and rng.random() < 0.5 else 2
        bw = total / 2
    return "tandem.group @%s size(%d) %s links(%d x %s GBps, %s us)" % (
        name, size, topology, links, fmt_float(bw), fmt_float(lat))


def generate(seed, index):
    """Returns (module text, config dict) for program `index` of `seed`."""
    rng = random.Random("tandem-property:%d:%d" % (seed, index))
    cfg = pick_config(rng)
    p = Program(rng)
    p.dtype = dt = cfg["dtype"]
    p.noise_prob = rng.choice([0.0, 0.05, 0.1, 0.2])
    # Already-asynchronous collectives: none; whole groups async; or, in a
    # few programs, blocking and async forms mixed within a group (which
    # tandem-verify-schedule rejects as written: a start on the group's
    # stream is not ordered after a blocking collective on stream 0).
    async_mode = rng.choices(["blocking", "per-group", "mixed"],
                             [0.55, 0.3, 0.15])[0]
    cfg["async_mode"] = async_mode
    cfg["noise_prob"] = p.noise_prob
    tp, h, s = cfg["tp"], cfg["hidden"], cfg["seq"]
    nh, nkv, d = cfg["heads"] // tp, cfg["kv"] // tp, cfg["head_dim"]
    f = cfg["ffn"] // tp
    f1 = 2 * f if cfg["mlp"] == "swiglu" else f
    sp = s // tp
    qkv_cols = (nh + 2 * nkv) * d
    nk = cfg["norm"]

    decls = [group_decl(rng, "tp", tp, cfg["topology"])]
    p.groups["tp"] = tp
    if cfg["dp"]:
        gpn = max(1, 8 // tp)
        if tp * cfg["dp"] > 8 and rng.random() < 0.5:
            # Spans nodes: gpus_per_node members of the group share a node,
            # and the size must be a multiple of it.
            dp = rng.choice([gpn * k for k in (1, 2, 4) if gpn * k >= 2])
            cfg["dp"] = dp
            cfg["dp_topology"] = "hierarchical"
            decls.append(group_decl(rng, "dp", dp, None, hierarchical_gpn=gpn))
        else:
            topo = rng.choice(["switch", "full_mesh", "ring"])
            if topo == "full_mesh" and cfg["dp"] > 8:
                topo = "switch"
            cfg["dp_topology"] = topo
            decls.append(group_decl(rng, "dp", cfg["dp"], topo))
        p.groups["dp"] = cfg["dp"]
    for g in p.groups:
        if async_mode == "per-group":
            p.async_prob[g] = rng.choice([0.0, 1.0])
        elif async_mode == "mixed":
            p.async_prob[g] = rng.uniform(0.1, 0.7)

    # Per-layer structure.
    layers = []
    for l in range(cfg["layers"]):
        has_attn = rng.random() < 0.9
        has_mlp = rng.random() < 0.9 or not has_attn
        W = {}
        if has_attn:
            W["ln1"] = p.arg("l%d.ln1.w" % l, (h,), dt)
            W["qkv"] = p.arg("l%d.qkv.w" % l, (h, qkv_cols), dt)
            W["proj"] = p.arg("l%d.proj.w" % l, (nh * d, h), dt)
        if has_mlp:
            W["ln2"] = p.arg("l%d.ln2.w" % l, (h,), dt)
            W["fc1"] = p.arg("l%d.fc1.w" % l, (h, f1), dt)
            W["fc2"] = p.arg("l%d.fc2.w" % l, (f, h), dt)
        layers.append(dict(
            attn=has_attn, mlp=has_mlp, W=W,
            opaque_attn=rng.random() < 0.15,
            save_gathered=rng.random() < 0.3))
    mbs = [p.arg("x.mb%d" % m, (sp, h), dt)
           for m in range(cfg["micro_batches"])]
    p.pool.extend(mbs)

    grads = collections.OrderedDict()   # key -> running sum Value
    final_order = []                    # grad keys in the order they finish
    last_mb = cfg["micro_batches"] - 1
    dp_eager = cfg["dp"] and rng.random() < 0.4
    reduced = {}

    def add_grad(key, g, mb):
        if key in grads:
            g = p.ew("add", [grads[key], g])
        grads[key] = g
        if mb == last_mb:
            final_order.append(key)
            if dp_eager:
                reduced[key] = p.collective("all_reduce", g, "dp")

    def ag(x):
        return p.collective("all_gather", x, "tp", dim=0)

    def rs(x):
        return p.collective("reduce_scatter", x, "tp", dim=0)

    def gemm_pair(dgrad_fn, wgrad_fn, deferred):
        """dgrad and wgrad in a random order; a deferred wgrad runs later."""
        order = rng.random()
        if order < 0.25:
            wgrad_fn()
            return dgrad_fn()
        out = dgrad_fn()
        if order < 0.85:
            wgrad_fn()
        else:
            deferred.append(wgrad_fn)
        return out

    for mb, x0 in enumerate(mbs):
        # Forward.
        x = x0
        saved = []
        for l, L in enumerate(layers):
            W, S = L["W"], {"x": x}
            if L["attn"]:
                S["ln1"] = p.norm(nk, x, W["ln1"], "l%d.ln1" % l)
                p.extra_op()
                S["a1"] = ag(S["ln1"])
                S["qkv"] = p.matmul("fprop", S["a1"], W["qkv"],
                                    layer="l%d.qkv" % l)
                if L["opaque_attn"]:
                    S["attn"] = p.opaque(
                        "flash_attn_fwd", [S["qkv"]], [(s, nh * d)], dt,
                        4.0 * s * s * nh * d, S["qkv"].bytes)[0]
                else:
                    S["attn"] = p.attention(S["qkv"], nh, nkv, d,
                                            "l%d.attn" % l)
                p.extra_op()
                proj = p.matmul("fprop", S["attn"], W["proj"],
                                layer="l%d.proj" % l)
                x = p.ew("add", [x, rs(proj)])
                p.pool.append(x)
            S["x2"] = x
            if L["mlp"]:
                S["ln2"] = p.norm(nk, x, W["ln2"], "l%d.ln2" % l)
                S["a2"] = ag(S["ln2"])
                S["fc1"] = p.matmul("fprop", S["a2"], W["fc1"],
                                    layer="l%d.fc1" % l)
                if cfg["mlp"] == "swiglu":
                    S["act"] = p.ew("swiglu", [S["fc1"]], shape=(s, f))
                else:
                    S["act"] = p.ew("gelu", [S["fc1"]])
                p.extra_op()
                fc2 = p.matmul("fprop", S["act"], W["fc2"],
                               layer="l%d.fc2" % l)
                x = p.ew("add", [x, rs(fc2)])
                p.pool.append(x)
            saved.append(S)
        dy = p.opaque("loss_grad", [x], [(sp, h)], dt, 0.0, 2 * x.bytes)[0]
        p.pool.append(dy)
        p.extra_op()

        # Backward, last layer first.
        for l in reversed(range(len(layers))):
            L, S, W = layers[l], saved[l], layers[l]["W"]
            deferred = []
            if L["mlp"]:
                g2 = ag(dy)
                dact = gemm_pair(
                    lambda: p.matmul("dgrad", g2, W["fc2"], tr=True,
                                     layer="l%d.fc2" % l),
                    lambda: add_grad("l%d.fc2" % l, p.matmul(
                        "wgrad", S["act"], g2, tl=True,
                        layer="l%d.fc2" % l), mb),
                    deferred)
                if cfg["mlp"] == "swiglu":
                    dfc1 = p.ew("swiglu_grad", [dact, S["fc1"]],
                                shape=(s, f1))
                else:
                    dfc1 = p.ew("gelu_grad", [dact, S["fc1"]])
                p.extra_op()

                def fc1_wgrad(S=S, dfc1=dfc1, l=l, L=L):
                    a2 = S["a2"] if L["save_gathered"] else ag(S["ln2"])
                    add_grad("l%d.fc1" % l, p.matmul(
                        "wgrad", a2, dfc1, tl=True, layer="l%d.fc1" % l), mb)
                da2 = gemm_pair(
                    lambda: p.matmul("dgrad", dfc1, W["fc1"], tr=True,
                                     layer="l%d.fc1" % l),
                    fc1_wgrad, deferred)
                dln2 = rs(da2)
                dxn, dw = p.norm_grad(nk, dln2, S["x2"], W["ln2"],
                                      "l%d.ln2" % l)
                add_grad("l%d.ln2" % l, dw, mb)
                dy = p.ew("add", [dy, dxn])
                p.pool.append(dy)
                for fn in deferred:
                    fn()
                deferred = []
            if L["attn"]:
                g1 = ag(dy)
                dattn = gemm_pair(
                    lambda: p.matmul("dgrad", g1, W["proj"], tr=True,
                                     layer="l%d.proj" % l),
                    lambda: add_grad("l%d.proj" % l, p.matmul(
                        "wgrad", S["attn"], g1, tl=True,
                        layer="l%d.proj" % l), mb),
                    deferred)
                if L["opaque_attn"]:
                    dqkv = p.opaque("flash_attn_bwd",
                                    [dattn, S["qkv"], S["attn"]],
                                    [S["qkv"].shape], dt,
                                    10.0 * s * s * nh * d,
                                    2 * S["qkv"].bytes)[0]
                else:
                    dqkv = p.attention_grad(dattn, S["qkv"], S["attn"], nh,
                                            nkv, d, "l%d.attn" % l)
                p.extra_op()

                def qkv_wgrad(S=S, dqkv=dqkv, l=l, L=L):
                    a1 = S["a1"] if L["save_gathered"] else ag(S["ln1"])
                    add_grad("l%d.qkv" % l, p.matmul(
                        "wgrad", a1, dqkv, tl=True, layer="l%d.qkv" % l), mb)
                da1 = gemm_pair(
                    lambda: p.matmul("dgrad", dqkv, W["qkv"], tr=True,
                                     layer="l%d.qkv" % l),
                    qkv_wgrad, deferred)
                dln1 = rs(da1)
                dxn, dw = p.norm_grad(nk, dln1, S["x"], W["ln1"],
                                      "l%d.ln1" % l)
                add_grad("l%d.ln1" % l, dw, mb)
                if l > 0 or rng.random() < 0.3:
                    dy = p.ew("add", [dy, dxn])
                    p.pool.append(dy)
                    if l == 0:
                        p.results.append(dy)   # input gradient, returned
                for fn in deferred:
                    fn()
            elif l == 0:
                p.results.append(dy)

    # Data-parallel all-reduce of every final gradient.
    outs = []
    for key in final_order:
        if cfg["dp"]:
            if key not in reduced:
                reduced[key] = p.collective("all_reduce", grads[key], "dp")
            outs.append(reduced[key])
        else:
            outs.append(grads[key])
        if rng.random() < 0.1:
            p.extra_op(force=True)
    for _ in range(rng.choice([0, 0, 1, 2])):
        p.extra_op(force=True)
    results = outs + p.results

    target = '#tandem.target<"%s">' % cfg["target"]
    text = ["module attributes {tandem.target = %s} {" % target]
    text += ["  " + dl for dl in decls]
    text.append("  func.func @train_step(%s) -> (%s) {" % (
        ", ".join("%s: %s" % (a.name, a.type) for a in p.args),
        ", ".join(r.type for r in results)))
    text += p.lines
    text.append("    return %s : %s" % (", ".join(r.name for r in results),
                                        ", ".join(r.type for r in results)))
    text.append("  }")
    text.append("}")
    return "\n".join(text) + "\n", cfg


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

OP_RE = re.compile(r"^\s*(?:%[^=]*=\s*)?tandem\.([a-z_]+)\b(.*)$")
TENSOR_RE = re.compile(r"tensor<([0-9x]+)x([a-z]+[0-9]+)>")
ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "f64": 8, "i8": 1, "i32": 4,
                 "i64": 8}


def tensor_types(sig):
    """(shape, bytes) of every tensor type in an op's type signature."""
    out = []
    for dims, elt in TENSOR_RE.findall(sig):
        shape = [int(d) for d in dims.split("x")]
        n = 1
        for d in shape:
            n *= d
        out.append((shape, n * ELEMENT_BYTES.get(elt, 2)))
    return out


def op_summary(text):
    """What a schedule must preserve, from the module's text.

    counts: compute ops per kind (matmuls per role) and collectives per kind
    and group, a `_start` counted as its blocking form, waits not counted.
    flops: 2*M*N*K per matmul role. volume: bytes each rank moves on each
    group (all-gather: result - input; reduce-scatter: input - result;
    permute, all-reduce, all-to-all: input), which chunked or P2P pipelines
    of a collective keep. Layout ops (slice, concat, ...) are not counted."""
    counts = collections.Counter()
    flops = collections.Counter()
    volume = collections.Counter()
    for line in text.splitlines():
        m = OP_RE.match(line)
        if not m:
            continue
        name, rest = m.group(1), m.group(2)
        sig = rest.rsplit(" : ", 1)[-1] if " : " in rest else ""
        types = tensor_types(sig)
        if name in COMPUTE_OPS:
            if name == "matmul":
                role = rest.split()[0]
                name += "." + role
                if len(types) == 3:
                    (lhs, _), _, (res, _) = types
                    k = lhs[-2] if "transpose_lhs" in rest else lhs[-1]
                    mn = 1
                    for d in res:
                        mn *= d
                    flops[role] += 2 * mn * k
            counts["compute:" + name] += 1
            continue
        base = name[:-6] if name.endswith("_start") else name
        if base not in COLLECTIVE_OPS:
            continue
        g = re.search(r"\bon @([\w.$-]+)", rest)
        group = g.group(1) if g else "?"
        counts["collective:%s@%s" % (base, group)] += 1
        if len(types) == 2:
            (_, inb), (_, outb) = types
            volume[group] += {"all_gather": outb - inb,
                              "reduce_scatter": inb - outb}.get(base, inb)
    return counts, flops, volume


def diff(a, b):
    return {k: (a.get(k, 0), b.get(k, 0)) for k in sorted(set(a) | set(b))
            if a.get(k, 0) != b.get(k, 0)}


PEAK_RE = re.compile(r"remark: peak memory (\d+) bytes")
CHOSEN_RE = re.compile(r"remark: strategy (\S+) chosen")


def run_tool(cmd):
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return 124, "", "timed out after 300 s"
    return r.returncode, r.stdout, r.stderr


def peak_of(stderr):
    peaks = [int(x) for x in PEAK_RE.findall(stderr)]
    return max(peaks) if peaks else None


def tool_features(opt):
    """What this tandem-opt offers: the tandem-overlap strategies its help
    lists (auto last), whether tandem-verify-schedule exists, and whether
    that pass takes `reference`."""
    rc, out, err = run_tool([opt, "--help"])
    text = out + err
    if rc != 0:
        sys.exit("random_steps.py: '%s --help' failed (exit %d)" % (opt, rc))

    def pass_options(name):
        idx = text.find("--%s " % name)
        if idx < 0:
            return None
        opts = []
        for line in text[idx:].split("\n")[1:]:
            m = re.match(r"\s+--([\w-]+)(?:=<\w+>)?\s+-\s+(.*)$", line)
            if not m or re.match(r"\s+--tandem-", line):
                break
            opts.append((m.group(1), m.group(2)))
        return opts

    strategies = list(STRATEGIES)
    for opt_name, desc in pass_options("tandem-overlap") or []:
        if opt_name == "strategy" and "|" in desc:
            listed = desc.split()[0].split("|")
            strategies = [s for s in listed if s != "auto"] + ["auto"]
    verify_opts = pass_options("tandem-verify-schedule")
    verify = verify_opts is not None
    reference = verify and any(o == "reference" for o, _ in verify_opts)
    export = pass_options("tandem-export-plan") is not None
    return dict(strategies=strategies, verify=verify, reference=reference,
                export=export)


def reparse_and_verify(opt, tmp, prog, chunks, verify, verify_ref,
                       allow_reordered=False):
    """Re-parses the modules `chunks` (name -> path) in one tandem-opt run
    (--split-input-file) and, when asked, runs tandem-verify-schedule on
    each. Returns name -> list of error lines."""
    names = list(chunks)
    combined = os.path.join(tmp, "reparse.mlir")
    spans = []  # (first line, last line, name)
    line = 1
    with open(combined, "w") as out:
        for i, name in enumerate(names):
            with open(chunks[name]) as fh:
                body = fh.read()
            if not body.endswith("\n"):
                body += "\n"
            n = body.count("\n")
            spans.append((line, line + n - 1, name))
            out.write(body)
            line += n
            if i + 1 < len(names):
                out.write("// -----\n")
                line += 1
    cmd = [opt, combined, "--split-input-file", "-o", os.devnull,
           "--mlir-print-op-on-diagnostic=false"]
    if verify:
        cmd.append("--tandem-verify-schedule=remarks=false" +
                   (" reference=%s" % prog if verify_ref else "") +
                   (" allow-reordered-collectives=true"
                    if allow_reordered else ""))
    rc, _, err = run_tool(cmd)
    errors = {name: [] for name in names}
    if rc == 0:
        return errors
    found = False
    for m in re.finditer(r"^\S*reparse\.mlir:(\d+):\d+: error: (.*)$", err,
                         re.M):
        ln = int(m.group(1))
        for lo, hi, name in spans:
            if lo <= ln <= hi:
                errors[name].append("line %d: %s" % (ln - lo + 1,
                                                      m.group(2)))
                found = True
    if not found:
        for name in names:
            errors[name].append("exit %d: %s" % (rc, err.strip()[-1000:]))
    return errors


def check_program(opt, seed, index, features, keep_dir):
    """Runs every check on one program; returns a result dict."""
    verify, verify_ref = features["verify"], features["reference"]
    text, cfg = generate(seed, index)
    res = dict(index=index, failures=[], runs=0, spans={}, peaks={},
               budget=None, cfg=cfg, racy_input=False, auto_kept_racy=False,
               chosen=None, unavailable=set())
    common = ["--mlir-print-op-on-diagnostic=false"]
    with tempfile.TemporaryDirectory(prefix="tandem-prop-") as tmp:
        prog = os.path.join(tmp, "prog.mlir")
        with open(prog, "w") as fh:
            fh.write(text)

        def fail(check, msg):
            msg = msg.replace(tmp + os.sep, "")
            res["failures"].append("seed %d program %d: %s: %s" % (
                seed, index, check, msg))
            # For the tally: the check, the strategy and the first error.
            m = re.search(r"error: ([^|;]*)", msg)
            kind = re.sub(r"[0-9.]+", "N", msg.split(":")[0])[:60]
            res.setdefault("kinds", []).append(
                "%s: %s" % (check, m.group(1).strip()[:80] if m else kind))

        # The input alone: it must verify; its span and program-order peak.
        rep = os.path.join(tmp, "input.json")
        rc, _, err = run_tool([opt, prog, "--tandem-test-liveness",
                               "--tandem-simulate=report=%s" % rep,
                               "-o", os.devnull] + common)
        res["runs"] += 1
        if rc != 0:
            fail("(a) input", "tandem-opt rejected the generated program "
                 "(exit %d): %s" % (rc, err.strip()[-2000:]))
            return finish(res, tmp, keep_dir, seed)
        with open(rep) as fh:
            in_span = json.load(fh)["span_us"]
        in_peak = peak_of(err)
        if in_peak is None:
            fail("(b) input", "no 'peak memory' remark from "
                 "--tandem-test-liveness")
            return finish(res, tmp, keep_dir, seed)
        res["spans"]["input"] = in_span
        res["peaks"]["input"] = in_peak
        in_counts, in_flops, in_volume = op_summary(text)

        rng = random.Random("tandem-property-budget:%d:%d" % (seed, index))
        budget = None
        if rng.random() < 0.5:
            budget = int(in_peak * rng.uniform(1.0, 1.5))
            res["budget"] = budget

        outputs = collections.OrderedDict([("input", prog)])
        for strat in features["strategies"]:
            opts = "strategy=%s" % strat
            if budget is not None:
                opts += " memory-budget=%d" % budget
            out = os.path.join(tmp, "out.%s.mlir" % strat)
            rep = os.path.join(tmp, "out.%s.json" % strat)
            cmd = [opt, prog, "--tandem-overlap=%s" % opts,
                   "--tandem-test-liveness",
                   "--tandem-simulate=report=%s" % rep, "-o", out] + common
            rc, _, err = run_tool(cmd)
            res["runs"] += 1
            if rc != 0 and strat != "auto" and "not implemented" in err:
                res["unavailable"].add(strat)
                continue
            if rc != 0:
                fail("(a) %s" % strat, "tandem-opt exited %d: %s" % (
                    rc, " | ".join(l for l in err.strip().splitlines()
                                   if "error" in l)[:1500] or
                    err.strip()[-1500:]))
                continue
            outputs[strat] = out
            chosen = strat
            if strat == "auto":
                m = CHOSEN_RE.search(err)
                chosen = m.group(1) if m else "?"
                res["chosen"] = chosen
            # (b) memory.
            peak = peak_of(err)
            res["peaks"][strat] = peak
            if peak is None:
                fail("(b) %s" % strat, "no 'peak memory' remark on the output")
            elif budget is not None and peak > max(budget, in_peak):
                fail("(b) %s" % strat, "peak memory over the budget: %d "
                     "bytes > %d (input peak %d)" % (peak, budget, in_peak))
            # (c) span.
            with open(rep) as fh:
                span = json.load(fh)["span_us"]
            res["spans"][strat] = span
            if strat == "auto" and span > in_span * (1 + 1e-9):
                fail("(c) auto", "slower than the input: span %.6f us > "
                     "%.6f us (chose %s)" % (span, in_span, chosen))
            if strat == "none" and abs(span - in_span) > 1e-9 * in_span:
                fail("(c) none", "span differs from the input's: %.6f us "
                     "!= %.6f us" % (span, in_span))
            # (d) the work is unchanged.
            with open(out) as fh:
                counts, flops, volume = op_summary(fh.read())
            if chosen in BATCH_SPLITTING:
                kept = ("compute:attention", "compute:attention_grad",
                        "compute:opaque")
                keep = lambda c: {k: v for k, v in c.items()
                                  if k.startswith(kept)}
                d = diff(keep(in_counts), keep(counts))
                d.update({"flops:" + k: v for k, v in
                          diff(in_flops, flops).items()})
                d.update({"bytes@" + k: v for k, v in
                          diff(in_volume, volume).items()})
            elif chosen in SPLITTING:
                # Pipelines split GEMMs and collectives into chunks: the
                # non-GEMM compute ops, GEMM FLOPs per role and the bytes
                # moved on each group must stay.
                keep = lambda c: {k: v for k, v in c.items()
                                  if k.startswith("compute:") and
                                  not k.startswith("compute:matmul")}
                d = diff(keep(in_counts), keep(counts))
                d.update({"flops:" + k: v for k, v in
                          diff(in_flops, flops).items()})
                d.update({"bytes@" + k: v for k, v in
                          diff(in_volume, volume).items()})
            else:
                # AG-WGRAD may split a wgrad's output rows in two to fill a
                # window (split-wgrads): wgrad GEMMs are compared by FLOPs.
                wgrad = "compute:matmul.wgrad"
                d = diff({k: v for k, v in in_counts.items() if k != wgrad},
                         {k: v for k, v in counts.items() if k != wgrad})
                if counts.get(wgrad, 0) < in_counts.get(wgrad, 0):
                    d[wgrad] = (in_counts.get(wgrad, 0), counts.get(wgrad, 0))
                d.update({"flops:" + k: v for k, v in
                          diff(in_flops, flops).items()})
            if d:
                fail("(d) %s" % strat, "work changed: (input, output) %s" % d)

        # (a) every output re-parses and passes the schedule verifier. An
        # input the verifier rejects (blocking and async collectives mixed
        # on one group) comes back unchanged from `none`, and from `auto`
        # when it keeps the input: those are reported, not failures.
        # Batch splits may interleave micro-batches, which reorders each
        # group's collectives on purpose (tandem-overlap verifies them with
        # allow-reordered-collectives): those outputs are verified apart,
        # with the same option, the others as they are.
        reordering = {n for n in outputs
                      if (res.get("chosen") if n == "auto" else n)
                      in BATCH_SPLITTING}
        errors = reparse_and_verify(
            opt, tmp, prog,
            {n: f for n, f in outputs.items() if n not in reordering},
            verify, verify_ref)
        if reordering:
            errors.update(reparse_and_verify(
                opt, tmp, prog, {n: outputs[n] for n in reordering}, verify,
                verify_ref, allow_reordered=True))
        res["racy_input"] = bool(errors["input"])
        same_as_input = set()
        if res["racy_input"] and "none" in outputs:
            same_as_input.add("none")
            with open(outputs["none"]) as a:
                none_text = a.read()
            if "auto" in outputs:
                with open(outputs["auto"]) as b:
                    if b.read() == none_text:
                        same_as_input.add("auto")
                        res["auto_kept_racy"] = True
        if errors["input"] and not verify:
            fail("(a) input", "the input does not re-parse: %s" %
                 errors["input"][0])
        parse_errors = None
        for strat in outputs:
            errs = errors.get(strat)
            if strat == "input" or not errs:
                continue
            if strat in same_as_input:
                if parse_errors is None:
                    parse_errors = reparse_and_verify(
                        opt, tmp, prog, outputs, False, False)
                if not parse_errors[strat]:
                    continue
                errs = parse_errors[strat]
            fail("(a) %s" % strat, "the output does not %s: %s" % (
                "re-parse and pass --tandem-verify-schedule" if verify
                else "re-parse", "; ".join(errs[:3])))
        # (e) every schedule lowers to a valid runtime plan: the lowering
        # validates shapes, events and cross-stream ordering and plans the
        # arena. Inputs the verifier rejects are racy on purpose and skipped;
        # what the runtime documents as unsupported is counted, not failed.
        if features.get("export"):
            for strat, path in outputs.items():
                if strat == "input" or strat in same_as_input:
                    continue
                plan = os.path.join(tmp, "plan.%s.json" % strat)
                rc, _, err = run_tool([opt, path, "--tandem-export-plan=file=%s"
                                       " simulate=false" % plan, "-o",
                                       os.devnull] + common)
                res["runs"] += 1
                if rc == 0:
                    continue
                if ("the runtime supports" in err or
                        "is not supported by the runtime" in err):
                    res["export_unsupported"] = \
                        res.get("export_unsupported", 0) + 1
                    continue
                fail("(e) %s" % strat, "--tandem-export-plan failed: %s" % (
                    " | ".join(l for l in err.strip().splitlines()
                               if "error" in l)[:1500]))
        return finish(res, tmp, keep_dir, seed)


def finish(res, tmp, keep_dir, seed):
    if res["failures"] and keep_dir:
        dest = os.path.join(keep_dir, "seed%d-prog%d" % (seed, res["index"]))
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(tmp, dest)
        with open(os.path.join(dest, "failures.txt"), "w") as fh:
            fh.write("\n".join(res["failures"]) + "\n")
            fh.write("config: %s\n" % json.dumps(res["cfg"], sort_keys=True))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tandem-opt", default="tandem-opt")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep-failures", metavar="DIR")
    ap.add_argument("--only", type=int, metavar="I",
                    help="run only program I of the seed")
    ap.add_argument("--print-program", type=int, metavar="I",
                    help="print program I of the seed and exit")
    ap.add_argument("--spans-json", metavar="FILE",
                    help="write every program's simulated span per strategy "
                         "(us) to FILE, to compare two builds case by case")
    ap.add_argument("--strategies", metavar="S,S,...",
                    help="run only these strategies (default: every "
                    "strategy tandem-opt's help lists)")
    args = ap.parse_args()

    if args.print_program is not None:
        text, cfg = generate(args.seed, args.print_program)
        sys.stdout.write("// config: %s\n" % json.dumps(cfg, sort_keys=True))
        sys.stdout.write(text)
        return 0

    opt = shutil.which(args.tandem_opt) or args.tandem_opt
    features = tool_features(opt)
    if args.strategies:
        features["strategies"] = args.strategies.split(",")
    if args.keep_failures:
        os.makedirs(args.keep_failures, exist_ok=True)
    indices = [args.only] if args.only is not None else range(args.count)

    results = []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
        futs = [ex.submit(check_program, opt, args.seed, i, features,
                          args.keep_failures) for i in indices]
        for fut in futs:
            r = fut.result()
            for msg in r["failures"]:
                print("FAIL " + msg, flush=True)
            results.append(r)

    n = len(results)
    runs = sum(r["runs"] for r in results)
    nfail = sum(len(r["failures"]) for r in results)
    verify = features["verify"]
    print("strategies: %s" % ", ".join(features["strategies"]))
    unavailable = set().union(*(r["unavailable"] for r in results)) \
        if results else set()
    if unavailable:
        print("not implemented in this tandem-opt: %s" %
              ", ".join(sorted(unavailable)))
    print("verify-schedule: %s" % (
        ("ran on every output" + (" (with reference=input)"
                                  if features["reference"] else ""))
        if verify else "not run (tandem-opt has no --tandem-verify-schedule)"))
    ok = [r for r in results if "input" in r["spans"]]
    for strat in features["strategies"]:
        rs = [r for r in ok if strat in r["spans"]]
        if not rs:
            continue
        ratio = lambda r: r["spans"][strat] / r["spans"]["input"]
        slower = [r for r in rs if ratio(r) > 1 + 1e-9]
        faster = [r for r in rs if ratio(r) < 1 - 1e-9]
        print("%-19s slower than input: %d/%d%s, faster: %d/%d, mean span "
              "change %+.2f%%" % (
                  strat, len(slower), len(rs),
                  (" (worst %+.2f%%, program %d)" % (
                      100 * (ratio(max(slower, key=ratio)) - 1),
                      max(slower, key=ratio)["index"])) if slower else "",
                  len(faster), len(rs),
                  100 * sum(ratio(r) - 1 for r in rs) / len(rs)))
    chosen = collections.Counter(r["chosen"] for r in ok if r["chosen"])
    if chosen:
        print("auto chose: %s" % ", ".join(
            "%s %d" % kv for kv in sorted(chosen.items())))
    both = [r for r in ok if "auto" in r["spans"] and
            "te-preset" in r["spans"]]
    if both:
        worse = [r for r in both if r["spans"]["auto"] >
                 r["spans"]["te-preset"] * (1 + 1e-9)]
        print("auto slower than te-preset: %d/%d%s" % (
            len(worse), len(both), (" (e.g. program %d: %+.2f%%)" % (
                worse[0]["index"], 100 * (worse[0]["spans"]["auto"] /
                                          worse[0]["spans"]["te-preset"] - 1))
                                    if worse else "")))
    budgeted = [r for r in ok if r["budget"] is not None]
    grew = [r for r in ok if r["budget"] is None and
            any((r["peaks"].get(s) or 0) > r["peaks"]["input"]
                for s in features["strategies"])]
    print("memory budget: %d programs with a budget; without one, %d of %d "
          "programs had a strategy raise the program-order peak" % (
              len(budgeted), len(grew), len(ok) - len(budgeted)))
    if verify:
        racy = [r for r in ok if r["racy_input"]]
        kept = [r["index"] for r in racy if r["auto_kept_racy"]]
        print("inputs that verify-schedule rejects as written (blocking and "
              "async collectives mixed on a group): %d; returned unchanged "
              "by none (allowed), and by auto in %d%s" % (
                  len(racy), len(kept), (" (program %s)" % ", ".join(
                      str(i) for i in kept[:5])) if kept else ""))
    if features.get("export"):
        print("tandem-export-plan: every other output lowered to a valid "
              "plan; %d refused as unsupported by the runtime" %
              sum(r.get("export_unsupported", 0) for r in results))
    if nfail:
        tally = collections.Counter(k for r in results
                                    for k in r.get("kinds", []))
        print("failures by check and strategy:")
        for kind, num in sorted(tally.items(), key=lambda kv: -kv[1]):
            print("  %5d  %s" % (num, kind))
    if args.spans_json:
        with open(args.spans_json, "w") as fh:
            json.dump({str(r["index"]): r["spans"] for r in results}, fh,
                      indent=1, sort_keys=True)
    print("%d programs, %d runs, %d failures" % (n, runs, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
