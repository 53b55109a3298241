"""Reads a StableHLO module into one flat dataflow graph of one rank's step.

The module is parsed by jaxlib's MLIR bindings (never by hand). The entry
function is walked in program order: `func.call`s are inlined,
`sdy.manual_computation` bodies are entered (their per-device shapes are the
rank's shapes), `stablehlo.while` loops with a static trip count are unrolled
(the condition is evaluated on constants each iteration) and small integer
scalars are folded, so that the indices of `dynamic_slice` and
`dynamic_update_slice` inside unrolled `lax.scan` bodies become static.
"""

import re

import numpy as np


class ImportError_(Exception):
    """A refused input: the message names the op and its location."""


# Ops that XLA fuses into one kernel with their neighbours (element-wise,
# broadcasts, reductions, layout changes, small slicing).
ELEMENTWISE = {
    "abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "compare",
    "convert", "cosine", "divide", "erf", "exponential", "exponential_minus_one",
    "floor", "imag", "is_finite", "log", "log_plus_one", "logistic",
    "maximum", "minimum", "multiply", "negate", "not", "or", "popcnt",
    "power", "real", "remainder", "round_nearest_afz", "round_nearest_even",
    "rsqrt", "select", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "sign", "sine", "sqrt", "subtract", "tan", "tanh",
    "xor", "reduce_precision", "bitcast_convert",
}
LAYOUT = {"broadcast_in_dim", "reshape", "transpose", "slice", "concatenate",
          "pad", "reverse", "reduce", "iota", "constant", "dynamic_slice",
          "dynamic_update_slice"}
COLLECTIVES = {"all_gather", "reduce_scatter", "all_reduce", "all_to_all",
               "collective_permute"}
# Ops that only carry values through (annotations, barriers).
PASSTHROUGH = {"optimization_barrier", "sdy.sharding_constraint",
               "sdy.reshard", "mhlo.sharding"}
# custom_call targets that are sharding annotations, not kernels.
ANNOTATION_CALLS = {"Sharding", "SPMDFullToShardShape",
                    "SPMDShardToFullShape", "xla.sdy.FuncResultSharding",
                    "xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape"}

MAX_UNROLL = 4096
SMALL_CONST = 64  # constants with at most this many elements are folded


