#!/usr/bin/env python3
"""Injects one anomaly into a simulator trace (--tandem-simulate=trace=).

The result is a trace in the same layout, as if the step had been measured
with the anomaly: the ops after the injected change move as the step's
dependences make them move. The dependences are read off the trace: an op
follows its predecessor on its stream, and waits for every op of another
stream that ended exactly when it started (the simulator starts an op the
moment its last dependence ends). Durations stay as simulated.

    inject.py IN OUT KIND [--us D] [--factor F] [--op NAME] [--strip-waited]

KIND: none, delay (a collective starts D us later), wait (a collective
waits for the compute op running at its start), extra-kernel (a D us kernel
on a collective's stream before it), stretch (op NAME runs D us longer),
stretch-stream (the collective before
a collective on its stream runs D us longer), stretch-producer (the compute
op a collective waits for runs D us longer), sm-residency (a collective
waits for the SMs of the GEMM running at its launch), harmful (an
overlapped compute op and collective both run F x their alone time),
slow-beside (the first op of role --beside, compute or collective, running
beside op NAME on another stream runs D us longer, its time alone
unchanged: contention from NAME), host
(the compute op planned under a collective is enqueued by the host D us
late; every op gets args.host_us), jitter (the compute op covering the end
of a collective that its stream then waits for, or op NAME, runs D us
shorter, 50 by default, its time alone unchanged: the run-to-run noise of a
clean run, which exposes the collective).

It prints the ops it chose, one 'ROLE=NAME' per line, for FileCheck.
Only python3's json module is needed.
"""

import argparse
import json
import sys

EPS = 1e-6


