"""The victim of a preemption at an engine's memory, found without a scan of the frames.

`StepStage._victim` (`preempt lifo`) and `preempt.resident_by_keys` (`preempt by`) read a
resident's hold part on the pool from `Resident.part` (the innermost part its run found
as it arrived: the frames of a session waiting in a run do not change), and only look
through the frames (`holds.innermost`) when that part is on another pool or released.
Under `preempt lifo`, a stage that keeps its residents in admission order (no serve
keys) gives its newest holder as the last of them that holds the pool, without a scan
(a holder's admission number is its session's own); a preempted resident leaves that
order as a finished one does. Checked here against the scan of every resident's frames
at every choice, on the step family (tests/oracle/step_family.py, most of it `preempt
lifo`, some of it `preempt by` or with serve keys), on the fast-forward family (some of
it two engines on one memory), and on programs whose residents grow a pool other than
the memory; and `Resident.part_on` on the cases that fall back.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import serq
from serq.sim import step
from serq.sim.api import compile_program, execute
from serq.sim.holds import innermost
from serq.sim.pools import HoldPart
from serq.sim.session import HOLD
from serq.sim.step import Resident, StepStage

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import step_family  # noqa: E402

INF = float("inf")


def _scanned(stage: StepStage, pool) -> object:
    """The victim as the scan of every resident's frames finds it (`preempt lifo`)."""
    if pool is not stage.memory or pool.preempt_key_of is not None:
        return None
    best, newest = None, -INF
    for st in stage.world.steps:
        if st.memory is not pool:
            continue
        for r in st.residents:
            part = innermost(r.session, pool)
            if part is not None and not part.leased and r.admission > newest:
                best, newest = part, r.admission
    return best


@pytest.fixture
def checked(monkeypatch):
    """Every `_victim` (and every `Resident.part_on`) checked against `innermost`; the
    number of choices checked."""
    seen = {"victims": 0, "parts": 0}
    victim, part_on = StepStage._victim, Resident.part_on

    def checked_victim(self, pool):
        found = victim(self, pool)
        if pool is self.memory and pool.preempt_key_of is None:
            assert found is _scanned(self, pool)
            seen["victims"] += 1
        return found

    def checked_part_on(self, pool):
        found = part_on(self, pool)
        assert found is innermost(self.session, pool)
        seen["parts"] += 1
        return found

    monkeypatch.setattr(StepStage, "_victim", checked_victim)
    monkeypatch.setattr(Resident, "part_on", checked_part_on)
    return seen


def test_the_step_family_chooses_as_the_scan(checked):
    for k in range(40):  # some stop with a diagnostic (a stall): the choices before count
        compiled, _ = compile_program(step_family.program(k), f"g{k}.sq")
        execute(compiled)
    assert checked["victims"] > 20  # the family preempts


def test_two_engines_on_one_memory_choose_as_the_scan(checked):
    import test_fast_forward

    shared = 0
    for k in range(60):
        g = test_fast_forward.generate(k)
        shared += "stage E[2]" in g.source and "pool kv {" in g.source  # one memory
        compiled, _ = compile_program(g.source, f"ff{k}.sq")
        execute(compiled)
    assert shared >= 5 and checked["victims"] > 20


# a resident that grows `g` holds `kv` (the memory) too: its part there is not `r.part`
OTHER_POOL = """
let bs = 4;
pool kv {{ cap {cap}; block bs; evict lru; preempt {rule}; }}
pool g {{ cap 10000; block bs; }}
stage engine : step {{ budget 64; cost 1; {serve}memory kv; }}
stage arrive_at : delay;
workload {{ arrive batch(4); }}
session {{
  run arrive_at (serial);
  branch (serial == 0 || serial == 2) {{
    hold kv (8), g (4) {{
      run engine prefill (12) growing g;
      run engine decode (30) growing g;
    }};
  }} else {{
    hold kv (4) {{
      run engine prefill (10) growing kv;
      run engine decode (30) growing kv;
    }} cache (8);
  }}
  observe last = now;
}}
run {{ horizon 400; warmup 0; seed 1; }}
"""


@pytest.mark.parametrize("serve", ["", "serve decode first; "])
@pytest.mark.parametrize("rule", ["lifo", "by (-admission)", "by (position, decoding)"])
@pytest.mark.parametrize("cap", [24, 40, 64])
def test_a_resident_growing_another_pool(checked, rule, cap, serve):
    compiled = serq.compile(source=OTHER_POOL.format(rule=rule, cap=cap, serve=serve))
    report = serq.run(compiled)
    assert report.pools[0].preemptions > 0
    assert checked["victims"] + checked["parts"] > 0


def _session(*parts: HoldPart) -> SimpleNamespace:
    """A session in one hold with `parts`."""
    run = SimpleNamespace(parts=list(parts), positioned=False)
    for part in parts:
        part.run = run
    return SimpleNamespace(frames=[SimpleNamespace(kind=HOLD, hold=run)])


def test_part_on_reads_the_part_or_the_frames():
    kv, g = SimpleNamespace(name="kv"), SimpleNamespace(name="g")
    on_kv, on_g = HoldPart(kv, None), HoldPart(g, None)
    s = _session(on_kv, on_g)
    assert Resident(s, True, 5.0, on_kv, True).part_on(kv) is on_kv
    # its part is on another pool: the frames give the one on this pool
    assert Resident(s, True, 5.0, on_g, True).part_on(kv) is on_kv
    assert Resident(s, True, 5.0, None, False).part_on(kv) is on_kv
    # released: the frames have none left on the pool
    on_kv.released = True
    assert Resident(s, True, 5.0, on_kv, True).part_on(kv) is None
    assert step.innermost(s, kv) is None