def element_bytes(dtype):
    if dtype in ("i1", "pred"):
        return 1
    m = re.search(r"(\d+)", dtype)
    if dtype.startswith("f8") or dtype.startswith("f4") or dtype.startswith("f6"):
        return 1
    return max(1, int(m.group(1)) // 8) if m else 4


def is_int(x):
    """A JSON integer (Python's bool is an int, JSON's true is not)."""
    return isinstance(x, int) and not isinstance(x, bool)


def prod(xs):
    p = 1
    for x in xs:
        p *= int(x)
    return p


class Val:
    """One SSA value of the flat graph: a static-shape tensor."""

    __slots__ = ("shape", "dtype", "node", "idx", "const", "constlike", "id",
                 "users")

    def __init__(self, shape, dtype, node=None, idx=0):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype
        self.node = node
        self.idx = idx
        self.const = None      # numpy array when the value is a small constant
        self.constlike = False  # computed from constants (and rank ids) only
        self.users = []
        self.id = None

    @property
    def numel(self):
        return prod(self.shape)

    @property
    def nbytes(self):
        return self.numel * element_bytes(self.dtype)

    def type_str(self, shape=None):
        shape = self.shape if shape is None else shape
        # Scalars travel as tensor<1xT>: the runtime's buffers have rank >= 1.
        dims = "x".join(str(s) for s in shape) or "1"
        return f"tensor<{dims + 'x' if dims else ''}{self.dtype}>"


class Node:
    __slots__ = ("op", "ins", "outs", "attrs", "loc", "scope", "src", "id",
                 "layer_index", "dead")

    def __init__(self, op, ins, attrs, loc, scope, src, layer_index):
        self.op = op
        self.ins = list(ins)
        self.outs = []
        self.attrs = attrs
        self.loc = loc
        self.scope = scope
        self.src = src
        self.layer_index = layer_index
        self.dead = False
        self.id = None

    def where(self):
        return self.src or self.loc or "unknown location"


class Graph:
    def __init__(self):
        self.nodes = []
        self.args = []      # (Val, name)
        self.results = []   # (Val, name)
        self.mesh = None    # {"name":..., "axes": [(name, size)]}
        self.remarks = []
        self.num_partitions = None

    def add(self, node):
        node.id = len(self.nodes)
        self.nodes.append(node)
        for v in node.ins:
            v.users.append(node)
        return node

    def remark(self, where, text):
        self.remarks.append(f"{where}: {text}")


_NAME_RE = re.compile(r'loc\("((?:[^"\\]|\\.)*)"')
_FILE_RE = re.compile(r'"([^"]+\.py)":(\d+):(\d+)')


def describe_location(loc):
    """(name stack, 'file:line:col') of an MLIR location's text."""
    s = str(loc)
    m = _NAME_RE.search(s)
    name = m.group(1) if m else ""
    if name.endswith(".py"):
        name = ""
    f = _FILE_RE.search(s)
    src = f"{f.group(1).rsplit('/', 1)[-1]}:{f.group(2)}:{f.group(3)}" if f else ""
    return name, src


_SKIP_SCOPES = {"shard_map", "while", "body", "cond", "checkpoint", "remat",
                "pjit", "closed_call", "core_call", "custom_jvp_call",
                "custom_vjp_call", "scan", "cond_branch", "branch"}


def scope_of(name):
    """User scopes of a JAX name stack, e.g. 'transpose(jvp(l0))/mlp/fc1/
    dot_general' -> 'l0.mlp.fc1'."""
    if not name:
        return ""
    parts = name.split("/")[:-1]  # the last part is the primitive
    out = []
    for p in parts:
        if p.startswith("jit(") or p.startswith("pjit("):
            continue
        while True:
            m = re.match(r"^(?:transpose|jvp|vmap|remat|checkpoint|"
                         r"custom_jvp|custom_vjp|pjit|jit)\((.*)\)$", p)
            if not m:
                break
            p = m.group(1)
        if not p or p in _SKIP_SCOPES or "->" in p or "," in p or " " in p \
                or "=" in p or "(" in p:
            continue
        out.append(re.sub(r"[^A-Za-z0-9_]", "_", p))
    return ".".join(out)


def _ints(attr):
    if attr is None:
        return []
    try:
        return [int(x) for x in attr]
    except TypeError:
        s = str(attr)
        return [int(x) for x in re.findall(r"-?\d+", s.split(":", 1)[-1])] \
            if ":" in s else []


def _dot_dims(attr):
    s = str(attr)

    def grab(key):
        m = re.search(key + r" = \[([^\]]*)\]", s)
        return [int(x) for x in m.group(1).split(",")] if m and m.group(1).strip() else []
    return {"lb": grab("lhs_batching_dimensions"),
            "rb": grab("rhs_batching_dimensions"),
            "lc": grab("lhs_contracting_dimensions"),
            "rc": grab("rhs_contracting_dimensions")}


def _region_reduce_kind(region):
    names = [o.operation.name for o in region.blocks[0].operations]
    for n in names:
        if n in ("stablehlo.add",):
            return "sum"
        if n == "stablehlo.maximum":
            return "max"
        if n == "stablehlo.minimum":
            return "min"
    return "+".join(n.split(".")[-1] for n in names if not n.endswith("return"))


def _tensor_type(t):
    from jaxlib.mlir import ir
    try:
        rt = ir.RankedTensorType(t)
    except Exception:  # noqa: BLE001
        return None
    if not rt.has_static_shape:
        return None
    return list(rt.shape), str(rt.element_type)


def _const_value(attr, shape):
    """numpy array of a dense constant if it is small or a splat."""
    from jaxlib.mlir import ir
    n = prod(shape)
    try:
        if getattr(attr, "is_splat", False):
            sv = attr.get_splat_value()
            txt = str(sv).split(":")[0].strip()
            if txt in ("true", "false"):
                v = txt == "true"
            else:
                v = float(txt) if any(c in txt for c in ".eEn") else int(txt, 0)
            return np.full(shape, v)
        if n <= SMALL_CONST:
            return np.array(attr).reshape(shape)
    except Exception:  # noqa: BLE001
        return None
    return None


class _Env:
    def __init__(self, parent=None):
        self.map = {}
        self.parent = parent

    def get(self, v):
        e = self
        while e is not None:
            r = e.map.get(v)
            if r is not None:
                return r
            e = e.parent
        return None

    def set(self, v, val):
        self.map[v] = val


_CMP = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
        "GT": np.greater, "GE": np.greater_equal}


