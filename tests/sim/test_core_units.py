"""The simulator core on its own: the event loop, compiled expressions, run-time errors as
diagnostics, the run settings, determinism, and the spec readings the reference does not
share (each says why)."""

from __future__ import annotations

import math
import random
import statistics
from pathlib import Path

import pytest

from serq import api, ir
from serq.ir import arith
from serq.ir.expr import Binary, Call, Cond, Num, Unary
from serq.sim import NullRecorder, Outcome, simulate
from serq.sim import draws as dist
from serq.sim.core import Engine
from serq.sim.exprs import ExprCompiler


class _Observes:
    """A recorder keeping only the observations, by statistic number."""

    def __init__(self) -> None:
        self.samples: dict[int, list[tuple[float, float, int, int]]] = {}

    def observe(self, stat, now, session, turn, value):
        self.samples.setdefault(stat, []).append((now, value, session, turn))

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _link(source: str, path: str = "prog.sq") -> ir.Program:
    program, diagnostics = api.link_source(source, path)
    assert program is not None, [d.message for d in diagnostics]
    return program


def _run(source: str, **options) -> tuple[ir.Program, _Observes, Outcome]:
    program = _link(source)
    recorder = _Observes()
    outcome = simulate(program, recorder=recorder, **options)
    return program, recorder, outcome


def _values(program: ir.Program, recorder: _Observes, name: str) -> list[float]:
    return [v for _, v, _, _ in recorder.samples.get(program.observes.index(name), [])]


# ------------------------------------------------------------------ the event loop


def test_events_at_one_instant_fire_in_the_order_scheduled() -> None:
    engine = Engine()
    fired: list[str] = []
    instants: list[float] = []
    for name, time in (("b", 1.0), ("a", 0.5), ("c", 1.0), ("d", 2.0), ("late", 3.0)):
        engine.schedule(time, fired.append, name)
    engine.run(2.0, settle=lambda: None, end_instant=instants.append, progress=lambda t: None)
    assert fired == ["a", "b", "c", "d"]  # the horizon is inclusive; 3.0 never fires
    assert instants == [0.0, 0.5, 1.0, 2.0]  # each instant ends once, after its last event


# ------------------------------------------------------------------ expressions


def _random_expr(rng: random.Random, depth: int) -> ir.Expr:
    if depth == 0 or rng.random() < 0.25:
        return Num(rng.choice([0.0, 1.0, -2.5, 3.0, 0.5, math.inf, 7.0, 1e308]))
    kind = rng.random()
    if kind < 0.15:
        return Unary(rng.choice(["-", "!"]), _random_expr(rng, depth - 1))
    if kind < 0.75:
        op = rng.choice(ir.BINARY_OPS)
        return Binary(op, _random_expr(rng, depth - 1), _random_expr(rng, depth - 1))
    if kind < 0.85:
        return Cond(*(_random_expr(rng, depth - 1) for _ in range(3)))
    func = rng.choice(sorted(arith.FUNCTIONS))
    arity = arith.FUNCTIONS[func][0]
    return Call(func, tuple(_random_expr(rng, depth - 1) for _ in range(arity)))


def test_compiled_expressions_compute_what_the_linker_folds() -> None:
    compiler = ExprCompiler(Engine(), [], [], 9)
    rng = random.Random(7)
    for _ in range(2000):
        expr = _random_expr(rng, 5)
        want = arith.fold(expr)
        got = compiler.compile(expr)(None)
        assert want is not None
        assert (math.isnan(got) and math.isnan(want)) or got == want, expr


def test_deep_expressions_compile() -> None:
    compiler = ExprCompiler(Engine(), [], [], 9)
    expr: ir.Expr = Num(0.0)
    for i in range(300):
        expr = Binary("+", expr, Call("max", (Num(float(i)), Num(1.0))))
    assert compiler.compile(expr)(None) == arith.fold(expr)


@pytest.mark.parametrize(
    ("name", "args", "mean", "cv2"),
    [
        ("exp", (2.0,), 2.0, 1.0),
        ("uniform", (1.0, 3.0), 2.0, (2.0**2 / 12) / 4),
        ("erlang", (4.0, 2.0), 2.0, 0.25),
        ("h2", (2.0, 4.0), 2.0, 4.0),
        ("bernoulli", (0.3,), 0.3, 0.7 / 0.3),
        ("det", (1.5,), 1.5, 0.0),
    ],
)
def test_distributions_have_their_moments(name, args, mean, cv2) -> None:
    u = random.Random(11).random
    xs = [dist.SAMPLERS[name](u, *args) for _ in range(200_000)]
    m = statistics.fmean(xs)
    assert m == pytest.approx(mean, rel=0.02)
    assert statistics.pvariance(xs) / m**2 == pytest.approx(cv2, rel=0.06, abs=1e-9)


