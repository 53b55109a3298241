#!/usr/bin/env python3
"""Tables and JSON of fidelity.sh results (issue 14's targets).

  python3 test/benchmarks/fidelity.py OUTDIR [--json FILE] [--machine TEXT]

Per case and strategy: the measured median step (tandem-run), the
simulator's predicted span (from the plan), measured/predicted, the
PyTorch eager peer's median step where there is one, and per op class the
measured / predicted sums. Per case: whether the strategy the simulator ranks
first is the measured fastest or within 3% of it, and auto / none measured.
lit never runs this file.
"""
import argparse
import json
import os
import sys

ORDER = ["none", "bulk", "reschedule", "pipeline", "pipeline+reschedule",
         "te-preset", "te-preset+reschedule", "split", "split+reschedule",
         "auto", "auto+ce"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--json", help="write the machine-readable results here")
    ap.add_argument("--machine", default="",
                    help="the GPU machine, recorded in the JSON")
    a = ap.parse_args()
    names = sorted({f.split(".")[0] for f in os.listdir(a.out)
                    if f.endswith(".result.json")})
    if not names:
        sys.exit("fidelity.py: no *.result.json in %s (run fidelity.sh run)"
                 % a.out)
    cases = []
    print("| case | strategy | measured ms | predicted ms | meas/pred | "
          "peer ms | peer/Tandem | largest class gap |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name in names:
        peer = None
        peer_path = os.path.join(a.out, name + ".peer.json")
        if os.path.exists(peer_path):
            p = json.load(open(peer_path))
            if p.get("status") == "measured":
                peer = p["median_step_us"]
        rows = {}
        for s in ORDER:
            path = os.path.join(a.out, "%s.%s.result.json" % (name, s))
            if not os.path.exists(path):
                continue
            r = json.load(open(path))
            meas, pred = r["median_step_us"], r.get("predicted_span_us", 0)
            classes = r.get("op_classes", [])
            gap = max(classes, key=lambda c: abs(c["measured_us"] -
                                                 c["predicted_us"]),
                      default=None)
            rows[s] = dict(measured_us=meas, predicted_us=pred,
                           measured_over_predicted=meas / pred if pred else None,
                           mode=r.get("mode"), op_classes=classes)
            gap_text = ("%s %+.3f ms" % (gap["class"], (gap["measured_us"] -
                                                         gap["predicted_us"])
                                          / 1000) if gap else "")
            print("| %s | %s | %.3f | %.3f | %s | %s | %s | %s |" % (
                name, s, meas / 1000, pred / 1000,
                "%.3f" % (meas / pred) if pred else "—",
                "%.3f" % (peer / 1000) if peer else "",
                "%.3f" % (peer / meas) if peer else "", gap_text))
        case = dict(case=name, strategies=rows, peer_median_step_us=peer)
        if len(rows) > 1:
            sim_first = min(rows, key=lambda s: rows[s]["predicted_us"])
            fastest = min(rows, key=lambda s: rows[s]["measured_us"])
            case["simulator_first"] = sim_first
            case["measured_fastest"] = fastest
            case["simulator_first_over_fastest"] = (
                rows[sim_first]["measured_us"] / rows[fastest]["measured_us"])
            if "auto" in rows and "none" in rows:
                case["auto_over_none"] = (rows["auto"]["measured_us"] /
                                          rows["none"]["measured_us"])
            if "auto+ce" in rows and "none" in rows:
                case["auto_ce_over_none"] = (rows["auto+ce"]["measured_us"] /
                                             rows["none"]["measured_us"])
        cases.append(case)
    print()
    print("| case | simulator's first | measured fastest | first/fastest | "
          "auto/none measured | auto+ce/none measured |")
    print("|---|---|---|---:|---:|---:|")
    for c in cases:
        if "simulator_first" in c:
            print("| %s | %s | %s | %.3f | %s | %s |" % (
                c["case"], c["simulator_first"], c["measured_fastest"],
                c["simulator_first_over_fastest"],
                "%.3f" % c["auto_over_none"] if "auto_over_none" in c else "",
                "%.3f" % c["auto_ce_over_none"]
                if "auto_ce_over_none" in c else ""))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(machine=a.machine, cases=cases), f, indent=1,
                      sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
