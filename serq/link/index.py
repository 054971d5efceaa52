"""The names of a program: every declaration and every reference, resolved, in every file.

`build_index(module, load)` walks the surface AST once, as the author wrote it (the
kernel's long names are not needed), and follows each `use` as the expander's loader
does (`serq.expand.loader`: relative to the using file, each library once, only its
`def`s and `use`s): a library's `def`s are the program's, and the names in their bodies
mean what they mean where the call is written out, the program's. It records each
name it meets as an `Occurrence` (with its span, so its file) with the candidate keys it
may mean, most local first, and resolves every candidate list against the declarations
of all the files at the end. Editors answer definition, references, rename, hover and
symbols from it, so that a name means there what it means to `serq check`;
`tests/link/test_index.py` holds it to the linker's `Scope` on every example. A key is
`(namespace, name)`: `value` (lets and session attributes, one namespace),
`def`, `res` (pools, stages, queues and their members under dotted names:
`P.kv`, `P.nic`), `entry` (`P.prefill`), `mark` (`D.first_token`), `stat`
(observe, gauge), `local` (parameters, bindings, aggregate variables), and the
language's own: `context`, `builtin`, `func`, `dist`, plus `file` for `use`.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections.abc import Container, Iterable
from dataclasses import dataclass, field, is_dataclass
from typing import TYPE_CHECKING, Any

from serq.diagnostics import Span
from serq.expand.loader import STD_LIBRARIES
from serq.syntax import ast
from serq.vocabulary import (
    BUILTIN_ATTRS,
    CLAIM_AGGREGATES,
    CLAIM_CONTEXT,
    CONTEXT_VARS,
    MATH_FUNCS,
    OBSERVABLES,
    TRACE_ATTRS,
)

if TYPE_CHECKING:
    from serq.expand.loader import Loader

Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Occurrence:
    """A name at `span` meaning `key`; a declaration carries its declaring `node` and `kind`."""

    key: Key
    span: Span
    kind: str = ""  # for a declaration: let, def, pool, stage, queue, entry, attribute, ...
    node: Any = None
    container: str | None = None

    @property
    def is_declaration(self) -> bool:
        return bool(self.kind)


@dataclass
class Index:
    """Every occurrence of a name in one module (`occurrences`, in source order) and in the
    libraries it `use`s (`elsewhere`), with the files those were read from (`files`)."""

    occurrences: list[Occurrence] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list)
    elsewhere: list[Occurrence] = field(default_factory=list)
    files: tuple[str, ...] = ()
    _keyed: tuple[int, dict[Key, list[Occurrence]]] | None = field(default=None, repr=False)

    def at(self, offset: int) -> Occurrence | None:
        """The occurrence of the module's own file whose name covers `offset` (end included)."""
        return occurrence_at(self.occurrences, self._starts, offset)

    def listing(self) -> list[Occurrence]:
        """The occurrences of the module's own file in source order, for a feature that lists
        them all and reads no declaring node (their `node` may be None)."""
        return self.occurrences

    def declarations(self, key: Key) -> list[Occurrence]:
        """The declarations of `key` in every file, the module's own first (an attribute has
        one per `set` site)."""
        return [o for o in self.references(key) if o.is_declaration]

    def references(self, key: Key) -> list[Occurrence]:
        """Every occurrence of `key` in every file, declarations included."""
        return list(self.by_key().get(key, ()))

    def by_key(self) -> dict[Key, list[Occurrence]]:
        """The occurrences of every file by key, each list in `everywhere`'s order (built on
        first use: a lookup then costs one key's occurrences, not the whole document's)."""
        size = len(self.occurrences) + len(self.elsewhere)
        if self._keyed is None or self._keyed[0] != size:
            keyed: dict[Key, list[Occurrence]] = {}
            for o in self.everywhere():
                keyed.setdefault(o.key, []).append(o)
            self._keyed = (size, keyed)
        return self._keyed[1]

    def everywhere(self) -> list[Occurrence]:
        """The occurrences of the module's file, then those of its libraries."""
        return self.occurrences + self.elsewhere

    def symbols(self) -> list[Occurrence]:
        """The first declaration of every key declared in this module's own file, in order
        (from the `listing`: a declaring node may be None)."""
        seen: set[Key] = set()
        out = []
        for o in self.listing():
            if o.is_declaration and o.key not in seen:
                seen.add(o.key)
                out.append(o)
        return out


