#!/usr/bin/env python3
"""Validation of tandem-diagnose on a GPU (issue 17, item 3): plans with
anomalies injected on purpose, clean runs, precision and recall.

    python3 diagnose-validate.py prepare OUT   # needs tandem-gen, tandem-opt
    python3 diagnose-validate.py score OUT [--json FILE] [--single]
                                               # needs tandem-diagnose and
                                               # the traces 'run' wrote
    python3 diagnose-validate.py dryrun OUT    # no GPU: plans' predictions
                                               # stand in for the traces
diagnose-validate.sh drives both and runs the plans on the GPU in between.

For each base step (TP=8, scheduled by --tandem-overlap with the H200
calibration, run on the emulated fabric of one GPU) it picks collectives
that the plan hides under the GEMM issued right after them and injects, one
at a time, into the scheduled IR:

  extra-kernel  a tandem.opaque kernel on the collective's stream, issued
                just before it (waiting for the same events): the collective
                starts after it.                   -> extra_kernel
  extra-wait    the collective is issued after that GEMM and waits for an
                event the GEMM records.            -> wait
  sm-gemm       that GEMM is issued before the collective, without its SM
                target (sized for all SMs): the collective waits for its
                SMs.                               -> sm_residency
  host-delay    no IR change: tandem-run --inject-host-delay makes the host
                enqueue that GEMM late (longer than the host's lead on the
                GPU).                              -> late_host_launch

and exports each case as a plan. Clean runs repeat the unchanged plan; one
is the expected timeline of every diagnosis of its base (a measured
baseline: the simulator's own prediction differs from the H200 by 5-40 % per
op class, docs/benchmarks.md, which is model error, not an anomaly), and the
unscheduled reference plan's run gives the times alone (--alone). (The
most typical clean run: the one the other clean runs differ from least.)
Every case is diagnosed with the base's other clean runs as the noise floor
(--noise: all clean runs but the expected one and the case itself), so that
run-to-run differences within their spread are within noise, not
anomalies. The score reports both scorings, with the noise floor and the
old one (one clean run as the expectation, no --noise); --single makes the
old one the primary scoring (the table and score.json's top level).

A case is detected when an anomaly of its cause names the injected ops (the
collective and the kernel, GEMM or event it was made to wait for); every
other anomaly, in any run, is a false positive. Precision = anomalies that
detect an injection / all anomalies; recall = detected cases / cases. The
anomalies counted are the report's root causes: an effect the tool
attributes to a root's culprit (its `consequences`, docs/diagnosis.md) is
listed with it and not counted again.
Only python3's standard library is needed.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("BUILD", os.path.join(HERE, "..", "..", "build"))
CAL = os.environ.get("CAL", os.path.join(HERE, "results", "h200-2026-12-03",
                                         "calibration.json"))
TARGETS_PER_CLASS = int(os.environ.get("TARGETS", "3"))
CLEAN_RUNS = int(os.environ.get("CLEAN_RUNS", "3"))
ROOM_FROM = os.environ.get("ROOM_FROM", "")
# The noise floor's margin (tandem-diagnose --noise-margin); empty: the
# tool's default.
NOISE_MARGIN = os.environ.get("NOISE_MARGIN", "")
BASES = [
    ("gpt3-175b-tp8", "--model gpt3-175b --layers 2 --tp 8 --seq 4096"),
    ("llama3-70b-tp8", "--model llama3-70b --layers 2 --tp 8 --seq 4096"),
]
CAUSES = {"extra-kernel": "extra_kernel", "extra-wait": "wait",
          "sm-gemm": "sm_residency", "host-delay": "late_host_launch"}

OP = re.compile(r"^(\s*)(%[\w.]+) = (tandem\.\w+) (.*)$")


def tool(name):
    return os.path.join(BUILD, "bin", name)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    return r


def split_attrs(text):
    """'a = 1 : i64, b = array<i64: 1, 2>' -> [('a', '1 : i64'), ...]."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<[(":
            depth += 1
        elif ch in ">])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return [tuple(x.split(" = ", 1)) for x in out]


