"""A torch.compile backend that imports the joint forward + backward graph it
is handed and prints Tandem's schedule for it (docs/import.md, "PyTorch FX").

    from tandem_import.fx_backend import tandem_backend
    model = torch.compile(model, backend=tandem_backend(tandem_opt="build/bin/tandem-opt"))
    loss = model(x)[0]; loss.backward()

AOTAutograd traces the joint graph; the backend's partition hook imports it
(through fx_dump, the path the checked-in dumps take), runs
`tandem-opt --tandem-overlap --tandem-simulate=summary=true` on the step and
prints the remarks and the summary, then partitions as AOTAutograd's
default partitioner does and runs the forward and backward graphs eagerly:
the program's results are PyTorch's own.
"""

import os
import subprocess
import tempfile


def tandem_backend(tandem_opt=None, target="h200", topology=None, strategy="auto",
                   mesh=None, group_axes=None, keep=None, print_fn=print):
    """Returns the backend. `tandem_opt` is the tandem-opt binary (default:
    $TANDEM_OPT, else tandem-opt on PATH); `keep` a directory where the
    imported step (step<N>.mlir) is written; `mesh` / `group_axes` name the
    mesh axes when the graph uses several process groups."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.partitioners import default_partition

    from .driver import import_fx

    opt = tandem_opt or os.environ.get("TANDEM_OPT", "tandem-opt")
    count = [0]

    def report(joint):
        result = import_fx(joint, target=target, topology=topology, mesh=mesh,
                           group_axes=group_axes)
        count[0] += 1
        path = None
        if keep:
            os.makedirs(keep, exist_ok=True)
            path = os.path.join(keep, f"step{count[0]}.mlir")
            with open(path, "w") as f:
                f.write(result.text)
        with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
            f.write(result.text)
            tmp = f.name
        try:
            p = subprocess.run([opt, tmp, "--mlir-print-op-on-diagnostic=false",
                                f"--tandem-overlap=strategy={strategy}",
                                "--tandem-simulate=summary=true", "-o", os.devnull],
                               capture_output=True, text=True)
        finally:
            os.unlink(tmp)
        s = result.stats
        regions = ", ".join(f"{s[k]} {k}" for k in ("attention", "attention_grad", "norm",
                                                    "norm_grad") if k in s)
        coll = ", ".join(f"{v} {k}" for k, v in sorted(s.get("collectives", {}).items()))
        print_fn(f"tandem: imported {path or 'the joint graph'}: matmuls {s['fprop']} "
                 f"fprop, {s['dgrad']} dgrad, {s['wgrad']} wgrad; {regions or 'no regions'}; "
                 f"collectives: {coll or 'none'}")
        if p.returncode != 0:
            print_fn(f"tandem: {opt} failed ({p.returncode}):\n{p.stderr}")
        else:
            print_fn(p.stderr.rstrip())

    def partition(joint_module, joint_inputs, **kwargs):
        report(joint_module)
        return default_partition(joint_module, joint_inputs, **kwargs)

    def compiler(gm, example_inputs):
        return make_boxed_func(gm.forward)

    return aot_autograd(fw_compiler=compiler, bw_compiler=compiler,
                        partition_fn=partition)