def occurrence_at(
    occurrences: list[Occurrence], starts: list[int], offset: int
) -> Occurrence | None:
    """The occurrence of `occurrences` (in source order, `starts` theirs) whose name covers
    `offset` (end included): of the last two that begin at or before it."""
    i = bisect_right(starts, offset) - 1
    for j in (i, i - 1):
        if j >= 0 and occurrences[j].span.start <= offset <= occurrences[j].span.end:
            return occurrences[j]
    return None


@dataclass(frozen=True, slots=True)
class _Pending:
    candidates: tuple[Key, ...]
    fallback: Key
    span: Span


@dataclass(frozen=True, slots=True)
class _Env:
    queue: str | None = None
    locals: tuple[tuple[str, Key], ...] = ()
    gateway: bool = False  # a gateway's route sets the request's attributes, not its own

    def local(self, name: str) -> Key | None:
        for n, key in reversed(self.locals):
            if n == name:
                return key
        return None

    def bind(self, idents: tuple[ast.Ident, ...] | list[ast.Ident], scope: Span) -> _Env:
        where = f"{scope.file}@{scope.start}"
        new = tuple((i.name, ("local", f"{where}:{i.name}")) for i in idents)
        return _Env(self.queue, self.locals + new, self.gateway)


def build_index(module: ast.Module, load: Loader | None = None) -> Index:
    """The index of `module`'s names; with `load` (the expander's `Loader`), the names of
    the libraries it `use`s as well, read the way the expander reads them."""
    pieces = [item_piece(item, module.file) for item in module.all_items()]
    libraries = library_pieces(module.file, pieces, load)
    keys = {o.key for p in pieces for o in p.declared}
    keys.update(o.key for _, p in libraries for o in p.declared)
    own: list[Occurrence] = []
    for p in pieces:
        own.extend(p.occurrences(keys))
    own.sort(key=_position)
    others = library_occurrences(libraries, keys)
    return Index(own, [o.span.start for o in own], others, tuple(f for f, _ in libraries))


@dataclass(frozen=True, slots=True)
class Piece:
    """What one item (or all the items of one library) adds to the index: its
    declarations, its references with the keys each may mean (most local first), and the
    libraries its `use`s name, in order (absolute paths)."""

    declared: tuple[Occurrence, ...]
    pending: tuple[_Pending, ...]
    libraries: tuple[str, ...]

    def occurrences(self, keys: Container[Key]) -> list[Occurrence]:
        """Its occurrences in source order, each reference resolved against the declared
        `keys` (the first candidate declared, else its fallback)."""
        resolved = [
            Occurrence(next((c for c in p.candidates if c in keys), p.fallback), p.span)
            for p in self.pending
        ]
        return sorted([*self.declared, *resolved], key=_position)


def item_piece(item: Any, file: str) -> Piece:
    """The piece of one item of `file`."""
    builder = _Builder(file)
    builder.item(item, _Env())
    return Piece(tuple(builder.declared), tuple(builder.pending), tuple(builder.libraries))


