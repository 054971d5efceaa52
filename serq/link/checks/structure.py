"""Structural rules of the kernel (E-structure), each a short function over the program.

- a step stage's runs carry `prefill` or `decode`, other stages' runs do not,
  and `growing` is a step stage's;
- a run over several stages holds ps stages of constant capacity above 0, each
  array once, and carries no mode; a program with such a run declares its
  `share`, once, and a program without one declares none (a pull relation's
  share is in the kernel already);
- a step stage says `serve` once (`exclusive prefill` is not an order, so it
  is never combined with one), each of `budget`, `cost`, `chunk` and `memory`
  at most once, and has a `cost`; its budget and chunk read no `budget_left(…)`
  (it plans an iteration from them: serq overflowed Python's stack with E-internal,
  pyserq 0.1.2 crashes, 0.1.4 refuses it so);
- families pair member for member: `admit via S` on a pool family names a
  stage family of its size or of one, and `memory P` on a step stage family a
  pool family of its size or of one;
- queue and serve keys do not draw (they are re-read at every selection);
- a hold without `cache` consumes nothing of the cached prefix, so its body
  may not read `cached` and it may not have `reuse`;
- a workload's `init` and `turn` blocks only `set` and `observe` (a `turn;` in the
  `turn` block recursed without end, and a `run` there ran outside any session's path);
- a `release P` outside every hold of P (as written) is in a program that leases P (it
  had nothing to give back, and ran as nothing), a `load P` is inside a hold of P, and
  a hold's `lease P` names one of its pools as the hold writes it;
- spill tiers form no cycle (a pool spilling into itself, or into a tier that spills
  back to it).

Draws are allowed in eviction keys (eviction has a random stream of its own,
spec §3 Workload) and in `choose` keys (random routing); the reference agrees.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from serq.diagnostics import Diagnostic, Label, Span, codes
from serq.expand.context import NotConstant, evaluate
from serq.expand.printer import print_node
from serq.expand.walk import walk
from serq.link.checks.places import broken, declared, names, session_of, statements
from serq.syntax import ast

_ONCE = ("budget", "cost", "chunk", "memory")


def check(kernel: ast.Module, lets: dict[str, float]) -> Iterator[Diagnostic]:
    """Every structural error of `kernel`."""
    pools, stages = declared(kernel)
    session = session_of(kernel)
    runs = [s for s in statements(session.body) if isinstance(s, ast.Run)] if session else []
    yield from _modes(runs, stages)
    yield from _flows(kernel, runs, stages, lets)
    for stage in stages.values():
        if isinstance(stage.kind, ast.Step):
            yield from _step_options(stage, stage.kind)
    yield from _families(kernel, pools, stages, lets)
    yield from _spill_cycles(pools)
    yield from _key_draws(kernel)
    if session is not None:
        yield from _without_cache(session.body, None)
        leased = {print_node(s.lease.pool) for s in statements(session.body) if _leases(s)}
        yield from _releases(session.body, frozenset(), leased)
        yield from _lease_pools(session.body)
    yield from _workload_blocks(kernel)


def _workload_blocks(kernel: ast.Module) -> Iterator[Diagnostic]:
    """A workload's `init` and `turn` blocks hold only `set` and `observe` (spec: "init
    and turn blocks may only set and observe")."""
    for item in kernel.all_items():
        if not isinstance(item, ast.Workload):
            continue
        for clause in item.clauses:
            if not isinstance(clause, ast.Init | ast.TurnBlock):
                continue
            word = "init" if isinstance(clause, ast.Init) else "turn"
            for stmt in clause.body.body:
                if not isinstance(stmt, ast.Set | ast.Observe):
                    yield _error(
                        stmt.span,
                        f"a workload's `{word}` block may only `set` and `observe`",
                        help="what a session does goes in the session (or the server)",
                    )


def _error(span: Span, message: str, **kw) -> Diagnostic:
    return Diagnostic.error(codes.STRUCTURE, span, message, **kw)


def _kind_word(kind: ast.StageKind) -> str:
    words = {ast.Fifo: "a fifo", ast.Ps: "a ps", ast.Delay: "a delay", ast.Step: "a step"}
    return words.get(type(kind), "another")


# ------------------------------------------------------------------------- runs


