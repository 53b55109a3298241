"""The live path of the FX importer (test/Import/FX/live.test; needs torch):
a joint graph from AOTAutograd's aot_export_module imported as a
GraphModule, and the torch.compile backend on the same model."""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "tandem-import"))

import torch  # noqa: E402
from torch._functorch.aot_autograd import aot_export_module  # noqa: E402

import make_fx_inputs as m  # noqa: E402
from tandem_import import import_fx  # noqa: E402
from tandem_import.fx_backend import tandem_backend  # noqa: E402

m.init_fake(8)
model, x = m.build(m.SHAPES["small"], 8, 1)
gm, _ = aot_export_module(model, [x], trace_joint=True, output_loss_index=0)
r = import_fx(gm)
print("aot_export_module:", {k: r.stats[k] for k in sorted(r.stats)})
out = sys.argv[1] if len(sys.argv) > 1 else None
if out:
    with open(out, "w") as f:
        f.write(r.text)
compiled = torch.compile(model, backend=tandem_backend(tandem_opt=shutil.which("tandem-opt")))
loss, = compiled(x)
loss.backward()
print("backward ran:", tuple(model.layers[0].mlp.fc2.weight.grad.shape))