class Line:
    """One op of the scheduled function: result, op name, body, attributes."""

    def __init__(self, text):
        m = OP.match(text)
        self.text = text
        self.op = None
        if not m:
            return
        self.indent, self.result, self.op, rest = m.groups()
        # The attribute dictionary is the last {...} before the types.
        am = re.match(r"^(.*?) \{([^{}]*)\} : (.*)$", rest)
        if am:
            self.body, attrs, self.types = am.groups()
            self.attrs = split_attrs(attrs)
        else:
            self.body, self.types = rest.split(" : ", 1)
            self.attrs = []
        self.uses = re.findall(r"%[\w.]+", self.body)

    def attr(self, key):
        return dict(self.attrs).get(key)

    def set_attr(self, key, value):
        self.attrs = [(k, v) for k, v in self.attrs if k != key]
        if value is not None:
            self.attrs.append((key, value))
            self.attrs.sort()

    def render(self):
        if not self.op:
            return self.text
        attrs = " {%s}" % ", ".join("%s = %s" % kv for kv in self.attrs) \
            if self.attrs else ""
        return "%s%s = %s %s%s : %s" % (self.indent, self.result, self.op,
                                        self.body, attrs, self.types)


def stream_of(line):
    s = line.attr("tandem.stream")
    return int(s.split(":")[0]) if s else 0


def events_of(line):
    w = line.attr("tandem.wait_events")
    if not w:
        return []
    inner = w[w.index(":") + 1:w.rindex(">")]
    return [int(x) for x in inner.split(",") if x.strip()]


def events_attr(events):
    return "array<i64: %s>" % ", ".join(str(e) for e in events)


def trace_name(step):
    label = step.get("label", "")
    return step["op"] + (" " + label if label else "")


def step_refs(plan):
    """Per plan step: (trace name, occurrence); and source line -> steps."""
    seen, refs, by_line = {}, [], {}
    for i, s in enumerate(plan["steps"]):
        n = trace_name(s)
        refs.append((n, seen.get(n, 0)))
        seen[n] = seen.get(n, 0) + 1
        m = re.search(r":(\d+):\d+\)$", s.get("loc", ""))
        if m:
            by_line.setdefault(int(m.group(1)), []).append(i)
    return refs, by_line


def measured_timing(trace_path):
    """Per plan step, {start_us, duration_us} as a tandem-run trace measured
    it (its measured process, by args.step)."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    pid = next(e["pid"] for e in events if e.get("name") == "process_name"
               and e["args"]["name"].startswith("measured @"))
    return {e["args"]["step"]: {"start_us": e["ts"], "duration_us": e["dur"]}
            for e in events if e.get("ph") == "X" and e["pid"] == pid}


def candidates(lines, plan, timing):
    """(room, collective line, GEMM line, their plan steps) for every _start
    op issued right before a GEMM of another stream that the plan runs under
    it; the room by `timing` (step -> start_us, duration_us: the prediction,
    or a clean run's measurement)."""
    predicted = {i: st["predicted"] for i, st in enumerate(plan["steps"])
                 if st.get("predicted")}
    refs, by_line = step_refs(plan)
    # The compute, as merged intervals: how long after a collective's end
    # compute still runs without a break (its room: a delay shorter than
    # that stays hidden).
    spans = sorted((p["start_us"], p["start_us"] + p["duration_us"])
                   for i, st in enumerate(plan["steps"])
                   for p in [timing.get(i)]
                   if p and st["kind"] not in ("collective", "sync")
                   and p["duration_us"] > 0)
    merged = []
    for a, b in spans:
        if merged and a <= merged[-1][1] + 1e-6:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])

    def slack(start, end):
        for a, b in merged:
            if a <= start + 1e-6 and b >= start:
                return b - end
        return 0.0

    out = []
    for i in range(len(lines) - 1):
        c, x = lines[i], lines[i + 1]
        if not c.op or not c.op.endswith("_start") or x.op != "tandem.matmul":
            continue
        if stream_of(c) == stream_of(x):
            continue
        cs, xs = by_line.get(i + 1, []), by_line.get(i + 2, [])
        if len(cs) != 1 or len(xs) != 1:
            continue
        alone = plan["steps"][cs[0]].get("predicted", {}).get("alone_us", 0)
        pc, px = predicted.get(cs[0]), predicted.get(xs[0])
        if not pc or not px or alone < 40:
            continue
        ov = min(pc["start_us"] + pc["duration_us"], px["start_us"] + px["duration_us"]) \
            - max(pc["start_us"], px["start_us"])
        if ov < 0.5 * pc["duration_us"]:
            continue
        mc = timing.get(cs[0])
        if not mc:
            continue
        room = slack(mc["start_us"], mc["start_us"] + mc["duration_us"])
        out.append((room, i, i + 1, cs[0], xs[0]))
    # Least room first: those an injection exposes most (the extra kernel
    # and the host delay are sized past the room; the wait and the GEMM
    # expose at most the GEMM's time).
    out.sort()
    return out, refs


