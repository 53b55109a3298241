#!/usr/bin/env python3
"""Benchmark: Tandem's `auto` against Inductor's compute-communication order
on the same PyTorch graph (issue 18, part 2). Simulated; lit never runs it.

For each case (llama3-8b and llama3-70b layer shapes, TP 4 and 8; --layers
layers, sequence --seq) the Megatron-style TP+SP model of
test/Import/Inputs/make_fx_inputs.py is compiled by torch.compile with
Inductor on the CPU (fake process group) twice:

  inductor     Inductor as this torch runs it by default: the scheduler's
               compute-communication pass torch._inductor.comms.simple_overlap
               (aten_distributed_optimizations.enable_simple_overlap, on)
  inductor-os  also the opt-in FX-level overlap scheduler
               (aten_distributed_optimizations.enable_overlap_scheduling, with
               its analytical compute and collective estimators; the roofline
               reads Inductor's H100 datasheet FLOP/s and 4.8 TB/s)

and the graphs Inductor scheduled are dumped with the order its passes left
them in (tandem_import.fx_dump). Each dump is imported twice with
tandem-import: in the graphs' own order (blocking collectives; what Tandem
starts from) and in Inductor's order (each collective issued where
Inductor issues it and waited for at its wait_tensor). Then, per topology
(switch, full-mesh; h200 target):

  none      tandem-opt graph.mlir --tandem-simulate
  auto      tandem-opt graph.mlir --tandem-overlap --tandem-simulate
  inductor  tandem-opt inductor.mlir --tandem-async-collectives --tandem-simulate

(--tandem-async-collectives only stamps the issue order; nothing moves),
every pass priced with --calibration, and the table gives the spans and
auto / Inductor.

usage (the capture needs torch; see docs/import.md):
  /work/torch-venv/bin/python test/benchmarks/fx-inductor-peer.py \\
      [--build build] [--out DIR] [--layers 2] [--seq 8192] [--quick]
  ... --prepare   also writes runtime plans for tandem-run under DIR/plans:
                  <case>.<topology>.{reference,inductor,auto}.json and the
                  commands to run them on one GPU with the emulated fabric
                  (DIR/plans/run.sh)
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
CAPTURE = os.path.join(ROOT, "test", "Import", "Inputs", "make_fx_inputs.py")
CASES = [("llama3-8b", 4), ("llama3-8b", 8), ("llama3-70b", 4), ("llama3-70b", 8)]
TOPOLOGIES = ["switch", "full-mesh"]
CONFIGS = {"inductor": [], "inductor-os": ["--overlap-scheduling"]}


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=env)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-3000:]}")
    return p


def capture(args, model, tp, config, path):
    if os.path.exists(path):
        return
    cmd = [args.python, CAPTURE, "--capture", model, str(tp), str(args.layers),
           str(args.seq), path] + CONFIGS[config]
    print(f"capturing {model} TP={tp} ({config}) ...", flush=True)
    p = run(cmd)
    print("  " + p.stdout.strip().splitlines()[-1], flush=True)


def import_step(args, dump, order, topology, out):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tools", "tandem-import"))
    run([sys.executable, "-m", "tandem_import", dump, "--order", order, "--topology",
         topology, "-o", out, "--quiet"], env=env)


def simulate(args, mlir, passes, report, plan=None):
    cal = f" calibration={args.calibration}" if args.calibration else ""
    passes = [f"{p}={cal.strip()}" if cal and p == "--tandem-overlap" else p
              for p in passes]
    cmd = [args.tandem_opt, mlir, "--mlir-print-op-on-diagnostic=false"] + passes + \
        [f"--tandem-simulate=report={report}{cal}"]
    if plan:
        cmd.append(f"--tandem-export-plan=file={plan}{cal}")
    p = run(cmd + ["-o", os.devnull])
    with open(report) as f:
        r = json.load(f)
    fn = r["functions"][0] if "functions" in r else r
    chosen = re.search(r"strategy (\S+) chosen", p.stderr)
    return fn["span_us"], (chosen.group(1) if chosen else "")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--out", default=None,
                   help="work directory (default: BUILD/fx-inductor-peer)")
    p.add_argument("--python", default=sys.executable,
                   help="a Python with torch, for the capture (default: this one)")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--seq", type=int, default=8192)
    p.add_argument("--quick", action="store_true", help="llama3-8b TP=8 only")
    p.add_argument("--calibration",
                   default=os.path.join(HERE, "results", "h200-2026-12-04",
                                        "calibration-emulated.json"),
                   help="the calibration every pass prices with (default: the "
                        "H200's of 2026-12-04 fitted against the emulated fabric, "
                        "the machine the plans run on; '' for the h200 preset)")
    p.add_argument("--prepare", action="store_true",
                   help="also export the plans of every case for tandem-run")
    args = p.parse_args()
    args.tandem_opt = os.path.join(args.build, "bin", "tandem-opt")
    args.out = args.out or os.path.join(args.build, "fx-inductor-peer")
    os.makedirs(args.out, exist_ok=True)
    cases = CASES[1:2] if args.quick else CASES
    rows, settings = [], {}
    plans = os.path.join(args.out, "plans")
    if args.prepare:
        os.makedirs(plans, exist_ok=True)
    for model, tp in cases:
        dumps = {}
        for config in CONFIGS:
            dumps[config] = os.path.join(
                args.out, f"{model}-tp{tp}-l{args.layers}-s{args.seq}.{config}.fx.json")
            capture(args, model, tp, config, dumps[config])
            with open(dumps[config]) as f:
                info = json.load(f)["inductor"]
            settings[config] = {k: info[k] for k in ("pass", "settings", "device")}
            settings.setdefault("moved", {})[f"{model}-tp{tp}.{config}"] = \
                info["positions_changed"]
        for topo in TOPOLOGIES:
            name = f"{model}-tp{tp}.{topo}"
            work = os.path.join(args.out, name)
            g = work + ".graph.mlir"
            import_step(args, dumps["inductor"], "graph", topo, g)
            plan = (lambda kind: os.path.join(plans, f"{name}.{kind}.json")) \
                if args.prepare else (lambda kind: None)
            none, _ = simulate(args, g, [], work + ".none.json", plan("reference"))
            auto, chosen = simulate(args, g, ["--tandem-overlap"], work + ".auto.json",
                                    plan("auto"))
            row = {"case": f"{model} TP={tp}", "topology": topo, "none_us": none,
                   "auto_us": auto, "auto": chosen}
            for config in CONFIGS:
                m = f"{work}.{config}.mlir"
                import_step(args, dumps[config], "inductor", topo, m)
                span, _ = simulate(args, m, ["--tandem-async-collectives"],
                                   f"{work}.{config}.json",
                                   plan(config) if config == "inductor" else None)
                row[f"{config}_us"] = span
            rows.append(row)
            print(f"{name}: none {none:.1f} us, auto {auto:.1f} us ({chosen}), Inductor "
                  f"{row['inductor_us']:.1f} us, Inductor+overlap-scheduling "
                  f"{row['inductor-os_us']:.1f} us", flush=True)
    print()
    print("| case | topology | none (us) | Inductor (us) | Inductor + FX overlap "
          "scheduling (us) | auto (us) | auto's strategy | auto / Inductor | "
          "auto / Inductor+OS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['topology']} | {r['none_us']:.1f} | "
              f"{r['inductor_us']:.1f} | {r['inductor-os_us']:.1f} | {r['auto_us']:.1f} | "
              f"{r['auto']} | {r['auto_us'] / r['inductor_us']:.3f} | "
              f"{r['auto_us'] / r['inductor-os_us']:.3f} |")
    print()
    print("Inductor scheduler positions changed by its passes:",
          json.dumps(settings.pop("moved")))
    for config, s in settings.items():
        print(f"{config}: {json.dumps(s)}")
    with open(os.path.join(args.out, "fx-inductor-peer.json"), "w") as f:
        json.dump({"layers": args.layers, "seq": args.seq, "rows": rows,
                   "inductor": settings}, f, indent=1)
    if args.prepare:
        with open(os.path.join(plans, "run.sh"), "w") as f:
            f.write("#!/usr/bin/env bash\n# One rank of each TP plan on one GPU, "
                    "collectives on the emulated fabric (docs/runtime.md).\n"
                    "# usage: bash run.sh BUILD_DIR\nset -euo pipefail\n"
                    "B=${1:-build}; here=$(cd \"$(dirname \"$0\")\" && pwd)\n"
                    "export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1\n")
            for r in rows:
                name = f"{r['case'].replace(' TP=', '-tp')}.{r['topology']}"
                for kind in ("inductor", "auto"):
                    f.write(f"\"$B/bin/tandem-run\" \"$here/{name}.{kind}.json\" "
                            f"--emulate-fabric --check --reference "
                            f"\"$here/{name}.reference.json\" --warmup 3 --iters 15 "
                            f"--json \"$here/{name}.{kind}.result.json\"\n")
        print(f"plans and run.sh in {plans}")


if __name__ == "__main__":
    main()
