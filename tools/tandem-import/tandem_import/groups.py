"""Process groups: mesh axes (or replica groups) -> tandem.group declarations.

The figures follow tandem-gen (docs/tandem-gen.md, "Process groups and their
figures"): per-GPU links and bandwidth by target, 2.0 us per step (an
assumption), a node of 8 GPUs, groups spanning nodes hierarchical with one
400 Gb/s NIC per GPU.
"""

import itertools
import json
import math

from .graph import ImportError_, is_int

# target -> (links per GPU, GB/s per link per direction)
NODE_NETWORKS = {"h100": (18, 25.0), "h200": (18, 25.0), "mi300x": (7, 64.0)}
LINK_LATENCY_US = 2.0
GPUS_PER_NODE = 8
INTER_NODE_GBPS = 50.0
INTER_NODE_LATENCY_US = 5.0
TOPOLOGIES = ("switch", "full-mesh", "ring")


def default_topology(target):
    return "full-mesh" if target == "mi300x" else "switch"


def group_decl(name, size, devices, target, topology, override=None):
    links, bw = NODE_NETWORKS[target]
    total = links * bw
    nodes = {d // GPUS_PER_NODE for d in devices}
    o = override or {}
    if len(nodes) > 1:
        per_node = max(1, size // len(nodes))
        text = (f"tandem.group @{name} size({size}) hierarchical links({links} x "
                f"{float(o.get('bandwidth_gbps', bw)):e} GBps, "
                f"{float(o.get('latency_us', LINK_LATENCY_US)):e} us) "
                f"{{gpus_per_node = {per_node} : i64, inter_node_bandwidth_gbps = "
                f"{float(o.get('inter_node_bandwidth_gbps', INTER_NODE_GBPS)):e} : f64, "
                f"inter_node_latency_us = "
                f"{float(o.get('inter_node_latency_us', INTER_NODE_LATENCY_US)):e} : f64}}")
        return text
    topo = o.get("topology", topology)
    if topo == "switch":
        kind, n, b = "switch", links, bw
    elif topo == "full-mesh":
        kind, n, b = "full_mesh", max(1, size - 1), total / (GPUS_PER_NODE - 1)
    elif topo == "ring":
        n = 1 if size <= 2 else 2
        kind, b = "ring", total / n
    else:
        raise _unknown_topology(topo)
    n = int(o.get("links", n))
    b = float(o.get("bandwidth_gbps", b))
    lat = float(o.get("latency_us", LINK_LATENCY_US))
    return f"tandem.group @{name} size({size}) {kind} links({n} x {b:e} GBps, {lat:e} us)"


def _unknown_topology(topo, where=""):
    return ImportError_(f"{where}unknown topology '{topo}' (known: "
                        f"{', '.join(TOPOLOGIES)})")


# --groups-config: the figures a group's entry may override, and their checks.
_CONFIG_NUMBERS = ("bandwidth_gbps", "latency_us", "inter_node_bandwidth_gbps",
                   "inter_node_latency_us")
_CONFIG_KEYS = ("topology", "links") + _CONFIG_NUMBERS


def load_config(path):
    """The "groups" of a --groups-config file, each checked: a wrong key or
    value is an error naming the file and the entry, never a traceback."""
    if not path:
        return {}
    where = f"--groups-config {path}"
    try:
        with open(path) as f:
            cfg = json.load(f)
    except OSError as err:
        raise ImportError_(f"{where}: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise ImportError_(f"{where}: not valid JSON: {err}") from None
    except RecursionError:
        raise ImportError_(f"{where}: nested too deeply to read") from None
    if not isinstance(cfg, dict) or not isinstance(cfg.get("groups", {}), dict):
        raise ImportError_(f'{where}: expected {{"groups": {{<axis>: {{...}}}}}}')
    groups = cfg.get("groups", {})
    for axis, entry in groups.items():
        at = f"{where}: groups.{axis}"
        if not isinstance(entry, dict):
            raise ImportError_(f"{at} must be an object")
        for key, value in entry.items():
            if key not in _CONFIG_KEYS:
                raise ImportError_(f"{at}: unknown field '{key}' (known: "
                                   f"{', '.join(_CONFIG_KEYS)})")
            if key == "topology" and value not in TOPOLOGIES:
                raise _unknown_topology(value, at + ": ")
            if key == "links" and (not is_int(value) or value < 1):
                raise ImportError_(f"{at}: links must be an integer >= 1, got {value!r}")
            if key in _CONFIG_NUMBERS and (
                    isinstance(value, bool) or not isinstance(value, (int, float))
                    or not math.isfinite(value) or value <= 0):
                raise ImportError_(f"{at}: {key} must be a positive number, got {value!r}")
    return groups


class GroupTable:
    """Matches replica groups against the mesh's axes."""

    def __init__(self, mesh, num_devices):
        self.mesh = mesh
        self.used = {}  # name -> (size, devices)
        self.candidates = []  # (name, partition as list of lists)
        if mesh and mesh["axes"]:
            axes = mesh["axes"]
            sizes = [s for _, s in axes]
            total = 1
            for s in sizes:
                total *= s
            ids = mesh.get("device_ids") or list(range(total))
            coords = list(itertools.product(*[range(s) for s in sizes]))
            for r in range(1, len(axes) + 1):
                for subset in itertools.combinations(range(len(axes)), r):
                    buckets = {}
                    for pos, c in enumerate(coords):
                        key = tuple(c[i] for i in range(len(axes)) if i not in subset)
                        buckets.setdefault(key, []).append(ids[pos])
                    name = "_".join(axes[i][0] for i in subset)
                    self.candidates.append((name, [buckets[k] for k in sorted(buckets)]))
            self.num_devices = total
        else:
            self.num_devices = num_devices

    def partition(self, name):
        """The replica groups of the mesh axis (or `_`-joined axes) `name`."""
        for cand, part in self.candidates:
            if cand == name:
                return part
        return None

    def describe_axes(self):
        if not self.mesh or not self.mesh["axes"]:
            return "no sdy.mesh"
        return "mesh @%s with axes %s" % (self.mesh["name"], ", ".join(
            f"{a}={s}" for a, s in self.mesh["axes"]))

    def match(self, groups, what):
        """The group name of a collective's replica groups."""
        if not groups or groups == [[]]:
            groups = [list(range(self.num_devices or 1))]
        if self.candidates:
            want = sorted(tuple(x) for x in groups)
            for name, part in self.candidates:
                if sorted(tuple(x) for x in part) == want:
                    self.used[name] = (len(part[0]), part[0])
                    return name, len(part[0]), part
            hint = "; ".join(f"'{n}' is {p}" for n, p in self.candidates[:4])
            raise ImportError_(
                f"{what}: replica groups {groups} do not match any axis of the "
                f"{self.describe_axes()} ({hint}); tandem groups are mesh axes")
        sizes = {len(x) for x in groups}
        if len(sizes) != 1:
            raise ImportError_(f"{what}: replica groups {groups} have different sizes")
        size = sizes.pop()
        key = sorted(tuple(x) for x in groups)
        for name, part in self.candidates:
            if sorted(tuple(x) for x in part) == key:
                return name, size, part
        name = f"g{len(self.candidates)}"
        self.candidates.append((name, [list(x) for x in groups]))
        self.used[name] = (size, list(groups[0]))
        return name, size, groups

    def permute_shift(self, pairs, what):
        """(group name, size, shift) of a collective_permute."""
        for name, part in sorted(self.candidates, key=lambda c: len(c[1][0])):
            pos = {}
            for gi, grp in enumerate(part):
                for i, d in enumerate(grp):
                    pos[d] = (gi, i)
            shifts = set()
            ok = True
            for s, t in pairs:
                if s not in pos or t not in pos or pos[s][0] != pos[t][0]:
                    ok = False
                    break
                shifts.add((pos[t][1] - pos[s][1]) % len(part[0]))
            covered = {s for s, _ in pairs}
            if ok and len(shifts) == 1 and len(covered) == len(pos):
                self.used[name] = (len(part[0]), part[0])
                return name, len(part[0]), shifts.pop()
        raise ImportError_(f"{what}: source_target_pairs {pairs} are not one shift "
                           f"within an axis of the {self.describe_axes()}")
