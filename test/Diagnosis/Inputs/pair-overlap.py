#!/usr/bin/env python3
"""How long the ops of each harmful overlap of a diagnosis run together in
the prediction of a plan.

    pair-overlap.py DIAGNOSIS DIAGNOSED_PLAN PLAN...

The pair's ops are found in DIAGNOSED_PLAN by their op_details' `step` and
in every PLAN by that step's source location (`loc`) and op: the rule
--tandem-overlap=diagnosis-plan= resolves them by. Prints, per anomaly and
plan, `<plan>: <a> | <b>: overlap <us> us`. Only python3's standard library
is needed.
"""

import json
import os
import sys


def main(argv):
    if len(argv) < 4:
        sys.exit("usage: pair-overlap.py DIAGNOSIS DIAGNOSED_PLAN PLAN...")
    with open(argv[1]) as f:
        diagnosis = json.load(f)
    with open(argv[2]) as f:
        diagnosed = json.load(f)
    plans = []
    for path in argv[3:]:
        with open(path) as f:
            plans.append((os.path.basename(path), json.load(f)))
    for a in diagnosis["anomalies"]:
        if a["kind"] != "harmful_overlap":
            continue
        keys = [(diagnosed["steps"][d["step"]]["op"],
                 diagnosed["steps"][d["step"]]["loc"]) for d in a["op_details"]]
        for name, plan in plans:
            spans = []
            for op, loc in keys:
                found = [s["predicted"] for s in plan["steps"]
                         if s["op"] == op and s.get("loc") == loc]
                if len(found) != 1:
                    sys.exit("%s: %d steps '%s' at %s" % (name, len(found), op, loc))
                spans.append((found[0]["start_us"],
                              found[0]["start_us"] + found[0]["duration_us"]))
            (s0, e0), (s1, e1) = spans
            print("%s: %s | %s: overlap %.1f us" % (
                name, a["ops"][0], a["ops"][1], max(0.0, min(e0, e1) - max(s0, s1))))


if __name__ == "__main__":
    main(sys.argv)
