"""Reads a PyTorch FX step (the dump fx_dump writes) into the flat Graph the
StableHLO front end builds, so that one analysis (dead code, forward set,
regions, matmul roles, fusion) and one emitter serve both.

ATen ops are translated into the Graph's StableHLO vocabulary: `mm`, `addmm`
and `bmm` become `dot_general`s whose contracting dimensions absorb the
transposes of their operands; implicit broadcasting and type promotion of
element-wise ops become explicit `broadcast_in_dim` and `convert`; `mean`,
`var_mean`, `pow(x, 2)` and `silu` are written as the primitives JAX lowers
them to; views are `reshape`s. The SDPA forward and backward ops become
`sdpa` / `sdpa_grad` nodes, which analysis.find_sdpa turns into attention
regions. Functional collectives become collectives on the mesh axis their
process group names, and `wait_tensor` either passes the value through (a
blocking collective) or, when the order is kept (`waits=True`), becomes a
`wait` node at its own position.

No torch is needed here: a live GraphModule goes through fx_dump first.
"""

import json
import re

from .graph import ELEMENTWISE, Graph, ImportError_, Node, Val, is_int, prod
from .groups import GroupTable


class FxNode(Node):
    __slots__ = ()

    def where(self):
        return f"node '{self.loc}'" + (f" ({self.src})" if self.src else "")


_UNARY = {
    "neg": "negate", "exp": "exponential", "log": "log", "rsqrt": "rsqrt",
    "sqrt": "sqrt", "tanh": "tanh", "sigmoid": "logistic", "abs": "abs",
    "erf": "erf", "sin": "sine", "cos": "cosine", "log1p": "log_plus_one",
    "expm1": "exponential_minus_one", "sign": "sign", "floor": "floor",
    "ceil": "ceil", "round": "round_nearest_even", "logical_not": "not",
    "bitwise_not": "not", "isfinite": "is_finite",
}
_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide",
    "maximum": "maximum", "minimum": "minimum", "pow": "power",
    "remainder": "remainder", "fmod": "remainder", "atan2": "atan2",
    "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
    "logical_and": "and", "logical_or": "or",
}
_COMPARE = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}
_VIEWS = {"view", "reshape", "_unsafe_view", "squeeze", "unsqueeze", "alias",
          "clone", "contiguous", "detach", "lift_fresh_copy", "_reshape_alias",
          "view_as", "flatten", "unflatten", "as_strided"}
_CONSTANTS = {"full", "zeros", "ones", "empty", "scalar_tensor", "full_like",
              "zeros_like", "ones_like", "empty_like", "new_zeros", "new_ones",
              "new_full", "new_empty", "empty_strided", "fill", "arange", "iota"}
_IGNORED = {"_assert_tensor_metadata", "_assert_scalar", "sym_constrain_range",
            "sym_constrain_range_for_size", "_assert_async", "record_stream"}
_SDPA = {
    # op: index of is_causal among the args
    "_scaled_dot_product_flash_attention_for_cpu": 4,
    "_scaled_dot_product_flash_attention": 4,
    "_scaled_dot_product_efficient_attention": 5,
    "_scaled_dot_product_cudnn_attention": 6,
}
_SDPA_GRAD = {
    # op: (index of out, index of logsumexp, index of is_causal)
    "_scaled_dot_product_flash_attention_for_cpu_backward": (4, 5, 7),
    "_scaled_dot_product_flash_attention_backward": (4, 5, 11),
    "_scaled_dot_product_efficient_attention_backward": (5, 6, 11),
    "_scaled_dot_product_cudnn_attention_backward": (4, 5, 14),
}
_COLLECTIVES = {"all_gather_into_tensor", "reduce_scatter_tensor", "all_reduce",
                "all_to_all_single", "wait_tensor"}
_REDUCE_OPS = {"sum": "sum", "max": "max", "min": "min"}


def _short(target):
    """'aten.mm.default' -> 'mm'; '_c10d_functional.wait_tensor.default' ->
    'wait_tensor'; 'getitem' -> 'getitem'."""
    parts = target.split(".")
    if len(parts) >= 2 and parts[0] in ("aten", "prims", "_c10d_functional",
                                        "c10d_functional", "_dtensor"):
        return parts[1]
    return parts[-1] if parts[0] == "_operator" else target


def _tag(module):
    """Module path -> layer tag: 'layers.0.attn.qkv' -> 'l0.attn.qkv'."""
    if not module:
        return ""
    parts = module.split(".")
    out = []
    i = 0
    while i < len(parts):
        p = parts[i]
        if p in ("layers", "h", "blocks", "layer") and i + 1 < len(parts) and \
                parts[i + 1].isdigit():
            out.append("l" + parts[i + 1])
            i += 2
            continue
        out.append(p)
        i += 1
    return ".".join(x for x in out if x)


def load(path_or_text):
    """A dump from a file path or JSON text."""
    try:
        if path_or_text.lstrip().startswith("{"):
            return json.loads(path_or_text)
        with open(path_or_text) as f:
            return json.load(f)
    except json.JSONDecodeError as err:
        raise ImportError_(f"the FX dump is not valid JSON: {err}") from None
    except RecursionError:
        raise ImportError_("the FX dump is nested too deeply to read (an FX dump "
                           "nests a few levels)") from None