def _fold(op, ins, attrs, shape):
    """Folds small constant computations (loop counters, indices)."""
    vals = [v.const for v in ins]
    if any(c is None for c in vals):
        return None
    try:
        if op == "add":
            r = vals[0] + vals[1]
        elif op == "subtract":
            r = vals[0] - vals[1]
        elif op == "multiply":
            r = vals[0] * vals[1]
        elif op == "divide":
            r = vals[0] // vals[1] if np.issubdtype(np.asarray(vals[0]).dtype, np.integer) \
                else vals[0] / vals[1]
        elif op == "remainder":
            r = np.fmod(vals[0], vals[1])
        elif op == "negate":
            r = -vals[0]
        elif op == "maximum":
            r = np.maximum(vals[0], vals[1])
        elif op == "minimum":
            r = np.minimum(vals[0], vals[1])
        elif op == "clamp":
            r = np.clip(vals[1], vals[0], vals[2])
        elif op == "compare":
            r = _CMP[attrs["direction"]](vals[0], vals[1])
        elif op == "select":
            r = np.where(vals[0], vals[1], vals[2])
        elif op == "and":
            r = np.logical_and(vals[0], vals[1]) if vals[0].dtype == bool else vals[0] & vals[1]
        elif op == "or":
            r = np.logical_or(vals[0], vals[1]) if vals[0].dtype == bool else vals[0] | vals[1]
        elif op == "not":
            r = np.logical_not(vals[0])
        elif op in ("convert", "reshape", "bitcast_convert"):
            r = vals[0]
        elif op == "broadcast_in_dim":
            src = np.asarray(vals[0])
            if src.size != 1:
                return None
            r = np.full(shape, src.reshape(()).item())
        else:
            return None
        r = np.asarray(r)
        if r.size != prod(shape) and r.size != 1:
            return None
        return np.broadcast_to(r.reshape(()) if r.size == 1 else r, shape).copy() \
            if prod(shape) <= SMALL_CONST or r.size == 1 else None
    except Exception:  # noqa: BLE001
        return None