def export(mlir, plan, log):
    cal = " calibration=%s" % CAL if CAL else ""
    with open(log, "w") as err:
        r = subprocess.run([tool("tandem-opt"), mlir,
                            "--tandem-export-plan=file=%s%s" % (plan, cal),
                            "-o", os.devnull], stderr=err)
    if r.returncode != 0:
        sys.exit("export failed: see %s" % log)


def prepare(out):
    os.makedirs(out, exist_ok=True)
    cases = []
    cal = " calibration=%s" % CAL if CAL else ""
    for base, gen in BASES:
        d = os.path.join(out, base)
        os.makedirs(d, exist_ok=True)
        step = os.path.join(d, "step.mlir")
        run([tool("tandem-gen")] + gen.split() + ["-o", step])
        sched = os.path.join(d, "scheduled.mlir")
        run([tool("tandem-opt"), step, "--tandem-overlap=%s" % cal.strip(),
             "-o", sched])
        export(sched, os.path.join(d, "clean.json"), os.path.join(d, "clean.log"))
        export(step, os.path.join(d, "reference.json"), os.path.join(d, "reference.log"))
        with open(os.path.join(d, "clean.json")) as f:
            plan = json.load(f)
        with open(sched) as f:
            text = f.read().split("\n")
        lines = [Line(t) for t in text]
        # Room by the prediction, or (ROOM_FROM=an earlier OUT that ran) by
        # that clean run's measurement: the GPU's GEMMs can be much longer
        # than predicted, leaving room that hides a small injection.
        timing = {i: st["predicted"] for i, st in enumerate(plan["steps"])
                  if st.get("predicted")}
        if ROOM_FROM:
            timing = measured_timing(os.path.join(ROOM_FROM, base, "clean-0.trace.json"))
        cands, refs = candidates(lines, plan, timing)
        if len(cands) < TARGETS_PER_CLASS:
            sys.exit("%s: only %d candidate collectives" % (base, len(cands)))
        for k in range(CLEAN_RUNS):
            cases.append({"name": "%s/clean-%d" % (base, k), "base": base,
                          "class": "clean", "plan": "%s/clean.json" % base})
        targets = cands[:TARGETS_PER_CLASS]
        for cls in ("extra-kernel", "extra-wait", "sm-gemm", "host-delay"):
            for n, (room, ci, xi, cstep, xstep) in enumerate(targets):
                name = "%s/%s-%d" % (base, cls, n)
                case = {"name": name, "base": base, "class": cls,
                        "cause": CAUSES[cls],
                        "collective": refs[cstep], "gemm": refs[xstep]}
                pc = dict(timing[cstep],
                          alone_us=plan["steps"][cstep]["predicted"]["alone_us"])
                px = timing[xstep]
                if cls == "host-delay":
                    case["plan"] = "%s/clean.json" % base
                    # Longer than the host's lead: the GPU reaches the GEMM
                    # about at its predicted start; the host enqueues it
                    # only after the delay.
                    case["host_delay"] = "%d:%.0f" % (
                        xstep, 1.5 * px["start_us"] + 2 * pc["alone_us"] + room)
                    case["truth"] = [refs[cstep], refs[xstep]]
                    cases.append(case)
                    continue
                new = [Line(t) for t in text]
                c, x = new[ci], new[xi]
                if cls == "extra-kernel":
                    operand = c.uses[0]
                    in_type = c.types.split(" -> ")[0]
                    spin = Line("%s%%inject_spin_%d = tandem.opaque \"inject_spin\"(%s) "
                                "flops(0.000000e+00) bytes(%d) : (%s) -> %s" % (
                                    c.indent, n, operand,
                                    int(4.0e6 * (pc["alone_us"] + room)),
                                    in_type, in_type))
                    spin.set_attr("tandem.stream", "%d : i64" % stream_of(c))
                    if events_of(c):
                        spin.set_attr("tandem.wait_events", events_attr(events_of(c)))
                    new.insert(ci, spin)
                    case["truth"] = [refs[cstep], ["tandem.opaque inject_spin", 0]]
                elif cls == "extra-wait":
                    rec = x.attr("tandem.record_event")
                    if rec is None:
                        func = next(l for l in new if "func.func" in l.text and
                                    "tandem.num_events" in l.text)
                        m = re.search(r"tandem.num_events = (\d+) : i64", func.text)
                        event = int(m.group(1))
                        func.text = func.text.replace(
                            m.group(0), "tandem.num_events = %d : i64" % (event + 1))
                        x.set_attr("tandem.record_event", "%d : i64" % event)
                    else:
                        event = int(rec.split(":")[0])
                    c.set_attr("tandem.wait_events", events_attr(events_of(c) + [event]))
                    new[ci], new[xi] = x, c
                    case["truth"] = [refs[cstep], refs[xstep]]
                elif cls == "sm-gemm":
                    x.set_attr("tandem.sm_target", None)
                    new[ci], new[xi] = x, c
                    case["truth"] = [refs[cstep], refs[xstep]]
                mlir = os.path.join(out, name + ".mlir")
                with open(mlir, "w") as f:
                    f.write("\n".join(l.render() for l in new))
                export(mlir, os.path.join(out, name + ".json"),
                       os.path.join(out, name + ".log"))
                case["plan"] = name + ".json"
                cases.append(case)
        print("prepared %s: %d candidate collectives, %d targets" %
              (base, len(cands), len(targets)))
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"bases": [b for b, _ in BASES], "cases": cases}, f, indent=1)
    print("%d cases (%d clean) in %s/cases.json" %
          (len(cases), sum(c["class"] == "clean" for c in cases), out))