def _modes(runs: list[ast.Run], stages: dict[str, ast.Stage]) -> Iterator[Diagnostic]:
    for run in runs:
        if len(run.stages) != 1:
            continue
        ref = run.stages[0]
        stage = stages.get(ref.dotted)
        if stage is None:
            continue
        step = isinstance(stage.kind, ast.Step)
        if step and run.mode is None:
            yield _error(
                ref.span,
                f"a run on the step stage `{ref.dotted}` says what it runs: `prefill` or `decode`",
                labels=(Label(stage.name.span, "a step stage"),),
                help=f"write `run {ref.dotted} prefill (…)` or `run {ref.dotted} decode (…)`",
            )
        elif not step and run.mode is not None:
            yield _error(
                ref.span,
                f"`{run.mode}` is only for a step stage, and `{ref.dotted}` is "
                f"{_kind_word(stage.kind)} stage",
                labels=(Label(stage.name.span, "declared here"),),
            )
        if not step and run.growing is not None:
            yield _error(
                run.growing.span,
                f"`growing` needs a step stage, and `{ref.dotted}` is "
                f"{_kind_word(stage.kind)} stage",
            )


def _flows(
    kernel: ast.Module, runs: list[ast.Run], stages: dict[str, ast.Stage], lets: dict[str, float]
) -> Iterator[Diagnostic]:
    """Runs over several stages, and the program's `share`."""
    flows = [r for r in runs if len(r.stages) > 1]
    for run in flows:
        refs = run.stages
        cover = refs[0].span.cover(refs[-1].span) if _same_file(refs) else refs[0].span
        if run.mode is not None:
            yield _error(cover, f"a run over several stages is a flow, with no `{run.mode}`")
        if run.growing is not None:
            yield _error(run.growing.span, "`growing` needs a run on one step stage")
        seen: set[str] = set()
        for ref in refs:
            if ref.dotted in seen:
                yield _error(
                    ref.span,
                    f"stage `{ref.dotted}` is named twice in one run",
                    help="an index is known only when the run starts, so a run names "
                    "each stage array once",
                )
                continue
            seen.add(ref.dotted)
            stage = stages.get(ref.dotted)
            if stage is not None and not _constant_ps(stage, lets):
                yield _error(
                    ref.span,
                    f"stage `{ref.dotted}` is held with another stage by one run, so its "
                    "capacity is shared: it must be `ps(φ)` with a constant φ above 0",
                    labels=(Label(stage.kind.span, "declared here"),),
                )
    shares = [i for i in kernel.items if isinstance(i, ast.Share)]
    if broken(kernel):  # the run or the share may be in the text that did not parse
        flows = flows if shares else []
        shares = shares if flows else []
    if flows and not shares:
        first = flows[0].stages
        yield _error(
            first[0].span.cover(first[-1].span) if _same_file(first) else first[0].span,
            "a run over several stages needs the program's `share`",
            help="declare `share maxmin;` or `share bottleneck;`",
        )
    if shares and not flows:
        yield _error(shares[0].span, "`share` without a run over several stages")
    for extra in shares[1:]:
        yield _error(
            extra.span,
            "`share` is given twice: a program divides shared stages by one policy",
            labels=(Label(shares[0].span, "the first"),),
        )


def _same_file(refs: tuple[ast.Ref, ...]) -> bool:
    return all(r.span.file == refs[0].span.file for r in refs)


def _constant_ps(stage: ast.Stage, lets: dict[str, float]) -> bool:
    if not isinstance(stage.kind, ast.Ps):
        return False
    try:
        phi = evaluate(stage.kind.capacity, lets)
    except NotConstant:
        return False
    return not math.isnan(phi) and phi > 0


# ------------------------------------------------------------------- step options


def _step_options(stage: ast.Stage, kind: ast.Step) -> Iterator[Diagnostic]:
    first: dict[str, ast.Option] = {}
    for opt in kind.options:
        if not isinstance(opt, ast.Option):
            continue
        family = "serve" if opt.key.startswith("serve") else opt.key
        if family not in first:
            first[family] = opt
            continue
        before = first[family]
        if family == "serve":
            exclusive = "serve exclusive prefill" in (opt.key, before.key)
            message = (
                "`serve exclusive prefill` is not an order, so it is not combined with one"
                if exclusive and opt.key != before.key
                else "`serve` twice: a step stage serves its residents in one way"
            )
        elif family in _ONCE:
            message = f"`{family}` twice: a step stage has one"
        else:
            continue
        yield _error(opt.span, message, labels=(Label(before.span, "the first"),))
    if "cost" not in first and not broken(kind):
        yield _error(
            stage.name.span,
            f"the step stage `{stage.name.name}` has no `cost`: an iteration's length",
            help="write `cost EXPR;` in the step block",
        )
    for key in ("budget", "chunk"):
        opt = first.get(key)
        if opt is None or opt.value is None:
            continue
        for n in walk(opt.value):
            if isinstance(n, ast.Call) and n.func.name == "budget_left":
                yield _error(
                    n.span,
                    f"a step stage's {key} may not read `budget_left(…)`: reading it plans "
                    "an iteration from the budget and the chunk, which would read themselves",
                    help="read `residents`, `decoders`, `kv_decode` or `kv_prefill` instead",
                )


