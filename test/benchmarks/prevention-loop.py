#!/usr/bin/env python3
"""Before and after of the prevention loop (prevention-loop.sh): what the
diagnosis of plan A's run found, what the re-plan (plan B) changed, the
predicted spans and, once run-b has run, the measured steps of A and B.

    python3 prevention-loop.py OUT [--json FILE]

Reads OUT/diagnosis.json, A.json, B.json, A.measured-model.json and the
*.result.json files tandem-run --json wrote (A.result.json from run-a,
{A,B}.round<k>.result.json from run-b). A harmful pair's ops are found in
each plan by plan A's step for them (op_details' `step`): same op, same
source location, as --tandem-overlap=diagnosis-plan= resolves them. Only
python3's standard library is needed.
"""

import argparse
import glob
import json
import os
import statistics


def load(path):
    with open(path) as f:
        return json.load(f)


def schedule(plan):
    """The schedule as the runtime sees it: per step its op, location,
    stream, SM target, CTAs and events, in issue order."""
    return [(s["op"], s.get("label", ""), s.get("loc", ""), s.get("stream", 0),
             s.get("sm_target", 0), s.get("comm_sms", 0),
             tuple(s.get("wait_events", [])), s.get("record_event", -1))
            for s in plan["steps"]]


def is_collective(step):
    return step.get("kind") == "collective"


def intervals(plan, ref):
    """Predicted intervals of the steps of `plan` that stand for step `ref`
    of plan A: same op at the same location, or for a collective any
    collective there (a ring step or chunk stands for the collective it
    decomposes, as --tandem-overlap's diagnosis= resolves it)."""
    return sorted((s["predicted"]["start_us"],
                   s["predicted"]["start_us"] + s["predicted"]["duration_us"])
                  for s in plan["steps"]
                  if s.get("loc") == ref.get("loc") and s.get("predicted")
                  and (s["op"] == ref["op"]
                       or (is_collective(ref) and is_collective(s))))


def union(spans):
    merged = []
    for b, e in spans:
        if merged and b <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([b, e])
    return merged


def pair_overlap(plan, a_plan, details):
    """How long the pair's ops run concurrently in the plan's prediction."""
    sides = [union(intervals(plan, a_plan["steps"][d["step"]])) for d in details]
    if not all(sides):
        return None
    return sum(max(0.0, min(e0, e1) - max(b0, b1))
               for b0, e0 in sides[0] for b1, e1 in sides[1])


def median_step(paths):
    steps = [load(p)["median_step_us"] for p in paths]
    return (statistics.median(steps), steps) if steps else (None, [])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--json")
    a = ap.parse_args()
    o = a.out
    diag = load(os.path.join(o, "diagnosis.json"))
    plan_a = load(os.path.join(o, "A.json"))
    plan_b = load(os.path.join(o, "B.json"))
    result = {"anomalies": {}, "harmful_pairs": []}
    for an in diag["anomalies"]:
        key = "%s/%s" % (an["kind"], an["cause"])
        result["anomalies"][key] = result["anomalies"].get(key, 0) + 1
        if an["kind"] == "harmful_overlap" and all(
                "step" in d for d in an["op_details"]):
            result["harmful_pairs"].append({
                "ops": an["ops"], "lost_us": an["lost_us"],
                "overlap_in_A_us": pair_overlap(plan_a, plan_a, an["op_details"]),
                "overlap_in_B_us": pair_overlap(plan_b, plan_a, an["op_details"])})
    sa, sb = schedule(plan_a), schedule(plan_b)
    result["schedule_changed"] = sa != sb
    result["steps_A"], result["steps_B"] = len(sa), len(sb)
    result["predicted_span_A_us"] = plan_a["prediction"]["span_us"]
    result["predicted_span_B_us"] = plan_b["prediction"]["span_us"]
    measured_model = os.path.join(o, "A.measured-model.json")
    if os.path.exists(measured_model):
        result["predicted_span_A_with_diagnosis_us"] = \
            load(measured_model)["span_us"]
    call1 = os.path.join(o, "A.result.json")
    if os.path.exists(call1):
        result["measured_A_call1_us"] = load(call1)["median_step_us"]
    ma, steps_a = median_step(sorted(glob.glob(os.path.join(o, "A.round*.result.json"))))
    mb, steps_b = median_step(sorted(glob.glob(os.path.join(o, "B.round*.result.json"))))
    if ma and mb:
        result.update(measured_A_us=ma, measured_B_us=mb, rounds_A_us=steps_a,
                      rounds_B_us=steps_b, measured_B_over_A=mb / ma)

    print("diagnosis of plan A's run: %d anomalies %s" % (
        len(diag["anomalies"]), json.dumps(result["anomalies"], sort_keys=True)))
    for p in result["harmful_pairs"]:
        fmt = lambda v: "?" if v is None else "%.1f us" % v
        print("  harmful %s | %s (%.1f us lost): overlapped %s in A, %s in B"
              % (p["ops"][0], p["ops"][1], p["lost_us"],
                 fmt(p["overlap_in_A_us"]), fmt(p["overlap_in_B_us"])))
    print("plan B %s plan A's schedule (%d / %d steps)" % (
        "changes" if result["schedule_changed"] else "keeps", len(sa), len(sb)))
    line = "predicted span: A %.1f us" % result["predicted_span_A_us"]
    if "predicted_span_A_with_diagnosis_us" in result:
        line += ", A with the measured durations %.1f us" % \
            result["predicted_span_A_with_diagnosis_us"]
    print(line + ", B %.1f us" % result["predicted_span_B_us"])
    if "measured_A_us" in result:
        print("measured step (median of %d rounds): A %.1f us, B %.1f us, B/A %.4f"
              % (len(steps_a), ma, mb, mb / ma))
        print("  rounds A: %s; B: %s" % (
            ", ".join("%.1f" % v for v in steps_a),
            ", ".join("%.1f" % v for v in steps_b)))
    else:
        print("measured: run-b has not run (no A.round*/B.round* results)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