def exposure(trace_path, ref):
    """(exposed us, duration us) of op `ref` (name, occurrence) in the
    measured process of a tandem-run trace: the part of it no compute op
    covers. Computed here, independently of tandem-diagnose, to tell
    whether an injection exposed its collective at all."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    pid = next(e["pid"] for e in events if e.get("name") == "process_name"
               and e["args"]["name"].startswith("measured @"))
    ops = [e for e in events if e.get("ph") == "X" and e["pid"] == pid]
    seen, target = {}, None
    for e in ops:
        k = seen.get(e["name"], 0)
        seen[e["name"]] = k + 1
        if (e["name"], k) == tuple(ref):
            target = e
    compute = sorted((e["ts"], e["ts"] + e["dur"]) for e in ops
                     if e["cat"] not in ("collective", "sync") and e["dur"] > 0)
    start, end = target["ts"], target["ts"] + target["dur"]
    covered, reach = 0.0, start
    for a, b in compute:
        a, b = max(a, reach), min(b, end)
        if b > a:
            covered += b - a
            reach = b
    return target["dur"] - covered, target["dur"]


def detects(anomaly, case):
    if anomaly["cause"] != case["cause"] or anomaly["kind"] != "lost_overlap":
        return False
    named = {(o["name"], o["occurrence"]) for o in anomaly["op_details"]}
    return all(tuple(t) in named for t in case["truth"])


def noise_runs(spec, case, baseline):
    """The clean runs of the case's base that set its noise floor: all but
    the expected timeline and the case itself."""
    return sorted(c["name"] for c in spec["cases"]
                  if c["base"] == case["base"] and c["class"] == "clean"
                  and c["name"] not in (baseline, case["name"]))


def score_cases(out, spec, baselines, with_noise):
    """Diagnoses every case against its base's expected timeline, with the
    noise floor of the other clean runs or without; returns the rows and
    the totals."""
    diagnose = tool("tandem-diagnose")
    rows, total, true, detected, injected = [], 0, 0, 0, 0
    consequences = within_noise = 0
    attributable = 0
    effective_cases = effective_detected = 0
    per_class = {}
    seconds = []
    for case in spec["cases"]:
        base = case["base"]
        baseline = os.path.join(out, baselines[base] + ".trace.json")
        trace = os.path.join(out, case["name"] + ".trace.json")
        if case["name"] == baselines[base]:
            continue
        noise = noise_runs(spec, case, baselines[base]) if with_noise else []
        report = os.path.join(out, case["name"] + (
            ".noise.report.json" if with_noise else ".report.json"))
        cmd = [diagnose, baseline, trace, "--expected-from", "measured",
               "--alone", os.path.join(out, base, "reference.trace.json"),
               "--json", report, "--quiet"]
        for n in noise:
            cmd += ["--noise", os.path.join(out, n + ".trace.json")]
        if noise and NOISE_MARGIN:
            cmd += ["--noise-margin", NOISE_MARGIN]
        start = time.time()
        run(cmd)
        seconds.append(time.time() - start)
        with open(report) as f:
            doc = json.load(f)
        anomalies = doc["anomalies"]
        suppressed = doc.get("within_noise", [])
        effective = None
        if case["class"] != "clean":
            # Did the injection expose its collective (against the clean
            # baseline, by more than the diagnosis threshold)?
            was, dur = exposure(baseline, case["collective"])
            now, _ = exposure(trace, case["collective"])
            effective = now - was > max(10.0, 0.1 * dur)
        hit = [a for a in anomalies if case["class"] != "clean" and detects(a, case)]
        # Anomalies on the injected kernel itself (an extra kernel that also
        # slows the GEMM it overlaps) are the injection's too, not false.
        culprit = tuple(case["truth"][1]) if case["class"] != "clean" else None
        caused = [a for a in anomalies if a not in hit and culprit in
                  {(o["name"], o["occurrence"]) for o in a["op_details"]}]
        total += len(anomalies)
        consequences += sum(len(a.get("consequences", [])) for a in anomalies)
        within_noise += len(suppressed)
        true += len(hit)
        attributable += len(hit) + len(caused)
        c = per_class.setdefault(case["class"], {"cases": 0, "detected": 0,
                                                 "false_positives": 0,
                                                 "within_noise": 0})
        c["cases"] += 1
        c["false_positives"] += len(anomalies) - len(hit) - len(caused)
        c["within_noise"] += len(suppressed)
        c.setdefault("no_effect", 0)
        if case["class"] != "clean":
            injected += 1
            detected += bool(hit)
            c["detected"] += bool(hit)
            if effective:
                effective_cases += 1
                effective_detected += bool(hit)
            else:
                c["no_effect"] += 1
        rows.append({"case": case["name"], "class": case["class"],
                     "detected": bool(hit) if case["class"] != "clean" else None,
                     "exposed_collective": effective,
                     "noise_runs": noise,
                     "anomalies": [(a["kind"], a["cause"], a["ops"], round(a["lost_us"], 1))
                                   for a in anomalies],
                     "consequences": [(c["kind"], c["cause"], c["ops"], round(c["lost_us"], 1))
                                      for a in anomalies
                                      for c in a.get("consequences", [])],
                     # (kind, cause, ops, lost us, quantity, band us)
                     "within_noise": [(a["kind"], a["cause"], a["ops"], round(a["lost_us"], 1),
                                       a["within_noise"]["quantity"],
                                       round(a["within_noise"]["band_us"], 1))
                                      for a in suppressed]})
    summary = {"scoring": "noise_floor" if with_noise else "single_clean_run",
               "precision": true / total if total else 1.0,
               "recall": detected / injected if injected else 0.0,
               "effective_cases": effective_cases,
               "effective_detected": effective_detected,
               "effective_recall": effective_detected / effective_cases
                                   if effective_cases else 0.0,
               "attributable_precision": attributable / total if total else 1.0,
               "anomalies": total, "true_anomalies": true,
               "attributable_anomalies": attributable,
               "consequences": consequences, "within_noise": within_noise,
               "injected": injected, "detected": detected,
               "per_class": per_class,
               "max_diagnosis_seconds": max(seconds) if seconds else 0.0}
    return rows, summary


def score(out, as_json=None, single=False):
    with open(os.path.join(out, "cases.json")) as f:
        spec = json.load(f)
    diagnose = tool("tandem-diagnose")
    # The expected timeline of a base: its most typical clean run, the one
    # against which the other clean runs show the fewest anomalies (one run
    # alone can be an outlier: a GEMM slow only there would make every case
    # look exposed against it).
    baselines = {}
    for base in spec["bases"]:
        runs = sorted(c["name"] for c in spec["cases"]
                      if c["base"] == base and c["class"] == "clean")
        def count(exp, meas):
            r = os.path.join(out, base, "baseline-check.json")
            run([diagnose, os.path.join(out, exp + ".trace.json"),
                 os.path.join(out, meas + ".trace.json"), "--expected-from",
                 "measured", "--alone",
                 os.path.join(out, base, "reference.trace.json"),
                 "--json", r, "--quiet"])
            with open(r) as f:
                return len(json.load(f)["anomalies"])
        baselines[base] = min(runs, key=lambda e: (
            sum(count(e, m) for m in runs if m != e), e))
        print("%s: expected timeline %s" % (base, baselines[base]))
    # Both scorings: the primary one in full, the other as a comparison.
    primary = not single
    rows, s = score_cases(out, spec, baselines, with_noise=primary)
    other_rows, o = score_cases(out, spec, baselines, with_noise=not primary)
    print("scoring: %s" % ("the other clean runs of each base as the noise "
                           "floor (--noise)" if primary else
                           "one clean run as the expectation, no noise floor"))
    print("%-32s %-8s %-9s %s" % ("case", "exposed", "detected",
                                  "anomalies (kind, cause, lost us)"))
    for r in rows:
        d = "-" if r["detected"] is None else ("yes" if r["detected"] else "NO")
        x = "-" if r["exposed_collective"] is None else (
            "yes" if r["exposed_collective"] else "no")
        print("%-32s %-8s %-9s %s" % (r["case"], x, d, "; ".join(
            "%s %s %.1f" % (k, c, l) for k, c, _, l in r["anomalies"]) or "none"))
        for k, c, _, l, q, b in r["within_noise"]:
            print("%-52s within noise: %s %s %.1f (%s band %.1f)" % (
                "", k, c, l, q, b))
    print("\nclass         cases  no effect  detected  false positives  within noise")
    for cls, c in s["per_class"].items():
        print("%-13s %5d  %9s  %8s  %15d  %12d" % (
            cls, c["cases"], c["no_effect"] if cls != "clean" else "-",
            c["detected"] if cls != "clean" else "-", c["false_positives"],
            c["within_noise"]))
    print("\nprecision %.3f (%d of %d anomalies detect an injection; %d of them "
          "name the injected op: %.3f)" % (
              s["precision"], s["true_anomalies"], s["anomalies"],
              s["attributable_anomalies"], s["attributable_precision"]))
    print("          (%d consequences listed under their root causes, %d "
          "candidates within noise, neither counted)"
          % (s["consequences"], s["within_noise"]))
    print("recall    %.3f (%d of %d injected cases detected)" % (
        s["recall"], s["detected"], s["injected"]))
    print("recall    %.3f over the %d cases whose injection exposed its collective "
          "(%d detected)" % (s["effective_recall"], s["effective_cases"],
                             s["effective_detected"]))
    print("diagnosis time: max %.3f s per case" % s["max_diagnosis_seconds"])
    print("\n%s: precision %.3f (%d of %d), recall %.3f, on exposed cases %.3f "
          "(%d of %d)" % (
              "without the noise floor" if primary else "with the noise floor",
              o["precision"], o["true_anomalies"], o["anomalies"], o["recall"],
              o["effective_recall"], o["effective_detected"], o["effective_cases"]))
    if as_json:
        doc = dict(s)
        doc["cases"] = rows
        doc["expected_timelines"] = baselines
        doc["other_scoring"] = dict(o, cases=other_rows)
        with open(as_json, "w") as f:
            json.dump(doc, f, indent=1)


def dryrun(out):
    """No GPU: each case's 'measured' trace is its plan's own prediction,
    written in tandem-run's trace layout (RunTrace.h: names, args.step;
    no host times), so that the injections can be checked against the
    simulator before the GPU run. The simulator cannot delay the host:
    host-delay cases then show nothing."""
    with open(os.path.join(out, "cases.json")) as f:
        spec = json.load(f)
    plans = [(c["name"], c["plan"]) for c in spec["cases"]]
    plans += [("%s/reference" % b, "%s/reference.json" % b) for b in spec["bases"]]
    for name, plan_file in plans:
        with open(os.path.join(out, plan_file)) as f:
            plan = json.load(f)
        events = []
        for pid, what in ((0, "measured @%s rank 0" % plan["function"]),
                          (1, "predicted @%s" % plan["function"])):
            events.append({"ph": "M", "name": "process_name", "pid": pid,
                           "args": {"name": what}})
            for k, st in enumerate(plan["streams"]):
                events.append({"ph": "M", "name": "thread_name", "pid": pid,
                               "tid": k, "args": {"name": st["name"]}})
            for i, s in enumerate(plan["steps"]):
                p = s.get("predicted")
                if not p:
                    continue
                args = {"step": i}
                if pid == 1:
                    args["alone_us"] = p["alone_us"]
                events.append({"ph": "X", "name": trace_name(s), "cat": s["kind"],
                               "pid": pid, "tid": s.get("stream", 0),
                               "ts": p["start_us"], "dur": p["duration_us"],
                               "args": args})
        with open(os.path.join(out, name + ".trace.json"), "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
    print("wrote %d predicted traces in tandem-run's layout (a dry run, no GPU)"
          % len(plans))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("prepare", "score", "dryrun"):
        sys.exit(__doc__)
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2])
    elif sys.argv[1] == "dryrun":
        dryrun(sys.argv[2])
    else:
        args, as_json, single = sys.argv[3:], None, False
        while args:
            if args[0] == "--json" and len(args) > 1:
                as_json, args = args[1], args[2:]
            elif args[0] == "--single":
                single, args = True, args[1:]
            else:
                sys.exit("score: unknown argument '%s'\n%s" % (args[0], __doc__))
        score(sys.argv[2], as_json, single)
