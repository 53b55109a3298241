"""Analyses on the flat graph: static stacks, dead code, forward/backward,
attention and norm regions, fusion of element-wise chains, matmul roles."""

from .graph import ELEMENTWISE, LAYOUT, ImportError_, prod

FUSIBLE = (ELEMENTWISE | LAYOUT) - {"dynamic_update_slice"}


def users_of(node):
    seen, out = set(), []
    for v in node.outs:
        for u in v.users:
            if not u.dead and u.id not in seen:
                seen.add(u.id)
                out.append(u)
    return out


def live_users(v):
    return [u for u in v.users if not u.dead]


# ----------------------------------------------------------------------------
# Static stacks: after unrolling, lax.scan's dynamic_update_slice and
# dynamic_slice have constant indices. A slice of a stack built by updates is
# forwarded to the update it reads; a slice of a function argument becomes an
# argument of its own; a result built by updates of a constant buffer becomes
# one result per update.
# ----------------------------------------------------------------------------

def _region(node):
    if node.op == "dynamic_slice":
        return node.attrs["starts"], node.attrs["sizes"]
    return node.attrs["starts"], list(node.ins[1].shape)


def _overlap(a, b):
    (sa, za), (sb, zb) = a, b
    return all(x < y + w and y < x + z for x, z, y, w in zip(sa, za, sb, zb))


def replace_uses(g, old, new):
    for u in old.users:
        u.ins = [new if x is old else x for x in u.ins]
        new.users.append(u)
    old.users = []
    g.results = [(new if v is old else v, n) for v, n in g.results]


def destack(g):
    forwarded = 0
    for n in g.nodes:
        if n.dead or n.op != "dynamic_slice" or "starts" not in n.attrs:
            continue
        want = _region(n)
        src = n.ins[0]
        while src.node.op == "dynamic_update_slice" and "starts" in src.node.attrs:
            have = _region(src.node)
            if have == want:
                upd = src.node.ins[1]
                if upd.shape == n.outs[0].shape:
                    replace_uses(g, n.outs[0], upd)
                    n.dead = True
                    forwarded += 1
                break
            if _overlap(have, want):
                break
            src = src.node.ins[0]
        else:
            if src.node.op == "arg":
                n.attrs["arg_slice"] = src
    # Results built from constant buffers by static updates.
    new_results = []
    for v, name in g.results:
        parts = []
        cur = v
        covered = []
        while cur.node.op == "dynamic_update_slice" and "starts" in cur.node.attrs \
                and len(live_users(cur)) <= 1:
            reg = _region(cur.node)
            if not any(_overlap(reg, c) for c in covered):
                parts.append((reg, cur.node.ins[1]))
            covered.append(reg)
            cur = cur.node.ins[0]
        if parts and cur.constlike and sum(prod(r[1]) for r, _ in parts) == v.numel:
            parts.sort(key=lambda p: p[0][0])
            for reg, upd in parts:
                new_results.append((upd, f"{name}[{reg[0][0]}]" if reg[0] else name))
        else:
            new_results.append((v, name))
    g.results = new_results
    return forwarded


def dce(g):
    """Marks dead every op no result needs; collectives and custom calls stay."""
    live = set()
    stack = [v.node for v, _ in g.results]
    for n in g.nodes:
        if not n.dead and n.op in ("all_gather", "reduce_scatter", "all_reduce",
                                   "all_to_all", "collective_permute", "custom_call"):
            stack.append(n)
    while stack:
        n = stack.pop()
        if n.id in live or n.dead:
            continue
        live.add(n.id)
        for v in n.ins:
            stack.append(v.node)
    dropped = 0
    for n in g.nodes:
        if not n.dead and n.id not in live:
            n.dead = True
            if n.op not in ("constant", "arg"):
                dropped += 1
    for n in g.nodes:
        for v in n.outs:
            v.users = [u for u in v.users if not u.dead]
    return dropped


# ----------------------------------------------------------------------------
# Forward and backward.
# ----------------------------------------------------------------------------

def ancestors(nodes):
    seen = set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        stack.extend(v.node for v in n.ins)
    return seen


