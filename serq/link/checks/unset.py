"""W-unset: a session attribute read on a path where nothing has set it yet, so it reads 0.

Every session attribute starts at 0, and a program that reads one before any `set`,
`choose` or turn has given it a value gets that 0 without a word: `set K = K + n;` in a
loop whose `init` forgot `set K = 0;` is a sum that happens to start right, and a
`prompt` read before the `set prompt = …` that a branch skips is a bug. This check
warns at each such read and names the path that reaches it unset.

A forward analysis of definite assignment over the session as the simulator runs it:
`init` at arrival, then the session's statements, the workload's `turn` block at each
`turn;` (with a trace, `turn;` also gives `new`, `out`, `think`, `forced` and `more`).
Its state is the attributes some path may reach unset, each with one such path (its
witness: the arms and loop passes that skip the `set`s):

- a `set` or a `choose` assigns its target (a `choose`'s keys read the target as the
  candidate index, which is no read of the attribute);
- a branch joins its two arms: an attribute is set after it when both arms set it;
- a `loop` is left only by `end;`, so nothing follows it; its body is entered with
  the state before it, and an attribute the body sets on every pass reaches the body's
  top unset only on the first pass, which the witness says;
- a hold's header is read where the hold is (its first execution: a re-executed hold
  only sees more set), its `cache` and `lease` at its end;
- the scheduler's keys on the session: a pool's `queue by` at each hold on the pool, a
  step stage's `serve by` at each run on the stage (the warning is at the key, the
  path ends at the statement); eviction and preemption keys and claims are not
  judged;
- `end;` ends the path.

The built-ins (`serial`, `turn_no`, `cached`, `computed`) always have their value. The
`turn` block's reads are judged at the `turn;` statements the session reaches (all of
them at once); `init`'s at arrival. A path is a path of the program's text: guards are
not evaluated, so a read that only a test keeps from the first pass
(`branch (turn_no > 1) { … }`) is still reported. A program the parser could not read
throughout, or whose kernel still holds sugar (after an expansion error), is not
judged: the missing text may be the `set`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from serq.diagnostics import Diagnostic, Label, Span, codes
from serq.expand.walk import STMT_TYPES, walk
from serq.expand.walk import statements as _outside_expressions
from serq.link.checks.places import broken, session_of
from serq.syntax import ast
from serq.vocabulary import BUILTIN_ATTRS, TRACE_ATTRS

# An attribute that may be unset here, with the path (steps in program order) that
# reaches here without setting it.
_Step = tuple[str, Span]  # a phrase with `{at}` for where the statement is, and its span
_Unset = dict[str, tuple[_Step, ...]]

_HELP = (
    "every attribute starts at 0; set it before this read (in `init` for a value each "
    "session starts with), or write `set {name} = 0;` there if 0 is what is meant"
)


def check(kernel: ast.Module) -> Iterator[Diagnostic]:
    """W-unset for every read of an attribute of `kernel` that a path reaches unset."""
    session = session_of(kernel)
    if session is None or broken(kernel) or not _kernel_only(kernel):
        return
    analysis = _Analysis(kernel)
    yield from analysis.run(session)


# The statements of the kernel; sugar left in it (after an expansion error) is not judged.
_KERNEL = (
    ast.Set,
    ast.Observe,
    ast.Choose,
    ast.Hold,
    ast.Grow,
    ast.Load,
    ast.Drop,
    ast.Release,
    ast.Run,
    ast.Branch,
    ast.Loop,
    ast.Turn,
    ast.End,
)


def _kernel_only(kernel: ast.Module) -> bool:
    """Whether every statement of `kernel` is one this analysis knows."""
    stmt_types = tuple(t for t in STMT_TYPES if t not in _KERNEL)
    return not any(isinstance(n, stmt_types) for n in walk(kernel))


@dataclass(frozen=True, slots=True)
class _Read:
    name: ast.Name
    path: tuple[_Step, ...]


class _Analysis:
    def __init__(self, kernel: ast.Module) -> None:
        lets = {i.name.name for i in kernel.items if isinstance(i, ast.Let)}
        self.first_set: dict[str, Span] = {}
        init: list[ast.Stmt] = []
        turn: list[ast.Stmt] = []
        self.trace = False
        for item in kernel.items:
            if isinstance(item, ast.Workload):
                for clause in item.clauses:
                    if isinstance(clause, ast.Init):
                        init.extend(clause.body.body)
                    elif isinstance(clause, ast.TurnBlock):
                        turn.extend(clause.body.body)
                    elif isinstance(clause, ast.Trace):
                        self.trace = True
        for item in kernel.items:
            for n in _outside_expressions(item):
                if isinstance(n, (ast.Set, ast.Choose)):
                    self.first_set.setdefault(n.target.name, n.target.span)
        self.init = tuple(init)
        self.turn = tuple(turn)
        # the keys the scheduler reads on a session's attributes where it waits or runs
        self.queue_keys: dict[str, tuple[ast.Expr, ...]] = {}
        self.serve_keys: dict[str, tuple[ast.Expr, ...]] = {}
        for item in kernel.items:
            if isinstance(item, ast.Pool):
                for opt in item.options:
                    if isinstance(opt, ast.Option) and opt.key == "queue by":
                        self.queue_keys.setdefault(item.name.name, opt.keys)
            elif isinstance(item, ast.Stage) and isinstance(item.kind, ast.Step):
                for opt in item.kind.options:
                    if isinstance(opt, ast.Option) and opt.key == "serve by":
                        self.serve_keys.setdefault(item.name.name, opt.keys)
        self._gens: dict[int, frozenset[str] | None] = {}
        self.at_turn: frozenset[str] = frozenset()  # the `turn` block has no `turn;`
        # what `turn;` gives: the trace's columns, and what the `turn` block sets on every path
        given = set(TRACE_ATTRS) if self.trace else set()
        self.at_turn = frozenset(given | (self._gen(self.turn) or set()))
        # every name a read may find unset: the attributes something assigns, and the trace's
        # (always 0 without a trace, unless a `set` gives them)
        self.attrs = (set(self.first_set) | set(TRACE_ATTRS)) - set(BUILTIN_ATTRS) - lets
        self.reads: list[_Read] = []
        self.turns: list[tuple[ast.Turn, _Unset]] = []

    # -------------------------------------------------------------------------- driver

    def run(self, session: ast.Session) -> Iterator[Diagnostic]:
        arrival: _Unset = {name: () for name in self.attrs}
        after_init = self.stmts(self.init, arrival)
        if after_init is not None:
            self.stmts(session.body.body, after_init)
            if self.turns and self.turn:
                self.stmts(self.turn, self._turn_entry())
        seen: set[Span] = set()
        for read in self.reads:
            if read.name.span in seen:
                continue
            seen.add(read.name.span)
            yield self._diagnostic(read)

    def _turn_entry(self) -> _Unset:
        """The state the `turn` block starts from: unset at some `turn;`, with its path,
        but for the trace's columns, which the `turn;` gives before the block runs."""
        given = set(TRACE_ATTRS) if self.trace else set()
        entry: _Unset = {}
        for stmt, state in self.turns:
            step = ("to the `turn;` at {at}", stmt.span)
            for name, path in state.items():
                if name not in given:
                    entry.setdefault(name, (*path, step))
        return entry

    def _diagnostic(self, read: _Read) -> Diagnostic:
        name = read.name.name
        message = f"`{name}` is read here before anything sets it, so it reads 0"
        if read.path:
            file = read.name.span.file
            steps = (phrase.format(at=self.where(span, file)) for phrase, span in read.path)
            message += ": on the path " + ", then ".join(steps)
        labels = ()
        first = self.first_set.get(name)
        if first is not None:
            labels = (Label(first, "first set here"),)
        elif name in TRACE_ATTRS and self.trace:
            message += f" (`{name}` is the trace's column, given at each `turn;`)"
        elif name in TRACE_ATTRS:
            message += f" (`{name}` is a trace's column, and this workload has no `trace`)"
        return Diagnostic.warning(
            codes.UNSET,
            read.name.span,
            message,
            labels=labels,
            help=_HELP.format(name=name),
        )

    @staticmethod
    def where(span: Span, file: str) -> str:
        """`line:column` of `span`, with its file's name when that is not `file`."""
        at = f"{span.line}:{span.column}"
        return at if span.file == file else f"{Path(span.file).name}:{at}"

    # ----------------------------------------------------------------------- reads

    def read(
        self,
        e: ast.Expr | None,
        st: _Unset,
        bound: frozenset[str] = frozenset(),
        step: _Step | None = None,
    ) -> None:
        """Record each read in `e` of an attribute `st` may have unset (`step` ends the
        path, for a key read where the session is)."""
        if e is None:
            return
        for n in _names(e, bound):
            path = st.get(n.name)
            if path is not None:
                self.reads.append(_Read(n, path if step is None else (*path, step)))

    def keys(self, keys: dict[str, tuple[ast.Expr, ...]], ref: ast.Ref, st: _Unset, s) -> None:
        """The scheduler's keys of the pool or stage `ref`, read on the session at `s`."""
        word = "hold" if isinstance(s, ast.Hold) else "run"
        for k in keys.get(ref.dotted, ()):
            self.read(k, st, step=(f"to the `{word}` at {{at}}", s.span))

    def ref(self, ref: ast.Ref | None, st: _Unset) -> None:
        if ref is None:
            return
        for part in ref.parts:
            self.read(part.index, st)

    # ------------------------------------------------------------------ statements

    def stmts(self, body: tuple[ast.Stmt, ...], st: _Unset | None) -> _Unset | None:
        for s in body:
            if st is None:
                return None
            st = self.stmt(s, st)
        return st

    def stmt(self, s: ast.Stmt, st: _Unset) -> _Unset | None:
        if isinstance(s, ast.Set):
            self.read(s.value, st)
            return _assign(st, s.target.name)
        if isinstance(s, ast.Observe):
            self.read(s.value, st)
            return st
        if isinstance(s, ast.Choose):
            self.read(s.count, st)
            for k in s.keys:
                self.read(k, st, frozenset({s.target.name}))
            return _assign(st, s.target.name)
        if isinstance(s, ast.Hold):
            for p in s.pools:
                self.ref(p.pool, st)
                self.read(p.units, st)
                self.read(p.reserve, st)
                self.keys(self.queue_keys, p.pool, st, s)
            self.read(s.reuse, st)
            after = self.stmts(s.body.body, st)
            if after is not None:
                self.read(s.cache, after)
                if s.lease is not None:
                    self.ref(s.lease.pool, after)
                    self.read(s.lease.duration, after)
            return after
        if isinstance(s, (ast.Grow, ast.Load)):
            self.ref(s.pool, st)
            self.read(s.amount, st)
            return st
        if isinstance(s, (ast.Drop, ast.Release)):
            self.ref(s.pool, st)
            return st
        if isinstance(s, ast.Run):
            for ref in (*s.stages, s.growing):
                self.ref(ref, st)
            self.read(s.work, st)
            for ref in s.stages:
                self.keys(self.serve_keys, ref, st, s)
            return st
        if isinstance(s, ast.Branch):
            self.read(s.test, st)
            return self.branch(s, st)
        if isinstance(s, ast.Loop):
            self.loop(s, st)
            return None
        if isinstance(s, ast.Turn):
            self.turns.append((s, st))
            return {k: v for k, v in st.items() if k not in self.at_turn}
        if isinstance(s, ast.End):
            return None
        return st

    def branch(self, s: ast.Branch, st: _Unset) -> _Unset | None:
        then = self.stmts(s.then.body, st)
        otherwise = self.stmts(s.otherwise.body, st) if s.otherwise is not None else st
        if then is None or otherwise is None:
            return then if otherwise is None else otherwise
        skipped = (
            "through the `else` of the `branch` at {at}"
            if s.otherwise is not None
            else "past the `branch` at {at} with its test false"
        )
        arms = (
            (then, ("through the `branch` at {at} with its test true", s.span)),
            (otherwise, (skipped, s.span)),
        )
        out: _Unset = {}
        for name in then.keys() | otherwise.keys():
            before = st[name]
            unset = [(arm, step) for arm, step in arms if name in arm]
            # an arm that leaves the path as it was needs no word; else name the arm taken
            for arm, _ in unset:
                if arm[name] == before and len(unset) == 2:
                    out[name] = before
                    break
            else:
                arm, step = unset[0]
                out[name] = (*before, step, *arm[name][len(before) :])
        return out

    def loop(self, s: ast.Loop, st: _Unset) -> None:
        """The body from the state before the loop: what every pass sets is unset at the
        body's top on the first pass only."""
        every_pass = self._gen(s.body.body)
        if every_pass:
            step = ("into the first pass of the `loop` at {at}", s.span)
            st = {k: (*v, step) if k in every_pass else v for k, v in st.items()}
        self.stmts(s.body.body, st)

    # ------------------------------------------------------- what a block always sets

    def _gen(self, body: tuple[ast.Stmt, ...]) -> frozenset[str] | None:
        """The attributes every path through `body` sets; None when no path completes it."""
        key = id(body)
        if key not in self._gens:
            out: set[str] | None = set()
            for s in body:
                out = self._gen_stmt(s, out)
                if out is None:
                    break
            self._gens[key] = None if out is None else frozenset(out)
        return self._gens[key]

    def _gen_stmt(self, s: ast.Stmt, out: set[str]) -> set[str] | None:
        if isinstance(s, (ast.Set, ast.Choose)):
            return out | {s.target.name}
        if isinstance(s, ast.Hold):
            inner = self._gen(s.body.body)
            return None if inner is None else out | inner
        if isinstance(s, ast.Branch):
            then = self._gen(s.then.body)
            otherwise = self._gen(s.otherwise.body) if s.otherwise is not None else frozenset()
            if then is None or otherwise is None:
                arm = then if otherwise is None else otherwise
                return None if arm is None else out | arm
            return out | (then & otherwise)
        if isinstance(s, (ast.Loop, ast.End)):
            return None
        if isinstance(s, ast.Turn):
            return out | self.at_turn
        return out


def _assign(st: _Unset, name: str) -> _Unset:
    if name not in st:
        return st
    return {k: v for k, v in st.items() if k != name}


def _names(e: ast.Expr, bound: frozenset[str]) -> Iterator[ast.Name]:
    """The bare names `e` reads, but those `bound`: a choose's candidate, and the index of
    any aggregate in `e` (the kernel has written aggregates out; this is in case)."""
    nodes = list(walk(e))
    bound = bound | {n.var.name for n in nodes if isinstance(n, ast.Aggregate)}
    for n in nodes:
        if isinstance(n, ast.Name) and n.name not in bound:
            yield n