def library_pieces(
    file: str, pieces: Iterable[Piece], load: Loader | None
) -> list[tuple[str, Piece]]:
    """The pieces of the libraries the `use`s of `pieces` (those of `file`) read, as the
    expander's loader reads them (each once, their own `use`s next), with their paths."""
    seen = {_same(file)}
    todo: list[str] = []
    for piece in pieces:
        for path in piece.libraries:
            if _same(path) not in seen:
                seen.add(_same(path))
                todo.append(path)
    out: list[tuple[str, Piece]] = []
    while todo:  # the libraries' own `use`s add to the list
        path = todo.pop(0)
        result = load(path) if load is not None else None
        if result is None or isinstance(result, str):
            continue
        builder = _Builder(result.module.file)
        for item in result.module.all_items():
            if isinstance(item, (ast.Use, ast.DefExpr, ast.DefBlock)):
                builder.item(item, _Env())
        for lib in builder.libraries:
            if _same(lib) not in seen:
                seen.add(_same(lib))
                todo.append(lib)
        out.append((path, Piece(tuple(builder.declared), tuple(builder.pending), ())))
    return out


def library_occurrences(
    libraries: list[tuple[str, Piece]], keys: Container[Key]
) -> list[Occurrence]:
    """The occurrences of the `libraries`' pieces, file after file, each in source order."""
    files = [f for f, _ in libraries]
    every: list[Occurrence] = []
    for _, piece in libraries:
        every.extend(piece.occurrences(keys))
    every.sort(key=_position)
    every.sort(key=lambda o: files.index(o.span.file) if o.span.file in files else -1)
    return every


def _position(o: Occurrence) -> tuple[int, int]:
    return (o.span.start, o.span.end)


def library_path(file: str, use: ast.Use) -> str:
    """The absolute path of the library `use` names in `file`, as the loader resolves it."""
    base = os.path.dirname(file) if file and not file.startswith("<") else "."
    return os.path.abspath(os.path.join(base, use.path))