# ------------------------------------------------------------------------ families


def _spill_cycles(pools: dict[str, ast.Pool]) -> Iterator[Diagnostic]:
    """Spill tiers that lead back to a pool they spill from (a pool that spills into
    itself, `a` into `b` into `a`): an eviction there writes into a tier that evicts into
    the first again, without end (serq overflowed Python's stack with E-internal, pyserq
    0.1.2 hangs). Reported once per cycle, at the first of its pools' spill clauses."""
    tier: dict[str, ast.Spill] = {}
    for name, pool in pools.items():
        for option in pool.options:
            if isinstance(option, ast.Spill):
                tier[name] = option
    reported: set[str] = set()
    for start in tier:
        path = [start]
        while path[-1] in tier and tier[path[-1]].pool.name in pools:
            nxt = tier[path[-1]].pool.name
            if nxt in path:
                cycle = path[path.index(nxt) :]
                if not reported & set(cycle):
                    reported.update(cycle)
                    first = min(cycle, key=lambda n: tier[n].span.start)
                    chain = " into ".join(f"`{n}`" for n in (*cycle, nxt))
                    yield _error(
                        tier[first].span,
                        f"the spill tiers form a cycle: {chain}; an evicted prefix would "
                        "be written back and forth without end",
                        help="spill into a tier that does not spill back (a hierarchy: "
                        "device into host into disk)",
                    )
                break
            path.append(nxt)


def _size(node: ast.Pool | ast.Stage, lets: dict[str, float]) -> float | None:
    if node.size is None:
        return 1.0
    try:
        return evaluate(node.size, lets)
    except NotConstant:
        return None


def _families(
    kernel: ast.Module,
    pools: dict[str, ast.Pool],
    stages: dict[str, ast.Stage],
    lets: dict[str, float],
) -> Iterator[Diagnostic]:
    """`admit via S` (each pool member gets a stage) and `memory P` (each stage member a pool)."""
    pairs: list[tuple[ast.Pool | ast.Stage, ast.Option, ast.Pool | ast.Stage | None]] = []
    for item in kernel.items:
        if isinstance(item, ast.Pool):
            for opt in item.options:
                if isinstance(opt, ast.Option) and opt.key == "admit via" and opt.target:
                    pairs.append((item, opt, stages.get(opt.target.name)))
        elif isinstance(item, ast.Stage) and isinstance(item.kind, ast.Step):
            for opt in item.kind.options:
                if isinstance(opt, ast.Option) and opt.key == "memory" and opt.target:
                    pairs.append((item, opt, pools.get(opt.target.name)))
    for owner, opt, named in pairs:
        if named is None:
            continue
        own, other = _size(owner, lets), _size(named, lets)
        if own is None or other is None or other in (own, 1.0):
            continue
        yield _error(
            opt.target.span,  # type: ignore[union-attr]
            f"`{opt.key}` names a family of {other:g}, and `{owner.name.name}` is a family "
            f"of {own:g}: one for one, or one for all",
            labels=(Label(named.name.span, "declared here"),),
        )


# --------------------------------------------------------------------------- keys


def _key_draws(kernel: ast.Module) -> Iterator[Diagnostic]:
    """Queue and serve keys are re-read at every selection, so they may not draw."""
    for item in kernel.items:
        options: tuple = ()
        if isinstance(item, ast.Pool):
            options = item.options
        elif isinstance(item, ast.Stage) and isinstance(item.kind, ast.Step):
            options = item.kind.options
        for opt in options:
            if not (isinstance(opt, ast.Option) and opt.key in ("queue by", "serve by")):
                continue
            for key in opt.keys:
                for n in walk(key):
                    if isinstance(n, ast.Draw):
                        yield _error(
                            n.span,
                            f"a `{opt.key}` key may not draw (`~`): it is read again at every "
                            "selection, and the order would change under the scheduler's feet",
                            help="draw into a session attribute with `set`, and key on that",
                        )


# ------------------------------------------------------------------ holds and cache