def is_dump(text):
    """JSON (an FX dump, or refused as not one) rather than MLIR text."""
    return text.lstrip().startswith("{")


# -- the dump's structure ----------------------------------------------------
# Checked before any node is read, so that a malformed dump is an error naming
# the field at fault, not a traceback from deep inside an op's translation.

_SRC = re.compile(r'[^"\\\n]+:[0-9]+:[0-9]+$')


def _expect(cond, where, what):
    if not cond:
        raise ImportError_(f"the FX dump is malformed: {where} {what}")


def _check_val(item, where):
    if item is None:
        return
    _expect(isinstance(item, dict), where, "must be an object or null")
    if "shape" not in item:
        return  # not a tensor (a scalar or an opaque value)
    shape = item["shape"]
    _expect(isinstance(shape, list), where + ".shape", "must be a list")
    for d in shape:
        # Strings are symbolic sizes, refused later with their own error.
        _expect(isinstance(d, str) or (is_int(d) and d >= 0), where + ".shape",
                f"must hold sizes >= 0 (or symbols), got {d!r}")
    _expect(isinstance(item.get("dtype"), str), where + ".dtype", "must be a string")


def check_dump(dump):
    """Raises ImportError_ naming the first field of `dump` (past its format
    and version) that does not have the type the reader relies on."""
    mesh = dump.get("mesh") or {}
    _expect(isinstance(mesh, dict), '"mesh"', "must be an object")
    axes = mesh.get("axes", [])
    _expect(isinstance(axes, list) and all(
        isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and
        is_int(a[1]) and a[1] >= 1 for a in axes), '"mesh.axes"',
        "must be a list of [name, size >= 1] pairs")
    ids = mesh.get("device_ids")
    _expect(ids is None or (isinstance(ids, list) and all(is_int(i) for i in ids)),
            '"mesh.device_ids"', "must be a list of integers")
    for key in ("groups", "links", "orders", "param_names"):
        _expect(isinstance(dump.get(key, {}), dict), f'"{key}"', "must be an object")
    graphs = dump.get("graphs")
    _expect(isinstance(graphs, list), '"graphs"', "must be a list")
    for gi, g in enumerate(graphs):
        gw = f"graphs[{gi}]"
        _expect(isinstance(g, dict) and isinstance(g.get("name"), str), gw,
                'must be an object with a string "name"')
        _expect(isinstance(g.get("nodes"), list), gw + ".nodes", "must be a list")
        for ni, n in enumerate(g["nodes"]):
            nw = f"{gw}.nodes[{ni}]"
            _expect(isinstance(n, dict), nw, "must be an object")
            for key in ("name", "op"):
                _expect(isinstance(n.get(key), str), f"{nw}.{key}", "must be a string")
            nw = f"node '{g['name']}/{n['name']}'"
            if n["op"] == "call_function":
                _expect(isinstance(n.get("target"), str), nw + " target",
                        "must be a string")
            _expect(isinstance(n.get("args", []), list), nw + " args", "must be a list")
            _expect(isinstance(n.get("kwargs", {}), dict), nw + " kwargs",
                    "must be an object")
            _expect(isinstance(n.get("module", ""), str), nw + " module",
                    "must be a string")
            src = n.get("src", "")
            _expect(isinstance(src, str) and (src == "" or _SRC.match(src)), nw + " src",
                    f'must be "" or "file:line:col", got {src!r}')
            val = n.get("val")
            for vi, item in enumerate(val if isinstance(val, list) else [val]):
                _check_val(item, nw + (f" val[{vi}]" if isinstance(val, list) else " val"))
    for gname, table in dump.get("links", {}).items():
        _expect(isinstance(table, dict), f'"links.{gname}"', "must be an object")
        for pname, link in table.items():
            lw = f'"links.{gname}.{pname}"'
            _expect(isinstance(link, dict), lw, "must be an object")
            if not link.get("ones"):
                _expect(isinstance(link.get("graph"), str) and
                        isinstance(link.get("value"), str), lw,
                        'must name a "graph" and a "value"')
    for oname, keys in dump.get("orders", {}).items():
        _expect(isinstance(keys, list) and all(isinstance(k, str) for k in keys),
                f'"orders.{oname}"', "must be a list of node names")
    results = dump.get("results")
    _expect(results is None or isinstance(results, list), '"results"', "must be a list")
    for ri, r in enumerate(results or []):
        _expect(isinstance(r, dict) and isinstance(r.get("graph"), str) and
                isinstance(r.get("value"), str), f'"results[{ri}]"',
                'must be an object naming a "graph" and a "value"')


