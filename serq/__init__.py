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

The reference's module-level names are here too, so that code written against `pyserq`
runs on serq: `Program` (serq's `Compiled`), `Observe`, `Gauge`, `Stage` and `Pool` (the
classes of a report's rows), `read_trace`, `REPORT_VERSION` (the `schema` of `serq run
--json`) and `IR_VERSION` (the `version` of `serq ir`). Two are not: `Rng`, the reference's
random generator (serq's runs draw from streams of their own, so the same seed gives other
samples with the same laws), and 0.1.4's `draw` (a deployment picture serq does not draw).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from serq import dataclass_code  # noqa: E402  (the version first: it reads nothing of serq)

dataclass_code.install()  # fast path: serq's ~140 dataclasses compile their methods once

if TYPE_CHECKING:
    from serq.ir.codec import IR_VERSION
    from serq.report.codec import SCHEMA as REPORT_VERSION
    from serq.report.model import Gauge, Observe, Report
    from serq.report.model import PoolRow as Pool
    from serq.report.model import StageRow as Stage
    from serq.sim.api import Compiled, RunWarning, compile, read_trace, run
    from serq.sim.api import Compiled as Program
    from serq.sweeps import SweepResult, sweep

__all__ = [
    "IR_VERSION",
    "REPORT_VERSION",
    "Compiled",
    "Gauge",
    "Observe",
    "Pool",
    "Program",
    "Report",
    "RunWarning",
    "Stage",
    "SweepResult",
    "__version__",
    "compile",
    "read_trace",
    "run",
    "sweep",
]

# name: (module, its name there)
_LAZY = {
    "compile": ("serq.sim.api", "compile"),
    "run": ("serq.sim.api", "run"),
    "read_trace": ("serq.sim.api", "read_trace"),
    "Compiled": ("serq.sim.api", "Compiled"),
    "Program": ("serq.sim.api", "Compiled"),  # pyserq's name for a compiled program
    "RunWarning": ("serq.sim.api", "RunWarning"),
    "Report": ("serq.report.model", "Report"),
    "Observe": ("serq.report.model", "Observe"),
    "Gauge": ("serq.report.model", "Gauge"),
    "Stage": ("serq.report.model", "StageRow"),
    "Pool": ("serq.report.model", "PoolRow"),
    "REPORT_VERSION": ("serq.report.codec", "SCHEMA"),
    "IR_VERSION": ("serq.ir.codec", "IR_VERSION"),
    "sweep": ("serq.sweeps", "sweep"),
    "SweepResult": ("serq.sweeps", "SweepResult"),
}


def __getattr__(name: str) -> Any:
    """Load the names of `_LAZY` when first asked for."""
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'serq' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(where[0]), where[1])
    globals()[name] = value
    return value