def descendants(nodes, limit=None):
    seen = set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n.id in seen or n.dead:
            continue
        if limit is not None and n.id > limit:
            continue
        seen.add(n.id)
        for v in n.outs:
            stack.extend(live_users(v))
    return seen


def forward_set(g):
    """Ops the loss depends on; the loss is the step's scalar result(s)."""
    losses = [v for v, _ in g.results if v.shape == ()]
    if losses:
        return ancestors([v.node for v in losses]), "the scalar result (the loss)"
    marked = [n for n in g.nodes if not n.dead and n.loc]
    if marked and any("transpose(" in n.loc for n in marked):
        fwd = {n.id for n in g.nodes if not n.dead and "transpose(" not in n.loc}
        return fwd, "JAX's name stack (backward ops are under transpose(...))"
    # No loss and no backward marks: a forward-only program.
    return ({n.id for n in g.nodes if not n.dead},
            "the results (no scalar loss and no backward found: a forward-only program)")


# ----------------------------------------------------------------------------
# Regions: softmax attention and norms, each with its backward.
# ----------------------------------------------------------------------------

class Region:
    def __init__(self, kind, members, inputs, outputs, info):
        self.kind = kind          # attention, attention_grad, norm, norm_grad
        self.members = members    # node ids
        self.inputs = inputs      # Vals, in the tandem op's operand order
        self.outputs = outputs    # Vals the op yields
        self.info = info


def _is_batched_dot(n):
    return n.op == "dot_general" and n.attrs["lb"]


_VIEWISH = {"reshape", "transpose", "slice", "convert", "broadcast_in_dim",
            "multiply", "bitcast_convert"}


def _walk_to_2d(v, limit=12):
    """Back through layout ops (and scaling by constants) to a 2-D value."""
    for _ in range(limit):
        if len(v.shape) == 2 and v.node.op not in ("reshape", "broadcast_in_dim",
                                                   "transpose", "convert", "slice"):
            return v
        n = v.node
        if n.op not in _VIEWISH:
            return v if len(v.shape) == 2 else None
        nonconst = [x for x in n.ins if not x.constlike]
        if len(nonconst) != 1:
            return None
        v = nonconst[0]
    return None


def _walk_down_to_2d(v, want_rows, limit=8):
    for _ in range(limit):
        if len(v.shape) == 2 and v.shape[0] == want_rows:
            return v
        us = live_users(v)
        if len(us) != 1 or us[0].op not in ("reshape", "transpose", "convert"):
            return None
        v = us[0].outs[0]
    return None


def _closure(g, core, allowed_inputs=()):
    """Adds single-purpose feeders (constants, broadcasts, masks) to `core`."""
    members = set(core)
    changed = True
    while changed:
        changed = False
        for nid in list(members):
            for v in g.nodes[nid].ins:
                p = v.node
                if p.id in members or p.op == "arg" or p.dead:
                    continue
                if p.op not in FUSIBLE:
                    continue
                if v in allowed_inputs:
                    continue
                if all(u.id in members for w in p.outs for u in live_users(w)):
                    members.add(p.id)
                    changed = True
    return members


def _between(g, start_vals, end_vals):
    """Ops downstream of start_vals and upstream of end_vals."""
    down = descendants([u for v in start_vals for u in live_users(v)],
                       limit=max(v.node.id for v in end_vals))
    up = ancestors([v.node for v in end_vals])
    return down & up


def _inputs_outputs(g, members):
    ins, outs = [], []
    for nid in sorted(members):
        n = g.nodes[nid]
        for v in n.ins:
            if v.node.id not in members and v not in ins:
                ins.append(v)
        for v in n.outs:
            if any(u.id not in members for u in live_users(v)):
                outs.append(v)
    return ins, outs


def _result_vals(g):
    return {id(v) for v, _ in g.results}


