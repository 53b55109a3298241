#!/usr/bin/env python3
"""Prints a tandem-diagnose JSON report's anomalies, one per line, for
FileCheck: '<N> anomalies', then '<kind> <cause> ; <op> ; <op> ; ...'."""
import json
import sys

with open(sys.argv[1]) as f:
    report = json.load(f)
anomalies = report["anomalies"]
print("%d anomalies" % len(anomalies))
for a in anomalies:
    assert a["lost_us"] > 0, a
    print("%s %s ; %s ;" % (a["kind"], a["cause"], " ; ".join(a["ops"])))
