#!/usr/bin/env python3
"""Writes a plan's prediction as the trace tandem-run --trace writes
(runtime/lib/RunTrace.cpp: process 0 `measured @<f> rank 0`, process 1
`predicted @<f>` with args.alone_us; names `<op> <label>`, args.step), so
that the prevention loop (measure, diagnose, re-plan) can be tested without
a GPU.

    plan-as-run.py PLAN OUT [--harmful]

--harmful: the first collective whose predicted interval a GEMM of the
compute stream covers (issue order) and that GEMM are made to run slower
together than one after the other: the GEMM takes twice the collective's
duration longer and the collective ends with it; every op that started
after the GEMM's start moves by the added time. Prints the pair as
`COLLECTIVE=<name> #<occurrence>` and `PARTNER=<name> #<occurrence>`.
Only python3's standard library is needed.
"""

import json
import sys


def trace_name(step):
    label = step.get("label", "")
    return step["op"] + (" " + label if label else "")


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: plan-as-run.py PLAN OUT [--harmful]")
    with open(argv[1]) as f:
        plan = json.load(f)
    steps = plan["steps"]
    timing = {}
    for i, s in enumerate(steps):
        p = s.get("predicted")
        if p:
            timing[i] = [p["start_us"], p["duration_us"]]

    occurrence, seen = {}, {}
    for i, s in enumerate(steps):
        n = trace_name(s)
        occurrence[i] = seen.get(n, 0)
        seen[n] = occurrence[i] + 1

    if "--harmful" in argv[3:]:
        pair = None
        for i, s in enumerate(steps):
            if s["kind"] != "collective" or i not in timing:
                continue
            cs, cd = timing[i]
            for j, g in enumerate(steps):
                if g["kind"] != "matmul" or j not in timing:
                    continue
                gs, gd = timing[j]
                if g.get("stream", 0) != s.get("stream", 0) and \
                        gs <= cs and gs + gd >= cs + cd:
                    pair = (i, j)
                    break
            if pair:
                break
        if not pair:
            sys.exit("plan-as-run.py: no collective under a GEMM in " + argv[1])
        c, g = pair
        cs, cd = timing[c]
        gs, gd = timing[g]
        added = 2 * cd
        for k, (start, dur) in timing.items():
            if k not in pair and start > gs:
                timing[k][0] = start + added
        timing[g][1] = gd + added
        timing[c][1] = gs + gd + added - cs
        for tag, k in (("COLLECTIVE", c), ("PARTNER", g)):
            print("%s=%s #%d" % (tag, trace_name(steps[k]), occurrence[k]))

    events = []
    for pid, what in ((0, "measured @%s rank 0" % plan["function"]),
                      (1, "predicted @%s" % plan["function"])):
        events.append({"ph": "M", "name": "process_name", "pid": pid,
                       "args": {"name": what}})
        for k, st in enumerate(plan["streams"]):
            events.append({"ph": "M", "name": "thread_name", "pid": pid,
                           "tid": k, "args": {"name": st["name"]}})
        for i, s in enumerate(steps):
            p = s.get("predicted")
            if not p:
                continue
            args = {"step": i}
            if pid == 1:
                start, dur = p["start_us"], p["duration_us"]
                args["alone_us"] = p["alone_us"]
            else:
                start, dur = timing[i]
            events.append({"ph": "X", "name": trace_name(s), "cat": s["kind"],
                           "pid": pid, "tid": s.get("stream", 0), "ts": start,
                           "dur": dur, "args": args})
    with open(argv[2], "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


if __name__ == "__main__":
    main(sys.argv)