def _without_cache(block: ast.Block, hold: ast.Hold | None) -> Iterator[Diagnostic]:
    """`cached` read where the innermost hold has no `cache`, and `reuse` without `cache`."""
    for s in block.body:
        if isinstance(s, ast.Hold):
            header = [e for p in s.pools for e in (p.units, p.reserve) if e is not None]
            outer = [*header, *(e for e in (s.reuse, s.cache) if e is not None)]
            if s.lease is not None:
                outer.append(s.lease.duration)
            for e in outer:
                yield from _cached(e, hold)
            if s.reuse is not None and s.cache is None:
                yield _error(
                    s.reuse.span,
                    f"`reuse` on a hold on `{_pool(s)}` without `cache`: such a hold consumes "
                    "nothing of the cached prefix, so the bound has nothing to bound",
                    help="write `cache (0)` to consume the prefix and keep nothing, "
                    "or `cache (ℓ)` to keep ℓ",
                )
            yield from _without_cache(s.body, s)
            continue
        for e in _own_exprs(s):
            yield from _cached(e, hold)
        if isinstance(s, ast.Branch):
            yield from _without_cache(s.then, hold)
            if s.otherwise is not None:
                yield from _without_cache(s.otherwise, hold)
        elif isinstance(s, ast.Loop):
            yield from _without_cache(s.body, hold)


def _leases(s: ast.Stmt) -> bool:
    return isinstance(s, ast.Hold) and s.lease is not None


def _lease_pools(block: ast.Block) -> Iterator[Diagnostic]:
    """A hold's `lease P` names one of its pools as the hold writes it, index included
    (spec §2: "lease P (t) names one of the hold's pools"; pyserq 0.1.2 compares the
    written references, so `kv[j]` is not `kv[i]` even where j = i). serq leased nothing
    for a pool the hold does not take."""
    for s in statements(block):
        if not _leases(s):
            continue
        written = print_node(s.lease.pool)
        if all(print_node(p.pool) != written for p in s.pools):
            taken = ", ".join(f"`{print_node(p.pool)}`" for p in s.pools)
            yield _error(
                s.lease.pool.span,
                f"`lease {written}`: the hold does not take that pool (it takes {taken})",
                help="name one of the hold's pools as the hold writes it, index included",
            )


def _releases(block: ast.Block, held: frozenset[str], leased: set[str]) -> Iterator[Diagnostic]:
    """`release P` with no enclosing hold of P's family where the program leases none of
    it: there is nothing it could give back (spec §2: "give the enclosing hold's
    allocation on POOL back now, or end a lease of it"; pyserq 0.1.2 refuses it so), and
    `load P` with none (it "advances the enclosing hold's computed position": the
    reference refuses it at link too, serq did when the session reached it). A pool is
    compared as written, index included, as the reference does: `release kv[j]` in a
    hold of `kv[i]` is outside it."""
    for s in block.body:
        if isinstance(s, ast.Hold):
            inner = held | {print_node(p.pool) for p in s.pools}
            yield from _releases(s.body, inner, leased)
        elif isinstance(s, ast.Load) and print_node(s.pool) not in held:
            name = print_node(s.pool)
            yield _error(
                s.span,
                f"`load {name}` outside a hold of `{name}`: it moves the computed position "
                "of an enclosing hold's allocation",
                help=f"move it into a hold of `{name}`",
            )
        elif isinstance(s, ast.Release):
            name = print_node(s.pool)
            if name not in held and name not in leased:
                yield _error(
                    s.span,
                    f"`release {name}` outside a hold of `{name}`, and no hold leases "
                    f"`{name}`: it gives back an enclosing hold's allocation, or a lease",
                    help=f"move it into a hold of `{name}`, or lease `{name}` from a hold "
                    "that ends before it (the pool written as the hold writes it, index "
                    "included)",
                )
        elif isinstance(s, ast.Branch):
            yield from _releases(s.then, held, leased)
            if s.otherwise is not None:
                yield from _releases(s.otherwise, held, leased)
        elif isinstance(s, ast.Loop):
            yield from _releases(s.body, held, leased)


def _pool(hold: ast.Hold) -> str:
    return hold.pools[0].pool.dotted if hold.pools else "?"


def _cached(e: ast.Expr, hold: ast.Hold | None) -> Iterator[Diagnostic]:
    if hold is None or hold.cache is not None:
        return
    for n in names(e):
        if n.name == "cached":
            yield _error(
                n.span,
                f"`cached` is read in a hold on `{_pool(hold)}` that has no `cache` clause, "
                "where it is 0: such a hold consumes nothing of the cached prefix",
                labels=(Label(hold.pools[0].pool.span, "this hold"),) if hold.pools else (),
                help="write `cache (0)` to consume the prefix and keep nothing, `cache (ℓ)` "
                "to keep ℓ, or read `cached` above the hold",
            )


def _own_exprs(s: ast.Stmt) -> list[ast.Expr]:
    """The expressions of a statement other than a hold, outside its blocks."""
    if isinstance(s, (ast.Set, ast.Observe)):
        return [s.value]
    if isinstance(s, (ast.Grow, ast.Load)):
        return [s.amount]
    if isinstance(s, ast.Run):
        return [s.work]
    if isinstance(s, ast.Branch):
        return [s.test]
    if isinstance(s, ast.Choose):
        return [s.count, *s.keys]
    return []
