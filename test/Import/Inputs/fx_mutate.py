"""Writes a copy of an FX dump with one field replaced, for the error tests:
fx_mutate.py IN OUT PATH JSON, where PATH is a '/'-separated path of keys and
list indices (e.g. graphs/0/nodes/6/val/shape/0) and JSON the new value."""
import json
import sys

src, out, path, value = sys.argv[1:5]
dump = json.load(open(src))
keys = [int(k) if k.isdigit() else k for k in path.split("/")]
cur = dump
for k in keys[:-1]:
    cur = cur[k]
cur[keys[-1]] = json.loads(value)
with open(out, "w") as f:
    json.dump(dump, f)
