"""PyTorch side of the FX importer: a torch.fx graph to the JSON-able dump
that `fx.py` reads (docs/import.md, "PyTorch FX").

Only this module imports torch, and only when a live graph is converted: the
dump is what the importer reads in both paths (a live GraphModule handed to
the torch.compile backend, or a checked-in fixture), so one code path follows
the conversion. A dump is::

    {"format": "tandem-fx", "version": 1, "torch": "2.15.0",
     "mesh": {"axes": [["tp", 8]]}, "groups": {"<group name>": "tp"},
     "graphs": [{"name": "forward", "nodes": [NODE, ...]}, ...],
     "links": {...}, "orders": {...}}

and a NODE is ``{"name", "op", "target", "args", "kwargs", "val", "module",
"src"}``: ``val`` is ``{"shape", "dtype"}`` (or a list of them, or null) from
``meta['val']``, ``module`` the innermost ``nn_module_stack`` path (the
forward's for backward nodes), ``src`` the last frame of the stack trace.
Arguments that are nodes are ``{"node": name}``; dtypes ``{"dtype": "bf16"}``;
other torch objects (devices, layouts, memory formats) ``{"enum": text}``.
"""

import re

FORMAT = "tandem-fx"
VERSION = 1

_DTYPES = {
    "torch.bfloat16": "bf16", "torch.float16": "f16", "torch.float32": "f32",
    "torch.float64": "f64", "torch.int64": "i64", "torch.int32": "i32",
    "torch.int16": "i16", "torch.int8": "i8", "torch.uint8": "ui8",
    "torch.bool": "i1", "torch.float8_e4m3fn": "f8E4M3FN",
    "torch.float8_e5m2": "f8E5M2",
}


def dtype_name(dt):
    s = str(dt)
    return _DTYPES.get(s, s.replace("torch.", ""))


def _val(v):
    import torch
    if isinstance(v, torch.Tensor):
        try:
            shape = [int(s) for s in v.shape]
        except TypeError:
            shape = [str(s) for s in v.shape]  # symbolic: refused by the reader
        return {"shape": shape, "dtype": dtype_name(v.dtype)}
    if isinstance(v, (list, tuple)):
        return [_val(x) for x in v]
    if isinstance(v, (int, float, bool)) or v is None:
        return {"scalar": v}
    return {"other": type(v).__name__}


def _arg(a):
    import torch
    import torch.fx as fx
    if isinstance(a, fx.Node):
        return {"node": a.name}
    if isinstance(a, (list, tuple)):
        return [_arg(x) for x in a]
    if isinstance(a, dict):
        return {"dict": {str(k): _arg(v) for k, v in a.items()}}
    if isinstance(a, torch.dtype):
        return {"dtype": dtype_name(a)}
    if isinstance(a, (bool, int, float, str)) or a is None:
        return a
    return {"enum": str(a)}


def target_name(node):
    t = node.target
    if node.op in ("placeholder", "output", "get_attr"):
        return str(t)
    if getattr(t, "__module__", "") == "_operator" or t.__class__.__name__ == \
            "builtin_function_or_method" and getattr(t, "__name__", "") == "getitem":
        return t.__name__
    s = str(t)
    return s[len("torch.ops."):] if s.startswith("torch.ops.") else s


def module_path(node):
    """Innermost module path of a node (the forward's for backward nodes)."""
    stack = node.meta.get("nn_module_stack") or node.meta.get("fwd_nn_module_stack")
    if not stack:
        return ""
    path = list(stack.values())[-1][0]
    path = re.sub(r"^L\['[^']*'\]\.?", "", str(path))
    path = re.sub(r"\[(\d+)\]", r".\1", path)
    path = re.sub(r"\['([^']*)'\]", r".\1", path)
    return path.strip(".")


def source_of(node):
    st = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+)', st)
    user = [f for f in frames if "/torch/" not in f[0]]
    f = (user or frames or [None])[-1]
    return f"{f[0].rsplit('/', 1)[-1]}:{f[1]}:1" if f else ""


def graph_nodes(gm):
    out = []
    for n in gm.graph.nodes:
        val = n.meta.get("val")
        out.append({
            "name": n.name, "op": n.op, "target": target_name(n),
            "args": _arg(list(n.args)), "kwargs": _arg(dict(n.kwargs))["dict"],
            "val": _val(val) if val is not None else None,
            "module": module_path(n), "src": source_of(n),
        })
    return out


