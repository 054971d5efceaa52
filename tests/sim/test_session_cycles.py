"""An ended session is freed by reference counting, not left to the cyclic collector.

A session that the run's structures keep in a reference cycle outlives its end until the
collector finds it: the whole run's sessions were then walked at the end of a run (the
thresholds going back to the caller's) and by every young collection on the way, 14% of
a trace replay's time. The generated code now keeps a session in its own attributes only
where `cachedin` reads it there, drops it there as the session ends (unless an eviction
key may read it of the session's cached entry later), and a closed hold no longer keeps
its parts, which point back at it (nor does a lease that ended). With the collector off, what a run leaves behind is
then only the sessions still live at the horizon and those the run's structures name.

A trace replay without pools is a plain program now: its sessions get only the slots
the generated code and the trace read.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from serq.sim.api import compile_program, execute
from serq.sim.session import Session

from .both_paths import generated_source, report_json

ROOT = Path(__file__).resolve().parents[2]

TRACE = """\
stage engine : ps(1);
stage tool : delay;
workload {
  arrive renewal(4);
  trace "TRACE" ordered;
}
session {
  loop {
    turn;
    set arrived = now;
    run engine (0.001 * new + 0.005 * out);
    observe response = now - arrived;
    branch (more) { tool (think); } else { end; }
  }
}
run { horizon 4000; warmup 0; seed 1; }
"""

# a cache and `cachedin`: the session is kept in its attributes while it lives
CACHED = """\
pool kv { cap 600; evict lru; }
stage engine : fifo(1);
workload { arrive poisson(0.5); }
session {
  set hit = cachedin(kv);
  hold kv (100) { run engine (~exp(1)); } cache (100);
  observe hit = hit + cachedin(kv);
}
run { horizon 4000; warmup 0; seed 2; }
"""

# an eviction key that reads `cachedin` of an entry's owner, which may have ended: the
# session stays in its attributes (and the cycle to the collector)
KEYED = """\
pool kv { cap 250; evict by (cachedin(kv), last); }
stage engine : fifo(1);
workload { arrive poisson(0.5); }
session {
  hold kv (~uniform(10, 120)) { run engine (~exp(1)); } cache (~uniform(0, 150));
  observe kept = cachedin(kv);
}
run { horizon 3000; warmup 0; seed 3; }
"""


# a spill whose condition reads `cachedin` of the evicted entry's owner, which may have
# ended: the same (the owner keeps itself in its attributes)
SPILLED = """\
pool host { cap 300; evict lru; }
pool kv { cap 150; evict lru; spill host via link (1) when (cachedin(kv) > 40); }
stage link : delay;
stage engine : fifo(1);
workload { arrive poisson(0.6); }
session {
  hold kv (~uniform(10, 100)) { run engine (~exp(1)); } cache (~uniform(0, 120));
  observe host = cachedin(host);
}
run { horizon 2000; warmup 0; seed 4; }
"""


# a lease that outlives its hold's scope, for a while or to the session's end (P/D's
# prefiller, without engines): when it ends, its hold keeps no cycle with its part
LEASED = """\
pool kv { cap 64; }
stage pre : fifo(1);
stage dec : fifo(2);
workload { arrive poisson(0.8); }
session {
  hold kv (4) { run pre (~exp(0.5)); } lease kv (LEASE);
  run dec (~exp(1));
  branch (serial - 3 * floor(serial / 3) == 0) { release kv; }
}
run { horizon 3000; warmup 0; seed 5; }
"""


def _left_behind(text: str, codegen: bool) -> tuple[int, int, int]:
    """The sessions a run of `text` leaves in memory with the collector off, with the
    sessions that arrived and those that ended (warm-up 0: all of them)."""
    compiled, diagnostics = compile_program(text, str(ROOT / "t.sq"))
    assert compiled is not None, diagnostics
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        report, ran = execute(compiled, codegen=codegen)
        assert report is not None, ran
        left = sum(1 for o in gc.get_objects() if type(o) is Session)
    finally:
        if enabled:
            gc.enable()
        gc.collect()
    return left, report.arrivals, report.ended


def _trace_program() -> str:
    return TRACE.replace("TRACE", str(ROOT / "examples" / "traces" / "chat.csv"))


@pytest.mark.parametrize("name", ["trace", "cached"])
def test_ended_sessions_are_freed_on_the_generated_code(name):
    text = _trace_program() if name == "trace" else CACHED
    left, arrived, ended = _left_behind(text, codegen=True)
    assert arrived > 500
    # the few live at the horizon, and those the run's own structures (freed by the
    # collector, with the run) still name: a queue, a cache's entries
    assert left < 20 + (arrived - ended), (left, arrived, ended)


@pytest.mark.parametrize("name", ["keyed", "spilled"])
def test_a_key_or_spill_that_reads_an_owners_cachedin_keeps_it(name):
    left, arrived, ended = _left_behind(KEYED if name == "keyed" else SPILLED, codegen=True)
    assert left > arrived // 2, (left, arrived, ended)  # the ended ones, kept as they were


@pytest.mark.parametrize("lease", ["1", "0", "inf", "1e-300"])
def test_a_lease_that_ends_frees_its_session_on_the_generated_code(lease):
    """A lease ends by its time, a `release`, or the session's end (inf): each frees the
    session it belonged to (the lease's part and its hold pointed at each other)."""
    left, arrived, ended = _left_behind(LEASED.replace("LEASE", lease), codegen=True)
    assert arrived > 2000
    assert left < 20 + (arrived - ended), (left, arrived, ended)


def test_both_paths_agree_where_the_session_is_kept_or_dropped():
    leased = [LEASED.replace("LEASE", lease) for lease in ("1", "0", "inf")]
    for text in (_trace_program(), CACHED, KEYED, SPILLED, *leased):
        assert report_json(text, True) == report_json(text, False)


def test_a_trace_replay_without_pools_makes_plain_sessions():
    """A trace needs only the slots where a session's trace rows are: its sessions are
    made as a plain program's are (not every slot of `Session`), on both paths alike, and
    whether the trace is replayed in order or sampled (which draws)."""
    ordered = _trace_program()
    source = generated_source(ordered)
    assert "s.trace_rows = _k_rows" in source  # `Workload.assign`, inline
    assert "s.leases" not in source and "s.waiter" not in source
    sampled = ordered.replace(" ordered;", ";")
    for text in (ordered, sampled):
        assert report_json(text, True) == report_json(text, False)
