"""The step engine's per-turn shortcuts against the engine without them.

`StepStage.bind` decides two of them from the program: `budget_left(E)` may leave out
`_context` (the sums of the residents) when no expression of an engine, nor a claim,
reads `budget_left` and could then read the sums it leaves behind (`quiet_left`), and a
finished run is measured for the online estimates only when the program reads one
(`measuring`). A family of step programs (tests/oracle/step_family.py) whose cost may
read `budget_left(engine)` before `decoders` and `kv_decode`, and whose sessions may
observe `est_rho(engine)` or `est_wait(engine)`, is run with both decisions and with both
forced off (the engine as it was: `_context` at every `budget_left`, every run
measured): the reports must be identical, bit for bit. The family fails when either
decision is wrong (`test_the_family_tells_a_wrong_decision_apart`).

A pool's `cachedin`, `holders` and `queued` are written inline (`Pool.COUNT_CODE`):
compared with the methods they stand for.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

import serq
from serq import ir
from serq.diagnostics import Span
from serq.sim import step as step_module
from serq.sim.core import Engine
from serq.sim.exprs import ExprCompiler
from serq.sim.pools import Pool
from serq.sim.step import StepStage, _never_caps

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))

import step_family  # noqa: E402

_SPAN = Span.point("t.sq", 0, 1, 1)
COSTS = (
    None,  # the family's own
    "0.5 + 0.001 * budget_left(engine) + 0.01 * decoders + 0.0001 * kv_decode",
    "max(0.25, 0.002 * budget_left(engine)) + 0.05 * decoders",
    "1 + 0 * budget_left(engine)",
    "0.25 + tokens / 128",
)
OBSERVES = (
    "",
    "observe rho = est_rho(engine);",
    "observe waited = est_wait(engine) + est_lambda(engine);",
)


def program(k: int) -> str:
    """The k-th program: step_family's, its cost and its observes varied."""
    r = random.Random(1000 + k)
    text = step_family.program(k)
    cost = r.choice(COSTS)
    if cost is not None:
        start = text.index(" cost ") + len(" cost ")
        text = text[:start] + cost + text[text.index(";", start) :]
    observe = r.choice(OBSERVES)
    if observe:
        text = text.replace("    observe last = now;", f"    observe last = now;\n    {observe}")
    return text