def process_groups(gm_list):
    """{group name: {size, ranks}} of every group the graphs' collectives name."""
    import torch.distributed as dist
    from torch.distributed.distributed_c10d import _resolve_process_group
    groups = {}
    for gm in gm_list:
        for n in gm.graph.nodes:
            if n.op != "call_function" or "_c10d_functional" not in str(n.target):
                continue
            for a in n.args:
                if isinstance(a, str) and a not in groups and a not in ("sum", "avg",
                                                                          "max", "min"):
                    try:
                        pg = _resolve_process_group(a)
                    except Exception:  # noqa: BLE001 - not a group name
                        continue
                    groups[a] = {"size": pg.size(),
                                 "ranks": dist.get_process_group_ranks(pg)}
    return groups


def dump(graphs, mesh, groups, links=None, orders=None, param_names=None,
         note=""):
    """The dump of one step: `graphs` is [(name, GraphModule)], run in that
    order; `links` maps a later graph's placeholder to an earlier graph's
    output value (the saved activations); `groups` maps each process group
    name to a mesh axis."""
    import torch
    return {
        "format": FORMAT, "version": VERSION, "torch": torch.__version__,
        "note": note, "mesh": mesh, "groups": groups,
        "graphs": [{"name": name, "nodes": graph_nodes(gm)} for name, gm in graphs],
        "links": links or {}, "orders": orders or {},
        "param_names": param_names or {},
    }


# ----------------------------------------------------------------------------
# Capture through Inductor: the graphs Inductor's scheduler gets (forward and
# backward, after AOTAutograd's partition and Inductor's decompositions and
# post-grad passes) and the order its compute-communication pass leaves them
# in. The pass is the one this torch runs by default; which one, and with
# what settings, is recorded in the dump ("inductor").
# ----------------------------------------------------------------------------

def _snode_kind(snode):
    from torch._inductor import comms
    if comms.contains_wait(snode):
        return "wait"
    if comms.contains_async_collective(snode):
        return "collective"
    return "compute"


def _snode_origins(snode):
    names = []
    for sn in snode.get_nodes():
        node = getattr(sn, "node", None)
        for o in (getattr(node, "origins", None) or ()):
            names.append(o.name)
    return names


def order_from_fx(gm, names):
    """The order of `gm`'s nodes that a recorded FX order gives (nodes added
    after it was recorded go just before their first user)."""
    return order_from_snodes(gm, [("fx", [n]) for n in names])


def order_from_snodes(gm, snodes):
    """The FX order a scheduler-node order gives: every FX node takes the
    position of the first scheduler node made from it (collectives and waits
    only from scheduler nodes of their kind); nodes no kernel is made from
    (views, getitems) go just before their first user; a stable topological
    sort keeps the graph valid."""
    pos = {}
    for i, (kind, origins) in enumerate(snodes):
        for name in origins:
            if name in pos:
                continue
            pos.setdefault(name, (i, kind))
    nodes = list(gm.graph.nodes)
    index = {n.name: k for k, n in enumerate(nodes)}
    key = {}
    for n in reversed(nodes):
        is_coll = n.op == "call_function" and "_c10d_functional" in str(n.target)
        want = "wait" if is_coll and "wait_tensor" in str(n.target) else \
            ("collective" if is_coll else "compute")
        p = pos.get(n.name)
        if n.op == "placeholder":
            key[n.name] = (-1.0, index[n.name])
        elif p is not None and (p[1] in (want, "fx") or
                                (want == "compute" and p[1] != "wait")):
            key[n.name] = (float(p[0]), index[n.name])
        else:
            users = [key[u.name][0] for u in n.users if u.name in key]
            key[n.name] = ((min(users) - 0.5) if users else float(len(snodes)),
                           index[n.name])
    # Stable topological sort by key.
    import heapq
    indeg = {n.name: len(n.all_input_nodes) for n in nodes}
    heap = [(key[n.name], n.name) for n in nodes if indeg[n.name] == 0]
    heapq.heapify(heap)
    by_name = {n.name: n for n in nodes}
    order = []
    while heap:
        _, name = heapq.heappop(heap)
        order.append(name)
        for u in by_name[name].users:
            indeg[u.name] -= 1
            if indeg[u.name] == 0:
                heapq.heappush(heap, (key[u.name], u.name))
    return order


