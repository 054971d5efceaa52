"""Expansion: the surface program rewritten into the kernel the linker and simulator see.

`expand(module)` runs the passes in order, each a pure AST-to-AST rewrite:

1. `use` and `fn main` (loader): one list of items, libraries' definitions in;
2. `def` calls inlined (defs), then the `let` constants folded;
3. the two sides: the server spliced into the workload's session (sides);
4. queues: pools and stages under long names, entry calls and `request gw;` in place;
5. the serving vocabulary to `run` by the which-stage rule (serving);
6. `at admission`, `branch with`, aggregates (admission);
7. references collapsed to the kernel's one name per pool or stage (refs).

Every kernel node's span is its origin, the surface form it came from, and
`Expansion.origins` lists what each expanded form became.
"""

from __future__ import annotations

from dataclasses import dataclass

from serq.diagnostics import Diagnostic, Severity
from serq.expand.admission import expand_statements
from serq.expand.context import Context, NotConstant, Origin, evaluate
from serq.expand.defs import expand_defs
from serq.expand.loader import Loader, flatten, read_file
from serq.expand.refs import normalize
from serq.expand.serving import expand_serving
from serq.expand.sides import expand_sides
from serq.syntax import ast

__all__ = ["Expansion", "Origin", "expand", "run_passes", "unique"]


@dataclass(frozen=True, slots=True)
class Expansion:
    """The kernel program, the diagnostics of the sugar, and the origin of each expansion."""

    kernel: ast.Module
    diagnostics: tuple[Diagnostic, ...]
    origins: tuple[Origin, ...]

    @property
    def ok(self) -> bool:
        return not any(d.severity == Severity.ERROR for d in self.diagnostics)


def expand(module: ast.Module, load: Loader = read_file) -> Expansion:
    """Expand every sugar of `module` (read libraries with `load`) into the kernel."""
    kernel, ctx = run_passes(module, load)
    return Expansion(kernel, unique(ctx.diagnostics), tuple(ctx.origins))


def run_passes(module: ast.Module, load: Loader = read_file) -> tuple[ast.Module, Context]:
    """The kernel of `module` and the passes' context: every diagnostic as a pass reported
    it (duplicates and all, in the order reported) and every origin. `expand` merges the
    diagnostics; `serq.incremental` adds up those of parts of a program before it does."""
    from serq.expand.queues import expand_queues

    ctx = Context()
    items = flatten(module, ctx, load)
    items = expand_defs(items, ctx)
    _fold_lets(items, ctx)
    items = expand_sides(items, ctx)
    items = expand_queues(items, ctx)
    items = expand_serving(items, ctx)
    items = expand_statements(items, ctx)
    items = [normalize(i) for i in items]
    kernel = ast.Module(module.file, tuple(items), None, module.span)
    return kernel, ctx


def _fold_lets(items: list[ast.Item], ctx: Context) -> None:
    """The value of each `let` whose expression is constant over the lets before it."""
    for item in items:
        if isinstance(item, ast.Let):
            try:
                ctx.lets[item.name.name] = evaluate(item.value, ctx.lets)
            except NotConstant:
                pass


def unique(diagnostics: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    """`diagnostics` in source order, each (code, span, message) once: the first reported."""
    seen = set()
    out = []
    for d in sorted(diagnostics, key=Diagnostic.sort_key):
        key = (d.code, d.span, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return tuple(out)
