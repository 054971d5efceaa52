"""The server side of `hidden`: a hidden attribute is the target's until a run reveals it.

The server may run work by a hidden attribute, cache by it and observe it; a
run whose work reads it on every path reveals it when the run ends (the end of
a decode is the EOS the scheduler sees). Before that, a decision that reads it,
or reads an attribute the server set from it, is an error: a branch guard, a
choose, a grow or load amount, a hold's header, or the index that picks a pool
or stage (serq-workload.txt, hidden).

A forward data-flow analysis over each stretch of server statements. Its state:

- `revealed`, the hidden attributes every path so far has revealed (a join
  intersects);
- `may[x]`, the hidden attributes the attribute x may have been set from (a
  join unites);
- `must[x]`, those x was set from on every path, which is what running work
  by x reveals (a join intersects: `x = a` in one arm and `x = b` in the other
  reveals neither).

A loop's head joins its entry with its back edge until nothing changes, and a
loop is left from its head (its body may not run at all). `c ? a : b`, `&&`
and `||` read their arms on some paths only, and an aggregate (`sum`, `max`,
`min` of n terms, written out by the expander) is not assumed to read its body.

Which statements are the server's. The kernel's session is one block, the
server's statements spliced in, so the side of a statement is told by its
origin: a statement whose span lies in the session's own text is the
session's (a workload's session is the client; a top-level session is both
sides in one, and the reference, pyserq 0.1.2, checks none of it), and one
spliced from elsewhere (a `server` block, a queue's route or entry, a `def`)
is the server's. A session made from a server alone (the `fn main` dialect
without a workload session) is the server's throughout. Each maximal stretch
of server statements in a block is one request of the server and starts from
nothing revealed and nothing derived, as the reference (0.1.4, which has this
analysis) analyses a server block on its own: what the client set is not the
server's to track.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from serq.diagnostics import Diagnostic, Label, Span, codes
from serq.link.checks.hidden import hidden_names
from serq.link.checks.places import blocks, names, session_of
from serq.syntax import ast

_EMPTY: frozenset[str] = frozenset()
_Stmts = tuple[ast.Stmt, ...] | list[ast.Stmt]
_MAX_PASSES = 100  # a pass only adds dependencies or drops reveals: far more than enough
_HELP = (
    "the server may run work by a hidden attribute (the model ends the run), cache by it and "
    "observe it, and decide on it once that run has ended"
)


def check(kernel: ast.Module) -> Iterator[Diagnostic]:
    """E-hidden for every server decision on a hidden attribute before a run reveals it."""
    hidden = hidden_names(kernel)
    session = session_of(kernel)
    if not hidden or session is None:
        return
    region = None if session.span == session.body.span else session.span
    analysis = _Analysis(hidden, region)
    analysis.regions(session.body)
    yield from analysis.diagnostics


@dataclass(frozen=True)
class _State:
    revealed: frozenset[str] = _EMPTY
    may: dict[str, frozenset[str]] = field(default_factory=dict)
    must: dict[str, frozenset[str]] = field(default_factory=dict)

    def assign(self, name: str, may: frozenset[str], must: frozenset[str]) -> _State:
        return _State(self.revealed, {**self.may, name: may}, {**self.must, name: must})

    def reveal(self, names: frozenset[str]) -> _State:
        return _State(self.revealed | names, self.may, self.must)


def _join(a: _State | None, b: _State | None) -> _State | None:
    """Both paths at once; None is a path that ended."""
    if a is None:
        return b
    if b is None:
        return a
    may = {k: a.may.get(k, _EMPTY) | b.may.get(k, _EMPTY) for k in a.may.keys() | b.may.keys()}
    must = {k: a.must[k] & b.must[k] for k in a.must.keys() & b.must.keys()}
    return _State(
        a.revealed & b.revealed,
        {k: v for k, v in may.items() if v},
        {k: v for k, v in must.items() if v},
    )


def _within(inner: Span, outer: Span) -> bool:
    return inner.file == outer.file and outer.start <= inner.start and inner.end <= outer.end


class _Analysis:
    def __init__(self, hidden: dict[str, ast.Ident], client: Span | None) -> None:
        self.hidden = hidden
        self.client = client
        self.diagnostics: list[Diagnostic] = []
        self.quiet = False  # while a loop's head is being solved

    # ------------------------------------------------------------ the server's stretches

    def is_server(self, s: ast.Stmt) -> bool:
        return self.client is None or not _within(s.span, self.client)

    def regions(self, block: ast.Block) -> None:
        """Analyse each stretch of server statements of `block`, and the blocks of the others."""
        stretch: list[ast.Stmt] = []
        for s in block.body:
            if self.is_server(s):
                stretch.append(s)
                continue
            if stretch:
                self.stmts(stretch, _State())
                stretch = []
            for inner in blocks(s):
                self.regions(inner)
        if stretch:
            self.stmts(stretch, _State())

    # ------------------------------------------------------------------ expressions

    def may(self, e: ast.Expr, st: _State) -> frozenset[str]:
        out: set[str] = set()
        for n in names(e):
            out |= {n.name} if n.name in self.hidden else st.may.get(n.name, _EMPTY)
        return frozenset(out)

    def must(self, e: ast.Expr, st: _State) -> frozenset[str]:
        """The hidden attributes `e` reads on every path of its evaluation."""
        if getattr(e, "aggregate", False):
            return _EMPTY  # a written-out aggregate: its body is not assumed to execute
        if isinstance(e, ast.Name):
            return frozenset({e.name}) if e.name in self.hidden else st.must.get(e.name, _EMPTY)
        if isinstance(e, ast.Ref):
            return _union(self.must(p.index, st) for p in e.parts if p.index is not None)
        if isinstance(e, ast.Unary):
            return self.must(e.operand, st)
        if isinstance(e, ast.Binary):
            left = self.must(e.left, st)
            return left if e.op in ("&&", "||") else left | self.must(e.right, st)
        if isinstance(e, ast.Conditional):
            arms = self.must(e.then, st) & self.must(e.otherwise, st)
            return self.must(e.test, st) | arms
        if isinstance(e, (ast.Call, ast.Draw)):
            return _union(self.must(a, st) for a in e.args)
        return _EMPTY

    def decide(self, e: ast.Expr, what: str, st: _State, derived_only: bool = False) -> None:
        """Report each read in the decision `e` of what is not revealed yet."""
        if self.quiet:
            return
        for n in names(e):
            if n.name in self.hidden:
                if derived_only or n.name in st.revealed:
                    continue
                message = (
                    f"`{n.name}` is hidden from the scheduler, but the server's {what} "
                    "reads it before a run reveals it"
                )
                source = n.name
            else:
                left = st.may.get(n.name, _EMPTY) - st.revealed
                if not left:
                    continue
                source = sorted(left)[0]
                message = (
                    f"`{n.name}` is set from the hidden `{source}` in the server, but the "
                    f"server's {what} reads it before a run reveals it"
                )
            self.diagnostics.append(
                Diagnostic.error(
                    codes.HIDDEN,
                    n.span,
                    message,
                    labels=(Label(self.hidden[source].span, "hidden here"),),
                    help=_HELP,
                )
            )

    def pick(self, ref: ast.Ref | None, st: _State) -> None:
        """The index that picks a pool or stage is a decision."""
        if ref is None:
            return
        for part in ref.parts:
            if part.index is not None:
                self.decide(part.index, "choice of a pool or stage", st)

    # ------------------------------------------------------------------- statements

    def stmts(self, body: _Stmts, st: _State | None) -> _State | None:
        for s in body:
            if st is None:
                return None
            st = self.stmt(s, st)
        return st

    def stmt(self, s: ast.Stmt, st: _State) -> _State | None:
        if isinstance(s, ast.Set):
            return st.assign(s.target.name, self.may(s.value, st), self.must(s.value, st))
        if isinstance(s, ast.Choose):
            self.decide(s.count, "choice", st)
            for k in s.keys:
                self.decide(k, "choice", st)
            # the index chosen depends on what the keys read; when that is not revealed yet
            # the choose itself is the error, so the index carries no dependency on
            return st.assign(s.target.name, _EMPTY, _EMPTY)
        if isinstance(s, ast.Hold):
            for p in s.pools:
                self.pick(p.pool, st)
                self.decide(p.units, "admission", st, derived_only=True)
                if p.reserve is not None:
                    self.decide(p.reserve, "admission", st, derived_only=True)
            if s.reuse is not None:
                self.decide(s.reuse, "admission", st, derived_only=True)
            after = self.stmts(s.body.body, st)
            if after is not None and s.lease is not None:
                self.pick(s.lease.pool, after)
            return after
        if isinstance(s, (ast.Grow, ast.Load)):
            self.pick(s.pool, st)
            self.decide(s.amount, "allocation", st)
            return st
        if isinstance(s, (ast.Drop, ast.Release)):
            self.pick(s.pool, st)
            return st
        if isinstance(s, ast.Run):
            for ref in (*s.stages, s.growing):
                self.pick(ref, st)
            return st.reveal(self.must(s.work, st))
        if isinstance(s, ast.Branch):
            self.decide(s.test, "branch", st)
            then = self.stmts(s.then.body, st)
            otherwise = self.stmts(s.otherwise.body, st) if s.otherwise is not None else st
            return _join(then, otherwise)
        if isinstance(s, ast.Loop):
            return self.loop(s, st)
        if isinstance(s, ast.End):
            return None
        return st

    def loop(self, s: ast.Loop, entry: _State) -> _State:
        head = _join(entry, entry)
        assert head is not None
        quiet, self.quiet = self.quiet, True
        for _ in range(_MAX_PASSES):
            joined = _join(head, self.stmts(s.body.body, head))
            assert joined is not None
            if joined == head:
                break
            head = joined
        self.quiet = quiet
        self.stmts(s.body.body, head)
        return head


def _union(sets: Iterator[frozenset[str]] | list[frozenset[str]]) -> frozenset[str]:
    out: set[str] = set()
    for s in sets:
        out |= s
    return frozenset(out)
