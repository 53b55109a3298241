"""Writes the analysed graph as tandem IR text (the dialect's pretty syntax)."""

import heapq
import re

from . import analysis as A
from .graph import ImportError_, prod
from .groups import GroupTable, group_decl

COLLECTIVE_OPS = {"all_gather", "reduce_scatter", "all_reduce", "all_to_all",
                  "collective_permute"}
VIEW_OPS = {"reshape", "bitcast_convert"}
MAX_BATCH_UNROLL = 16


def _f(x):
    return f"{float(x):e}"


def _sanitize(s):
    return re.sub(r"[^A-Za-z0-9_.]", "_", s).strip("_") or "x"


def _loc(name, src):
    name = name.replace('"', "'")
    if src:
        f, line, col = src.rsplit(":", 2)
        return f'loc("{name}"("{f}":{line}:{col}))'
    return f'loc("{name}")'


class Emitter:
    def __init__(self, g, options):
        self.g = g
        self.opts = options
        self.lines = []
        self.mat = {}       # id(Val) -> (ssa, shape)
        self.views = {}
        self.counter = 0
        self.args = []      # (ssa, type, name)
        self.arg_slices = {}
        self.stats = {"fprop": 0, "dgrad": 0, "wgrad": 0}
        self.table = GroupTable(g.mesh, g.num_partitions)
        self.remarks = g.remarks

    # -- values -----------------------------------------------------------
    def fresh(self, hint="v"):
        self.counter += 1
        return f"%{_sanitize(hint)}_{self.counter}" if hint != "v" else f"%{self.counter}"

    def emit(self, text, node=None, name=None):
        if node is not None:
            text += " " + _loc(name or node.loc or node.op, node.src)
        self.lines.append("    " + text)

    def get(self, v, shape=None):
        """SSA name of `v` in `shape` (its own when None), adding a free view
        when the materialised shape differs."""
        if id(v) not in self.mat:
            if v.constlike:
                ssa = self.fresh("const")
                self.emit(f'{ssa} = tandem.opaque "constant"() flops(0.0) '
                          f"bytes({v.nbytes}) : () -> {v.type_str()}", v.node)
                self.mat[id(v)] = (ssa, v.shape)
            else:
                raise ImportError_(f"internal: {v.node.op} at {v.node.where()} used "
                                   "before it was imported")
        ssa, have = self.mat[id(v)]
        if shape is None or tuple(shape) == tuple(have):
            return ssa
        assert prod(shape) == prod(have), (shape, have)
        key = (ssa, tuple(shape))
        if key not in self.views:
            out = self.fresh("view")
            self.emit(f'{out} = tandem.opaque "view"({ssa}) flops(0.0) bytes(0) : '
                      f"({v.type_str(have)}) -> ({v.type_str(shape)})")
            self.views[key] = out
        return self.views[key]

    def mshape(self, v):
        return self.mat[id(v)][1]

    def set(self, v, ssa, shape=None):
        self.mat[id(v)] = (ssa, tuple(v.shape if shape is None else shape))

    # -- units ------------------------------------------------------------
    def run(self, regions, fusions, roles, fwd):
        g = self.g
        unit_of = {}
        units = []
        for r in regions:
            units.append(("region", r))
            for m in r.members:
                unit_of[m] = len(units) - 1
        for grp in fusions:
            units.append(("fusion", grp))
            for m in grp:
                unit_of[m] = len(units) - 1
        for n in g.nodes:
            if n.dead or n.id in unit_of:
                continue
            if all(v.constlike for v in n.outs) and n.outs and n.op != "arg":
                continue
            units.append(("node", n))
            unit_of[n.id] = len(units) - 1
        members = []
        self.region_inputs = {id(v) for r in regions for v in r.inputs}
        extra = {}
        for i, (kind, u) in enumerate(units):
            if kind == "region":
                extra[i] = [v.node.id for v in u.inputs]
        for kind, u in units:
            if kind == "region":
                members.append(sorted(u.members))
            elif kind == "fusion":
                members.append(u)
            else:
                members.append([u.id])
        deps = [set() for _ in units]
        succ = [set() for _ in units]
        for i, ms in enumerate(members):
            mset = set(ms)
            for m in ms:
                for p in [v.node.id for v in g.nodes[m].ins] + extra.get(i, []):
                    if p in mset or p not in unit_of:
                        continue
                    j = unit_of[p]
                    if j != i:
                        deps[i].add(j)
                        succ[j].add(i)
        indeg = [len(d) for d in deps]
        heap = [(max(ms), i) for i, ms in enumerate(members) if indeg[i] == 0]
        heapq.heapify(heap)
        order = []
        while heap:
            _, i = heapq.heappop(heap)
            order.append(i)
            for j in succ[i]:
                indeg[j] -= 1
                if indeg[j] == 0:
                    heapq.heappush(heap, (max(members[j]), j))
        if len(order) != len(units):
            raise ImportError_("internal: the fused graph has a cycle")
        self.fwd = fwd
        self.roles = roles
        for i in order:
            kind, u = units[i]
            try:
                if kind == "region":
                    self.region(u)
                elif kind == "fusion":
                    self.fusion(u)
                else:
                    self.node(u)
            except (AssertionError, TypeError, ValueError, IndexError, KeyError,
                    ArithmeticError) as err:
                # The importer's own shape checks: an input whose recorded
                # value shapes disagree with their ops (an edited or
                # inconsistent FX dump) fails them, and so would a bug here.
                first = (self.g.nodes[min(u.members)] if kind == "region" else
                         self.g.nodes[min(u)] if kind == "fusion" else u)
                raise ImportError_(
                    f"{first.where()}: cannot be emitted ({type(err).__name__}: "
                    f"{err}): its values' shapes do not fit the op (an edited or "
                    "inconsistent input), or the importer has a bug") from None

    # -- regions ----------------------------------------------------------
    def region(self, r):
        info = r.info
        anchor = self.g.nodes[min(r.members)]
        tag = self.tag(anchor)
        if r.kind in ("attention", "attention_grad"):
            causal = " causal" if info["causal"] else ""
            heads = f"heads({info['heads']}, {info['kv_heads']}) head_dim({info['head_dim']})"
            if r.kind == "attention":
                x = r.inputs[0]
                y = r.outputs[0]
                out = self.fresh("attn")
                self.emit(f"{out} = tandem.attention {self.get(x, x.shape)} {heads}{causal} "
                          f'{{layer = "{tag}"}} : {x.type_str()} -> {y.type_str()}',
                          anchor, f"{tag}.attention")
                self.set(y, out)
            else:
                dy, x, y = r.inputs
                dx = r.outputs[0]
                out = self.fresh("attn_grad")
                self.emit(f"{out} = tandem.attention_grad {self.get(dy, dy.shape)}, "
                          f"{self.get(x, x.shape)}, {self.get(y, y.shape)} {heads}{causal} "
                          f'{{layer = "{tag}"}} : {dy.type_str()}, {x.type_str()}, '
                          f"{y.type_str()} -> {dx.type_str()}", anchor,
                          f"{tag}.attention_grad")
                self.set(dx, out)
            return
        kind = info["kind"]
        if r.kind == "norm":
            x, w = r.inputs
            y = r.outputs[0]
            out = self.fresh("norm")
            self.emit(f"{out} = tandem.norm {kind} {self.get(x, x.shape)}, "
                      f'{self.get(w, w.shape)} {{layer = "{tag}"}} : {x.type_str()}, '
                      f"{w.type_str()}", anchor, f"{tag}.norm")
            self.set(y, out)
        else:
            dy, x, w = r.inputs
            dx, dw = r.outputs
            out = self.fresh("norm_grad")
            self.emit(f"{out}:2 = tandem.norm_grad {kind} {self.get(dy, dy.shape)}, "
                      f"{self.get(x, x.shape)}, {self.get(w, w.shape)} "
                      f'{{layer = "{tag}"}} : {x.type_str()}, {w.type_str()}',
                      anchor, f"{tag}.norm_grad")
            if dx is not None:  # None: the input's gradient is not computed
                self.set(dx, out + "#0")
            self.set(dw, out + "#1")

    # -- fusions ----------------------------------------------------------
    def fusion(self, ids):
        g = self.g
        mset = set(ids)
        nodes = [g.nodes[i] for i in ids]
        results = {id(v) for v, _ in g.results}
        ins, outs = [], []
        for n in nodes:
            for v in n.ins:
                if v.node.id not in mset and not v.constlike and v not in ins:
                    ins.append(v)
            for v in n.outs:
                if id(v) in results or id(v) in self.region_inputs or \
                        any(u.id not in mset for u in A.live_users(v)):
                    outs.append(v)
        if not outs:
            return
        ops = {n.op for n in nodes}
        # Pure views (reshapes) alias their input's buffer.
        if ops <= VIEW_OPS and len(ins) == 1 and len(outs) == 1 and \
                ins[0].dtype == outs[0].dtype:
            ssa = self.get(ins[0])
            self.set(outs[0], ssa, self.mshape(ins[0]))
            return
        anchor = nodes[-1]
        flops = sum(v.numel for n in nodes if n.op not in VIEW_OPS for v in n.outs)
        kind = None
        if len(outs) == 1:
            o = outs[0]
            t = [(v.shape, v.dtype) for v in ins]
            same = all(x == (o.shape, o.dtype) for x in t)
            if len(ins) == 1 and same:
                kind = "gelu" if ops & {"tanh", "erf"} else \
                    ("silu" if "logistic" in ops else "copy")
            elif len(ins) == 1 and ins[0].shape == o.shape:
                kind = "cast"
            elif len(ins) == 1 and "logistic" in ops and ins[0].dtype == o.dtype and \
                    ins[0].shape[:-1] == o.shape[:-1] and ins[0].shape[-1] == 2 * o.shape[-1]:
                kind = "swiglu"
            elif len(ins) == 2 and "logistic" in ops and \
                    (ins[1].shape, ins[1].dtype) == (o.shape, o.dtype) and \
                    ins[0].dtype == o.dtype and ins[0].shape[:-1] == o.shape[:-1] and \
                    2 * ins[0].shape[-1] == o.shape[-1]:
                kind = "swiglu_grad"
            elif len(ins) == 2 and "logistic" in ops and \
                    (ins[0].shape, ins[0].dtype) == (o.shape, o.dtype) and \
                    ins[1].dtype == o.dtype and ins[1].shape[:-1] == o.shape[:-1] and \
                    2 * ins[1].shape[-1] == o.shape[-1]:
                kind = "swiglu_grad"
                ins = [ins[1], ins[0]]
            elif len(ins) == 2 and same:
                kind = "gelu_grad" if ops & {"tanh", "erf"} else \
                    ("add" if "add" in ops or "subtract" in ops else "mul")
        tag = self.tag(anchor)
        if kind is not None:
            o = outs[0]
            out = self.fresh("ew")
            operands = ", ".join(self.get(v, v.shape) for v in ins)
            types = ", ".join(v.type_str() for v in ins)
            self.emit(f"{out} = tandem.elementwise {kind} {operands} : {types} -> "
                      f"{o.type_str()}", anchor, f"{tag}.{kind}" if tag else kind)
            self.set(o, out)
            return
        nbytes = sum(v.numel * _eb(v) for v in ins) + sum(v.nbytes for v in outs)
        label = "fusion." + "+".join(sorted(o for o in ops if o not in VIEW_OPS))[:60]
        out = self.fresh("fusion")
        operands = ", ".join(self.get(v) for v in ins)
        in_types = ", ".join(v.type_str(self.mshape(v)) for v in ins)
        res = f"{out}:{len(outs)}" if len(outs) > 1 else out
        self.emit(f'{res} = tandem.opaque "{label}"({operands}) flops({_f(flops)}) '
                  f"bytes({nbytes}) : ({in_types}) -> "
                  f"({', '.join(v.type_str() for v in outs)})", anchor,
                  f"{tag}.fusion" if tag else "fusion")
        for i, v in enumerate(outs):
            self.set(v, f"{out}#{i}" if len(outs) > 1 else out)

    # -- single ops -------------------------------------------------------
    def node(self, n):
        op = n.op
        if op == "arg":
            v = n.outs[0]
            us = A.live_users(v)
            if all(u.op == "dynamic_slice" and "arg_slice" in u.attrs for u in us) and \
                    not any(r is v for r, _ in self.g.results):
                return
            name = self.g.args[n.attrs["index"]][1]
            ssa = f"%arg{len(self.args)}"
            self.args.append((ssa, v.type_str(), name))
            self.set(v, ssa)
            return
        if op == "dynamic_slice" and "arg_slice" in n.attrs:
            v = n.outs[0]
            base = self.g.args[n.attrs["arg_slice"].node.attrs["index"]][1]
            key = (id(n.attrs["arg_slice"]), tuple(n.attrs["starts"]), tuple(v.shape))
            if key in self.arg_slices:
                ssa, shape = self.arg_slices[key]
                self.set(v, ssa, shape)
                return
            squeezed = tuple(s for s in v.shape if s != 1) or v.shape
            ssa = f"%arg{len(self.args)}"
            self.args.append((ssa, v.type_str(squeezed),
                              f"{base}[{n.attrs['starts'][0]}]"))
            self.set(v, ssa, squeezed)
            self.arg_slices[key] = (ssa, squeezed)
            return
        if op == "dot_general":
            self.matmul(n)
            return
        if op == "transpose" and n.attrs.get("folded"):
            return
        if op in COLLECTIVE_OPS:
            self.collective(n)
            return
        where = f"{n.where()}"
        if op == "wait":
            f = n.ins[0]
            out = self.fresh("wait")
            ft = f"!tandem.future<{f.type_str()}>"
            self.emit(f"{out} = tandem.wait {self.get(f)} : {ft}", n,
                      f"{self.tag(n)}.wait" if self.tag(n) else "wait")
            self.set(n.outs[0], out)
            return
        if op == "custom_call":
            target = n.attrs["target"]
            what = n.attrs.get("what", f"custom_call @{target}")
            cost = self.opts.get("opaque_cost", {}).get(target)
            nbytes = sum(v.nbytes for v in n.ins) + sum(v.nbytes for v in n.outs)
            flops = 0.0
            if cost:
                flops, nbytes = cost
            elif "flops" in n.attrs:
                flops = n.attrs["flops"]
                self.remarks.append(
                    f"{where}: {what} imported as tandem.opaque with {flops:.6g} FLOPs "
                    f"(its matmuls) and {nbytes} bytes (its operands and results); give "
                    f"--opaque-cost {target}=FLOPS,BYTES to change them")
            else:
                self.remarks.append(
                    f"{where}: {what} imported as tandem.opaque; its cost "
                    f"is unknown: 0 FLOPs and {nbytes} bytes (its operands and results) "
                    f"assumed; give --opaque-cost {target}=FLOPS,BYTES")
            self.opaque(n, target, n.ins, n.outs, flops, nbytes)
            return
        # What is left is data-dependent slicing: opaque with its bytes.
        if op in ("dynamic_update_slice", "dynamic_slice"):
            moved = n.ins[1].nbytes if op == "dynamic_update_slice" else n.outs[0].nbytes
            self.remarks.append(f"{where}: stablehlo.{op} with indices known only at "
                                f"run time imported as tandem.opaque ({2 * moved} bytes)")
            self.opaque(n, op, [v for v in n.ins if not v.constlike], n.outs, 0.0,
                        2 * moved)
            return
        raise ImportError_(f"{where}: cannot import 'stablehlo.{op}'")

    def opaque(self, n, kernel, ins, outs, flops, nbytes):
        out = self.fresh(_sanitize(kernel.split(".")[-1]))
        res = f"{out}:{len(outs)}" if len(outs) > 1 else out
        operands = ", ".join(self.get(v) for v in ins)
        types = ", ".join(v.type_str(self.mshape(v)) for v in ins)
        self.emit(f'{res} = tandem.opaque "{kernel}"({operands}) flops({_f(flops)}) '
                  f"bytes({int(nbytes)}) : ({types}) -> "
                  f"({', '.join(v.type_str() for v in outs)})", n)
        for i, v in enumerate(outs):
            self.set(v, f"{out}#{i}" if len(outs) > 1 else out)

    def collective(self, n):
        where = f"stablehlo.{n.op} at {n.where()}"
        x = n.ins[0]
        y = n.outs[0]
        if len(n.ins) != 1:
            raise ImportError_(f"{where}: collectives over several operands are not "
                               "supported")
        if n.op == "collective_permute":
            grp, size, shift = self.table.permute_shift(n.attrs["pairs"], where)
        else:
            grp, size, _ = self.table.match(n.attrs["groups"], where)
        red = n.attrs.get("reduce")
        if red is not None and red not in ("sum", "max", "min"):
            raise ImportError_(f"{where}: reduction '{red}' has no tandem form "
                               "(sum, max, min)")
        rtext = "" if red in (None, "sum") else f" reduce {red}"
        name = {"all_gather": "ag", "reduce_scatter": "rs", "all_reduce": "ar",
                "all_to_all": "a2a", "collective_permute": "permute"}[n.op]
        out = self.fresh(name)
        xs = self.get(x, x.shape)
        if n.op == "all_gather":
            body = f"tandem.all_gather {xs} on @{grp} dim {n.attrs['dim']}"
        elif n.op == "reduce_scatter":
            body = f"tandem.reduce_scatter {xs} on @{grp} dim {n.attrs['dim']}{rtext}"
        elif n.op == "all_reduce":
            body = f"tandem.all_reduce {xs} on @{grp}{rtext}"
        elif n.op == "all_to_all":
            body = (f"tandem.all_to_all {xs} on @{grp} split {n.attrs['split']} "
                    f"concat {n.attrs['concat']}")
        else:
            body = f"tandem.permute {xs} on @{grp} shift {shift}"
        tag = self.tag(n)
        kind = "permute" if n.op == "collective_permute" else n.op
        self.stats.setdefault("collectives", {})
        self.stats["collectives"][kind] = self.stats["collectives"].get(kind, 0) + 1
        rtype = y.type_str()
        if n.attrs.get("async"):
            # Issued here, waited for where the input's wait node stands.
            op, rest = body.split(" ", 1)
            body = f"{op}_start {rest}"
            rtype = f"!tandem.future<{rtype}>"
        self.emit(f"{out} = {body} : {x.type_str()} -> {rtype}", n,
                  f"{tag}.{name}" if tag else name)
        self.set(y, out)

    def matmul(self, n):
        role = self.roles[n.id]
        self.stats[role] += 1
        a, b = n.ins
        lb, rb, lc, rc = n.attrs["lb"], n.attrs["rb"], n.attrs["lc"], n.attrs["rc"]
        bsz, m, nn, k = A.dot_shape(n)
        tag = self.tag(n)
        la = self.operand_2d(a, lb, lc, bsz, m, k, False)
        rb_ = self.operand_2d(b, rb, rc, bsz, nn, k, True)
        y = n.outs[0]
        if n.attrs.get("swap"):
            # (A B)^T = B^T A^T: the transpose that follows is folded away.
            la, rb_ = self.operand_2d(b, rb, rc, bsz, nn, k, False), \
                self.operand_2d(a, lb, lc, bsz, m, k, True)
            m, nn = nn, m
            y = n.attrs["swap"]
        if a.dtype != b.dtype:
            raise ImportError_(f"stablehlo.dot_general at {n.where()}: operand element "
                               f"types differ ({a.dtype}, {b.dtype})")
        et = y.dtype
        if bsz == 1:
            out = self._mm(role, la, rb_, a.dtype, et, tag, n, m, nn, k)
            self.set(y, out, (m, nn))
            return
        if bsz <= MAX_BATCH_UNROLL:
            (la_ssa, la_t, la_shape), (rb_ssa, rb_t, rb_shape) = la, rb_
            parts = []
            for i in range(bsz):
                ls = self._slice(la_ssa, la_shape, i, bsz, a.dtype)
                rs = self._slice(rb_ssa, rb_shape, i, bsz, b.dtype)
                ls_shape = (la_shape[0] // bsz, la_shape[1])
                rs_shape = (rb_shape[0] // bsz, rb_shape[1])
                parts.append(self._mm(role, (ls, la_t, ls_shape), (rs, rb_t, rs_shape),
                                      a.dtype, et, tag, n, m, nn, k))
            out = self.fresh("mm")
            self.emit(f"{out} = tandem.concat {', '.join(parts)} dim 0 : "
                      f"{', '.join(y.type_str((m, nn)) for _ in parts)} -> "
                      f"{y.type_str((bsz * m, nn))}", n, f"{tag}.concat")
            self.set(y, out, (bsz * m, nn))
            return
        self.remarks.append(f"{n.where()}: dot_general with {bsz} batches modelled as one "
                            f"[{bsz}x{m}, {k}] x [{k}, {nn}] GEMM (same FLOPs; the rhs "
                            "bytes are counted once)")
        (la_ssa, la_t, la_shape), (rb_ssa, rb_t, rb_shape) = la, rb_
        rview = self.fresh("view")
        rs_shape = (rb_shape[0] // bsz, rb_shape[1])
        self.emit(f'{rview} = tandem.opaque "view.batch"({rb_ssa}) flops(0.0) bytes(0) : '
                  f"({b.type_str(rb_shape)}) -> ({b.type_str(rs_shape)})")
        out = self._mm(role, (la_ssa, la_t, la_shape), (rview, rb_t, rs_shape),
                       a.dtype, et, tag, n, bsz * m, nn, k)
        self.set(y, out, (bsz * m, nn))

    def _slice(self, ssa, shape, i, count, dtype):
        out = self.fresh("chunk")
        dims = "x".join(str(s) for s in shape)
        cdims = f"{shape[0] // count}x{shape[1]}"
        self.emit(f"{out} = tandem.slice {ssa} dim 0 chunk {i} of {count} : "
                  f"tensor<{dims}x{dtype}> -> tensor<{cdims}x{dtype}>")
        return out

    def operand_2d(self, v, batch, contract, bsz, free, k, rhs):
        """(ssa, transposed, 2-D shape with batches stacked along dim 0)."""
        rank = len(v.shape)
        free_dims = [i for i in range(rank) if i not in batch and i not in contract]
        order_nt = list(batch) + free_dims + list(contract)
        order_t = list(batch) + list(contract) + free_dims
        dims = list(range(rank))
        if dims == order_nt or not free_dims or not contract:
            shape, t = (bsz * free, k), rhs
        elif dims == order_t:
            shape, t = (bsz * k, free), not rhs
        else:
            # A transposed layout XLA would assign to the GEMM: a free view.
            shape, t = ((bsz * k, free), False) if rhs else ((bsz * free, k), False)
            self.remarks.append(f"{v.node.where()}: operand of a dot_general with "
                                "permuted dimensions read through a free view "
                                "(XLA folds the transpose into the GEMM's layout)")
        return self.get(v, shape), t, shape

    def _mm(self, role, lhs, rhs, in_t, out_t, tag, n, m, nn, k):
        (ls, lt, lshape), (rs, rt, rshape) = lhs, rhs
        flags = (" transpose_lhs" if lt else "") + (" transpose_rhs" if rt else "")
        out = self.fresh(f"{tag}.{role}" if tag else role)
        ltype = f"tensor<{lshape[0]}x{lshape[1]}x{in_t}>"
        rtype = f"tensor<{rshape[0]}x{rshape[1]}x{in_t}>"
        layer = f' {{layer = "{tag}"}}' if tag else ""
        self.emit(f"{out} = tandem.matmul {role} {ls}, {rs}{flags}{layer} : {ltype}, "
                  f"{rtype} -> tensor<{m}x{nn}x{out_t}>", n,
                  f"{tag}.{role}" if tag else role)
        return out

    # -- names ------------------------------------------------------------
    def tag(self, n):
        scope = n.scope
        li = n.layer_index
        if li is not None:
            layer = li[1] if li[1] is not None else li[0]
            if not re.match(r"^l\d+(\.|$)", scope):
                scope = f"l{layer}" + ("." + scope if scope else "")
        if not scope and n.op == "dot_general":
            for v in n.ins:
                src = v
                for _ in range(6):
                    if src.node.op == "arg" or len(src.node.ins) != 1:
                        break
                    src = src.node.ins[0]
                if src.node.op == "arg":
                    return _sanitize(self.g.args[src.node.attrs["index"]][1])
        return scope

    def text(self):
        g = self.g
        target = self.opts.get("target", "h200")
        topology = self.opts.get("topology")
        config = self.opts.get("groups_config", {})
        head = [f'module attributes {{tandem.target = #tandem.target<"{target}">}} {{']
        for name, (size, devices) in sorted(self.table.used.items()):
            head.append("  " + group_decl(name, size, devices, target, topology,
                                          config.get(name)))
        res = []
        for v, name in g.results:
            res.append((self.get(v), v.type_str(self.mshape(v)), name))
        fn = self.opts.get("function_name", "train_step")
        args = ", ".join(f"{s}: {t} {_loc(nm, '')}" for s, t, nm in self.args)
        rtypes = ", ".join(t for _, t, _ in res)
        head.append(f"  func.func @{fn}({args}) -> ({rtypes}) {{")
        tail = [f"    return {', '.join(s for s, _, _ in res)} : {rtypes}", "  }", "}"]
        return "\n".join(head + self.lines + tail) + "\n"


def _eb(v):
    from .graph import element_bytes
    return element_bytes(v.dtype)