def _report(source: str, shortcuts: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    """The report of `source` (fast-forwarding, as by default) as JSON with its samples,
    or the diagnostic of a run that fails, with the shortcuts `bind` decides or with
    both forced off."""
    bind = StepStage.bind

    def plain(stage: StepStage, world) -> None:
        bind(stage, world)
        stage.quiet_left = False
        stage.measuring = True

    with monkeypatch.context() as patch:
        if not shortcuts:
            patch.setattr(StepStage, "bind", plain)
        try:
            report = serq.run(serq.compile(source=source))
        except ValueError as error:  # a run that stops moving: the same diagnostic
            return str(error)
    samples = {
        name: (tuple(o.samples), tuple(o.times), tuple(o.sessions))
        for name, o in report.observes.items()
    }
    return report.json() + repr(samples)


def _decisions(source: str) -> list[tuple[bool, bool]]:
    """(quiet_left, measuring) of each step stage of a run of `source`."""
    seen: list[tuple[bool, bool]] = []
    bind = StepStage.bind

    def spy(stage: StepStage, world) -> None:
        bind(stage, world)
        seen.append((stage.quiet_left, stage.measuring))

    StepStage.bind = spy  # type: ignore[method-assign]
    try:
        serq.run(serq.compile(source=source))
    except ValueError:
        pass  # a run that stops moving: its stages were bound
    finally:
        StepStage.bind = bind  # type: ignore[method-assign]
    return seen


@pytest.mark.parametrize("k", range(40))
def test_shortcuts_change_nothing(k, monkeypatch):
    source = program(k)
    assert _report(source, True, monkeypatch) == _report(source, False, monkeypatch)


def test_the_family_takes_both_ways():
    """Across the family each decision is taken both ways."""
    decisions = [d for k in range(40) for d in _decisions(program(k))]
    assert {quiet for quiet, _ in decisions} == {True, False}
    assert {measuring for _, measuring in decisions} == {True, False}


@pytest.mark.parametrize("shortcut", ["quiet_left", "measuring"])
def test_the_family_tells_a_wrong_decision_apart(shortcut, monkeypatch):
    """Taking a shortcut where `bind` refuses it (`budget_left` without `_context` before
    a cost reads the sums; no estimates where an observe reads them) changes some report
    of the family: the comparison above would catch a wrong decision."""
    bind = StepStage.bind

    def careless(stage: StepStage, world) -> None:
        bind(stage, world)
        if shortcut == "quiet_left":
            stage.quiet_left = not stage.sums
        else:
            stage.measuring = False

    differ = 0
    for k in range(40):
        source = program(k)
        plain = _report(source, False, monkeypatch)
        with monkeypatch.context() as patch:
            patch.setattr(StepStage, "bind", careless)
            differ += _report(source, True, monkeypatch) != plain
    assert differ >= 2


class _Session:
    pass


@pytest.mark.parametrize("block", ["", "block 16;"])
def test_pool_counts_written_inline(block):
    """`cachedin(kv)`, `holders(kv)` and `queued(kv)` as `Pool.COUNT_CODE` writes them
    read what `Pool.cachedin`, `holders_count` and `queued_count` return, for the owner
    of an entry, another session and none."""
    source = (
        f"pool kv {{ cap 64; {block} }}\nsession {{ hold kv (1) {{ }} }}\nrun {{ horizon 1; }}\n"
    )
    engine = Engine()
    pool = Pool(0, serq.compile(source=source).program.pools[0], engine, [], None)
    compiler = ExprCompiler(engine, [pool], [], 1)
    owner, other = _Session(), _Session()
    pool.cache.put(owner, 32.0)
    pool.cache.put(other, 0.0)
    pool.n_holders = 3
    pool.queue.append(object())
    ref = ir.Ref("pool", 0, 1, None, _SPAN)
    for func, method in (
        ("cachedin", lambda a: pool.cachedin(a[1])),
        ("holders", lambda a: pool.holders_count()),
        ("queued", lambda a: pool.queued_count()),
    ):
        fn = compiler.compile(ir.Observable(func, ref, (), _SPAN))
        for session in (owner, other, None):
            a = [0.0, session]
            assert fn(a) == method(a), (func, session)
    assert compiler.compile(ir.Observable("cachedin", ref, (), _SPAN))([0.0, owner]) == 32.0


def _chunk(text: str) -> ir.Expr:
    """The IR of the chunk expression `text` of an engine serving pool `reqs`."""
    source = (
        "pool reqs { cap 4; admit via engine; }\n"
        f"stage engine : step {{ budget 8; cost 1; chunk {text}; }}\n"
        "session { hold reqs (1) { run engine prefill (4); } }\nrun { horizon 10; }\n"
    )
    return serq.compile(source=source).program.stages[0].kind.chunk


@pytest.mark.parametrize(
    ("text", "never"),
    [
        ("0", True),
        ("-2", True),
        ("4", False),
        ("residents + queued(reqs) > 1 ? 0 : 0", True),
        ("residents + queued(reqs) > 1 ? 0 : -1", True),
        ("residents + queued(reqs) > 1 ? 8 : 0", False),
        ("kv_decode > 1 ? 0 : (decoders < 2 ? 0 : 0)", True),
        ("~uniform(0, 1) > 0.5 ? 0 : 0", False),  # the test draws
        ("residents > 1 ? 0 : 0 / 0", False),  # NaN is an error, not no cap
    ],
)
def test_a_chunk_that_never_caps(text: str, never: bool) -> None:
    """`_never_caps`: a chunk whose every value is at most 0 and whose tests can neither
    fail, draw nor set anything is none, and the engine does not read it at each plan. (A
    chunk may not read `budget_left`, which plans from it: E-structure.)"""
    assert _never_caps(_chunk(text)) is never


def test_a_chunk_that_never_caps_changes_no_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/vllm.sq (chunk `long_prefill(reqs, 0)`), short and under heavy load, reports
    the same with its chunk read at every plan."""
    path = str(Path(__file__).resolve().parents[2] / "examples" / "vllm.sq")
    for sets in ({}, {"Lambda": 2.0, "blocks": 250}):
        program = serq.compile(path, horizon=200, sets=sets)
        fast = serq.run(program).json()
        with monkeypatch.context() as patch:
            patch.setattr(step_module, "_never_caps", lambda chunk: False)
            assert serq.run(program).json() == fast
