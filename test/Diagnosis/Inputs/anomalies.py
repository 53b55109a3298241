#!/usr/bin/env python3
"""Prints a tandem-diagnose JSON report's anomalies, one per line, for
FileCheck: '<N> anomalies', then '<kind> <cause> ; <op> ; <op> ; ...', each
followed by its consequences as '  consequence: <kind> <cause> ; <op> ; ...'.
A report made with --noise also lists its candidates within noise:
'<N> within noise', then 'within noise (<quantity> of <op>, band <B> us):
<kind> <cause> ; <op> ; ...'."""
import json
import sys

with open(sys.argv[1]) as f:
    report = json.load(f)
anomalies = report["anomalies"]
print("%d anomalies" % len(anomalies))
for a in anomalies:
    assert a["lost_us"] > 0, a
    print("%s %s ; %s ;" % (a["kind"], a["cause"], " ; ".join(a["ops"])))
    for c in a.get("consequences", []):
        assert c["lost_us"] > 0, c
        print("  consequence: %s %s ; %s ;" % (c["kind"], c["cause"],
                                               " ; ".join(c["ops"])))
if "within_noise" in report:
    print("%d within noise" % len(report["within_noise"]))
    for a in report["within_noise"]:
        w = a["within_noise"]
        assert 0 < w["deviation_us"] <= w["band_us"], w
        print("within noise (%s of %s, band %.1f us): %s %s ; %s ;" % (
            w["quantity"], " and ".join(o["name"] for o in w["ops"]),
            w["band_us"], a["kind"], a["cause"], " ; ".join(a["ops"])))