def _backward_region(g, fwd_members, fwd_inputs, fwd_out, want_types):
    """The backward of a forward region: the smallest single-exit region
    downstream of the forward region's internal values whose exits have the
    wanted types. Returns (members, exits, outer inputs) or None."""
    internals = [v for nid in fwd_members for v in g.nodes[nid].outs
                 if v is not fwd_out]
    starts = [u for v in internals for u in live_users(v) if u.id not in fwd_members]
    if not starts:
        return None
    down = descendants(starts) - fwd_members
    results = _result_vals(g)
    cands = {k: [] for k in want_types}
    for nid in sorted(down):
        for v in g.nodes[nid].outs:
            for key, t in want_types.items():
                if (v.shape, v.dtype) == t and len(cands[key]) < 24:
                    cands[key].append(v)
    if not all(cands.values()):
        return None
    keys = list(want_types)
    anc_cache = {}

    def anc(v):
        if id(v) not in anc_cache:
            anc_cache[id(v)] = ancestors([v.node]) & down
        return anc_cache[id(v)]

    def combos(i):
        if i == len(keys):
            yield {}
            return
        for c in cands[keys[i]]:
            for rest in combos(i + 1):
                yield {keys[i]: c, **rest}

    for exits in combos(0):
        if len({id(v) for v in exits.values()}) != len(exits):
            continue
        members = set()
        for v in exits.values():
            members |= anc(v)
        members = _closure(g, members, allowed_inputs=tuple(fwd_inputs) + (fwd_out,)) \
            - fwd_members
        exit_ids = {id(v) for v in exits.values()}
        ok = all(v.node.id in members for v in exits.values())
        for nid in members:
            if not ok:
                break
            for v in g.nodes[nid].outs:
                leaves = any(u.id not in members for u in live_users(v)) or \
                    id(v) in results
                if leaves and id(v) not in exit_ids:
                    ok = False
                    break
        if not ok:
            continue
        # Internals of the forward region may only be read by the backward one.
        if any(u.id not in members and u.id not in fwd_members
               for v in internals for u in live_users(v)):
            continue
        ins, _ = _inputs_outputs(g, members)
        outer = [v for v in ins if v.node.id not in fwd_members and not v.constlike
                 and v not in fwd_inputs and v is not fwd_out]
        return members, exits, outer
    return None


def find_attention(g, fwd, taken):
    regions = []
    for d1 in g.nodes:
        if d1.dead or d1.id in taken or not _is_batched_dot(d1) or d1.id not in fwd:
            continue
        # softmax: an exponential downstream, then a second batched dot.
        down = descendants(live_users(d1.outs[0]), limit=d1.id + 60)
        exps = [i for i in down if g.nodes[i].op == "exponential"]
        d2s = [i for i in sorted(down) if i != d1.id and _is_batched_dot(g.nodes[i])]
        if not exps or not d2s:
            continue
        d2 = g.nodes[d2s[0]]
        if d2.id in taken:
            continue
        srcs = [_walk_to_2d(v) for v in d1.ins]
        other = [v for v in d2.ins if v.node.id not in down]
        if len(other) != 1:
            continue
        srcs.append(_walk_to_2d(other[0]))
        if any(s is None for s in srcs) or not all(s is srcs[0] for s in srcs):
            continue
        x = srcs[0]
        s_len, feat = x.shape
        y = _walk_down_to_2d(d2.outs[0], s_len)
        if y is None:
            continue
        dh = prod(d1.ins[0].shape[i] for i in d1.attrs["lc"])
        n0, n1 = d1.ins[0].numel, d1.ins[1].numel
        nh, nkv = max(n0, n1) // (s_len * dh), min(n0, n1) // (s_len * dh)
        if (nh + 2 * nkv) * dh != feat or y.shape != (s_len, nh * dh) or nh % nkv:
            g.remark(d1.where(), "attention pattern not recognised (q/k/v are not "
                     "one packed [tokens, (heads + 2 kv_heads) x head_dim] tensor); "
                     "imported as matmuls and element-wise ops")
            continue
        members = _closure(g, _between(g, [x], [y]), allowed_inputs=(x,))
        if any(m in taken for m in members) or d1.id not in members:
            continue
        causal = any(g.nodes[m].op == "select" and g.nodes[m].ins[0].constlike
                     for m in members)
        info = {"heads": nh, "kv_heads": nkv, "head_dim": dh, "causal": causal}
        _attention_regions(g, d1, members, x, y, info, taken, regions)
    return regions