# ------------------------------------------------------------------ run-time errors


def test_a_branch_guard_that_is_not_0_or_1_is_an_error_at_the_branch() -> None:
    source = "workload { arrive batch(1); }\nsession {\n  set x = 0.5 + serial;\n  branch (x) { observe a = 1; }\n}\nrun { horizon 10; }\n"
    program, recorder, outcome = _run(source)
    [error] = outcome.errors
    assert error.code == "E-run"
    assert error.span.line == 4
    assert "0.5, not 0 or 1" in error.message
    assert recorder.samples == {}


def test_a_renewal_gap_must_be_positive_and_finite() -> None:
    source = "workload { arrive renewal(~uniform(-2, -1)); }\nsession { observe a = 1; }\nrun { horizon 10; }\n"
    _, _, outcome = _run(source)
    [error] = outcome.errors
    assert error.code == "E-run" and "gaps must be positive and finite" in error.message
    assert error.span.line == 1


def test_an_unreadable_trace_is_an_error(tmp_path: Path) -> None:
    source = 'workload { arrive batch(1); trace "missing.csv"; }\nsession { turn; }\nrun { horizon 10; }\n'
    _, _, outcome = _run(source, base_dir=str(tmp_path))
    [error] = outcome.errors
    assert "cannot read trace `missing.csv`" in error.message


def test_a_bad_index_is_an_error_not_a_traceback() -> None:
    source = "stage d[3] : fifo(1);\nworkload { arrive batch(1); }\nsession { set i = 3; run d[i] (1); }\nrun { horizon 10; }\n"
    _, _, outcome = _run(source)
    [error] = outcome.errors
    assert error.message == "stage index 3 is out of range: the array has 3 members, 0 .. 2"


def test_a_closed_population_replaced_forever_at_one_instant_is_a_livelock() -> None:
    """Every session's hold can never fit, so each is rejected and replaced at time 0."""
    source = (
        "pool kv { cap 10; }\nstage s : fifo(1);\nworkload { arrive closed(3); }\n"
        "session { hold kv (20) { run s (1); } }\nrun { horizon 100; }\n"
    )
    _, _, outcome = _run(source)
    [error, rejected] = outcome.errors  # the stall, and the hold that rejects (W-reject)
    assert error.code == "E-run" and "replaced at time 0 without end" in error.message
    assert error.span.line == 3
    assert rejected.code == "W-reject" and rejected.span.line == 4


def test_a_closed_population_that_ends_sessions_at_once_a_while_is_no_livelock() -> None:
    """The first 1,000 sessions end at once; the others let time pass."""
    source = (
        "stage s : fifo(1);\nworkload { arrive closed(2); }\n"
        "session { branch (serial < 1000) { end; } else { run s (1); } }\n"
        "run { horizon 10; }\n"
    )
    _, _, outcome = _run(source)
    assert not outcome.errors
    assert outcome.ended >= 1000


@pytest.mark.parametrize(
    "run", ["run s (0);", "run E decode (0);", "run s, t (0);"], ids=["plain", "step", "flow"]
)
def test_sessions_taking_turns_at_zero_work_forever_is_a_livelock(run: str) -> None:
    """A run of zero work puts its session behind the ready ones; two sessions that loop
    over one take turns at one instant without end."""
    share = "share maxmin;" if "," in run else ""
    source = (
        "stage s : ps(1);\nstage t : ps(1);\nstage E : step { budget 8; cost 1; }\n"
        f"{share}\nworkload {{ arrive batch(2); }}\n"
        f"session {{ loop {{ {run} }} }}\nrun {{ horizon 10; }}\n"
    )
    _, _, outcome = _run(source)
    [error] = outcome.errors
    assert error.code == "E-run" and "the loop goes round without letting time pass" in error.message
    assert error.span.line == 6