def capture_inductor_step(module, example_inputs, mesh, group_axes, note="",
                          inductor_config=None, device=None):
    """Runs one training step of `module` (whose forward returns the scalar
    loss first) through torch.compile with Inductor and returns the dump of
    the graphs Inductor scheduled, with the order its overlap pass gave them
    ("inductor") beside their own order ("graph")."""
    import torch
    from torch._inductor import comms
    from torch._inductor import config as iconfig
    from torch._inductor.compile_fx import compile_fx
    from torch._inductor.virtualized import V

    recorded = []
    original = comms.simple_overlap

    def recording(snodes):
        before = [(_snode_kind(s), _snode_origins(s)) for s in snodes]
        out = original(snodes)
        after = [(_snode_kind(s), _snode_origins(s)) for s in out]
        recorded.append((V.graph.module, before, after))
        return out

    dynamo_inputs = []

    class _Compiled(Exception):
        pass

    def backend(gm, inputs):
        dynamo_inputs.append([n.name for n in gm.graph.nodes if n.op == "placeholder"])
        compile_fx(gm, inputs)
        # Both graphs are compiled (non-lazy backward); running them is not
        # needed.
        raise _Compiled()

    comms.simple_overlap = recording
    patched = []
    fx_orders = []
    from torch._inductor.fx_passes import overlap_scheduling as osched
    fx_pass = osched.schedule_overlap_bucketing_from_inductor_configs

    def recording_fx_pass(gm):
        before = [n.name for n in gm.graph.nodes]
        out = fx_pass(gm)
        fx_orders.append((before, [n.name for n in gm.graph.nodes]))
        return out
    osched.schedule_overlap_bucketing_from_inductor_configs = recording_fx_pass
    patched.append((osched, "schedule_overlap_bucketing_from_inductor_configs", fx_pass))
    if device is not None:
        # Inductor's analytical estimators read the device's peak FLOP/s and
        # DRAM bandwidth; with no GPU here they would be 0 / None, so the
        # figures of the target named are given instead.
        import torch.utils._runtime_estimation as rte
        from torch._inductor import utils as iutils
        from torch._inductor.analysis.device_info import datasheet_tops

        def tflops(dtype, device=None):
            return datasheet_tops(dtype, is_tf32=False, device_name=device_info["tops_of"]) \
                or 0.0

        def dram(device=None):
            return device_info["dram_gbps"]
        device_info = device
        for mod in (rte, iutils):
            for name, fn in (("get_device_tflops", tflops), ("get_device_dram_gbps", dram)):
                if hasattr(mod, name):
                    patched.append((mod, name, getattr(mod, name)))
                    setattr(mod, name, fn)
        if hasattr(iutils, "get_gpu_dram_gbps"):
            patched.append((iutils, "get_gpu_dram_gbps", iutils.get_gpu_dram_gbps))
            iutils.get_gpu_dram_gbps = lambda: device_info["dram_gbps"]
    try:
        with iconfig.patch({"force_disable_caches": True, **(inductor_config or {})}), \
                torch._functorch.config.patch({"force_non_lazy_backward_lowering": True}):
            torch._dynamo.reset()
            compiled = torch.compile(module, backend=backend, fullgraph=True)
            try:
                compiled(*example_inputs)
            except Exception as err:  # noqa: BLE001 - dynamo wraps the backend's
                if "_Compiled" not in repr(err) and not isinstance(err, _Compiled):
                    raise
            ado = iconfig.aten_distributed_optimizations
            settings = {
                "aten_distributed_optimizations.enable_simple_overlap":
                    ado.enable_simple_overlap,
                "aten_distributed_optimizations.enable_overlap_scheduling":
                    ado.enable_overlap_scheduling,
                "reorder_for_compute_comm_overlap": iconfig.reorder_for_compute_comm_overlap,
                "reorder_for_peak_memory": iconfig.reorder_for_peak_memory,
            }
            if ado.enable_overlap_scheduling:
                for key in ("compute_estimator", "collective_estimator",
                            "insert_overlap_deps", "max_compute_pre_fetch",
                            "max_memory_increase_gb", "max_memory_increase_ratio",
                            "collective_bucketing"):
                    settings[f"aten_distributed_optimizations.{key}"] = getattr(ado, key)
    finally:
        comms.simple_overlap = original
        for mod, name, fn in patched:
            setattr(mod, name, fn)
    if len(recorded) != 2:
        raise RuntimeError(f"expected Inductor to schedule a forward and a backward "
                           f"graph, it scheduled {len(recorded)}")
    (fgm, fbefore, fafter), (bgm, bbefore, bafter) = recorded
    fwd_out = list(fgm.graph.nodes)[-1].args[0]
    bwd_ph = [n for n in bgm.graph.nodes if n.op == "placeholder"]
    fwd_ph = [n for n in fgm.graph.nodes if n.op == "placeholder"]
    saved = [a for a in fwd_out[1:]]
    links = {}
    for i, p in enumerate(bwd_ph):
        if p.name.startswith("tangents"):
            links[p.name] = {"ones": True}
        else:
            links[p.name] = {"graph": "forward", "value": saved[i].name}
    bwd_out = list(bgm.graph.nodes)[-1].args[0]
    names = {}
    for i, ph in enumerate(fwd_ph):
        raw = dynamo_inputs[0][i] if dynamo_inputs and i < len(dynamo_inputs[0]) else ph.name
        clean = re.sub(r"^l_(self|s)_", "", raw)
        clean = re.sub(r"_modules_", ".", clean)
        clean = re.sub(r"_parameters_", ".", clean).strip("_")
        clean = re.sub(r"^modules_", "", clean).replace("l_x", "x")
        names[ph.name] = clean
    results = [{"graph": "forward", "value": fwd_out[0].name, "name": "loss"}]
    for i, g in enumerate(bwd_out):
        if g is not None and i < len(fwd_ph):
            results.append({"graph": "backward", "value": g.name,
                            "name": f"grad({names[fwd_ph[i].name]})"})
    if fx_orders and len(fx_orders) != 2:
        raise RuntimeError(f"Inductor's FX overlap scheduler ran on {len(fx_orders)} "
                           "graph(s), not on the forward and the backward")
    if fx_orders:
        # The FX pass's order; the scheduler that follows is not held to it
        # (no overlap dependencies are inserted), so its own order is not
        # the one the pass chose. The graph order is the one before the pass.
        (f0, f1), (b0, b1) = fx_orders
        graph_order = [f"forward/{n}" for n in order_from_fx(fgm, f0)] + \
            [f"backward/{n}" for n in order_from_fx(bgm, b0)]
        ind_order = [f"forward/{n}" for n in order_from_fx(fgm, f1)] + \
            [f"backward/{n}" for n in order_from_fx(bgm, b1)]
        moved_fx = sum(1 for a, b in zip(f0 + b0, f1 + b1) if a != b)
    else:
        graph_order = [f"forward/{n.name}" for n in fgm.graph.nodes] + \
            [f"backward/{n.name}" for n in bgm.graph.nodes]
        ind_order = [f"forward/{n}" for n in order_from_snodes(fgm, fafter)] + \
            [f"backward/{n}" for n in order_from_snodes(bgm, bafter)]
        moved_fx = None
    orders = {"graph": graph_order, "inductor": ind_order}
    d = dump([("forward", fgm), ("backward", bgm)], mesh, group_axes,
             links={"backward": links}, orders=orders, param_names=names, note=note)
    d["groups_info"] = process_groups([fgm, bgm])
    d["results"] = results
    moved = sum(1 for a, b in zip(fbefore + bbefore, fafter + bafter) if a != b)
    d["inductor"] = {
        "pass": ("torch._inductor.fx_passes.overlap_scheduling (post-grad FX) then "
                 "torch._inductor.comms.simple_overlap (scheduler)")
        if settings["aten_distributed_optimizations.enable_overlap_scheduling"]
        else "torch._inductor.comms.simple_overlap (scheduler; the default)",
        "settings": settings,
        "device": device,
        "scheduler_nodes": [len(fafter), len(bafter)],
        "positions_changed": moved if moved_fx is None else moved_fx,
        "order_from": "the FX overlap scheduler's output" if fx_orders
        else "the scheduler's node order after simple_overlap",
    }
    return d
