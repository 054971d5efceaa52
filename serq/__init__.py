"""serq-py: the serQ language in Python.

The pipeline is text → `serq.syntax` (surface AST) → later phases; `serq.api`
chains the phases for the command line and the language server.

From a notebook, as with the reference's `pyserq`:

    import serq
    report = serq.run(serq.compile("examples/mm1.sq", horizon=2000))
    report.observe("sojourn").mean

`compile`, `run`, `Compiled` and `Report` load on first use, so `import serq` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from serq.report.model import Report
    from serq.sim.api import Compiled, compile, run

__all__ = ["Compiled", "Report", "__version__", "compile", "run"]

_LAZY = {
    "compile": "serq.sim.api",
    "run": "serq.sim.api",
    "Compiled": "serq.sim.api",
    "Report": "serq.report.model",
}


def __getattr__(name: str) -> Any:
    """Load `compile`, `run`, `Compiled` and `Report` when first asked for."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'serq' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
