"""Writes a broken variant of an FX dump for test/Import/FX/errors.test:
    python3 fx_variant.py IN.fx.json VARIANT OUT.json"""
import json
import sys

src, variant, out = sys.argv[1:4]
d = json.load(open(src))
fwd = d["graphs"][0]["nodes"]


def node(name):
    return next(n for n in fwd if n["name"] == name)


if variant == "no-group":
    d["groups"] = {}
elif variant == "axis":
    d["groups"] = {k: "dp" for k in d["groups"]}
elif variant == "symbolic":
    node("mm")["val"]["shape"] = ["s0", 128]
elif variant == "version":
    d["version"] = 7
elif variant == "not-dump":
    d = {"nodes": []}
elif variant == "order-missing":
    d["orders"]["inductor"] = d["orders"]["inductor"][:-1]
elif variant == "order-before-def":
    order = d["orders"]["inductor"]
    i, j = order.index("forward/mm"), order.index("forward/wait_tensor")
    order[i], order[j] = order[j], order[i]
elif variant == "reduce-avg":
    node("reduce_scatter_tensor")["args"][1] = "avg"
elif variant == "a2a-unequal":
    n = node("all_gather_into_tensor")
    n["target"] = "_c10d_functional.all_to_all_single.default"
    n["args"] = [n["args"][0], [40, 24, 32, 32, 32, 32, 32, 32], None, n["args"][2]]
elif variant == "placeholder-link":
    d["links"]["backward"].pop(next(iter(d["links"]["backward"])))
else:
    sys.exit(f"unknown variant {variant}")
json.dump(d, open(out, "w"))