def test_step_stage_prefills_in_budget_sized_iterations() -> None:
    """A prefill of 20 tokens on a budget of 8 takes three iterations of cost 1."""
    source = (
        "stage E : step { budget 8; cost 1; }\nworkload { arrive batch(1); }\n"
        "session { run E prefill (20); observe done = now; }\nrun { horizon 10; }\n"
    )
    _, _, outcome = _run(source)
    assert not outcome.errors
    assert outcome.ended == 1


# ------------------------------------------------------------------ run settings

OPEN = """
stage s : fifo(1);
workload { arrive renewal(1); }
session { run s (0.5); observe done = now; }
run { horizon 100; }
"""


def test_arrivals_drain_and_end_the_run() -> None:
    program, recorder, outcome = _run(OPEN, arrivals=5)
    assert not outcome.errors
    assert outcome.arrivals == 5
    assert outcome.end == 5.5 and outcome.horizon == 100
    assert _values(program, recorder, "done") == [1.5, 2.5, 3.5, 4.5, 5.5]


def test_arrivals_that_cannot_arrive_by_the_horizon_are_an_error() -> None:
    _, _, outcome = _run(OPEN, arrivals=500)
    [error] = outcome.errors
    assert "got 100, requested 500" in error.message


def test_arrivals_draining_before_the_warmup_are_an_error() -> None:
    _, _, outcome = _run(OPEN, arrivals=2, warmup=10)
    [error] = outcome.errors
    assert "before or at warmup" in error.message


def test_arrivals_apply_only_to_open_workloads() -> None:
    _, _, outcome = _run(OPEN.replace("renewal(1)", "batch(3)"), arrivals=2)
    [error] = outcome.errors
    assert "only to poisson or renewal" in error.message


def test_ended_and_turns_count_from_the_warmup() -> None:
    source = "stage s : delay;\nworkload { arrive closed(1); }\nsession { turn; run s (1); turn; }\nrun { horizon 10; }\n"
    _, _, outcome = _run(source, warmup=4)
    assert outcome.arrivals == 11  # one at 0, then one at each end
    assert outcome.ended == 7  # the ends at 4, 5, ..., 10
    assert outcome.turns == 14


RANDOM = """
let lambda = 0.8;
pool kv { cap 40; block 4; evict lru; preempt lifo; }
stage server : ps(1);
workload { arrive poisson(lambda); }
session {
  set n = 4 + floor(~uniform(0, 12));
  hold kv (n) reuse (~uniform(0, n)) {
    run server (~exp(1));
    branch with (0.3) { grow kv (4); }
  } cache (n);
  observe sojourn = now;
}
run { horizon 400; seed 3; }
"""


def test_one_seed_one_result_and_the_memory_invariant_holds() -> None:
    a = _run(RANDOM, check_invariants=True)
    b = _run(RANDOM, check_invariants=True)
    c = _run(RANDOM, seed=4)
    assert not a[2].errors and not c[2].errors
    assert a[1].samples == b[1].samples
    assert a[1].samples != c[1].samples


def test_mm1_sojourn_is_near_its_closed_form() -> None:
    source = (Path(__file__).resolve().parents[2] / "examples" / "mm1.sq").read_text()
    program, recorder, outcome = _run(source)
    assert not outcome.errors
    sojourn = _values(program, recorder, "sojourn")
    assert statistics.fmean(sojourn) == pytest.approx(5.0, rel=0.15)


# ------------------------------------------------------------------ spec readings


def test_preempted_plain_hold_reads_its_allocation_as_computed() -> None:
    """spec §3: "computed is the allocation, or the position a growing run or a load
    reached", and the re-executed hold finds computed "set to the position the hold had
    computed". The reference caches the allocation at the preemption but sets the
    attribute to 0 (tests/sim/NOTES.md §1); serq follows the spec."""
    source = """
pool m { cap 12; block 1; preempt lifo; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 0.5);
  branch (serial == 0) {
    hold m (4) { run d (2); grow m (6); run d (3); }
  } else {
    hold m (6) { observe resumed = computed; observe hit = cached; run d (4); } cache (6);
  }
}
run { horizon 40; }
"""
    program, recorder, _ = _run(source)
    assert _values(program, recorder, "resumed") == [0.0, 6.0]
    assert _values(program, recorder, "hit") == [0.0, 2.0]


def test_null_recorder_runs() -> None:
    outcome = simulate(_link(OPEN), recorder=NullRecorder())
    assert outcome.end == 100 and outcome.arrivals == 100 and not outcome.errors