class Flattener:
    """Walks the entry function into a Graph."""

    def __init__(self, module, function=None):
        self.module = module
        self.g = Graph()
        self.funcs = {}
        self.layer_stack = []
        self.call_sites = []  # sources of the func.calls being inlined
        for op in module.body.operations:
            o = op.operation
            if o.name == "func.func":
                self.funcs[str(o.attributes["sym_name"]).strip('"')] = o
            elif o.name == "sdy.mesh":
                self._read_mesh(o)
        attrs = module.operation.attributes
        if "mhlo.num_partitions" in attrs:
            self.g.num_partitions = int(str(attrs["mhlo.num_partitions"]).split(":")[0])
        if function is None:
            publics = [n for n, f in self.funcs.items()
                       if "sym_visibility" not in f.attributes
                       or str(f.attributes["sym_visibility"]).strip('"') == "public"]
            function = "main" if "main" in self.funcs else (publics[0] if publics else None)
        if function not in self.funcs:
            raise ImportError_(f"no function @{function} in the module "
                               f"(functions: {', '.join(sorted(self.funcs))})")
        self.entry = function

    def _read_mesh(self, o):
        name = str(o.attributes["sym_name"]).strip('"')
        text = str(o.attributes["mesh"])
        axes = [(a, int(s)) for a, s in re.findall(r'"([^"]+)"\s*=\s*(\d+)', text)]
        ids = re.search(r"device_ids\s*=\s*\[([^\]]*)\]", text)
        device_ids = [int(x) for x in ids.group(1).split(",")] if ids else None
        if self.g.mesh is not None and self.g.mesh["axes"] != axes:
            if axes:
                raise ImportError_(
                    f"module declares two different meshes (@{self.g.mesh['name']} "
                    f"and @{name}); one mesh per step is supported")
            return
        if axes or self.g.mesh is None:
            self.g.mesh = {"name": name, "axes": axes, "device_ids": device_ids}

    # -- driver ---------------------------------------------------------
    def run(self):
        f = self.funcs[self.entry]
        block = f.regions[0].blocks[0]
        env = _Env()
        arg_names = self._arg_names(f, block)
        for i, a in enumerate(block.arguments):
            tt = _tensor_type(a.type)
            if tt is None:
                raise ImportError_(f"argument {i} of @{self.entry} has type {a.type}: "
                                   "only static-shape tensors are supported")
            v = Val(*tt)
            node = self.g.add(Node("arg", [], {"index": i}, arg_names[i], "", "", None))
            v.node = node
            node.outs = [v]
            self.g.args.append((v, arg_names[i]))
            env.set(a, v)
        outs = self._walk_block(block, env, top=True)
        rnames = self._result_names(f, len(outs))
        self.g.results = list(zip(outs, rnames))
        return self.g

    def _arg_names(self, f, block):
        names = []
        for i, a in enumerate(block.arguments):
            n, _ = describe_location(a.location)
            names.append(n or f"arg{i}")
        return names

    def _result_names(self, f, n):
        names = [f"result{i}" for i in range(n)]
        if "res_attrs" in f.attributes:
            for i, d in enumerate(f.attributes["res_attrs"]):
                m = re.search(r'jax.result_info = "([^"]*)"', str(d))
                if m and i < n:
                    names[i] = m.group(1)
        return names

    def _walk_block(self, block, env, top=False):
        """Imports a block's ops; returns the Vals its terminator yields."""
        for op in block.operations:
            o = op.operation
            name = o.name
            if name in ("func.return", "stablehlo.return", "sdy.return"):
                return [self._get(env, v, o) for v in o.operands]
            self._op(o, env)
        return []

    def _get(self, env, v, o):
        r = env.get(v)
        if r is None:
            raise ImportError_(f"{describe_location(o.location)[1] or o.location}: "
                               f"'{o.name}' uses a value defined outside what the "
                               "importer has read")
        return r

    def _new_node(self, o, kind, ins, attrs, results=None):
        name, src = describe_location(o.location)
        layer = self.layer_stack[-1] if self.layer_stack else None
        if not src and self.call_sites:
            src = next((c for c in reversed(self.call_sites) if c and ' ' not in c), "")
        n = Node(kind, ins, attrs, name, scope_of(name), src, layer)
        self.g.add(n)
        res = o.results if results is None else results
        outs = []
        for i, r in enumerate(res):
            tt = _tensor_type(r.type)
            if tt is None:
                raise ImportError_(f"{n.where()}: '{o.name}' has a result of type "
                                   f"{r.type}: only static-shape tensors are supported")
            v = Val(*tt, node=n, idx=i)
            outs.append(v)
        n.outs = outs
        return n

    def _op(self, o, env):
        name = o.name
        short = name.split(".", 1)[1] if name.startswith("stablehlo.") else name
        where = self._where(o)
        if name == "func.call":
            callee = str(o.attributes["callee"]).lstrip("@")
            f = self.funcs.get(callee)
            if f is None:
                raise ImportError_(f"{where}: func.call to unknown function @{callee}")
            cblock = f.regions[0].blocks[0]
            cenv = _Env()
            for a, v in zip(cblock.arguments, o.operands):
                cenv.set(a, self._get(env, v, o))
            self.call_sites.append(where)
            outs = self._walk_block(cblock, cenv)
            self.call_sites.pop()
            for r, v in zip(o.results, outs):
                env.set(r, v)
            return
        if name == "sdy.manual_computation":
            blk = o.regions[0].blocks[0]
            cenv = _Env(env)
            for a, v in zip(blk.arguments, o.operands):
                outer = self._get(env, v, o)
                tt = _tensor_type(a.type)
                if outer.node.op == "arg":
                    # The step's input is this rank's shard.
                    outer.shape = tuple(tt[0])
                    cenv.set(a, outer)
                elif list(outer.shape) == tt[0]:
                    cenv.set(a, outer)
                else:
                    raise ImportError_(
                        f"{where}: sdy.manual_computation takes a value computed "
                        "outside it on global shapes; the importer models one rank's "
                        "program and reads what runs inside shard_map")
            outs = self._walk_block(blk, cenv)
            for r, v in zip(o.results, outs):
                env.set(r, v)
            return
        if name == "stablehlo.while":
            self._while(o, env, where)
            return
        if name in PASSTHROUGH or short in PASSTHROUGH:
            for r, v in zip(o.results, o.operands):
                env.set(r, self._get(env, v, o))
            return
        if name == "stablehlo.custom_call":
            target = str(o.attributes["call_target_name"]).strip('"')
            if target in ANNOTATION_CALLS:
                for r, v in zip(o.results, o.operands):
                    env.set(r, self._get(env, v, o))
                return
            ins = [self._get(env, v, o) for v in o.operands]
            n = self._new_node(o, "custom_call", ins, {"target": target})
            for r, v in zip(o.results, n.outs):
                env.set(r, v)
            return
        if name in ("stablehlo.tuple", "stablehlo.get_tuple_element"):
            raise ImportError_(f"{where}: '{name}' (tuples) is not supported")
        if name.startswith("stablehlo.") and (short in ELEMENTWISE or short in LAYOUT
                                              or short in COLLECTIVES
                                              or short in ("dot_general", "dot",
                                                           "partition_id", "replica_id")):
            self._stablehlo(o, short, env, where)
            return
        raise ImportError_(f"{where}: cannot import '{name}': the importer has no "
                           "tandem op for it (see docs/import.md for what is mapped)")

    def _where(self, o):
        """'file:line:col' of an op, else of the call it was inlined from."""
        name, src = describe_location(o.location)
        if src:
            return src
        outer = next((c for c in reversed(self.call_sites) if c), "")
        if outer:
            return f"{outer} (in the function called there{', ' + name if name else ''})"
        return str(o.location)

    def _stablehlo(self, o, short, env, where):
        ins = [self._get(env, v, o) for v in o.operands]
        a = o.attributes
        attrs = {}
        if short == "dot":
            short = "dot_general"
            attrs = {"lb": [], "rb": [], "lc": [len(ins[0].shape) - 1], "rc": [0]}
        elif short == "dot_general":
            attrs = _dot_dims(a["dot_dimension_numbers"])
        elif short == "all_gather":
            attrs = {"dim": int(str(a["all_gather_dim"]).split(":")[0]),
                     "groups": np.array(a["replica_groups"]).tolist()}
        elif short == "reduce_scatter":
            attrs = {"dim": int(str(a["scatter_dimension"]).split(":")[0]),
                     "groups": np.array(a["replica_groups"]).tolist(),
                     "reduce": _region_reduce_kind(o.regions[0])}
        elif short == "all_reduce":
            attrs = {"groups": np.array(a["replica_groups"]).tolist(),
                     "reduce": _region_reduce_kind(o.regions[0])}
        elif short == "all_to_all":
            attrs = {"split": int(str(a["split_dimension"]).split(":")[0]),
                     "concat": int(str(a["concat_dimension"]).split(":")[0]),
                     "groups": np.array(a["replica_groups"]).tolist()}
        elif short == "collective_permute":
            attrs = {"pairs": np.array(a["source_target_pairs"]).tolist()}
        elif short == "compare":
            m = re.search(r"comparison_direction\s*<?\s*(\w+)", str(a["comparison_direction"]))
            attrs = {"direction": m.group(1) if m else str(a["comparison_direction"])}
        elif short == "reduce":
            attrs = {"dims": _ints(a["dimensions"]),
                     "reduce": _region_reduce_kind(o.regions[0])}
        elif short in ("slice",):
            attrs = {"start": _ints(a["start_indices"]), "limit": _ints(a["limit_indices"])}
        elif short == "dynamic_slice":
            attrs = {"sizes": _ints(a["slice_sizes"])}
        elif short == "broadcast_in_dim":
            attrs = {"dims": _ints(a["broadcast_dimensions"])}
        elif short == "transpose":
            attrs = {"perm": _ints(a["permutation"])}
        elif short == "concatenate":
            attrs = {"dim": int(str(a["dimension"]).split(":")[0])}
        if short == "broadcast_in_dim" and ins[0].numel == prod(
                _tensor_type(o.results[0].type)[0]) and attrs["dims"] == sorted(attrs["dims"]):
            short, attrs = "reshape", {}  # adds unit dimensions only: a view
        if short == "transpose":
            shape = ins[0].shape
            kept = [p for p in attrs["perm"] if shape[p] != 1]
            if kept == sorted(kept):
                short, attrs = "reshape", {}  # moves unit dimensions only
        n = self._new_node(o, short, ins, attrs)
        if short == "constant":
            v = n.outs[0]
            v.const = _const_value(a["value"], v.shape)
            v.constlike = True
        elif short in ("iota", "partition_id", "replica_id"):
            n.outs[0].constlike = True
        elif short in ELEMENTWISE or short in LAYOUT:
            if ins and all(v.constlike for v in ins):
                for v in n.outs:
                    v.constlike = True
                if len(n.outs) == 1:
                    n.outs[0].const = _fold(short, ins, attrs, n.outs[0].shape)
        if short in ("dynamic_slice", "dynamic_update_slice"):
            first = 1 if short == "dynamic_slice" else 2
            idx = [v.const for v in ins[first:]]
            if all(c is not None for c in idx):
                n.attrs["starts"] = [int(np.asarray(c).reshape(())) for c in idx]
                # Clamp as StableHLO does.
                src = ins[0].shape
                size = n.attrs["sizes"] if short == "dynamic_slice" else ins[1].shape
                n.attrs["starts"] = [max(0, min(s, d - z)) for s, d, z in
                                     zip(n.attrs["starts"], src, size)]
                # A scan body reading stacked parameters: the layer it runs.
                if short == "dynamic_slice" and ins[0].node.op == "arg" and \
                        self.layer_stack:
                    self._note_layer(n.attrs["starts"][0])
        for r, v in zip(o.results, n.outs):
            env.set(r, v)

    def _note_layer(self, index):
        top = self.layer_stack[-1]
        if top is not None and top[1] is None:
            top[1] = index

    def _while(self, o, env, where):
        inits = [self._get(env, v, o) for v in o.operands]
        cond = o.regions[0].blocks[0]
        body = o.regions[1].blocks[0]
        carry = inits
        for it in range(MAX_UNROLL + 1):
            cenv = _Env()
            for a, v in zip(cond.arguments, carry):
                cenv.set(a, v)
            mark = len(self.g.nodes)
            (c,) = self._walk_block(cond, cenv)
            # The condition's ops are scalar bookkeeping; drop them.
            for n in self.g.nodes[mark:]:
                n.dead = True
            if c.const is None:
                raise ImportError_(
                    f"{where}: stablehlo.while has a dynamic trip count: its condition "
                    "does not fold to a constant (only loops with a static trip count, "
                    "as lax.scan and fori_loop over constants produce, are unrolled)")
            if not bool(np.asarray(c.const).reshape(())):
                break
            if it == MAX_UNROLL:
                raise ImportError_(f"{where}: stablehlo.while runs more than "
                                   f"{MAX_UNROLL} iterations; not unrolled")
            benv = _Env()
            for a, v in zip(body.arguments, carry):
                benv.set(a, v)
            self.layer_stack.append([it, None])
            carry = self._walk_block(body, benv)
            self.layer_stack.pop()
        for r, v in zip(o.results, carry):
            env.set(r, v)