class FxReader:
    """Builds a Graph from a dump, in the order `order` names (a key of the
    dump's "orders"; "graph" is the graphs' own order)."""

    def __init__(self, dump, order="graph", waits=False):
        if not isinstance(dump, dict) or dump.get("format") != "tandem-fx":
            raise ImportError_("the input is not a tandem FX dump (no \"format\": "
                               "\"tandem-fx\"; fx_dump.dump writes one)")
        if dump.get("version") != 1:
            raise ImportError_(f"FX dump version {dump.get('version')} is not "
                               "supported (version 1 is)")
        check_dump(dump)
        self.d = dump
        self.order_name = order
        self.waits = waits
        self.g = Graph()
        mesh = dump.get("mesh") or {}
        axes = [(str(a), int(s)) for a, s in mesh.get("axes", [])]
        self.g.mesh = {"name": "mesh", "axes": axes,
                       "device_ids": mesh.get("device_ids")}
        self.table = GroupTable(self.g.mesh, None)
        self.group_axes = dump.get("groups", {})
        self.env = {}
        self.memo = {}

    # -- values -----------------------------------------------------------
    def _vals(self, fx, what="value"):
        v = fx.get("val")
        if v is None:
            return []
        items = v if isinstance(v, list) else [v]
        out = []
        for it in items:
            if it is None or "shape" not in it:
                out.append(None)
                continue
            if any(not isinstance(s, int) for s in it["shape"]):
                name = getattr(self, "cur_name", fx["name"])
                raise ImportError_(f"node '{name}': {what} has a symbolic shape "
                                   f"{it['shape']}: only static shapes are supported "
                                   "(compile with dynamic=False)")
            out.append((tuple(it["shape"]), it["dtype"]))
        return out

    # Pure ops that are merged when repeated (common subexpressions): the
    # backward graph re-derives the forward's views of saved tensors, and
    # AOTAutograd's partitioner recomputes cheap element-wise ops there
    # instead of saving them. Broadcasts are not merged: each reader has its
    # own (fused into it), as in StableHLO.
    _CSE = (ELEMENTWISE | {"reshape", "transpose", "slice", "reduce",
                           "concatenate"})

    def add(self, op, ins, attrs, fx, outs):
        key = None
        if op in self._CSE and len(outs) == 1 and ins:
            key = (op, tuple(id(v) for v in ins), repr(sorted(attrs.items())),
                   tuple(outs[0][0]), outs[0][1])
            hit = self.memo.get(key)
            if hit is not None:
                return hit
        n = FxNode(op, ins, attrs, self.cur_name, _tag(fx.get("module", "")),
                   fx.get("src", ""), None)
        self.g.add(n)
        n.outs = [Val(s, dt, node=n, idx=i) for i, (s, dt) in enumerate(outs)]
        if key is not None:
            self.memo[key] = n
        return n

    def const(self, value, dtype, shape=()):
        """A constant Val (folded where small)."""
        import numpy as np
        n = self.add("constant", [], {}, self.cur, [(tuple(shape), dtype)])
        v = n.outs[0]
        v.constlike = True
        if prod(shape) <= 64 and isinstance(value, (int, float, bool)):
            v.const = np.full(tuple(shape), value)
        return v

    def arg(self, a):
        """A Val (or a python value) for an argument."""
        if isinstance(a, dict) and "node" in a:
            key = f"{self.cur_graph}/{a['node']}"
            if key not in self.env:
                raise ImportError_(f"node '{self.cur_name}' uses '{a['node']}' before "
                                   f"it is defined in the order '{self.order_name}'")
            return self.env[key]
        if isinstance(a, list):
            return [self.arg(x) for x in a]
        if isinstance(a, dict) and "dtype" in a:
            return ("dtype", a["dtype"])
        return a

    def tensor(self, a, like=None):
        """A Val for a tensor argument; python scalars become constants of
        `like`'s element type."""
        v = self.arg(a)
        if isinstance(v, Val):
            return v
        if isinstance(v, (int, float, bool)):
            dtype = like.dtype if like is not None else "f32"
            return self.const(v, dtype)
        raise ImportError_(f"node '{self.cur_name}' ({self.cur['target']}): expected a "
                           f"tensor argument, got {a!r}")

    # -- helpers that add primitive nodes --------------------------------
    def convert(self, v, dtype):
        if v.dtype == dtype:
            return v
        n = self.add("convert", [v], {}, self.cur, [(v.shape, dtype)])
        if v.constlike:
            n.outs[0].constlike = True
            n.outs[0].const = v.const
        return n.outs[0]

    def broadcast(self, v, shape):
        shape = tuple(shape)
        if v.shape == shape:
            return v
        if v.numel == prod(shape):
            return self.reshape(v, shape)
        off = len(shape) - len(v.shape)
        dims = list(range(off, len(shape)))
        if off < 0 or any(s not in (1, t) for s, t in zip(v.shape, shape[off:])):
            raise ImportError_(f"node '{self.cur_name}': cannot broadcast "
                               f"{list(v.shape)} to {list(shape)}")
        n = self.add("broadcast_in_dim", [v], {"dims": dims}, self.cur,
                     [(shape, v.dtype)])
        if v.constlike:
            n.outs[0].constlike = True
            if v.const is not None and prod(shape) <= 64:
                import numpy as np
                n.outs[0].const = np.broadcast_to(v.const.reshape(v.shape), shape).copy()
        return n.outs[0]

    def reshape(self, v, shape):
        shape = tuple(shape)
        if v.shape == shape:
            return v
        if v.numel != prod(shape):
            raise ImportError_(f"node '{self.cur_name}': cannot view {list(v.shape)} "
                               f"as {list(shape)}")
        n = self.add("reshape", [v], {}, self.cur, [(shape, v.dtype)])
        if v.constlike:
            n.outs[0].constlike = True
            if v.const is not None:
                n.outs[0].const = v.const.reshape(shape)
        return n.outs[0]

    def ew(self, op, ins, shape, dtype, attrs=None):
        """An element-wise op with explicit broadcasting and promotion."""
        ins = [self.broadcast(self.convert(v, dtype) if op not in ("select",) and
                              op != "compare" else v, shape) for v in ins]
        if op == "compare":
            ins = [self.convert(v, ins[0].dtype) for v in ins]
        n = self.add(op, ins, attrs or {}, self.cur, [(shape, dtype)])
        if all(v.constlike for v in ins):
            n.outs[0].constlike = True
        return n.outs[0]

    def reduce(self, v, dims, keepdim, kind, dtype=None):
        rank = len(v.shape)
        dims = sorted({d % rank for d in dims}) if dims else list(range(rank))
        kept = tuple(s for i, s in enumerate(v.shape) if i not in dims)
        n = self.add("reduce", [v], {"dims": dims, "reduce": kind}, self.cur,
                     [(kept, dtype or v.dtype)])
        out = n.outs[0]
        if keepdim:
            out = self.reshape(out, tuple(1 if i in dims else s
                                          for i, s in enumerate(v.shape)))
        return out, prod(v.shape[i] for i in dims)

    def transpose(self, v, perm):
        perm = [p % len(v.shape) for p in perm]
        if v.node.op == "transpose":
            # A transpose of a transpose (AOTAutograd's t(t(x))): one.
            inner = v.node.attrs["perm"]
            perm = [inner[p] for p in perm]
            v = v.node.ins[0]
        if perm == list(range(len(perm))):
            return v
        shape = tuple(v.shape[p] for p in perm)
        kept = [p for p in perm if v.shape[p] != 1]
        if kept == sorted(kept):
            return self.reshape(v, shape)  # moves unit dimensions only
        n = self.add("transpose", [v], {"perm": perm}, self.cur, [(shape, v.dtype)])
        n.outs[0].constlike = v.constlike
        return n.outs[0]

    def slice(self, v, dim, start, end):
        dim %= len(v.shape)
        end = min(end, v.shape[dim])
        start = max(0, start if start >= 0 else start + v.shape[dim])
        if start == 0 and end == v.shape[dim]:
            return v
        st = [0] * len(v.shape)
        lim = list(v.shape)
        st[dim], lim[dim] = start, end
        shape = list(v.shape)
        shape[dim] = end - start
        n = self.add("slice", [v], {"start": st, "limit": lim}, self.cur,
                     [(tuple(shape), v.dtype)])
        n.outs[0].constlike = v.constlike
        return n.outs[0]

    def operand(self, v):
        """(value, transposed): reads through 2-D transposes feeding a GEMM."""
        t = False
        while v.node.op == "transpose" and len(v.shape) == 2 and \
                v.node.attrs["perm"] == [1, 0]:
            v = v.node.ins[0]
            t = not t
        return v, t

    def dot(self, a, b, batch):
        """A dot_general of [.., M, K] x [.., K, N] operands."""
        (a, ta), (b, tb) = self.operand(a), self.operand(b)
        if a.dtype != b.dtype:
            raise ImportError_(f"node '{self.cur_name}' ({self.cur['target']}): "
                               f"operand element types differ ({a.dtype}, {b.dtype})")
        if batch:
            attrs = {"lb": [0], "rb": [0], "lc": [2], "rc": [1]}
        else:
            attrs = {"lb": [], "rb": [], "lc": [0 if ta else 1], "rc": [1 if tb else 0]}
        (shape, dtype), = self._vals(self.cur)
        n = self.add("dot_general", [a, b], attrs, self.cur, [(shape, a.dtype)])
        out = n.outs[0]
        return self.convert(out, dtype)

    # -- the walk ---------------------------------------------------------
    def _order(self):
        graphs = self.d.get("graphs") or []
        if not graphs:
            raise ImportError_("the FX dump has no graphs")
        by_key = {}
        own = []
        for g in graphs:
            for fx in g["nodes"]:
                key = f"{g['name']}/{fx['name']}"
                by_key[key] = (g["name"], fx)
                own.append(key)
        if self.order_name == "graph":
            return [by_key[k] for k in own]
        orders = self.d.get("orders", {})
        if self.order_name not in orders:
            raise ImportError_(f"the FX dump has no order '{self.order_name}' (it has: "
                               f"{', '.join(sorted(set(orders) | {'graph'}))})")
        keys = orders[self.order_name]
        missing = set(own) - set(keys)
        extra = [k for k in keys if k not in by_key]
        if missing or extra or len(keys) != len(own):
            what = (f"misses {sorted(missing)[:3]}" if missing else
                    f"names unknown nodes {extra[:3]}" if extra else "repeats nodes")
            raise ImportError_(f"order '{self.order_name}' of the FX dump is not a "
                               f"permutation of its nodes: it {what}")
        return [by_key[k] for k in keys]

    def run(self):
        results = self.d.get("results")
        links = self.d.get("links", {})
        names = self.d.get("param_names", {})
        first = self.d["graphs"][0]["name"]
        outputs = {}
        for gname, fx in self._order():
            self.cur_graph, self.cur = gname, fx
            self.cur_name = f"{gname}/{fx['name']}" if len(self.d["graphs"]) > 1 \
                else fx["name"]
            key = f"{gname}/{fx['name']}"
            op = fx["op"]
            if op == "placeholder":
                link = links.get(gname, {}).get(fx["name"])
                if gname != first and link is None:
                    raise ImportError_(f"placeholder '{self.cur_name}' of graph '{gname}' "
                                       "has no link to an earlier graph's value")
                if link is not None and link.get("ones"):
                    (shape, dtype), = self._vals(fx)
                    self.env[key] = self.const(1.0, dtype, shape)
                    continue
                if link is not None:
                    src = f"{link['graph']}/{link['value']}"
                    if src not in self.env:
                        raise ImportError_(f"placeholder '{self.cur_name}' links to "
                                           f"'{src}', which is not defined before it")
                    self.env[key] = self.env[src]
                    continue
                vals = self._vals(fx)
                if len(vals) != 1 or vals[0] is None:
                    raise ImportError_(f"placeholder '{self.cur_name}' is not a tensor")
                n = self.add("arg", [], {"index": len(self.g.args)}, fx, vals)
                self.g.args.append((n.outs[0], names.get(fx["name"], fx["name"])))
                self.env[key] = n.outs[0]
                continue
            if op == "output":
                outputs[gname] = fx["args"][0]
                continue
            if op != "call_function":
                raise ImportError_(f"node '{self.cur_name}': '{op}' nodes are not "
                                   "supported (only placeholder, call_function, output)")
            try:
                self.env[key] = self._call(fx)
            except (TypeError, KeyError, IndexError, ValueError, AttributeError,
                    ArithmeticError) as err:
                # The dump's structure was checked (check_dump); what is left
                # is an op whose arguments do not have the form its ATen
                # schema gives them.
                raise ImportError_(f"node '{self.cur_name}' ({fx['target']}): its "
                                   "arguments or value do not have the form this op "
                                   f"takes ({type(err).__name__}: {err})") from None
        self._results(results, outputs)
        return self.g

    def _results(self, results, outputs):
        if results is None:
            last = self.d["graphs"][-1]["name"]
            results = []
            for i, a in enumerate(outputs.get(last, [])):
                if isinstance(a, dict) and "node" in a:
                    results.append({"graph": last, "value": a["node"],
                                    "name": f"result{i}"})
        for r in results:
            key = f"{r['graph']}/{r['value']}"
            v = self.env.get(key)
            if not isinstance(v, Val):
                raise ImportError_(f"result '{r.get('name', key)}' names '{key}', which "
                                   "is not a tensor of the graph")
            self.g.results.append((v, r.get("name", key)))

    # -- one call_function --------------------------------------------------
    def _call(self, fx):
        target = fx["target"]
        s = _short(target)
        args = fx["args"]
        kw = fx.get("kwargs", {})
        vals = self._vals(fx)
        out = vals[0] if len(vals) == 1 else None
        if s in _IGNORED:
            return None
        if s == "getitem":
            seq = self.arg(args[0])
            if not isinstance(seq, (list, tuple)):
                raise ImportError_(f"node '{self.cur_name}': getitem of a non-tuple")
            return seq[args[1]]
        if s in _COLLECTIVES or target.startswith("_c10d_functional."):
            return self._collective(fx, s, args, vals)
        if s in _SDPA:
            return self._sdpa(fx, s, args, kw, vals)
        if s in _SDPA_GRAD:
            return self._sdpa_grad(fx, s, args, kw, vals)
        if s in ("mm", "bmm", "matmul") and out is not None:
            a, b = self.tensor(args[0]), self.tensor(args[1])
            if s == "matmul" and (len(a.shape) != 2 or len(b.shape) != 2):
                return self._opaque(fx, vals, "matmul of rank > 2")
            return self.dot(a, b, s == "bmm")
        if s == "addmm" and out is not None:
            bias, a, b = (self.tensor(x) for x in args[:3])
            beta, alpha = kw.get("beta", 1), kw.get("alpha", 1)
            if beta != 1 or alpha != 1:
                return self._opaque(fx, vals, f"addmm with beta={beta}, alpha={alpha}")
            y = self.dot(a, b, False)
            return self.ew("add", [y, bias], out[0], out[1])
        if s in _VIEWS:
            v = self.tensor(args[0])
            if out is None:
                return v
            return self.convert(self.reshape(v, out[0]), out[1])
        if s == "expand":
            v = self.tensor(args[0])
            return self.broadcast(v, out[0])
        if s in ("permute", "transpose", "t", "numpy_T"):
            v = self.tensor(args[0])
            rank = len(v.shape)
            if s == "permute":
                perm = list(args[1])
            elif s == "transpose":
                perm = list(range(rank))
                i, j = args[1] % max(rank, 1), args[2] % max(rank, 1)
                perm[i], perm[j] = perm[j], perm[i]
            else:
                perm = list(reversed(range(rank)))
            return self.transpose(v, perm)
        if s in ("convert_element_type", "_to_copy", "to", "type_as"):
            v = self.tensor(args[0])
            return self.convert(v, out[1])
        if s in _CONSTANTS:
            value = 0
            if s in ("full", "new_full"):
                value = args[1] if s == "full" else args[2]
            elif s in ("full_like", "fill"):
                value = args[1]
            elif s in ("ones", "ones_like", "new_ones"):
                value = 1
            elif s == "scalar_tensor":
                value = args[0]
            if s in ("arange", "iota", "empty", "empty_like", "empty_strided",
                     "new_empty"):
                value = None
            return self.const(value, out[1], out[0])
        if s == "cat":
            ins = [self.tensor(x) for x in args[0]]
            dim = (args[1] if len(args) > 1 else kw.get("dim", 0)) % len(out[0])
            ins = [self.convert(v, out[1]) for v in ins if v.numel > 0]
            if len(ins) == 1:
                return ins[0]
            n = self.add("concatenate", ins, {"dim": dim}, self.cur, [out])
            return n.outs[0]
        if s in ("split", "split_with_sizes", "chunk", "unbind", "tensor_split"):
            v = self.tensor(args[0])
            dim = args[2] if len(args) > 2 else kw.get("dim", 0)
            if s == "unbind":
                dim = args[1] if len(args) > 1 else kw.get("dim", 0)
            dim %= len(v.shape)
            outs, start = [], 0
            for shape_dtype in vals:
                size = shape_dtype[0][dim] if s != "unbind" else 1
                piece = self.slice(v, dim, start, start + size)
                if s == "unbind":
                    piece = self.reshape(piece, shape_dtype[0])
                outs.append(piece)
                start += size
            return outs
        if s == "slice":
            v = self.tensor(args[0])
            dim = args[1] if len(args) > 1 else 0
            start = args[2] if len(args) > 2 and args[2] is not None else 0
            end = args[3] if len(args) > 3 and args[3] is not None else v.shape[dim]
            step = args[4] if len(args) > 4 else 1
            if step != 1:
                return self._opaque(fx, vals, "strided slice")
            return self.slice(v, dim, start, min(end, v.shape[dim % len(v.shape)]))
        if s == "select":
            v = self.tensor(args[0])
            dim, idx = args[1] % len(v.shape), args[2]
            idx = idx if idx >= 0 else idx + v.shape[dim]
            return self.reshape(self.slice(v, dim, idx, idx + 1), out[0])
        if s in ("sum", "mean", "amax", "amin", "prod"):
            v = self.tensor(args[0])
            dims = args[1] if len(args) > 1 else kw.get("dim")
            if isinstance(dims, int):
                dims = [dims]
            keep = args[2] if len(args) > 2 else kw.get("keepdim", False)
            kind = {"amax": "max", "amin": "min", "prod": "multiply"}.get(s, "sum")
            v = self.convert(v, out[1])
            r, count = self.reduce(v, dims or [], keep, kind)
            if s == "mean":
                r = self.ew("divide", [r, self.const(float(count), out[1])], out[0],
                            out[1])
            return r
        if s in ("var_mean", "var"):
            return self._var_mean(fx, s, args, kw, vals)
        if s == "pow" and out is not None and not isinstance(args[1], dict):
            v = self.tensor(args[0])
            e = args[1]
            if e == 1 or e == 1.0:
                return self.convert(v, out[1])
            if e == 2 or e == 2.0:
                v = self.convert(v, out[1])
                return self.ew("multiply", [v, v], out[0], out[1])
            return self.ew("power", [self.convert(v, out[1]), self.const(float(e), out[1])],
                           out[0], out[1])
        if s == "silu":
            v = self.tensor(args[0])
            sg = self.ew("logistic", [v], out[0], out[1])
            return self.ew("multiply", [v, sg], out[0], out[1])
        if s in ("gelu", "gelu_backward"):
            return self._gelu(s, args, kw, out)
        if s == "silu_backward":
            # grad * sigmoid(x) * (1 + x * (1 - sigmoid(x)))
            g, x = self.tensor(args[0]), self.tensor(args[1])
            shape, dt = out
            sg = self.ew("logistic", [x], shape, dt)
            one = self.const(1.0, dt)
            t = self.ew("add", [one, self.ew("multiply", [x, self.ew(
                "subtract", [one, sg], shape, dt)], shape, dt)], shape, dt)
            return self.ew("multiply", [self.ew("multiply", [g, sg], shape, dt), t],
                           shape, dt)
        if s == "relu":
            v = self.tensor(args[0])
            return self.ew("maximum", [v, self.const(0.0, out[1])], out[0], out[1])
        if s == "reciprocal":
            v = self.tensor(args[0])
            return self.ew("divide", [self.const(1.0, out[1]), v], out[0], out[1])
        if s == "rsub":
            a = self.tensor(args[0])
            b = self.tensor(args[1], like=a)
            return self.ew("subtract", [b, a], out[0], out[1])
        if s in ("where",):
            c, a, b = self.tensor(args[0]), self.tensor(args[1]), None
            b = self.tensor(args[2], like=a)
            a = self.tensor(args[1], like=b)
            ins = [self.broadcast(c, out[0]), self.broadcast(self.convert(a, out[1]), out[0]),
                   self.broadcast(self.convert(b, out[1]), out[0])]
            n = self.add("select", ins, {}, self.cur, [out])
            n.outs[0].constlike = all(x.constlike for x in ins)
            return n.outs[0]
        if s in _COMPARE:
            a = self.tensor(args[0])
            b = self.tensor(args[1], like=a)
            return self.ew("compare", [a, b], out[0], out[1],
                           {"direction": _COMPARE[s]})
        if s in _UNARY and out is not None:
            v = self.tensor(args[0])
            return self.ew(_UNARY[s], [v], out[0], out[1])
        if s in _BINARY and out is not None:
            a = self.tensor(args[0])
            b = self.tensor(args[1], like=a)
            if isinstance(self.arg(args[0]), (int, float)):
                a = self.tensor(args[0], like=b)
            alpha = kw.get("alpha", 1)
            if alpha != 1:
                b = self.ew("multiply", [b, self.const(float(alpha), b.dtype)], b.shape,
                            b.dtype)
            return self.ew(_BINARY[s], [a, b], out[0], out[1])
        return self._opaque(fx, vals, None)

    def _gelu(self, s, args, kw, out):
        """GELU and its backward as the primitives JAX lowers them to (erf, or
        tanh for approximate='tanh'), so that a fusion of them is a gelu /
        gelu_grad kernel."""
        shape, dt = out
        x = self.tensor(args[-1] if s == "gelu" else args[1])
        x = self.convert(x, dt)
        tanh = (kw.get("approximate") or (args[2] if s == "gelu_backward" and
                                          len(args) > 2 else "none")) == "tanh"

        def c(v):
            return self.const(float(v), dt)
        if tanh:
            x3 = self.ew("multiply", [self.ew("multiply", [x, x], shape, dt), x], shape, dt)
            inner = self.ew("multiply", [self.ew("add", [x, self.ew(
                "multiply", [x3, c(0.044715)], shape, dt)], shape, dt),
                c(0.7978845608)], shape, dt)
            t = self.ew("tanh", [inner], shape, dt)
        else:
            t = self.ew("erf", [self.ew("multiply", [x, c(0.7071067812)], shape, dt)],
                        shape, dt)
        cdf = self.ew("multiply", [self.ew("add", [t, c(1.0)], shape, dt), c(0.5)],
                      shape, dt)
        if s == "gelu":
            return self.ew("multiply", [x, cdf], shape, dt)
        # d/dx x * cdf(x) = cdf(x) + x * pdf(x); pdf from exp(-x^2 / 2).
        pdf = self.ew("multiply", [self.ew("exponential", [self.ew(
            "multiply", [self.ew("multiply", [x, x], shape, dt), c(-0.5)], shape, dt)],
            shape, dt), c(0.3989422804)], shape, dt)
        d = self.ew("add", [cdf, self.ew("multiply", [x, pdf], shape, dt)], shape, dt)
        g = self.convert(self.tensor(args[0]), dt)
        return self.ew("multiply", [g, d], shape, dt)

    def _var_mean(self, fx, s, args, kw, vals):
        v = self.tensor(args[0])
        dims = args[1] if len(args) > 1 else kw.get("dim")
        if isinstance(dims, int):
            dims = [dims]
        corr = kw.get("correction", 1)
        keep = kw.get("keepdim", False)
        (vshape, vdt) = vals[0]
        v = self.convert(v, vdt)
        r, count = self.reduce(v, dims or [], True, "sum")
        mean = self.ew("divide", [r, self.const(float(count), vdt)], r.shape, vdt)
        d = self.ew("subtract", [v, mean], v.shape, vdt)
        sq = self.ew("multiply", [d, d], v.shape, vdt)
        r2, _ = self.reduce(sq, dims or [], keep, "sum")
        var = self.ew("divide", [r2, self.const(float(max(1, count - corr)), vdt)],
                      r2.shape, vdt)
        if s == "var":
            return var
        return [var, mean if keep else self.reshape(mean, vals[1][0])]

    def _opaque(self, fx, vals, why):
        """An op the importer has no primitive for: kept as an opaque kernel
        (its operands and results' bytes) with a remark, never dropped."""
        ins = []

        def walk(a):
            if isinstance(a, dict) and "node" in a:
                v = self.arg(a)
                for x in (v if isinstance(v, list) else [v]):
                    if isinstance(x, Val) and x not in ins:
                        ins.append(x)
            elif isinstance(a, list):
                for x in a:
                    walk(x)
        walk(fx["args"])
        walk(list(fx.get("kwargs", {}).values()))
        outs = [x for x in vals if x is not None]
        if not outs:
            raise ImportError_(f"node '{self.cur_name}' ({fx['target']}) has no tensor "
                               "result and no tandem meaning")
        n = self.add("custom_call", ins, {"target": fx["target"], "what": "FX op " +
                                          fx["target"] + (f" ({why})" if why else "")},
                     fx, outs)
        res = [None] * len(vals)
        k = 0
        for i, x in enumerate(vals):
            if x is not None:
                res[i] = n.outs[k]
                k += 1
        return res[0] if len(vals) == 1 else res

    # -- attention ------------------------------------------------------------
    def _sdpa(self, fx, s, args, kw, vals):
        q, k, v = (self.tensor(a) for a in args[:3])
        ci = _SDPA[s]
        causal = bool(args[ci]) if len(args) > ci else bool(kw.get("is_causal", False))
        if kw.get("attn_mask") is not None or (s == "_scaled_dot_product_efficient_attention"
                                               and args[3] is not None):
            return self._opaque(fx, vals, "attention with a mask tensor")
        outs = [x if x is not None else ((1,), "f32") for x in vals]
        n = self.add("sdpa", [q, k, v], {"causal": causal, "target": fx["target"]},
                     fx, outs)
        return n.outs if len(n.outs) > 1 else n.outs[0]

    def _sdpa_grad(self, fx, s, args, kw, vals):
        oi, li, ci = _SDPA_GRAD[s]
        dout, q, k, v, out, lse = (self.tensor(args[i]) for i in (0, 1, 2, 3, oi, li))
        causal = bool(args[ci]) if len(args) > ci else bool(kw.get("is_causal", False))
        outs = [x if x is not None else ((1,), "f32") for x in vals][:3]
        n = self.add("sdpa_grad", [dout, q, k, v, out, lse],
                     {"causal": causal, "target": fx["target"]}, fx, outs)
        return n.outs + [None] * (len(vals) - 3)

    # -- collectives ------------------------------------------------------
    def _group(self, name):
        axis = self.group_axes.get(str(name))
        if axis is None:
            raise ImportError_(f"node '{self.cur_name}' ({self.cur['target']}): process "
                               f"group '{name}' is not in the dump's \"groups\" (which "
                               f"maps {sorted(self.group_axes) or 'no group'} to mesh axes)")
        part = self.table.partition(axis)
        if part is None:
            raise ImportError_(f"node '{self.cur_name}': process group '{name}' maps to "
                               f"'{axis}', which is no axis of the mesh "
                               f"{self.g.mesh['axes']}")
        return part

    def _collective(self, fx, s, args, vals):
        if s == "wait_tensor":
            v = self.tensor(args[0])
            if not self.waits or v.node.op not in ("all_gather", "reduce_scatter",
                                                   "all_reduce", "all_to_all"):
                return v
            v.node.attrs["async"] = True
            n = self.add("wait", [v], {}, fx, [(v.shape, v.dtype)])
            return n.outs[0]
        out = vals[0] if len(vals) == 1 else None
        x = self.tensor(args[0])
        if s in ("reduce_scatter_tensor", "all_reduce") and args[1] not in _REDUCE_OPS:
            raise ImportError_(f"node '{self.cur_name}' ({s}): reduction '{args[1]}' has "
                               "no tandem form (sum, max, min)")
        if s == "all_gather_into_tensor":
            attrs = {"dim": 0, "groups": self._group(args[2])}
            op = "all_gather"
        elif s == "reduce_scatter_tensor":
            attrs = {"dim": 0, "groups": self._group(args[3]),
                     "reduce": _REDUCE_OPS.get(args[1], args[1])}
            op = "reduce_scatter"
        elif s == "all_reduce":
            attrs = {"groups": self._group(args[2]),
                     "reduce": _REDUCE_OPS.get(args[1], args[1])}
            op = "all_reduce"
        elif s == "all_to_all_single":
            outs, ins_, name = args[1], args[2], args[3]
            groups = self._group(name)
            size = len(groups[0])
            for what, sp in (("output", outs), ("input", ins_)):
                if sp is not None and len(set(sp)) > 1:
                    raise ImportError_(f"node '{self.cur_name}' (all_to_all_single): "
                                       f"unequal {what} split sizes {sp}; tandem.all_to_all "
                                       "splits evenly")
                if sp is not None and len(sp) != size:
                    raise ImportError_(f"node '{self.cur_name}' (all_to_all_single): "
                                       f"{len(sp)} {what} splits for a group of {size}")
            attrs = {"split": 0, "concat": 0, "groups": groups}
            op = "all_to_all"
        else:
            raise ImportError_(f"node '{self.cur_name}': cannot import '{fx['target']}' "
                               "(functional collectives supported: all_gather_into_tensor, "
                               "reduce_scatter_tensor, all_reduce, all_to_all_single, "
                               "wait_tensor)")
        if out is None:
            raise ImportError_(f"node '{self.cur_name}' ({fx['target']}) has no tensor "
                               "value in its meta")
        n = self.add(op, [x], attrs, fx, [out])
        return n.outs[0]


def read(dump, order="graph", waits=False):
    return FxReader(dump, order, waits).run()

