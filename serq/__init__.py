"""serq-py: the serQ language in Python.

The pipeline is text → `serq.syntax` (surface AST) → later phases; `serq.api`
chains the phases for the command line and the language server.

From a notebook, as with the reference's `pyserq`:

    import serq
    report = serq.run(serq.compile("examples/mm1.sq", horizon=2000))
    report.observe("sojourn").mean

A sweep runs a program over a grid of `let` values with replications:

    result = serq.sweep("examples/mm1.sq", sets={"lambda": "0.5:0.9:0.1"}, seeds=5)
    result.points[0]["sojourn"], result.points[0]["sojourn_ci"]

A run that finishes but stopped moving somewhere (a step engine that plans nothing,
sessions that wait for each other, a job of infinite work) returns its report and warns
with `serq.RunWarning` (Python's `warnings`), whose message is the diagnostic.

`compile`, `run`, `sweep`, `Compiled`, `Report`, `SweepResult` and `RunWarning` load on
first use, so
`import serq` stays light (and never loads dask, matplotlib, pandas or pyarrow).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from serq import dataclass_code  # noqa: E402  (the version first: it reads nothing of serq)

dataclass_code.install()  # fast path: serq's ~140 dataclasses compile their methods once

if TYPE_CHECKING:
    from serq.report.model import Report
    from serq.sim.api import Compiled, RunWarning, compile, run
    from serq.sweeps import SweepResult, sweep

__all__ = [
    "Compiled",
    "Report",
    "RunWarning",
    "SweepResult",
    "__version__",
    "compile",
    "run",
    "sweep",
]

_LAZY = {
    "compile": "serq.sim.api",
    "run": "serq.sim.api",
    "Compiled": "serq.sim.api",
    "RunWarning": "serq.sim.api",
    "Report": "serq.report.model",
    "sweep": "serq.sweeps",
    "SweepResult": "serq.sweeps",
}


def __getattr__(name: str) -> Any:
    """Load the names of `_LAZY` when first asked for."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'serq' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