class _Builder:
    """Records the declarations and references of the items it is given, all of one file."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.declared: list[Occurrence] = []
        self.pending: list[_Pending] = []
        self.libraries: list[str] = []  # named by `use`s, in order
        self.parameters: set[Key] = set()  # the keys of entries' parameters

    # ------------------------------------------------------------ recording

    def declare(self, key: Key, ident: ast.Ident | Span, kind: str, node: Any, env: _Env) -> None:
        span = ident.span if isinstance(ident, ast.Ident) else ident
        self.declared.append(Occurrence(key, span, kind, node, env.queue))

    def refer(self, span: Span, candidates: list[Key], fallback: Key) -> None:
        self.pending.append(_Pending(tuple(candidates), fallback, span))

    def _parameter(self, name: str, env: _Env) -> Key | None:
        """The key of the enclosing entry's parameter `name`, if it has one (the expander's
        `sets its parameter` reads an entry's parameters alone, past any binding)."""
        for n, key in reversed(env.locals):
            if n == name and key in self.parameters:
                return key
        return None

    def value_name(self, ident: ast.Ident, env: _Env) -> None:
        name = ident.name
        local = env.local(name)
        if local is not None:
            self.refer(ident.span, [local], local)
            return
        candidates: list[Key] = []
        for namespace in ("value", "res"):  # `cachedin(kv)` names a pool
            if env.queue:
                candidates.append((namespace, f"{env.queue}.{name}"))
            candidates.append((namespace, name))
        if name in CONTEXT_VARS or name in CLAIM_CONTEXT:
            fallback: Key = ("context", name)
        elif name in BUILTIN_ATTRS or name in TRACE_ATTRS or name == "inf":
            fallback = ("builtin", name)
        else:
            fallback = ("value", name)
        self.refer(ident.span, candidates, fallback)

    def resource(self, ident: ast.Ident, env: _Env) -> str:
        """Refer to the pool, stage or queue `ident` names; its likeliest dotted name."""
        name = ident.name
        local = env.local(name)
        if local is not None:
            self.refer(ident.span, [local], local)
            return name
        candidates = [("res", f"{env.queue}.{name}")] if env.queue else []
        candidates.append(("res", name))
        self.refer(ident.span, candidates, ("res", name))
        return name

    def ref(self, ref: ast.Ref, env: _Env) -> None:
        first = ref.parts[0]
        head = self.resource(first.ident, env)
        owners = [f"{env.queue}.{head}", head] if env.queue else [head]
        for part in ref.parts:
            if part.index is not None:
                self.expr(part.index, env)
        for part in ref.parts[1:]:
            name = part.ident.name
            dotted = [f"{o}.{name}" for o in owners]
            candidates = [(ns, d) for d in dotted for ns in ("res", "entry", "mark", "value")]
            self.refer(part.ident.span, candidates, ("res", dotted[-1]))
            owners = dotted

    # ---------------------------------------------------------------- items

    def item(self, item: Any, env: _Env) -> None:
        if isinstance(item, ast.Let):
            self.declare(("value", item.name.name), item.name, "let", item, env)
            self.expr(item.value, env)
        elif isinstance(item, ast.Use) and item.path in STD_LIBRARIES:
            self.refer(item.path_span, [], ("std", item.path))  # serq's own: no file
        elif isinstance(item, ast.Use):
            path = library_path(self.file, item)
            self.refer(item.path_span, [], ("file", path))
            self.libraries.append(path)
        elif isinstance(item, (ast.DefExpr, ast.DefBlock)):
            self.declare(("def", item.name.name), item.name, "def", item, env)
            inner = env.bind(item.params, item.span)
            for p in item.params:
                self.declare(inner.local(p.name), p, "parameter", item, env)  # type: ignore[arg-type]
            self.node(item.body, inner)
        elif isinstance(item, (ast.Pool, ast.Stage)):
            kind = "pool" if isinstance(item, ast.Pool) else "stage"
            self.declare(("res", item.name.name), item.name, kind, item, env)
            self.children(item, env, skip=("name",))
        elif isinstance(item, ast.Queue):
            self.queue(item, env)
        elif isinstance(item, ast.Pull):
            self.resource(item.reader, env)
            self.resource(item.source, env)
            if item.latency is not None:
                self.expr(item.latency, env)
        elif isinstance(item, ast.Gauge):
            self.declare(("stat", item.name.name), item.name, "gauge", item, env)
            self.expr(item.value, env)
        elif isinstance(item, ast.Claim):
            self.declare(("claim", item.name.name), item.name, "claim", item, env)
            if item.given is not None:
                self.expr(item.given, env)
            if isinstance(item.stage, ast.Name):
                self.resource(item.stage.ident, env)
            elif item.stage is not None:
                self.ref(item.stage, env)
            self.expr(item.pred, env)
        elif isinstance(item, ast.Workload):
            for clause in item.clauses:
                if isinstance(clause, ast.Hidden):
                    for ident in clause.names:
                        self.value_name(ident, env)
                else:
                    self.node(clause, env)
        else:
            self.node(item, env)

    def queue(self, q: ast.Queue, env: _Env) -> None:
        name = q.name.name
        self.declare(("res", name), q.name, "queue", q, env)
        if q.size is not None:
            self.expr(q.size, env)
        inside = _Env(name, env.locals, any(r.name == "gateway" for r in q.roles))
        for member in q.members:
            if isinstance(member, ast.QueuePool):
                key = ("res", f"{name}.{member.name.name}")
                self.declare(key, member.name, "pool", member, inside)
                for option in member.options:
                    self.node(option, inside)
            elif isinstance(member, ast.QueueNic):
                head = _word_span(member.span, 3)
                self.declare(("res", f"{name}.nic"), head, "stage", member, inside)
                self.node(member.kind, inside)
            elif isinstance(member, ast.Entry):
                key = ("entry", f"{name}.{member.verb.name}")
                self.declare(key, member.verb, "entry", member, inside)
                bound = [*member.params, *([member.source] if member.source else [])]
                body_env = inside.bind(bound, member.span)
                for ident in bound:
                    self.declare(body_env.local(ident.name), ident, "parameter", member, inside)  # type: ignore[arg-type]
                self.parameters.update(k for p in member.params if (k := body_env.local(p.name)))
                self.node(member.body, body_env)
            else:
                self.node(member, inside)

    # ----------------------------------------------------------- statements

    def node(self, node: Any, env: _Env) -> None:
        if isinstance(node, ast.Name):
            self.value_name(node.ident, env)
        elif isinstance(node, ast.Ref):
            self.ref(node, env)
        elif isinstance(node, (ast.Set, ast.Choose)):
            name = node.target.name
            param = self._parameter(name, env)
            if param is not None:  # an entry setting its parameter (E-queue): that name
                self.refer(node.target.span, [param], param)
                self.children(node, env, skip=("target",))
                return
            owned = env.queue and not env.gateway
            key = ("value", f"{env.queue}.{name}" if owned else name)
            self.declare(key, node.target, "attribute", node, env)
            self.children(node, env, skip=("target",))
        elif isinstance(node, ast.Observe):
            self.declare(("stat", node.target.name), node.target, "statistic", node, env)
            self.expr(node.value, env)
        elif isinstance(node, ast.Mark):
            key = ("mark", f"{env.queue}.{node.name.name}" if env.queue else node.name.name)
            self.declare(key, node.name, "mark", node, env)
        elif isinstance(node, ast.Hold):
            inner = env
            for binding in node.bindings:  # each reads the ones before it
                self.expr(binding.value, inner)
                inner = inner.bind([binding.name], node.span)
                self.declare(inner.local(binding.name.name), binding.name, "binding", binding, env)  # type: ignore[arg-type]
            self.children(node, inner, skip=("bindings",))
        elif isinstance(node, ast.Aggregate):
            self.expr(node.count, env)
            inner = env.bind([node.var], node.span)
            self.declare(inner.local(node.var.name), node.var, "binding", node, env)  # type: ignore[arg-type]
            self.expr(node.body, inner)
        elif isinstance(node, ast.Call):
            name = node.func.name
            builtin = MATH_FUNCS | OBSERVABLES | CLAIM_AGGREGATES
            fallback: Key = ("func", name) if name in builtin else ("def", name)
            self.refer(node.func.span, [("def", name)], fallback)
            for arg in node.args:
                if name in CLAIM_AGGREGATES and isinstance(arg, ast.Name):  # `total(obs)`
                    self.refer(arg.span, [("stat", arg.name)], ("stat", arg.name))
                else:
                    self.expr(arg, env)
        elif isinstance(node, ast.DefCall):
            self.refer(node.name.span, [("def", node.name.name)], ("def", node.name.name))
            for arg in node.args:
                self.expr(arg, env)
        elif isinstance(node, ast.Draw):
            self.refer(node.dist.span, [], ("dist", node.dist.name))
            for arg in node.args:
                self.expr(arg, env)
        elif isinstance(node, ast.Request):
            if node.gateway is not None:
                self.resource(node.gateway, env)
        elif isinstance(node, ast.Option):
            if node.target is not None and node.key != "preempt by":  # `requeue tail`
                self.resource(node.target, env)
            self.children(node, env, skip=("target",))
        elif isinstance(node, ast.Spill):
            self.resource(node.pool, env)
            self.resource(node.stage, env)
            self.expr(node.amount, env)
            self.expr(node.when, env)
        elif isinstance(node, ast.Ident):
            return
        else:
            self.children(node, env)

    expr = node

    def children(self, node: Any, env: _Env, skip: tuple[str, ...] = ()) -> None:
        for name in getattr(node, "__dataclass_fields__", {}):
            if name == "span" or name in skip:
                continue
            value = getattr(node, name)
            for child in value if isinstance(value, tuple) else (value,):
                if is_dataclass(child) and not isinstance(child, (Span, type)):
                    self.node(child, env)


def _same(path: str) -> str:
    """The key by which the loader tells one file from another."""
    return os.path.normcase(os.path.abspath(path))


def _word_span(span: Span, length: int) -> Span:
    """The first `length` characters of `span` (a keyword at its start), on its first line."""
    end = min(span.start + length, span.end)
    return Span(
        span.file,
        span.start,
        end,
        span.line,
        span.column,
        span.line,
        span.column + (end - span.start),
    )
