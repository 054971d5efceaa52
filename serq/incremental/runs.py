"""One run of the front end over a program, its reports kept as reported, and their totals.

`run_front_end(module, load)` is what `serq.api.check_source` does past the parse, with
nothing merged: the expander's diagnostics as each pass reported them, the linker's
lowering and rule findings apart (duplicates and all), the origins with the text of the
kernel each form became, the folded lets and the families. Reports taken that way add up
over the parts of a program (`serq.incremental.program`); `Totals` holds a version's as
multisets. A run that raises is `Failed`: the version is then analysed whole, as `serq
check` would, which reports the error.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from serq.diagnostics import Diagnostic, Severity, Span, codes
from serq.syntax import ast

Origin = tuple[Span, str, str]  # a sugar form's span, its kind, the kernel it became as text
Loader = Callable[[str], Any]


@dataclass
class Run:
    """What the front end reported on one program (a whole file or a set of its units):
    each pass's diagnostics as reported, the origins, the folded lets and the families."""

    expand: list[Diagnostic]
    lowering: list[Diagnostic]
    rules: list[Diagnostic]
    origins: list[Origin]
    lets: dict[str, float | None]
    families: dict[tuple[str, str], tuple[int, bool]]
    files: set[str]  # the files read through `use`, absolute


EMPTY_RUN = Run([], [], [], [], {}, {}, set())


class Failed(Exception):
    """A run raised (serq has a bug), or the bookkeeping did: the version is analysed whole."""


class Stopped(Exception):
    """An analysis given up before a run: its text is no longer wanted."""


def run_front_end(module: ast.Module, load: Loader) -> Run:
    """Expand and link `module` (reading its libraries with `load`), keeping everything as
    reported. Raises `Failed` if a pass raises."""
    from serq.expand import run_passes
    from serq.expand.printer import print_node
    from serq.link import constants_of
    from serq.link.checks import report_rules
    from serq.link.lower import lower
    from serq.link.resolve import declare

    files: set[str] = set()

    def recording(path: str):
        files.add(os.path.abspath(path))
        return load(path)

    try:
        kernel, ctx = run_passes(module, recording)
        scope = declare(kernel)
        lower(kernel, scope)
        rules = report_rules(kernel, constants_of(scope))
    except Exception as error:  # a bug in serq: the caller analyses the version whole
        raise Failed(error) from error
    origins = [
        (o.span, o.kind, "\n".join(print_node(n) for n in o.nodes).strip()) for o in ctx.origins
    ]
    families = {
        (kind, name): (f.count, f.array)
        for kind, table in (("pool", scope.pools), ("stage", scope.stages))
        for name, f in table.items()
    }
    return Run(
        list(ctx.diagnostics),
        list(scope.diagnostics),
        rules,
        origins,
        dict(scope.lets),
        families,
        files,
    )


@dataclass
class Totals:
    """The reports of a whole version, as multisets."""

    expand: Counter
    lowering: Counter
    rules: Counter
    origins: Counter

    @classmethod
    def of(cls, run: Run) -> Totals:
        return cls(
            Counter(run.expand), Counter(run.lowering), Counter(run.rules), Counter(run.origins)
        )

    def add(self, run: Run, sign: int) -> None:
        for total, items in (
            (self.expand, run.expand),
            (self.lowering, run.lowering),
            (self.rules, run.rules),
            (self.origins, run.origins),
        ):
            for item in items:
                total[item] += sign

    def copy(self) -> Totals:
        return Totals(
            self.expand.copy(), self.lowering.copy(), self.rules.copy(), self.origins.copy()
        )

    def consistent(self) -> bool:
        """No count below zero (a count below zero is a bug in the bookkeeping)."""
        return all(
            n >= 0
            for t in (self.expand, self.lowering, self.rules, self.origins)
            for n in t.values()
        )

    def moved(self, move: Callable[[Any], Any]) -> Totals:
        def each(counter: Counter) -> Counter:
            out: Counter = Counter()
            for item, n in counter.items():
                if n:
                    out[move(item)] += n
            return out

        return Totals(each(self.expand), each(self.lowering), each(self.rules), each(self.origins))


def has_error(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.severity >= Severity.ERROR for d in diagnostics)


def internal(path: str, stage: str, error: BaseException) -> Diagnostic:
    return Diagnostic.error(
        codes.INTERNAL,
        Span.point(path, 0, 1, 1),
        f"serq failed while {stage} `{path}`: {type(error).__name__}: {error}",
    )
