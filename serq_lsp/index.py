"""The names of one surface module: every declaration and every reference, resolved.

`build_index(module)` walks the surface AST once, as the author wrote it (the
kernel's long names are not needed): it records each name it meets as an
`Occurrence` with the candidate keys it may mean, most local first, and
resolves every candidate list against the declarations at the end. A key is
`(namespace, name)`: `value` (lets and session attributes, one namespace),
`def`, `res` (pools, stages, queues and their members under dotted names:
`P.kv`, `P.nic`), `entry` (`P.prefill`), `mark` (`D.first_token`), `stat`
(observe, gauge), `local` (parameters, bindings, aggregate variables), and the
language's own: `context`, `builtin`, `func`, `dist`, plus `file` for `use`.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from dataclasses import dataclass, field, is_dataclass
from typing import Any

from serq.diagnostics import Span
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
    """Every occurrence of a name in one module, in source order."""

    occurrences: list[Occurrence] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list)

    def at(self, offset: int) -> Occurrence | None:
        """The occurrence whose name covers `offset` (its end included)."""
        i = bisect_right(self._starts, offset) - 1
        for j in (i, i - 1):
            if j >= 0 and self.occurrences[j].span.start <= offset <= self.occurrences[j].span.end:
                return self.occurrences[j]
        return None

    def declarations(self, key: Key) -> list[Occurrence]:
        """The declarations of `key` (an attribute has one per `set` site)."""
        return [o for o in self.occurrences if o.key == key and o.is_declaration]

    def references(self, key: Key) -> list[Occurrence]:
        """Every occurrence of `key`, declarations included."""
        return [o for o in self.occurrences if o.key == key]

    def symbols(self) -> list[Occurrence]:
        """The first declaration of every key declared in this module, in source order."""
        seen: set[Key] = set()
        out = []
        for o in self.occurrences:
            if o.is_declaration and o.key not in seen:
                seen.add(o.key)
                out.append(o)
        return out


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
        new = tuple((i.name, ("local", f"{scope.start}:{i.name}")) for i in idents)
        return _Env(self.queue, self.locals + new, self.gateway)


def build_index(module: ast.Module, scope: Any = None) -> Index:
    """The index of `module`'s names; `scope` (a link scope) is accepted for future use."""
    return _Builder(module.file).build(module)


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.declared: list[Occurrence] = []
        self.pending: list[_Pending] = []

    def build(self, module: ast.Module) -> Index:
        for item in module.all_items():
            self.item(item, _Env())
        keys = {o.key for o in self.declared}
        resolved = [
            Occurrence(next((c for c in p.candidates if c in keys), p.fallback), p.span)
            for p in self.pending
        ]
        occurrences = sorted(self.declared + resolved, key=lambda o: (o.span.start, o.span.end))
        return Index(occurrences, [o.span.start for o in occurrences])

    # ------------------------------------------------------------ recording

    def declare(self, key: Key, ident: ast.Ident | Span, kind: str, node: Any, env: _Env) -> None:
        span = ident.span if isinstance(ident, ast.Ident) else ident
        self.declared.append(Occurrence(key, span, kind, node, env.queue))

    def refer(self, span: Span, candidates: list[Key], fallback: Key) -> None:
        self.pending.append(_Pending(tuple(candidates), fallback, span))

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
        elif isinstance(item, ast.Use):
            base = os.path.dirname(self.file) if not self.file.startswith("<") else "."
            path = os.path.abspath(os.path.join(base, item.path))
            self.refer(item.path_span, [], ("file", path))
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
            for binding in node.bindings:
                self.expr(binding.value, env)
            inner = env.bind([b.name for b in node.bindings], node.span)
            for binding in node.bindings:
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
