"""The import pipeline: parse, flatten, analyse, emit."""

from . import analysis as A
from .emit import Emitter
from .graph import Flattener, ImportError_
from .groups import NODE_NETWORKS, TOPOLOGIES, default_topology

TandemImportError = ImportError_


class ImportResult:
    def __init__(self, text, remarks, stats):
        self.text = text          # the tandem module
        self.remarks = remarks    # what was approximated or not recognised
        self.stats = stats        # counts, for tools and tests


def _context():
    try:
        from jax._src.interpreters import mlir as jax_mlir
        ctx = jax_mlir.make_ir_context()
    except Exception:  # noqa: BLE001 - fall back to the bare bindings
        from jaxlib.mlir import ir
        from jaxlib.mlir.dialects import chlo, sdy, stablehlo
        ctx = ir.Context()
        stablehlo.register_dialect(ctx)
        sdy.register_dialect(ctx)
        chlo.register_dialect(ctx)
    # Generic files may carry ops of dialects jaxlib does not register.
    ctx.allow_unregistered_dialects = True
    return ctx


def parse(text):
    from jaxlib.mlir import ir
    ctx = _context()
    with ctx:
        try:
            return ctx, ir.Module.parse(text)
        except Exception as err:  # noqa: BLE001
            first = str(err)
        # A func.call inside an unregistered sdy.manual_computation cannot be
        # verified; read the module without the sdy dialect's verifier.
    try:
        from jaxlib.mlir import ir
        ctx2 = ir.Context()
        ctx2.allow_unregistered_dialects = True
        from jaxlib.mlir.dialects import stablehlo
        stablehlo.register_dialect(ctx2)
        with ctx2:
            return ctx2, ir.Module.parse(text)
    except Exception:  # noqa: BLE001
        raise ImportError_("the input does not parse as MLIR: " + first.strip()) from None


def _check_target(target, topology):
    if target not in NODE_NETWORKS:
        raise ImportError_(f"unknown target '{target}' (known: "
                           f"{', '.join(sorted(NODE_NETWORKS))})")
    topology = topology or default_topology(target)
    if topology not in TOPOLOGIES:
        raise ImportError_(f"unknown topology '{topology}' (known: {', '.join(TOPOLOGIES)})")
    return topology


def import_stablehlo(text, target="h200", topology=None, function=None,
                     groups_config=None, opaque_cost=None, function_name="train_step"):
    """Imports one StableHLO module; returns an ImportResult or raises
    TandemImportError with a message naming the op and its location."""
    topology = _check_target(target, topology)
    ctx, module = parse(text)
    with ctx:
        g = Flattener(module, function).run()
    return analyse_and_emit(g, target, topology, groups_config, opaque_cost,
                            function_name)


def import_fx(step, order="graph", target="h200", topology=None, groups_config=None,
              opaque_cost=None, function_name="train_step", mesh=None, group_axes=None):
    """Imports a PyTorch FX step: a dump (dict, JSON text or file path; see
    fx_dump) or a live torch.fx.GraphModule. `order` is "graph" (the graphs'
    own order, collectives blocking) or a key of the dump's "orders" (e.g.
    "inductor": Inductor's order, each collective issued at its own position
    and waited for at its wait_tensor's)."""
    from . import fx
    topology = _check_target(target, topology)
    if hasattr(step, "graph") and hasattr(step.graph, "nodes"):
        from . import fx_dump
        groups = fx_dump.process_groups([step])
        if mesh is None:
            if len(groups) > 1:
                raise ImportError_("the graph's collectives use several process groups "
                                   f"({', '.join(sorted(groups))}); give mesh= and "
                                   "group_axes= to name their mesh axes")
            mesh = {"axes": [["tp", g["size"]] for g in groups.values()]}
            group_axes = {name: "tp" for name in groups}
        step = fx_dump.dump([("graph", step)], mesh, group_axes or {})
    elif isinstance(step, str):
        step = fx.load(step)
    g = fx.read(step, order=order, waits=order != "graph")
    return analyse_and_emit(g, target, topology, groups_config, opaque_cost,
                            function_name)


def _attention_flops(n):
    q = n.ins[0 if n.op == "sdpa" else 1]
    k = n.ins[1 if n.op == "sdpa" else 2]
    b, h, s, d = (list(q.shape) + [1, 1, 1, 1])[:4]
    f = 4.0 * b * h * s * k.shape[-2] * d
    if n.attrs.get("causal"):
        f /= 2
    return f if n.op == "sdpa" else 2.5 * f


def analyse_and_emit(g, target, topology, groups_config=None, opaque_cost=None,
                     function_name="train_step"):
    """The analyses and the emitter on a flat Graph, whichever front end
    built it."""
    forwarded = A.destack(g)
    dropped = A.dce(g)
    if forwarded:
        g.remarks.append(f"{forwarded} dynamic_slice(s) of lax.scan stacks read "
                         "statically after unrolling")
    if dropped:
        g.remarks.append(f"{dropped} op(s) whose results no output needs were left out "
                         "(loop bookkeeping, unused values; XLA removes them too)")
    fwd, how = A.forward_set(g)
    taken = set()
    regions = A.find_attention(g, fwd, taken) + A.find_sdpa(g, fwd, taken) + \
        A.find_norms(g, fwd, taken)
    for n in g.nodes:
        # SDPA ops outside a recognised region stay kernels of their own.
        if not n.dead and n.op in ("sdpa", "sdpa_grad") and n.id not in taken:
            n.attrs["flops"] = _attention_flops(n)
            n.attrs["what"] = f"FX op {n.attrs['target']}"
            n.op = "custom_call"
    result_ids = {id(v) for v, _ in g.results}
    roles, fusible = {}, set()
    for n in g.nodes:
        if n.dead or n.id in taken or n.op != "dot_general" or not A.is_gemm(n):
            continue
        us = A.live_users(n.outs[0])
        if A.dot_shape(n)[0] == 1 and len(n.outs[0].shape) == 2 and len(us) == 1 and \
                us[0].op == "transpose" and us[0].attrs["perm"] == [1, 0] and \
                not any(v is n.outs[0] for v, _ in g.results):
            n.attrs["swap"] = us[0].outs[0]
            us[0].attrs["folded"] = True
    for n in g.nodes:
        if n.dead or n.id in taken or n.attrs.get("folded"):
            continue
        if n.op == "dot_general" and A.is_gemm(n):
            roles[n.id] = A.role_of(g, n, fwd, result_ids)
        elif (n.op in A.FUSIBLE or n.op == "dot_general") and \
                not (n.op == "dynamic_slice" and "arg_slice" in n.attrs) and \
                not all(v.constlike for v in n.outs):
            if n.op == "dynamic_slice" and "starts" not in n.attrs:
                continue
            fusible.add(n.id)
    fusions = A.fuse(g, fusible)
    em = Emitter(g, {"target": target, "topology": topology,
                     "groups_config": groups_config or {},
                     "opaque_cost": opaque_cost or {},
                     "function_name": function_name})
    em.run(regions, fusions, roles, fwd)
    text = em.text()
    stats = dict(em.stats)
    for r in regions:
        stats[r.kind] = stats.get(r.kind, 0) + 1
    g.remarks.insert(0, f"forward: the ops {how} depends on")
    return ImportResult(text, g.remarks, stats)
