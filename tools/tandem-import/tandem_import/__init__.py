"""tandem-import: StableHLO (as JAX lowers it) -> a tandem training step.

Library use::

    from tandem_import import import_stablehlo
    result = import_stablehlo(open("step.mlir").read(), target="h200")
    open("step.tandem.mlir", "w").write(result.text)
    for remark in result.remarks: print(remark)

docs/import.md lists what is mapped to what and what is refused.
"""

try:
    from .driver import ImportResult, TandemImportError, import_fx, import_stablehlo  # noqa: F401
except ModuleNotFoundError as _missing:  # numpy: `python -m tandem_import` says so
    _MISSING = _missing

    def __getattr__(name):
        raise _MISSING
