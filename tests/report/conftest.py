"""Programs, hand-made recorder call sequences and a stand-in simulator for tests/report.

Each trace is the run of a deterministic program written out call by call, as the
simulator makes the calls; the numbers the tests expect are the reference's (pyserq
0.1.2) report of the same program, which `test_report_reference.py` re-checks live.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from serq import api
from serq.sim.recorder import StatsRecorder

FIFO = """
stage server : fifo(1);
workload { arrive batch(3); }
session {
  run server (~det(2));
  observe done = now;
}
gauge q = queue(server);
gauge b = busy(server);
run { horizon 10; warmup 1; seed 1; }
"""

STEP = """
pool kv { cap 100; preempt lifo; }
stage engine : step { budget 4; cost 1; memory kv; }
workload { arrive batch(3); }
session {
  set a = now;
  hold kv (3) {
    run engine prefill (3) growing kv;
    observe ttft = now - a;
    run engine decode (4) growing kv;
  }
  observe resp = now - a;
}
gauge u = used(kv);
run { horizon 30; warmup 2; seed 1; }
"""

POOLS = """
pool p { cap 2; }
pool c { cap 5; evict lru; }
stage s : fifo(1);
workload { arrive batch(4); }
session {
  hold p (1) {
    hold c (3) { run s (~det(2)); } cache (3);
  }
}
run { horizon 30; warmup 3; seed 1; }
"""


def link(text: str):
    program, diagnostics = api.link_source(text, "test.sq")
    assert program is not None, diagnostics
    return program


def outcome(end: float, events: int, arrivals: int, ended: int, turns: int = 0, **kw):
    fields = dict(end=end, horizon=end, warmup=0.0, seed=1, events=events)
    fields.update(arrivals=arrivals, ended=ended, turns=turns, errors=[])
    fields.update(kw)
    return SimpleNamespace(**fields)


def fifo_trace(r) -> None:
    """FIFO: three jobs of 2 at t=0 on one server, done at 2, 4, 6."""
    for s in range(3):
        r.arrival(0.0, s)
    r.stage_state(0, 0.0, 3, 1.0)
    r.gauges(0.0, (3.0, 1.0))
    for k, t in enumerate((2.0, 4.0, 6.0)):
        r.stage_done(0, t, t - 2, 2.0)
        r.observe(0, t, k, 0, t)
        r.session_ended(t, k)
        busy = 1.0 if k < 2 else 0.0
        r.stage_state(0, t, 2 - k, busy)
        r.gauges(t, (2.0 - k, busy))


def step_trace(r) -> None:
    """STEP: budget 4, cost 1; prefills of 3 then decodes of 4, three sessions at t=0."""
    for s in range(3):
        r.arrival(0.0, s)
        r.pool_admitted(0, 0.0, 0.0)
    r.pool_state(0, 0.0, 9, 0, 0, 3)
    r.stage_state(0, 0.0, 3, 1.0)
    r.gauges(0.0, (9.0,))
    # (time, prefills, decodes, used after the iteration's growth)
    r.iteration(0, 0.0, 2, 0, 4)
    r.iteration(0, 1.0, 2, 1, 4)
    r.pool_state(0, 1.0, 10, 0, 0, 3)
    r.gauges(1.0, (10.0,))
    r.stage_done(0, 1.0, 0.0, 1.0)  # s0's prefill
    r.observe(0, 1.0, 0, 0, 1.0)
    r.iteration(0, 2.0, 1, 2, 4)
    r.pool_state(0, 2.0, 12, 0, 0, 3)
    r.gauges(2.0, (12.0,))
    r.stage_done(0, 2.0, 0.0, 2.0)  # s1's prefill
    r.observe(0, 2.0, 1, 0, 2.0)
    r.iteration(0, 3.0, 0, 3, 3)
    r.pool_state(0, 3.0, 15, 0, 0, 3)
    r.gauges(3.0, (15.0,))
    r.stage_done(0, 3.0, 0.0, 3.0)  # s2's prefill
    r.observe(0, 3.0, 2, 0, 3.0)
    r.iteration(0, 4.0, 0, 3, 3)
    r.pool_state(0, 4.0, 18, 0, 0, 3)
    r.gauges(4.0, (18.0,))
    r.iteration(0, 5.0, 0, 2, 2)
    r.stage_done(0, 5.0, 0.0, 4.0)  # s0's decode
    r.observe(1, 5.0, 0, 0, 5.0)
    r.session_ended(5.0, 0)
    r.stage_state(0, 5.0, 2, 1.0)
    r.pool_state(0, 5.0, 13, 0, 0, 2)
    r.gauges(5.0, (13.0,))
    r.iteration(0, 6.0, 0, 1, 1)
    r.stage_done(0, 6.0, 0.0, 4.0)
    r.observe(1, 6.0, 1, 0, 6.0)
    r.session_ended(6.0, 1)
    r.stage_state(0, 6.0, 1, 1.0)
    r.pool_state(0, 6.0, 7, 0, 0, 1)
    r.gauges(6.0, (7.0,))
    r.stage_done(0, 7.0, 0.0, 4.0)
    r.observe(1, 7.0, 2, 0, 7.0)
    r.session_ended(7.0, 2)
    r.stage_state(0, 7.0, 0, 0.0)
    r.pool_state(0, 7.0, 0, 0, 0, 0)
    r.gauges(7.0, (0.0,))


def pools_trace(r) -> None:
    """POOLS: p (cap 2) around c (cap 5, cache 3), one fifo; four sessions at t=0."""
    P, C = 0, 1
    for s in range(4):
        r.arrival(0.0, s)
    r.pool_admitted(P, 0.0, 0.0)
    r.pool_admitted(P, 0.0, 0.0)
    r.pool_state(P, 0.0, 2, 0, 2, 2)
    r.pool_admitted(C, 0.0, 0.0)
    r.pool_state(C, 0.0, 3, 0, 1, 1)
    r.stage_state(0, 0.0, 1, 1.0)
    for k, t in enumerate((2.0, 4.0, 6.0, 8.0)):
        r.stage_done(0, t, 0.0, 2.0)
        if k < 3:  # the next session in c evicts the prefix just cached
            r.pool_count(C, "evicted_entries")
            r.pool_count(C, "evicted_units", 3)
            r.pool_admitted(C, t, 2.0)
            r.pool_state(C, t, 3, 0, 1 if k < 2 else 0, 1)
        else:
            r.pool_state(C, t, 0, 3, 0, 0)
            r.stage_state(0, t, 0, 0.0)
        r.session_ended(t, k)
        if k < 2:  # the next session in p, which waited since t=0
            r.pool_admitted(P, t, t)
            r.pool_state(P, t, 2, 0, 1 - k, 2)
        else:
            r.pool_state(P, t, 3 - k, 0, 0, 3 - k)


NOTED_PROGRAM = """
stage s : delay;
workload { arrive batch(50); }
session { set x = 1; run s (~det(1)); observe hit = x > 2; }
run { horizon 10; warmup 0; seed 1; }
"""


@pytest.fixture
def fifo_report():
    r = StatsRecorder(link(FIFO), 1.0)
    fifo_trace(r)
    return r.finish(outcome(10.0, 4, 3, 3))


class StubSimulator:
    """A stand-in for `serq.sim.simulate`: plays `trace` (FIFO's by default) into the
    recorder and returns an Outcome with `errors`; `raises` makes it fail instead."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.errors: list = []
        self.raises: Exception | None = None
        self.trace = fifo_trace

    def __call__(
        self,
        program,
        *,
        recorder,
        seed=None,
        horizon=None,
        warmup=None,
        arrivals=None,
        base_dir=".",
        check_invariants=False,
        fast_forward=True,
        codegen=True,
        notice=None,
    ):
        self.calls.append((program, base_dir))
        if self.raises is not None:
            raise self.raises
        recorder.progress(program.horizon / 2)
        self.trace(recorder)
        return outcome(
            program.horizon,
            4,
            3,
            3,
            horizon=program.horizon,
            seed=program.seed,
            warmup=program.warmup,
            errors=list(self.errors),
        )


@pytest.fixture
def stub_sim(monkeypatch):
    """Install a `StubSimulator` as `serq.sim.simulate` for the test."""
    import serq.sim

    stub = StubSimulator()
    monkeypatch.setattr(serq.sim, "simulate", stub, raising=False)
    return stub


def real_simulate():
    """`serq.sim.simulate` when the simulator can be imported, else None."""
    try:
        from serq.sim import simulate
    except ImportError:
        return None
    return simulate