def _output_grads(outer, y):
    """The outer inputs of a backward region that are the gradient of the
    forward's result y: values of y's type, or the conversion of one to a
    wider type (PyTorch's decompositions compute norms' gradients in f32)."""
    want = (y.shape, y.dtype)
    out = [v for v in outer if (v.shape, v.dtype) == want]
    for v in outer:
        if v.node.op == "convert" and v.shape == y.shape:
            src = v.node.ins[0]
            if (src.shape, src.dtype) == want and src not in out:
                out.append(src)
    return out


def _attention_regions(g, anchor, members, x, y, info, taken, regions):
    """The attention region from packed x to y, its backward (the single-exit
    region yielding x's gradient from y's) and the leak check: shared by the
    StableHLO pattern and the FX SDPA ops."""
    fwd_r = Region("attention", members, [x], [y], info)
    bwd = _backward_region(g, members, [x], y, {"dx": (x.shape, x.dtype)})
    regs = [fwd_r]
    bm = set()
    if bwd is not None:
        bm, exits, outer = bwd
        dys = _output_grads(outer, y)
        if len(dys) == 1 and not (bm & taken):
            regs.append(Region("attention_grad", bm, [dys[0], x, y],
                               [exits["dx"]], info))
        else:
            g.remark(anchor.where(), "backward of the attention not recognised; "
                     "imported as matmuls and element-wise ops")
            bm = set()
    # The forward region may only leak values its backward reads.
    return _take_regions(g, members, y, bm, regs, taken, regions)


def _walk_down_views(v, want_rows, limit=8):
    """Forward from an SDPA output through its views to the 2-D
    [tokens, heads x head_dim] value; the saved output's other reader (the
    SDPA backward) may read it too."""
    for _ in range(limit):
        if len(v.shape) == 2 and v.shape[0] == want_rows:
            return v
        us = [u for u in live_users(v) if u.op in ("reshape", "transpose", "convert")]
        if len(us) != 1 or any(u.op not in ("reshape", "transpose", "convert",
                                            "sdpa_grad") for u in live_users(v)):
            return None
        v = us[0].outs[0]
    return None


def find_sdpa(g, fwd, taken):
    """Attention regions anchored on explicit SDPA ops (the FX front end's
    `sdpa` / `sdpa_grad` nodes): q, k and v must be views of one packed 2-D
    tensor, as the StableHLO pattern requires."""
    regions = []
    for n in g.nodes:
        if n.dead or n.op != "sdpa" or n.id in taken or n.id not in fwd:
            continue
        q, k, v = n.ins
        srcs = [_walk_to_2d(t) for t in (q, k, v)]
        why = None
        if len(q.shape) != 4 or len(k.shape) != 4 or q.shape[0] != 1:
            why = f"q is {list(q.shape)}, not [1, heads, tokens, head_dim]"
        elif any(s is None for s in srcs) or not all(s is srcs[0] for s in srcs):
            why = ("q, k and v are not views of one packed [tokens, (heads + 2 "
                   "kv_heads) x head_dim] tensor")
        else:
            x = srcs[0]
            s_len, feat = x.shape
            nh, nkv, dh = q.shape[1], k.shape[1], q.shape[3]
            y = _walk_down_views(n.outs[0], s_len)
            if y is None or (nh + 2 * nkv) * dh != feat or \
                    y.shape != (s_len, nh * dh) or nh % nkv or q.shape[2] != s_len:
                why = "its output is not viewed back as [tokens, heads x head_dim]"
        if why is None:
            members = _closure(g, _between(g, [x], [y]), allowed_inputs=(x,))
            if any(m in taken for m in members) or n.id not in members:
                why = "its ops overlap another region"
        if why is not None:
            g.remark(n.where(), f"attention not recognised ({why}); imported as an "
                     "opaque kernel")
            continue
        info = {"heads": nh, "kv_heads": nkv, "head_dim": dh,
                "causal": bool(n.attrs["causal"])}
        _attention_regions(g, n, members, x, y, info, taken, regions)
    return regions


