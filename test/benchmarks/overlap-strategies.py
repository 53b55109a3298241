#!/usr/bin/env python3
"""Benchmark: simulated span of each --tandem-overlap strategy on generated steps.

For gpt3-175b and llama3-70b, TP 2/4/8, sequence 2048/4096/8192 and the
switch and full-mesh topologies (h200 target), generates an L-layer
(--layers, default 2), 1-micro-batch step with
  tandem-gen --model M --layers L --tp T --seq S --target h200 \
      --topology X --print-locations
(the locations make the simulator name every task after tandem-gen's
names, e.g. l1.fc2.grad_ag.mb0) and runs
  tandem-opt step.mlir --tandem-overlap=strategy=S \
      --tandem-simulate="report=r.json trace=t.json" -o /dev/null
for S in none, bulk, reschedule, pipeline, pipeline+reschedule, te-preset,
te-preset+reschedule and auto. A strategy that tandem-opt refuses as not implemented is reported
as "missing (not implemented)", any other error as "error".

Two Markdown tables come out. The first gives every strategy's span, the
bound max(compute, comm) and auto's span/bound. The second gives, for
auto: exposed communication and overlap efficiency; the share of the
backward pass's communication that is hidden (see backward_hidden), also
for none and te-preset; auto's span against te-preset's; and peak memory
(simulated and program-order) of none and auto.

Then it times the whole --tandem-overlap pipeline (strategies reschedule
and auto) on a 96-layer, 8-micro-batch gpt3-175b step (TP 8, seq 2048,
h200, switch): the median of REPEAT runs of the command's wall time, its
CPU time and -mlir-timing's pass time. --scaling adds 12, 24 and 48 layers
and strategy bulk, to show how the pass time grows with the step.

lit never runs this file (test/lit.cfg.py excludes benchmarks/). All
numbers are simulator predictions, not GPU measurements.

usage: overlap-strategies.py [--build build] [--jobs 2] [--repeat 3]
                             [--quick] [--skip-timing] [--scaling]
                             [--layers N|full] [--sequences N]

--layers full generates each model at its real depth (gpt3-175b 96 layers,
llama3-70b 80), the shape the issue's backward-hiding target is about; the
default (2) and 8 are quick views in which the first gradient all-gather
after the loss, which has nothing to hide under, weighs far more.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import resource
import statistics
import subprocess
import tempfile
import time

STRATEGIES = ["none", "bulk", "reschedule", "pipeline", "pipeline+reschedule",
              "te-preset", "te-preset+reschedule", "split", "split+reschedule",
              "auto"]
SHORT = {"pipeline+reschedule": "pipe+resch", "te-preset+reschedule": "te+resch",
         "split+reschedule": "split+resch"}
# --copy-engines adds `auto` with tandem-overlap's copy-engines=true (issue
# 15's low-contention collectives) beside today's strategies, which run
# without it, and reports it where the tables report auto.
AUTO_CE = "auto+ce"


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


def is_backward_collective(name):
    """tandem-gen names forward collectives <l>.<part>.ag/rs.mb<m>, backward
    ones grad_ag, wgrad_ag, grad_rs (and <l>.<part>.wgrad_ar for DP). Chunks
    of a pipelined collective keep the name of the collective they split
    (the simulator names a task after the first NameLoc of its location)."""
    base = name.split(".mb")[0]
    return "grad_" in base or base.endswith(".wgrad_ar")


def backward_hidden(trace_path):
    """Exposed communication of the backward pass, from the Chrome trace.

    Walks the compute stream (tid 0) in start order as the simulator's
    exposed_comm_us does: a gap before a wait is exposed time of the
    collective it waits for (a wait carries its collective's name), and a
    collective on the compute stream (blocking) is exposed for its whole
    duration. Returns (exposed total, exposed backward, backward
    communication alone, hidden share of the backward communication)."""
    with open(trace_path) as fh:
        events = json.load(fh)["traceEvents"]
    slices = [e for e in events if e.get("ph") == "X" and e.get("pid") == 0]
    comm_bwd = sum(e["args"]["alone_us"] for e in slices
                   if e["cat"] == "collective" and
                   is_backward_collective(e["name"]))
    stream0 = sorted((e for e in slices if e["tid"] == 0),
                     key=lambda e: e["ts"])  # stable: program order on ties
    prev_end, exp_all, exp_bwd = 0.0, 0.0, 0.0
    for e in stream0:
        exposed = 0.0
        if e["ts"] - prev_end > 1e-9 and e["cat"] == "wait":
            exposed += e["ts"] - prev_end
        if e["cat"] == "collective":
            exposed += e["dur"]
        exp_all += exposed
        if is_backward_collective(e["name"]):
            exp_bwd += exposed
        prev_end = max(prev_end, e["ts"] + e["dur"])
    hidden = 1.0 - exp_bwd / comm_bwd if comm_bwd > 0 else 1.0
    comm_all = sum(e["args"]["alone_us"] for e in slices
                   if e["cat"] == "collective")
    comm_fwd, exp_fwd = comm_all - comm_bwd, exp_all - exp_bwd
    hidden_fwd = 1.0 - exp_fwd / comm_fwd if comm_fwd > 0 else 1.0
    return (exp_all, exp_bwd, comm_bwd, max(0.0, min(1.0, hidden)),
            max(0.0, min(1.0, hidden_fwd)))


def compute_time(trace_path):
    """(busy, alone): the compute ops' simulated durations and their times
    alone, summed over every stream (slices, GEMMs, memory and other
    kernels; collectives and waits excluded)."""
    with open(trace_path) as fh:
        events = json.load(fh)["traceEvents"]
    ops = [e for e in events if e.get("ph") == "X" and e.get("pid") == 0 and
           e["cat"] not in ("collective", "wait")]
    return (sum(e["dur"] for e in ops),
            sum(e["args"].get("alone_us", e["dur"]) for e in ops))


def run_case(gen, opt, model, tp, seq, topo, tmp, layers=2, calibration="",
             micro_batches=1, strategies=STRATEGIES, sequences=1, extra="",
             segments=1):
    tag = "%s-tp%d-s%d-%s" % (model, tp, seq, topo)
    step = os.path.join(tmp, tag + ".mlir")
    # seq is the micro-batch's tokens; with several sequences each holds
    # seq / sequences of them (the GEMMs and collectives stay the same).
    g = run([gen, "--model", model, "--layers", str(layers), "--tp", str(tp),
             "--seq", str(seq // sequences), "--sequences", str(sequences),
             "--segments", str(segments),
             "--target", "h200", "--topology", topo,
             "--micro-batches", str(micro_batches),
             "--print-locations", "-o", step])
    if g.returncode != 0:
        return dict(tag=tag, error="tandem-gen: " + g.stderr.strip())
    res = dict(tag=tag, model=model, tp=tp, seq=seq, topo=topo, reports={},
               status={}, bwd={}, busy={})
    if segments > 1:
        # The bound is that of the step without segments: the segments'
        # assemblies (prefix keys, token order for attention_grad) are
        # overhead of the split, not part of the work to hide under.
        plain = os.path.join(tmp, tag + ".plain.mlir")
        rep = os.path.join(tmp, tag + ".plain.json")
        cal = " calibration=%s" % calibration if calibration else ""
        g = run([gen, "--model", model, "--layers", str(layers), "--tp",
                 str(tp), "--seq", str(seq // sequences), "--sequences",
                 str(sequences), "--target", "h200", "--topology", topo,
                 "--micro-batches", str(micro_batches), "-o", plain])
        trace = os.path.join(tmp, tag + ".plain.trace.json")
        r = run([opt, plain, "--tandem-simulate=report=%s trace=%s%s"
                 % (rep, trace, cal), "-o", os.devnull]) \
            if g.returncode == 0 else g
        if r.returncode != 0:
            return dict(tag=tag, error="plain step: " + r.stderr.strip())
        with open(rep) as fh:
            res["plain_bound_us"] = json.load(fh)["bound_us"]
        # Overhead is counted against the plain step's compute too: the
        # segments' own assemblies are overhead of the split.
        res["plain_alone_us"] = compute_time(trace)[1]
    for strat in strategies:
        rep = os.path.join(tmp, "%s.%s.json" % (tag, strat))
        trace = os.path.join(tmp, "%s.%s.trace.json" % (tag, strat))
        cal = " calibration=%s" % calibration if calibration else ""
        overlap = ("strategy=auto copy-engines=true" if strat == AUTO_CE
                   else "strategy=%s" % strat)
        r = run([opt, step, "--tandem-overlap=%s%s%s" % (overlap, cal, extra),
                 "--tandem-simulate=report=%s trace=%s%s" % (rep, trace, cal),
                 "-o", os.devnull, "--mlir-print-op-on-diagnostic=false"])
        if r.returncode != 0:
            errs = [l for l in r.stderr.splitlines() if "error" in l]
            msg = errs[0] if errs else "exit %d" % r.returncode
            res["status"][strat] = ("missing (not implemented)"
                                    if "not implemented" in msg else
                                    "error: " + msg.split("error: ")[-1])
            continue
        with open(rep) as fh:
            res["reports"][strat] = json.load(fh)
        res["status"][strat] = "ok"
        res["bwd"][strat] = backward_hidden(trace)
        res["busy"][strat] = compute_time(trace)
        m = re.search(r"strategy (\S+) chosen", r.stderr)
        if strat in ("auto", AUTO_CE) and m:
            res["auto_choice"] = m.group(1)
            if strat == AUTO_CE:
                res["ce_moved"] = r.stderr.count("moved to the copy engines")
    return res


def timed(cmd, repeat):
    """Medians of wall time, CPU time (user + system) and -mlir-timing."""
    walls, cpus, timers = [], [], {}
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        r = subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime +
                    after.ru_stime - before.ru_stime)
        for line in r.stderr.splitlines():
            m = re.match(r"\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(\S+)", line)
            if m:
                timers.setdefault(m.group(2), []).append(float(m.group(1)))
    return statistics.median(walls), statistics.median(cpus), {
        k: statistics.median(v) for k, v in timers.items()}


def ms(us):
    return "%.2f" % (us / 1000.0)


def gib(b):
    return "%.2f" % (b / 2.0 ** 30)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true",
                    help="gpt3-175b, TP 8, seq 2048 only; 16-layer timing")
    ap.add_argument("--skip-timing", action="store_true")
    ap.add_argument("--layers", default="2",
                    help="layers of the generated steps (default 2), or "
                         "'full' for each model's real depth (gpt3-175b 96, "
                         "llama3-70b 80)")
    ap.add_argument("--micro-batches", type=int, default=1,
                    help="micro-batches of the generated steps (default 1)")
    ap.add_argument("--sequences", type=int, default=1,
                    help="sequences per micro-batch (default 1): each case's "
                         "seq tokens are split into this many sequences "
                         "(tandem-gen --sequences), attention runs per "
                         "sequence")
    ap.add_argument("--segments", type=int, default=1,
                    help="causal segments per sequence (default 1; "
                         "tandem-gen --segments): the layout in which a "
                         "split of one sequence keeps attention per part")
    ap.add_argument("--overlap-options", default="",
                    help="more tandem-overlap options for every strategy, "
                         "e.g. 'max-in-flight=4'")
    ap.add_argument("--calibration", default="",
                    help="calibration file for planning and simulating "
                         "(default: the h200 preset)")
    ap.add_argument("--copy-engines", action="store_true",
                    help="add auto with copy-engines=true and report it as "
                         "auto")
    ap.add_argument("--scaling", action="store_true",
                    help="also time 12, 24 and 48 layers, and strategy bulk")
    args = ap.parse_args()
    full_depth = {"gpt3-175b": 96, "llama3-70b": 80}
    if args.layers != "full" and not args.layers.isdigit():
        ap.error("--layers takes a number or 'full'")
    if args.sequences < 1 or 2048 % args.sequences:
        ap.error("--sequences must divide 2048 (the shortest case's tokens), "
                 "got %d" % args.sequences)

    def depth(model):
        return full_depth[model] if args.layers == "full" else int(args.layers)
    layers_text = ("full-depth steps (gpt3-175b 96 layers, llama3-70b 80; "
                   "`tandem-gen --layers 96/80`)" if args.layers == "full"
                   else "%s-layer steps (`tandem-gen --layers %s`)"
                   % (args.layers, args.layers))
    strategies = STRATEGIES + ([AUTO_CE] if args.copy_engines else [])
    AUTO = AUTO_CE if args.copy_engines else "auto"
    gen = os.path.join(args.build, "bin", "tandem-gen")
    opt = os.path.join(args.build, "bin", "tandem-opt")

    models = ["gpt3-175b"] if args.quick else ["gpt3-175b", "llama3-70b"]
    tps = [8] if args.quick else [2, 4, 8]
    seqs = [2048] if args.quick else [2048, 4096, 8192]
    topos = ["switch", "full-mesh"]
    cases = [(m, t, s, x) for m in models for t in tps for s in seqs
             for x in topos]

    with tempfile.TemporaryDirectory() as tmp:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            results = list(ex.map(
                lambda c: run_case(gen, opt, *c, tmp, depth(c[0]),
                                   args.calibration, args.micro_batches,
                                   strategies, args.sequences,
                                   (" " + args.overlap_options
                                    if args.overlap_options else ""),
                                   args.segments),
                cases))
        good = [r for r in results if "error" not in r]
        for r in good:
            if "plain_bound_us" in r and "none" in r["reports"]:
                r["reports"]["none"]["bound_us"] = r["plain_bound_us"]
        for r in results:
            if "error" in r:
                print("- %s: %s" % (r["tag"], r["error"]))
        shown = [s for s in strategies
                 if any(r["status"].get(s) == "ok" for r in good)]

        print("Spans in ms, simulated: ", end="")
        print(layers_text + (", one micro-batch" if args.micro_batches == 1
                             else ", %d micro-batches" % args.micro_batches) +
              ("" if args.sequences == 1 else
               " of %d sequences (seq = tokens per micro-batch)"
               % args.sequences) +
              ("" if args.segments == 1 else
               ", each sequence laid out as %d causal segments "
               "(`tandem-gen --segments %d`; *bound* is the step's without "
               "segments)" % (args.segments, args.segments)) +
              ", h200" +
              (" with calibration %s" % args.calibration
               if args.calibration else " preset") + "." + " *bound*: max(compute, comm) of "
              "the input (strategy none); pipelines add chunk GEMMs and "
              "launches, so a pipelined output's own bound is a little "
              "higher. `—`: the strategy failed on that case (see below).")
        print()
        print("| model | TP | seq | topology | %s | bound | auto / bound "
              "|" % " | ".join(SHORT.get(s, s) + (" (chose)" if s == AUTO
                                                  else "") for s in shown))
        print("|---|---:|---:|---|%s---:|---:|" % ("---:|" * len(shown)))
        for r in good:
            cells = []
            for s in shown:
                rep = r["reports"].get(s)
                c = ms(rep["span_us"]) if rep else "—"
                if s == AUTO and rep:
                    c += " (%s)" % r.get("auto_choice", "?")
                cells.append(c)
            a, n = r["reports"].get(AUTO), r["reports"].get("none")
            print("| %s | %d | %d | %s | %s | %s | %s |" % (
                r["model"], r["tp"], r["seq"], r["topo"], " | ".join(cells),
                ms(n["bound_us"]) if n else "—",
                "%.3f" % (a["span_us"] / n["bound_us"]) if a and n else "—"))

        print()
        print("Auto in detail. *bwd hidden*: share of the backward pass's "
              "communication time (collectives after `loss_grad`: gradient "
              "all-gathers, re-gathers for wgrad, gradient reduce-scatters) "
              "that does not stall the compute stream; *fwd hidden* the same for the "
              "forward pass's collectives. *vs te-preset*: auto's "
              "span relative to te-preset's. Peak memory in GiB, simulated "
              "(`peak_memory_bytes`) and program order "
              "(`static_peak_memory_bytes`).")
        print()
        print("| model | TP | seq | topology | exposed comm ms | overlap eff. "
              "| bwd hidden: none / te-preset / auto "
              "| fwd hidden: none / split / auto | vs te-preset "
              "| peak none → auto | static peak none → auto |")
        print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in good:
            a, n = r["reports"].get(AUTO), r["reports"].get("none")
            t = r["reports"].get("te-preset")
            if not a or not n:
                print("| %s | %d | %d | %s | — | — | — | — | — | — | — |" % (
                    r["model"], r["tp"], r["seq"], r["topo"]))
                continue
            hid = lambda s, i=3: ("%.1f%%" % (100 * r["bwd"][s][i])
                                  if s in r["bwd"] else "—")
            print("| %s | %d | %d | %s | %s | %.1f%% | %s / %s / %s "
                  "| %s / %s / %s | %s "
                  "| %s → %s | %s → %s |" % (
                      r["model"], r["tp"], r["seq"], r["topo"],
                      ms(a["exposed_comm_us"]),
                      100 * a["overlap_efficiency"], hid("none"),
                      hid("te-preset"), hid(AUTO), hid("none", 4),
                      hid("split", 4), hid(AUTO, 4),
                      ("%+.1f%%" % (100 * (a["span_us"] / t["span_us"] - 1)))
                      if t else "—",
                      gib(n["peak_memory_bytes"]), gib(a["peak_memory_bytes"]),
                      gib(n["static_peak_memory_bytes"]),
                      gib(a["static_peak_memory_bytes"])))

        print()
        print("Auto's gap to the bound, term by term, in ms: *span - bound* = "
              "*exposed* (communication the compute stream waits for) + "
              "*contention* (compute ops' simulated time over their time "
              "alone: collectives beside them, SM targets) + *overhead* (the "
              "compute ops' time alone over the input's: chunk or part "
              "GEMMs' waves, layout copies, launches, partial sums; with "
              "--segments, over the step's without segments) + "
              "*other* (the rest: compute waiting on compute of another "
              "stream, and, where communication bounds the step, the bound "
              "itself not being compute).")
        print()
        print("| model | TP | seq | topology | auto | span - bound | exposed "
              "| contention | overhead | other |")
        print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|")
        for r in good:
            a, n = r["reports"].get(AUTO), r["reports"].get("none")
            if not a or not n or AUTO not in r["busy"] or \
                    "none" not in r["busy"]:
                continue
            gap = a["span_us"] - n["bound_us"]
            busy, alone = r["busy"][AUTO]
            contention = busy - alone
            overhead = alone - r.get("plain_alone_us",
                                     r["busy"]["none"][1])
            exposed = a["exposed_comm_us"]
            other = gap - exposed - contention - overhead
            print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                r["model"], r["tp"], r["seq"], r["topo"],
                r.get("auto_choice", "?"), ms(gap), ms(exposed),
                ms(contention), ms(overhead), ms(other)))

        print()
        for s in strategies:
            bad = {}
            for r in good:
                st = r["status"].get(s, "not run")
                if st != "ok":
                    bad.setdefault(st, []).append(r["tag"])
            if bad:
                for st, tags in sorted(bad.items()):
                    print("- `strategy=%s`: %s in %d of %d cases (%s)" % (
                        s, st, len(tags), len(good), ", ".join(tags[:4]) +
                        (", ..." if len(tags) > 4 else "")))
        dev = max((abs(r["bwd"][s][0] - r["reports"][s]["exposed_comm_us"])
                   for r in good for s in r["bwd"]), default=0.0)
        print("- check: the trace-derived exposed communication matches the "
              "report's `exposed_comm_us` to %.3g us in every run" % dev)
        slower = ["%s %s (%+.1f%%)" % (
            r["tag"], s, 100 * (r["reports"][s]["span_us"] /
                                r["reports"]["none"]["span_us"] - 1))
                  for r in good for s in strategies
                  if s in r["reports"] and "none" in r["reports"] and
                  r["reports"][s]["span_us"] >
                  r["reports"]["none"]["span_us"] * (1 + 1e-9)]
        print("- slower than none: %s" % ("; ".join(slower) if slower
                                          else "no strategy in no case"))
        with_auto = [r for r in good if AUTO in r["bwd"]]
        if with_auto:
            h = sorted((r["bwd"][AUTO][3], r["tag"]) for r in with_auto)
            print("- backward communication hidden by auto: min %.1f%% (%s), "
                  "median %.1f%%, max %.1f%% (%s); %d of %d cases reach 97%%"
                  % (100 * h[0][0], h[0][1],
                     100 * statistics.median(x for x, _ in h),
                     100 * h[-1][0], h[-1][1],
                     sum(1 for x, _ in h if x >= 0.97), len(h)))
            f = sorted(r["bwd"][AUTO][4] for r in with_auto)
            print("- forward communication hidden by auto: min %.1f%%, median "
                  "%.1f%%, max %.1f%%" % (100 * f[0],
                                         100 * statistics.median(f),
                                         100 * f[-1]))
            over = sorted(r["reports"][AUTO]["span_us"] /
                          r["reports"]["none"]["bound_us"]
                          for r in with_auto if "none" in r["reports"])
            if over:
                print("- auto span / bound: min %.3f, median %.3f, max %.3f; "
                      "%d of %d cases at most 1.10" % (
                          over[0], statistics.median(over), over[-1],
                          sum(1 for x in over if x <= 1.10), len(over)))
            if AUTO != "auto":
                # Today's auto, side by side in this run.
                plain = [r for r in good if "auto" in r["reports"] and
                         "none" in r["reports"] and "auto" in r["bwd"]]
                o = sorted(r["reports"]["auto"]["span_us"] /
                           r["reports"]["none"]["bound_us"] for r in plain)
                f = sorted(r["bwd"]["auto"][4] for r in plain)
                g = sorted(r["reports"][AUTO]["span_us"] /
                           r["reports"]["auto"]["span_us"]
                           for r in plain if AUTO in r["reports"])
                if o:
                    print("- auto without copy engines, same run: span / "
                          "bound median %.3f, max %.3f, %d of %d at most "
                          "1.10; forward hidden median %.1f%%; auto+ce / "
                          "auto: min %.3f, median %.3f, max %.3f" % (
                              statistics.median(o), o[-1],
                              sum(1 for x in o if x <= 1.10), len(o),
                              100 * statistics.median(f), g[0],
                              statistics.median(g), g[-1]))
            chose = collections.Counter(r.get("auto_choice", "?")
                                        for r in with_auto)
            print("- auto chose: %s" % ", ".join(
                "%s %d" % kv for kv in sorted(chose.items())))
        both = [r for r in good if AUTO in r["reports"] and
                "te-preset" in r["reports"]]
        if both:
            worse = [r["tag"] for r in both if r["reports"][AUTO]["span_us"]
                     > r["reports"]["te-preset"]["span_us"] * (1 + 1e-9)]
            worst = [r["tag"] for r in good if AUTO in r["reports"] and
                     any(s != AUTO and s in r["reports"] and
                         r["reports"][AUTO]["span_us"] >
                         r["reports"][s]["span_us"] * (1 + 1e-9)
                         for s in strategies)]
            print("- auto slower than another strategy: %d of %d cases%s" % (
                len(worst), len(good),
                (" (%s)" % ", ".join(worst)) if worst else ""))
            print("- auto slower than te-preset: %d of %d cases%s" % (
                len(worse), len(both),
                (" (%s)" % ", ".join(worse)) if worse else ""))

        if args.skip_timing:
            return
        layers, mbs = (16, 8) if args.quick else (96, 8)
        sweep = sorted({12, 24, 48, layers}) if args.scaling else [layers]
        print()
        print("Pipeline time: gpt3-175b, %s layers x %d micro-batches, TP 8, "
              "seq 2048, h200 switch; median of %d runs. *tandem-overlap ms* "
              "is -mlir-timing's time for the pass; *wall* and *cpu* (user + "
              "system) are the whole tandem-opt command, parsing and printing "
              "included." % ("/".join(str(n) for n in sweep), mbs,
                             args.repeat))
        print()
        print("| layers | ops | command | parse ms | tandem-overlap ms "
              "| wall s | cpu s |")
        print("|---:|---:|---|---:|---:|---:|---:|")
        for n in sweep:
            big = os.path.join(tmp, "big%d.mlir" % n)
            subprocess.run([gen, "--model", "gpt3-175b", "--layers", str(n),
                            "--micro-batches", str(mbs), "--tp", "8",
                            "--seq", "2048", "--target", "h200",
                            "--topology", "switch", "-o", big], check=True)
            with open(big) as fh:
                ops = sum(1 for line in fh if " = tandem." in line
                          or line.strip().startswith("tandem."))
            base = [opt, big, "-o", os.devnull, "-mlir-timing"]
            commands = [("parse + print only", [])]
            if args.scaling:
                commands.append(("strategy=bulk",
                                 ["--tandem-overlap=strategy=bulk"]))
            commands += [("strategy=reschedule",
                          ["--tandem-overlap=strategy=reschedule"]),
                         ("strategy=auto", ["--tandem-overlap=strategy=auto"])]
            for label, extra in commands:
                wall, cpu, timers = timed(base + extra, args.repeat)
                print("| %d | %d | %s | %.1f | %s | %.3f | %.3f |" % (
                    n, ops, label, 1e3 * timers.get("Parser", 0.0),
                    ("%.1f" % (1e3 * timers["TandemOverlap"]))
                    if "TandemOverlap" in timers else "—", wall, cpu),
                    flush=True)


if __name__ == "__main__":
    main()
