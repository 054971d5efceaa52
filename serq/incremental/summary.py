"""What one unit of a program declares and reads, by name: the edges along which the
expander and the linker carry anything from one item to another.

Every way one item of a serQ program affects what the front end reports about another goes
through a name: a `def` is inlined where its name is called, a `let` folded where its name
is read, a declaration clashes with another of its name, an attribute set in the session is
what a name read elsewhere means, a hold's binding is refused where its name is read outside
the hold. The rest (one session, the step stage a serving form finds above it, the order of
the pool and stage families, `share` and the runs over several stages, the `fn main`
dialect) is the business of the items that make up the deployment, the *core*: every item
but `let`, an expression `def` and `use`. A statement `def` is core too, since what it sets
becomes the session's when it is written out there.

`summarize(nodes)` is read off a unit's nodes and does not depend on where the unit is;
`serq.incremental.program` keeps it on the unit (`Unit.memo`). A `use` declares the `def`s
of the libraries it reads and reads what their bodies read, so its summary depends on those
files too (`summarize_use`).

Names are plain strings, namespaces merged (a `def f` and a `let f` share the name `f`):
merging only adds edges, which costs recomputation, never soundness. Pseudo-names starting
with `#` stand for the rest: `#std/args` is declared by `use "std/args";` and read by every
`let` that is a program argument, and `#arg:NAME` declared by each `let` that reads the
argument NAME (two of them clash); `#file:PATH` is declared by every `use` that reads the
file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from serq.diagnostics import Span
from serq.syntax import ast

STD_ARGS = "#std/args"
ARGUMENT = "#arg:"  # `#arg:NAME` is declared by each `let` that reads the argument NAME

_DEFINITIONS = (ast.Let, ast.DefExpr, ast.Use)
_ERRORS = (ast.ErrorItem, ast.ErrorStmt, ast.ErrorOption)


@dataclass(frozen=True, slots=True)
class Summary:
    """The names a unit declares (`declares`; `binds`: those that are a hold's bindings)
    and reads, and whether it is part of the deployment (`core`)."""

    declares: frozenset[str]
    reads: frozenset[str]
    binds: frozenset[str]
    core: bool


EMPTY = Summary(frozenset(), frozenset(), frozenset(), False)


def summarize(nodes: Iterable[Any], core: bool = False) -> Summary:
    """The summary of a unit whose parse is `nodes` (`core`: a `fn main` head or close)."""
    walker = _Walker()
    for node in nodes:
        if isinstance(node, ast.Ident):  # a `fn main` head's name
            continue
        if not isinstance(node, _DEFINITIONS):
            walker.core = True
        walker.item(node)
    return walker.summary(core)


def summarize_use(
    nodes: Iterable[Any], files: Iterable[str], libraries: Iterable[Iterable[Any]]
) -> Summary:
    """The summary of a unit of `use`s (`nodes`) that read the `files` (normalized paths),
    of which those that could be read hold the items `libraries`: it declares their
    `def`s and reads what those read, and is core when one holds a statement `def` (or an
    item a library may not hold). It also declares `#file:PATH` for each file: a file
    `use`d twice is read once, at the first `use`, so two `use`s of a file are tied."""
    walker = _Walker()
    walker.declares.update(f"#file:{f}" for f in files)
    for node in nodes:
        if not isinstance(node, _DEFINITIONS):
            walker.core = True
        walker.item(node)
    for items in libraries:
        for node in items:
            if not isinstance(node, (ast.DefExpr, ast.Use)):
                walker.core = True
            walker.item(node)
    return walker.summary()


class _Walker:
    """Collects the names of the nodes it is given."""

    def __init__(self) -> None:
        self.declares: set[str] = set()
        self.reads: set[str] = set()
        self.binds: set[str] = set()
        self.core = False

    def summary(self, core: bool = False) -> Summary:
        return Summary(
            frozenset(self.declares),
            frozenset(self.reads),
            frozenset(self.binds),
            self.core or core,
        )

    def item(self, node: Any) -> None:
        if isinstance(node, ast.Let):
            self.declares.add(node.name.name)
            if node.argument is not None:
                self.reads.add(STD_ARGS)
                self.declares.add(ARGUMENT + node.argument.name)  # read twice is a clash
            self.walk(node.value, frozenset())
        elif isinstance(node, (ast.DefExpr, ast.DefBlock)):
            self.declares.add(node.name.name)
            self.walk(node.body, frozenset(p.name for p in node.params))
        elif isinstance(node, ast.Use):
            if node.path == "std/args":
                self.declares.add(STD_ARGS)
        else:
            self.walk(node, frozenset())

    def walk(self, root: Any, params: frozenset[str]) -> None:
        """Every name under `root`; `params` are a `def`'s parameters, which its body reads
        as locals (but a call of a `def` of that name is a call)."""
        declares, reads, binds = self.declares, self.reads, self.binds
        stack = [root]
        while stack:
            n = stack.pop()
            if isinstance(n, tuple):
                stack.extend(n)
                continue
            if not is_dataclass(n) or isinstance(n, (type, Span)):
                continue
            if isinstance(n, _ERRORS):
                self.core = True
            if isinstance(n, ast.Name):
                if n.ident.name not in params:
                    reads.add(n.ident.name)
                continue
            if isinstance(n, ast.Ref):
                names = [p.ident.name for p in n.parts]
                if names[0] not in params:
                    for k in range(1, len(names) + 1):
                        reads.add(".".join(names[:k]))
                reads.update(names[1:])
                stack.extend(p.index for p in n.parts if p.index is not None)
                continue
            if isinstance(n, ast.Draw):
                stack.extend(n.args)
                continue
            if isinstance(n, (ast.Set, ast.Choose, ast.Observe)):
                declares.add(n.target.name)
            elif isinstance(n, ast.Binding):
                declares.add(n.name.name)
                binds.add(n.name.name)
            elif isinstance(n, (ast.Pool, ast.Stage, ast.Gauge, ast.Claim, ast.Queue)):
                declares.add(n.name.name)
                declares.update(n.name.name.split("."))
            elif isinstance(n, ast.Mark):
                declares.add(n.name.name)
            elif isinstance(n, ast.Ident):
                reads.add(n.name)
                continue
            for f in _fields(type(n)):
                value = getattr(n, f)
                if value is not None and not isinstance(value, (str, int, float, bool)):
                    stack.append(value)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls) if f.name != "span")
    return names