def find_norms(g, fwd, taken):
    regions = []
    for r in g.nodes:
        if r.dead or r.op != "rsqrt" or r.id in taken or r.id not in fwd:
            continue
        # Back to the reduction and its input.
        v, reduce_node = r.ins[0], None
        for _ in range(8):
            n = v.node
            if n.op == "reduce":
                reduce_node = n
                break
            nonconst = [x for x in n.ins if not x.constlike]
            if n.op not in ("add", "divide", "multiply", "broadcast_in_dim",
                            "reshape", "convert") or len(nonconst) != 1:
                break
            v = nonconst[0]
        if reduce_node is None:
            continue
        v = reduce_node.ins[0]
        layer_norm = False
        for _ in range(6):
            n = v.node
            if n.op == "convert":
                v = n.ins[0]
            elif n.op == "multiply" and n.ins[0] is n.ins[1]:
                v = n.ins[0]
            elif n.op == "subtract":
                layer_norm = True
                v = n.ins[0]
            else:
                break
        x = v
        if len(x.shape) != 2:
            continue
        hidden = x.shape[1]
        # Forward to the weighted output (plus the bias for LayerNorm); one
        # computed in a wider type (PyTorch's decompositions) ends with the
        # conversion back to x's type.
        y, w, b = None, None, None
        down = sorted(descendants(live_users(r.outs[0]), limit=r.id + 25))
        for nid in down:
            n = g.nodes[nid]
            if n.op != "multiply" or n.outs[0].shape != x.shape:
                continue
            w = None
            for side in n.ins:
                p = side.node
                while p.op in ("broadcast_in_dim", "convert", "reshape") and \
                        len(p.ins[0].shape) <= 2:
                    side = p.ins[0]
                    p = side.node
                    if len(side.shape) == 1 and side.shape[0] == hidden:
                        w = side
                        break
                if w is not None:
                    break
            if w is None:
                continue
            while w.node.op == "convert" and len(w.node.ins[0].shape) == 1:
                w = w.node.ins[0]
            y, b = n.outs[0], None
            us = live_users(y)
            if layer_norm and len(us) == 1 and us[0].op == "add":
                for side in us[0].ins:
                    p = side.node
                    if p.op == "broadcast_in_dim":
                        bb = p.ins[0]
                        while bb.node.op in ("broadcast_in_dim", "reshape", "convert"):
                            bb = bb.node.ins[0]
                        if len(bb.shape) == 1 and bb.shape[0] == hidden:
                            b = bb
                            y = us[0].outs[0]
            if y.dtype != x.dtype:
                us = live_users(y)
                if len(us) == 1 and us[0].op == "convert" and \
                        us[0].outs[0].dtype == x.dtype:
                    y = us[0].outs[0]
                else:
                    y = None
                    continue
            break
        if y is None:
            continue
        members = _closure(g, _between(g, [x], [y]), allowed_inputs=(x, w))
        if r.id not in members or any(m in taken for m in members):
            continue
        kind = "layer" if layer_norm else "rms"
        info = {"kind": kind, "bias": b}
        fwd_in = [x, w] + ([b] if b is not None else [])
        want = {"dx": (x.shape, x.dtype), "dw": (w.shape, w.dtype)}
        bwd = _backward_region(g, members, fwd_in, y, want)
        if bwd is None:
            # The input's gradient is not computed (the first layer of a
            # PyTorch step): the weight gradient alone.
            bwd = _backward_region(g, members, fwd_in, y, {"dw": want["dw"]})
        regs = [Region("norm", members, [x, w], [y], info)]
        bm = set()
        if bwd is not None:
            bm, exits, outer = bwd
            dys = _output_grads(outer, y)
            if len(dys) == 1 and not (bm & taken):
                regs.append(Region("norm_grad", bm, [dys[0], x, w],
                                   [exits.get("dx"), exits["dw"]], info))
            else:
                bm = set()
        _take_regions(g, members, y, bm, regs, taken, regions)
    return regions


