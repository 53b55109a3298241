"""Command line: tandem-import FILE -o OUT.mlir [--target NAME] ..."""

import argparse
import sys

try:
    from . import fx
    from .driver import ImportError_, import_fx, import_stablehlo
    from .groups import load_config
except ModuleNotFoundError as _missing:  # numpy: the graph's constants
    print(f"tandem-import: error: {_missing}: the importer needs numpy (and jax for "
          "StableHLO; bash tools/tandem-dev.sh installs both)", file=sys.stderr)
    sys.exit(1)


def _cost(spec):
    name, _, rest = spec.partition("=")
    flops, _, nbytes = rest.partition(",")
    try:
        return name, (float(flops), int(nbytes))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--opaque-cost wants NAME=FLOPS,BYTES, got '{spec}'") from None


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="tandem-import",
        description="Import a StableHLO module (jax.jit(f).lower(...).as_text()) or a "
                    "PyTorch FX step (a tandem-fx JSON dump) as a tandem training step "
                    "for tandem-opt --tandem-overlap.")
    p.add_argument("file", help="StableHLO text, pretty or generic form, or an FX dump "
                                "('-': stdin)")
    p.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    p.add_argument("--target", default="h200", help="h100, h200 or mi300x (default h200)")
    p.add_argument("--topology", default=None,
                   help="switch, full-mesh or ring (default: full-mesh on mi300x, "
                        "switch otherwise)")
    p.add_argument("--function", default=None,
                   help="the function to import (default: main, else the public one)")
    p.add_argument("--groups-config", default=None,
                   help="JSON {\"groups\": {AXIS: {topology, links, bandwidth_gbps, "
                        "latency_us}}} overriding a group's figures")
    p.add_argument("--opaque-cost", action="append", type=_cost, default=[],
                   metavar="NAME=FLOPS,BYTES", help="cost of a custom_call target")
    p.add_argument("--order", default="graph",
                   help="FX dumps: 'graph' (the graphs' own order, blocking collectives) "
                        "or an order the dump records, e.g. 'inductor' (collectives "
                        "issued and waited for where Inductor put them)")
    p.add_argument("--quiet", action="store_true", help="print no remarks")
    args = p.parse_args(argv)
    try:
        text = sys.stdin.read() if args.file == "-" else open(args.file).read()
    except OSError as err:
        print(f"tandem-import: error: {err}", file=sys.stderr)
        return 1
    try:
        if fx.is_dump(text):
            result = import_fx(fx.load(text), order=args.order, target=args.target,
                               topology=args.topology,
                               groups_config=load_config(args.groups_config),
                               opaque_cost=dict(args.opaque_cost))
        elif args.order != "graph":
            raise ImportError_("--order applies to FX dumps only")
        else:
            result = import_stablehlo(text, target=args.target, topology=args.topology,
                                      function=args.function,
                                      groups_config=load_config(args.groups_config),
                                      opaque_cost=dict(args.opaque_cost))
    except ImportError_ as err:
        print(f"tandem-import: error: {err}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as err:
        print(f"tandem-import: error: {err}: the importer needs jax "
              "(bash tools/tandem-dev.sh installs it)", file=sys.stderr)
        return 1
    if not args.quiet:
        for r in result.remarks:
            print(f"tandem-import: remark: {r}", file=sys.stderr)
        s = result.stats
        print("tandem-import: remark: matmuls: %d fprop, %d dgrad, %d wgrad; %s" % (
            s["fprop"], s["dgrad"], s["wgrad"],
            ", ".join(f"{s[k]} {k}" for k in ("attention", "attention_grad", "norm",
                                               "norm_grad") if k in s) or "no regions"),
            file=sys.stderr)
        coll = s.get("collectives", {})
        print("tandem-import: remark: collectives: %s" % (", ".join(
            f"{coll[k]} {k}" for k in sorted(coll)) or "none"), file=sys.stderr)
    if args.output == "-":
        sys.stdout.write(result.text)
    else:
        with open(args.output, "w") as f:
            f.write(result.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