def load(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    pids = [e["pid"] for e in events
            if e.get("ph") == "M" and e.get("name") == "process_name"
            and e["args"]["name"].startswith("simulated @")]
    if len(pids) != 1:
        sys.exit("inject.py: %s: expected one simulated function" % path)
    ops = [e for e in events if e.get("ph") == "X" and e["pid"] == pids[0]]
    rest = [e for e in events if not (e.get("ph") == "X" and e["pid"] == pids[0])]
    return doc, rest, ops


def end(op):
    return op["ts"] + op["dur"]


def near(a, b):
    return abs(a - b) <= EPS * max(1.0, abs(a), abs(b))


def wait_targets(ops):
    """Per wait, the collective it waits for: the one that ended when the
    wait passed (it blocked on it), else the first issued of those that had
    ended."""
    target, pending = {}, []
    for i, op in enumerate(ops):
        if op["cat"] == "collective":
            pending.append(i)
        elif op["cat"] == "wait":
            done = [k for k, c in enumerate(pending)
                    if end(ops[c]) <= op["ts"] + EPS * max(1.0, op["ts"])]
            blocked = [k for k in done if near(end(ops[pending[k]]), op["ts"])]
            if done:
                k = blocked[0] if blocked else done[0]
                target[i] = pending[k]
                del pending[k]
    return target


def dependences(ops):
    """Per op: (its dependences, its gap after the latest of them)."""
    deps, gaps = [], []
    last_on_stream = {}
    waits = wait_targets(ops)
    for i, op in enumerate(ops):
        d = [waits[i]] if i in waits else []
        p = last_on_stream.get(op["tid"])
        if p is not None and p not in d:
            d.append(p)
        # A wait waits for its collective only; other ops for every op of
        # another stream that ended when they started.
        for j in range(i) if op["cat"] != "wait" else []:
            o = ops[j]
            if o["tid"] != op["tid"] and o["dur"] > 0 and near(end(o), op["ts"]) \
                    and j not in d:
                d.append(j)
        ready = max([end(ops[j]) for j in d], default=0.0)
        deps.append(d)
        gaps.append(max(0.0, op["ts"] - ready))
        last_on_stream[op["tid"]] = i
    return deps, gaps


def replay(ops, deps, gaps, delay=None, floor=None):
    """New start times after durations or delays changed."""
    delay = delay or {}
    floor = floor or {}
    for i, op in enumerate(ops):
        ready = max([end(ops[j]) for j in deps[i]], default=0.0)
        op["ts"] = max(ready + gaps[i], floor.get(i, 0.0)) + delay.get(i, 0.0)


def collectives(ops):
    return [i for i, o in enumerate(ops) if o["cat"] == "collective"]


def compute_overlapping(ops, i):
    """Compute ops of other streams overlapping op i, with the overlap."""
    c = ops[i]
    out = []
    for j, o in enumerate(ops):
        if o["tid"] == c["tid"] or o["cat"] in ("collective", "wait") or o["dur"] <= 0:
            continue
        ov = min(end(o), end(c)) - max(o["ts"], c["ts"])
        if ov > 0:
            out.append((j, ov))
    return out


def covered(ops, start, stop):
    """How much of [start, stop) compute ops cover."""
    ivs = sorted((o["ts"], end(o)) for o in ops
                 if o["cat"] not in ("collective", "wait") and o["dur"] > 0)
    total, cur_s, cur_e = 0.0, None, None
    merged = []
    for s, e in ivs:
        if cur_e is not None and s <= cur_e:
            cur_e = max(cur_e, e)
        else:
            if cur_e is not None:
                merged.append((cur_s, cur_e))
            cur_s, cur_e = s, e
    if cur_e is not None:
        merged.append((cur_s, cur_e))
    for s, e in merged:
        total += max(0.0, min(e, stop) - max(s, start))
    return total


def well_hidden(ops, i):
    """A collective that compute covers for most of its duration."""
    c = ops[i]
    return c["dur"] >= 20 and covered(ops, c["ts"], end(c)) >= 0.9 * c["dur"]


def pick(ops, test, what):
    for i in collectives(ops):
        r = test(i)
        if r is not None:
            return r
    sys.exit("inject.py: no collective fits '%s'" % what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("kind")
    ap.add_argument("--us", type=float, default=None)
    ap.add_argument("--factor", type=float, default=3.0)
    ap.add_argument("--strip-waited", action="store_true")
    ap.add_argument("--op", help="stretch, slow-beside: the op's name")
    ap.add_argument("--beside", default="compute",
                    help="slow-beside: the role of the op slowed (compute or collective)")
    a = ap.parse_args()

    doc, rest, ops = load(a.input)
    deps, gaps = dependences(ops)
    chosen = []
    delay, floor = {}, {}

    if a.kind == "none":
        pass
    elif a.kind in ("delay", "wait"):
        def test(i):
            if not well_hidden(ops, i):
                return None
            c = ops[i]
            if a.kind == "delay":
                return i, None
            for j, _ in compute_overlapping(ops, i):
                o = ops[j]
                if o["ts"] <= c["ts"] + EPS and end(o) - c["ts"] >= max(20.0, 0.3 * c["dur"]):
                    return i, j
            return None
        i, j = pick(ops, test, a.kind)
        chosen.append(("collective", i))
        if a.kind == "delay":
            # Half a duration later: nothing ends there in a simulated step
            # unless by chance, which the test would show.
            delay[i] = a.us if a.us is not None else 0.5 * ops[i]["dur"]
        else:
            chosen.append(("waited_for", j))
            deps[i].append(j)
            gaps[i] = 0.0
    elif a.kind == "extra-kernel":
        i = pick(ops, lambda i: i if well_hidden(ops, i) else None, a.kind)
        c = ops[i]
        dur = a.us if a.us is not None else 0.5 * c["dur"]
        k = {"args": {"alone_us": dur, "slowdown": 1}, "cat": "compute",
             "dur": dur,
             "name": "injected.kernel", "ph": "X", "pid": c["pid"],
             "tid": c["tid"], "ts": c["ts"]}
        ops.insert(i, k)
        # Indices at and after i move by one.
        shift = lambda x: x + 1 if x >= i else x
        deps = [[shift(x) for x in d] for d in deps]
        deps.insert(i, list(deps[i]))
        gaps.insert(i, gaps[i])
        deps[i + 1] = [i] + [x for x in deps[i + 1] if ops[x]["tid"] != c["tid"]]
        gaps[i + 1] = 0.0
        chosen += [("collective", i + 1), ("extra", i)]
    elif a.kind == "stretch-stream":
        d = a.us
        def test(i):
            c = ops[i]
            prev = [p for p in deps[i] if ops[p]["tid"] == c["tid"]]
            if not prev or ops[prev[0]]["cat"] != "collective" or not near(end(ops[prev[0]]), c["ts"]):
                return None
            p = prev[0]
            dd = d if d is not None else 0.5 * c["dur"]
            waiter = [w for w, t in wait_targets(ops).items() if t == p]
            # The stretch stays hidden under compute, but pushes the
            # collective after it out from under its compute.
            c = ops[i]
            if covered(ops, c["ts"] + dd, end(c) + dd) > c["dur"] - 0.5 * dd:
                return None
            if not well_hidden(ops, i) or not waiter or \
                    ops[waiter[0]]["ts"] < end(ops[p]) + dd or \
                    covered(ops, end(ops[p]), end(ops[p]) + dd) < 0.95 * dd:
                return None
            return i, p, dd
        i, p, dd = pick(ops, test, a.kind)
        ops[p]["dur"] += dd
        chosen += [("collective", i), ("longer", p)]
    elif a.kind == "slow-beside":
        named = [i for i, o in enumerate(ops) if o["name"] == a.op]
        if not named:
            sys.exit("inject.py: no op named '%s'" % a.op)
        x = ops[named[0]]
        role = lambda o: ("wait" if o["cat"] == "wait" else
                          "collective" if o["cat"] == "collective" else "compute")
        beside = [i for i, o in enumerate(ops)
                  if o["tid"] != x["tid"] and role(o) == a.beside
                  and o["ts"] < end(x) and end(o) > x["ts"]]
        if not beside:
            sys.exit("inject.py: no %s runs beside '%s'" % (a.beside, a.op))
        i = beside[0]
        # Slower by contention: its time alone stays.
        ops[i]["dur"] += a.us if a.us is not None else ops[i]["dur"]
        chosen.append(("partner", i))
    elif a.kind == "jitter":
        d = a.us if a.us is not None else 50.0
        waits = wait_targets(ops)
        def covers_end(i):
            """The compute op of another stream that ends about when
            collective i ends and after which its stream waits for i: D us
            shorter, it leaves more than D / 2 of i's end exposed."""
            c = ops[i]
            for j, _ in compute_overlapping(ops, i):
                o = ops[j]
                if not (o["ts"] < end(c) - d and
                        end(c) - d < end(o) < end(c) + 0.5 * d):
                    continue
                after = [k for k in range(j + 1, len(ops))
                         if ops[k]["tid"] == o["tid"]]
                if after and waits.get(after[0]) == i:
                    return i, j
            return None
        if a.op:
            named = [i for i, o in enumerate(ops) if o["name"] == a.op]
            if not named:
                sys.exit("inject.py: no op named '%s'" % a.op)
            j = named[0]
            i = next((i for i in collectives(ops)
                      if (covers_end(i) or (None, None))[1] == j), None)
            if i is None:
                sys.exit("inject.py: '%s' covers no collective's end" % a.op)
        else:
            i, j = pick(ops, lambda i: covers_end(i) if well_hidden(ops, i)
                        else None, a.kind)
        # Shorter by noise, not a different kernel: its time alone stays.
        ops[j]["dur"] -= d
        chosen += [("collective", i), ("jittered", j)]
    elif a.kind == "stretch":
        named = [i for i, o in enumerate(ops) if o["name"] == a.op]
        if not named:
            sys.exit("inject.py: no op named '%s'" % a.op)
        i = named[0]
        # Longer in itself (a bigger kernel), not by contention: its time
        # alone grows too.
        more = a.us if a.us is not None else ops[i]["dur"]
        ops[i]["dur"] += more
        if "alone_us" in ops[i]["args"]:
            ops[i]["args"]["alone_us"] += more
        chosen.append(("longer", i))
    elif a.kind == "stretch-producer":
        def test(i):
            c = ops[i]
            for p in deps[i]:
                if ops[p]["tid"] != c["tid"] and ops[p]["cat"] == "gemm":
                    return i, p
            return None
        i, p = pick(ops, test, a.kind)
        ops[p]["dur"] += a.us if a.us is not None else ops[p]["dur"]
        chosen += [("collective", i), ("producer", p)]
    elif a.kind == "sm-residency":
        # The GEMM planned under a collective, starting with it, is issued
        # before it (and sized for all SMs): the collective gets the SMs
        # only when the GEMM ends, then runs its planned time.
        def test(i):
            c = ops[i]
            for j, ov in compute_overlapping(ops, i):
                o = ops[j]
                if j > i and o["cat"] == "gemm" and near(o["ts"], c["ts"]) and \
                        ov >= 0.5 * c["dur"]:
                    return i, j
            return None
        i, j = pick(ops, test, a.kind)
        held = end(ops[j]) - ops[i]["ts"]
        ops[i]["dur"] += held
        ops[i]["args"]["waited_for_sms_us"] = ops[i]["args"].get("waited_for_sms_us", 0) + held
        # Issue order: the GEMM moves before the collective. Dependences
        # keep pointing at the same ops.
        order = list(range(len(ops)))
        order.remove(j)
        order.insert(i, j)
        where = {old: new for new, old in enumerate(order)}
        ops = [ops[k] for k in order]
        deps = [[where[x] for x in deps[k]] for k in order]
        gaps = [gaps[k] for k in order]
        chosen += [("collective", where[i]), ("holder", where[j])]
    elif a.kind == "harmful":
        def test(i):
            best = None
            for j, ov in compute_overlapping(ops, i):
                if ov >= 0.8 * min(ops[i]["dur"], ops[j]["dur"]) and \
                        len(compute_overlapping(ops, i)) == 1 and \
                        (best is None or ov > best[1]):
                    best = (j, ov)
            return (i, best[0]) if best else None
        i, j = pick(ops, test, a.kind)
        for x in (i, j):
            ops[x]["dur"] = a.factor * ops[x]["args"]["alone_us"]
        chosen += [("collective", i), ("partner", j)]
    elif a.kind == "host":
        d = a.us
        def test(i):
            c = ops[i]
            for j, ov in compute_overlapping(ops, i):
                o = ops[j]
                if j > i and o["ts"] >= c["ts"] - EPS and o["dur"] >= 20 and ov >= 20:
                    return i, j
            return None
        i, h = pick(ops, test, a.kind)
        late = d if d is not None else ops[i]["dur"]
        # The host enqueues one op per microsecond, always ahead of the GPU,
        # until op h: that one, and every op after it, it enqueues late.
        host = [min(o["ts"], float(k)) for k, o in enumerate(ops)]
        host[h] = ops[h]["ts"] + late
        for k in range(h + 1, len(ops)):
            host[k] = max(host[k], host[h] + (k - h))
        floor = {k: host[k] for k in range(h, len(ops))}
        chosen += [("collective", i), ("late", h)]
    else:
        sys.exit("inject.py: unknown kind '%s'" % a.kind)

    replay(ops, deps, gaps, delay, floor)
    if a.kind == "host":
        for k, o in enumerate(ops):
            o["args"]["host_us"] = host[k]
    if a.strip_waited:
        for o in ops:
            o["args"].pop("waited_for_sms_us", None)
    doc["traceEvents"] = rest + ops
    with open(a.output, "w") as f:
        json.dump(doc, f)
    for role, i in chosen:
        print("%s=%s" % (role.upper(), ops[i]["name"]))


if __name__ == "__main__":
    main()