# ----------------------------------------------------------------------------
# Matmuls and their roles.
# ----------------------------------------------------------------------------

def dot_shape(n):
    """(B, M, N, K) of a dot_general."""
    a, b = n.ins[0].shape, n.ins[1].shape
    lb, rb, lc, rc = n.attrs["lb"], n.attrs["rb"], n.attrs["lc"], n.attrs["rc"]
    bsz = prod(a[i] for i in lb)
    k = prod(a[i] for i in lc)
    m = prod(a[i] for i in range(len(a)) if i not in lb and i not in lc)
    nn = prod(b[i] for i in range(len(b)) if i not in rb and i not in rc)
    return bsz, m, nn, k


def is_gemm(n):
    """A dot_general that is a GEMM (not a matrix-vector or outer product,
    which XLA emits as fused element-wise/reduction loops)."""
    if n.op != "dot_general":
        return False
    _, m, nn, k = dot_shape(n)
    return m > 1 and nn > 1 and k > 1


_GRAD_PATH = {"add", "convert", "reshape", "transpose", "all_reduce", "reduce_scatter",
              "all_gather", "bitcast_convert", "dynamic_update_slice",
              "multiply", "wait"}


def role_of(g, n, fwd, result_ids):
    if n.id in fwd:
        return "fprop"
    # wgrad: the result reaches only gradient results through accumulation,
    # conversion or collectives.
    stack, seen = [n.outs[0]], set()
    reached = False
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if id(v) in result_ids:
            reached = True
        for u in live_users(v):
            if u.op not in _GRAD_PATH:
                return "dgrad"
            if u.op == "multiply" and not any(x.constlike for x in u.ins):
                return "dgrad"
            stack.extend(u.outs)
    return "wgrad" if reached else "dgrad"


# ----------------------------------------------------------------------------
# Fusion of element-wise chains.
# ----------------------------------------------------------------------------

class Groups:
    def __init__(self):
        self.parent = {}

    def find(self, x):
        p = self.parent.setdefault(x, x)
        if p != x:
            p = self.find(p)
            self.parent[x] = p
        return p

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra
        return ra


def fuse(g, fusible_ids):
    """Groups fusible ops into fusions as XLA would: each op joins one of its
    producers' fusions when that cannot create a cycle."""
    groups = Groups()
    deps = {}  # node id -> set of group roots it depends on (inclusive)
    for n in g.nodes:
        if n.dead:
            continue
        mine = set()
        for v in n.ins:
            mine |= deps.get(v.node.id, set())
        if n.id in fusible_ids:
            groups.find(n.id)
            joined = None
            for v in n.ins:
                p = v.node
                if p.id not in fusible_ids or v.constlike:
                    continue
                gp = groups.find(p.id)
                # A path from gp to n through an op outside gp would be a cycle.
                ok = True
                for w in n.ins:
                    q = w.node
                    if q.id in fusible_ids and groups.find(q.id) == gp:
                        continue
                    if any(groups.find(x) == gp for x in deps.get(q.id, ())):
                        ok = False
                        break
                if ok:
                    joined = groups.union(gp, n.id)
                    break
            root = groups.find(n.id) if joined is None else joined
            mine = {groups.find(x) for x in mine}
            mine.add(root)
        deps[n.id] = mine
    out = {}
    for nid in fusible_ids:
        out.setdefault(groups.find(nid), []).append(nid)
    return [sorted(v) for v in out.values()]


def _take_regions(g, members, y, bm, regs, taken, regions):
    """Keeps a recognised forward region (and its backward) unless the
    forward leaks a value other than its result `y` to an op outside both:
    then the ops stay ordinary matmuls and element-wise ops."""
    leak = [v for nid in members for v in g.nodes[nid].outs if v is not y
            and any(u.id not in members and u.id not in bm for u in live_users(v))]
    if leak:
        return False
    for reg in regs:
        taken |= reg.members
        regions.append(reg)
    return True
