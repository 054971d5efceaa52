"""A wait at the pools among some sessions while others still move is `W-deadlock`.

Two sessions that take two pools in opposite orders wait for each other for ever while a
third keeps the clock going (a `loop` of runs, a job at a stage, later arrivals). The
rule (serq/sim/deadlock.py) names the set of waiting sessions none of which could go on
even if every other session gave back all it holds, on both paths with the same words;
it says nothing where it cannot prove the wait, and a seeded family of small programs
checks that whenever it speaks, a run to a far later horizon still has every session it
named waiting.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from serq.sim import api as sim_api
from serq.sim import deadlock
from serq.sim.world import World
from tests.sim.both_paths import warnings_on_both_paths

DOC = (Path(__file__).resolve().parents[2] / "docs" / "domains-and-stalls.md").read_text()
CROSSING = """pool a { cap 1; }
pool b { cap 1; }
stage s : fifo(1);
stage d : delay;
workload { arrive ARRIVAL; }
session {
  branch (serial == 0) {
    hold a (1) { run d (1); hold b (1) { run s (1); } }
  } else {
    branch (serial == 1) {
      hold b (1) { run d (1); hold a (1) { run s (1); } }
    } else {
      loop { run d (1); }
    }
  }
}
run { horizon 100; }
"""


def _deadlocks(warnings: list) -> list:
    return [w for w in warnings if w[0] == "W-deadlock"]


def test_two_sessions_crossing_beside_a_loop_are_named_on_both_paths():
    """Session 0 holds `a` and waits for `b` from 1, session 1 holds `b` and waits for `a`
    from 1; session 2 runs at `d` for ever, so the run goes on to the horizon."""
    text = CROSSING.replace("ARRIVAL", "batch(3)")
    assert text.strip() in DOC  # the rule is stated with this program
    warnings, ended = warnings_on_both_paths(text)
    assert ended == 0
    assert _deadlocks(warnings) == [
        (
            "W-deadlock",
            1,
            6,
            "2 of the 3 live sessions wait at the pools for ever (1 at pool `a` (used 1 of "
            "1, 1 of it by them); 1 at pool `b` (used 1 of 1, 1 of it by them); the first, "
            "session 0, since t = 1): none of their holds would fit even if every other "
            "session gave back all it holds, so they never release anything; the other "
            "sessions went on running to the end of the run",
        )
    ]


@pytest.mark.parametrize("arrival", ["closed(3)", "poisson(0.5)", "renewal(0.75)"])
def test_the_crossing_is_named_under_every_workload(arrival):
    """A closed population of three, and open workloads whose later sessions loop beside
    the two (or queue behind them): the two and whoever queues behind are named."""
    warnings, _ = warnings_on_both_paths(CROSSING.replace("ARRIVAL", arrival))
    [(code, line, column, message)] = _deadlocks(warnings)
    assert (code, line, column) == ("W-deadlock", 1, 6)
    assert "; the first, session 0, since t = " in message
    assert "went on running" in message


def test_a_session_at_a_stage_beside_a_circular_wait_does_not_hide_it():
    """The crossing of tests/sim/test_stalls.py with session 50 in a job of infinite work:
    not every live session waits, and the other 99 still do for ever."""
    from tests.sim.test_stalls import CROSSED

    text = CROSSED.replace("run { horizon 100; }", "stage e : delay;\nrun { horizon 100; }")
    text = text.replace("session {\n", "session {\n  branch (serial == 50) { run e (inf); }\n")
    warnings, ended = warnings_on_both_paths(text)
    assert ended == 0
    [(_, line, column, message)] = _deadlocks(warnings)
    assert (line, column) == (1, 6)
    assert message.startswith(
        "99 of the 100 live sessions wait at the pools for ever (1 at pool `a` (used 1 of 1, "
        "1 of it by them); 98 at pool `b` (used 1 of 1, 1 of it by them); the first, "
        "session 0, since t = 3)"
    )


def test_an_inline_hold_of_a_computed_member_and_a_reserve_are_counted():
    """Holds of a family member named by a computed index (inline on the compiled path,
    the member a local of the session code) with reserves: the same words on both."""
    text = """pool kv[2] { cap 4; }
stage d : delay;
workload { arrive batch(3); }
session {
  set i = serial == 1 ? 1 : 0;
  branch (serial < 2) {
    hold kv[i] (3) reserve (3.5) { run d (0.5); hold kv[1 - i] (2) { run d (1); } }
  } else {
    loop { run d (1); }
  }
}
run { horizon 50; }
"""
    warnings, _ = warnings_on_both_paths(text)
    [(_, _, _, message)] = _deadlocks(warnings)
    assert message.startswith(
        "2 of the 3 live sessions wait at the pools for ever (1 at pool `kv[0]` (used 3 of "
        "4, 3 of it by them); 1 at pool `kv[1]` (used 3 of 4, 3 of it by them)"
    )
    # with room for a hold of 2 beside each 3, both go on
    assert _deadlocks(warnings_on_both_paths(text.replace("cap 4", "cap 5"))[0]) == []


NEAR_MISSES = [
    # the third session holds the `a` session 1 needs and will give it back at 1000
    (
        "loop { run d (1); }",
        "hold a (1) { run d (1000); }",
        "pool a { cap 1; }",
        "pool a { cap 2; }",
    ),
    # room in `b` for both: nobody waits
    ("pool b { cap 1; }", "pool b { cap 2; }", "", ""),
    # units that read the clock or a draw: the rule proves nothing
    ("hold a (1) { run s (1); }", "hold a (1 + 0 * now) { run s (1); }", "", ""),
    ("hold a (1) { run s (1); }", "hold a (~det(1)) { run s (1); }", "", ""),
    # a lease of a finite duration may end on a timer (one of inf may not: below)
    ("hold a (1) { run s (1); }", "hold a (1) { run s (1); } lease a (5);", "", ""),
    # a step engine whose run grows a pool that is not its memory may preempt a holder
    # there in its plan, waiting or not
    (
        "pool b { cap 1; }",
        "pool b { cap 1; preempt lifo; }\nstage E : step { budget 1; cost 1; }",
        "loop { run d (1); }",
        "loop { hold b (0) { run E prefill (1) growing b; } run d (1); }",
    ),
]


@pytest.mark.parametrize("edit", NEAR_MISSES)
def test_no_partial_wait_is_named_where_the_rule_proves_none(edit):
    text = CROSSING.replace("ARRIVAL", "batch(3)")
    for old, new in (edit[:2], edit[2:]):
        if old:
            assert old in text
            text = text.replace(old, new)
    warnings, _ = warnings_on_both_paths(text)
    assert _deadlocks(warnings) == []


# ------------------------------------------------------------------ soundness


def _hold(rng: random.Random, pools: int, depth: int, lease: float = 0.0) -> str:
    """A random hold (one or two pools, a reserve now and then) around runs, a growth now
    and then, and maybe another hold; with probability `lease` (no draw when 0) the hold
    leases its first pool for ever, and a `release` of it follows now and then."""
    units = [0, 0.5, 1, 1, 2, 3]
    first = rng.randrange(pools)
    parts = [f"p{first} ({rng.choice(units)})"]
    if rng.random() < 0.2:
        parts[0] += f" reserve ({rng.choice(units)})"
    if rng.random() < 0.25 and pools > 1:
        parts.append(f"p{(first + 1) % pools} ({rng.choice(units)})")
    body = [f"run d ({rng.choice([0, 0.5, 1, 2])});"]
    if depth < 3 and rng.random() < 0.75:
        body.append(_hold(rng, pools, depth + 1, lease))
    if rng.random() < 0.15:
        body.append(f"grow p{first} ({rng.choice([0.5, 1])});")
    body.append(f"run s ({rng.choice([0.5, 1])});")
    hold = f"hold {', '.join(parts)} {{ {' '.join(body)} }}"
    if lease and rng.random() < lease:
        hold += f" lease p{first} (inf);"
        if rng.random() < 0.4:
            hold += f" run d ({rng.choice([0.5, 2])}); release p{first};"
    return hold


def _program(seed: int, lease: float = 0.0) -> str:
    rng = random.Random(seed)
    pools = rng.choice([1, 2, 2, 3])
    lines = [
        f"pool p{i} {{ cap {rng.choice([1, 2, 2.5, 3, 4])}; preempt none; }}" for i in range(pools)
    ]
    lines += ["stage s : fifo(1);", "stage d : delay;"]
    arrival = rng.choice(["batch(3)", "batch(5)", "closed(4)", "poisson(0.5)", "renewal(1)"])
    lines.append(f"workload {{ arrive {arrival}; }}")
    kinds = rng.choice([2, 3])
    body = "loop { run d (1); }" if rng.random() < 0.7 else _hold(rng, pools, 1, lease)
    return _sessions(rng, seed, lines, kinds, body, lambda: _hold(rng, pools, 1, lease))


def _sessions(
    rng: random.Random, seed: int, lines: list[str], kinds: int, body: str, first: Callable[[], str]
) -> str:
    """The program of `lines` with its session and run: session 0 loops at the delay,
    and each other session takes, by its serial modulo `kinds`, a hold of `first()` or
    `body` (the generators' shared shape)."""
    for k in reversed(range(kinds)):
        body = (
            f"branch (serial - {kinds} * floor(serial / {kinds}) == {k}) "
            f"{{ {first()} }} else {{ {body} }}"
        )
    loop = "loop { run d (1); }" if rng.random() < 0.8 else "run d (1);"
    lines.append(f"session {{ branch (serial == 0) {{ {loop} }} else {{ {body} }} }}")
    lines.append(f"run {{ horizon 40; seed {seed}; }}")
    return "\n".join(lines) + "\n"


def _waiting(world: World) -> set[int]:
    """The serials of the sessions waiting at the pools of `world`."""
    serials = set()
    for p in world.pools:
        serials.update(r.session.serial for r in (*p.front, *p.queue))
        serials.update(g.session.serial for g in p.growers)
    return serials


def _warnings_whose_named_waits_still_wait(monkeypatch, programs) -> list[list[tuple]]:
    """Run each program of `programs` to 40 on both paths, and wherever the rule names
    sessions there, to 4000 (the same seed, so the same run up to 40): every session it
    named is still waiting then, and the two paths say the same. The warnings of each
    program (code, message)."""
    named: list[set[int]] = []
    found = deadlock._deadlocked

    def recording(world):
        result = found(world)
        named.append(set() if result is None else {w.session.serial for w in result[0]})
        return result

    monkeypatch.setattr(deadlock, "_deadlocked", recording)
    at_end: list[set[int]] = []
    check_end = World._check_end

    def watching(world):
        at_end.append(_waiting(world))
        check_end(world)

    monkeypatch.setattr(World, "_check_end", watching)
    warnings = []
    for text in programs:
        compiled, diagnostics = sim_api.compile_program(text, "t.sq")
        assert compiled is not None, (text, diagnostics)
        said = []
        for codegen in (True, False):
            named.clear()
            report, ran = sim_api.execute(compiled, codegen=codegen)
            said.append([(d.code, d.message) for d in ran])
            if not any(d.code == "W-deadlock" for d in ran):
                continue
            stuck = named[-1] if named else set()
            assert stuck, text
            later, _ = sim_api.compile_program(text, "t.sq", horizon=4000)
            at_end.clear()
            sim_api.execute(later, codegen=codegen)
            assert at_end and stuck <= at_end[-1], (text, stuck, at_end)
        assert said[0] == said[1], text
        warnings.append(said[0])
    return warnings


def test_every_named_wait_still_waits_far_later(monkeypatch):
    """On a seeded family of small programs (pools of caps 1 to 4 under `preempt none`,
    holds nested in random orders with fractional, zero and reserved units, growths, a
    session in a loop of runs, every kind of workload): whenever the rule names sessions
    at the horizon 40, the run to 4000 (the same seed, so the same run up to 40) still has
    each of them waiting, on both paths, and the warnings are the same on both."""
    programs = (_program(seed) for seed in range(120))
    fired = partial = 0
    for said in _warnings_whose_named_waits_still_wait(monkeypatch, programs):
        if any(code == "W-deadlock" for code, _ in said):
            fired += 1
            partial += any(" live sessions wait " in m for _, m in said)
    assert fired >= 10 and partial >= 5, (fired, partial)


# ------------------------------------------------------------------- leases

LEASE_CROSSING = """pool a { cap 1; }
pool b { cap 1; }
stage d : delay;
workload { arrive renewal(1); }
session {
  branch (serial == 0) {
    hold a (1) { run d (0.5); } lease a (inf);
    run d (1.5);
    hold b (1) { run d (1); }
    release a;
  } else {
    hold b (1) { run d (0.2); hold a (1) { run d (1); } }
  }
}
run { horizon 100; }
"""


def test_a_lease_held_by_a_waiting_session_is_named():
    """Session 0 leases `a` for ever and waits for `b`; session 1 holds `b` and waits for
    `a`: nothing but session 0's `release` or end gives the lease back, and neither comes
    while it waits (the rule stayed silent in any program with a lease, and the run went
    on to the horizon with every later arrival queued behind them)."""
    warnings, _ = warnings_on_both_paths(LEASE_CROSSING)
    [(_, _, _, message)] = _deadlocks(warnings)
    assert message.startswith(
        "100 sessions wait at the pools for ever (1 at pool `a` (used 1 of 1); 99 at pool "
        "`b` (used 1 of 1))"
    )
    # a lease that ends on a timer gives `a` back at 5.5: the rule proves nothing
    timed = LEASE_CROSSING.replace("lease a (inf)", "lease a (5)")
    assert _deadlocks(warnings_on_both_paths(timed)[0]) == []


def test_every_named_wait_with_leases_still_waits_far_later(monkeypatch):
    """The family of `test_every_named_wait_still_waits_far_later` with leases of inf
    (one hold in three leases its first pool, and a `release` follows now and then)."""
    programs = (_program(seed, lease=0.35) for seed in range(120))
    fired = leased = 0
    for text, said in zip(
        [_program(seed, lease=0.35) for seed in range(120)],
        _warnings_whose_named_waits_still_wait(monkeypatch, programs),
        strict=True,
    ):
        if any(code == "W-deadlock" for code, _ in said):
            fired += 1
            leased += "lease" in text
    assert fired >= 30 and leased >= 20, (fired, leased)


# ------------------------------------------------------------- step engines


ENGINE_CROSSING = """pool m { cap 1; }
pool kv { cap 8; block 1; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(3); }
session {
  branch (serial == 0) {
    hold kv (4) { run engine prefill (4) growing kv; run d (1); hold m (1) { run d (1); } }
  } else {
    branch (serial == 1) {
      run d (0.5);
      hold m (1) { run d (1); hold kv (8) { run engine prefill (4) growing kv; } }
    } else {
      loop { run d (1); }
    }
  }
}
run { horizon 50; }
"""


def test_a_crossing_at_a_step_engines_memory_is_named():
    """Session 0 keeps 4 of the engine's memory after its prefill and waits for `m`;
    session 1 holds `m` and waits for all 8 of the memory. The engine preempts only its
    residents, and neither is one, so nothing frees them while session 2 loops: serq ran
    this to the horizon in silence, as it did every program with a step engine."""
    warnings, ended = warnings_on_both_paths(ENGINE_CROSSING)
    assert ended == 0
    [(code, line, column, message)] = _deadlocks(warnings)
    assert (code, line, column) == ("W-deadlock", 1, 6)
    assert message.startswith(
        "2 of the 3 live sessions wait at the pools for ever (1 at pool `m` (used 1 of 1, "
        "1 of it by them); 1 at pool `kv` (used 4 of 8, 4 of it by them); the first, "
        "session 0, since t = 2)"
    )


def test_an_engine_growing_a_pool_not_its_memory_keeps_the_rule_silent():
    """A growth on a pool that is not the engine's memory preempts the newest holder
    there, which may be a session that waits: the rule proves nothing."""
    text = ENGINE_CROSSING.replace(
        "loop { run d (1); }",
        "loop { hold m (0) { run engine prefill (1) growing m; } run d (1); }",
    ).replace("pool m { cap 1; }", "pool m { cap 1; preempt lifo; }")
    assert _deadlocks(warnings_on_both_paths(text)[0]) == []


def _engine_program(seed: int) -> str:
    """`_program`'s pools beside a step engine on `kv` (preempt lifo): holds of kv around
    prefills and decodes that grow it, nested with the other pools in random orders, and
    sessions that cycle through the engine and preempt each other."""
    rng = random.Random(seed)
    pools = rng.choice([1, 2])
    lines = [f"pool p{i} {{ cap {rng.choice([1, 2, 3])}; preempt none; }}" for i in range(pools)]
    lines.append(f"pool kv {{ cap {rng.choice([4, 6, 8])}; block 1; preempt lifo; }}")
    lines.append(f"stage E : step {{ budget {rng.choice([2, 4, 8])}; cost 1; memory kv; }}")
    lines += ["stage s : fifo(1);", "stage d : delay;"]
    arrival = rng.choice(["batch(3)", "batch(4)", "closed(3)", "renewal(1)"])
    lines.append(f"workload {{ arrive {arrival}; }}")

    def engine_hold(depth: int) -> str:
        units = rng.choice([0, 1, 2, 3, 4])
        body = [f"run E prefill ({rng.choice([1, 2, 3])}) growing kv;"]
        if rng.random() < 0.5:
            body.append(f"run E decode ({rng.choice([1, 2])}) growing kv;")
        body.append(f"run d ({rng.choice([0, 0.5, 1])});")
        if depth < 3 and rng.random() < 0.6:
            body.append(other_hold(depth + 1))
        return f"hold kv ({units}) {{ {' '.join(body)} }}"

    def other_hold(depth: int) -> str:
        p = rng.randrange(pools)
        body = [f"run d ({rng.choice([0.5, 1])});"]
        if depth < 3 and rng.random() < 0.6:
            body.append(engine_hold(depth + 1))
        body.append(f"run s ({rng.choice([0.5, 1])});")
        return f"hold p{p} ({rng.choice([0.5, 1, 2])}) {{ {' '.join(body)} }}"

    kinds = rng.choice([2, 3])
    body = "loop { run d (1); }" if rng.random() < 0.6 else f"loop {{ {engine_hold(2)} }}"
    return _sessions(
        rng,
        seed,
        lines,
        kinds,
        body,
        lambda: engine_hold(1) if rng.random() < 0.5 else other_hold(1),
    )


def test_every_named_wait_beside_an_engine_still_waits_far_later(monkeypatch):
    """`test_every_named_wait_still_waits_far_later` over `_engine_program`: wherever the
    rule speaks at 40 beside a step engine that preempts its residents, the run to 4000
    still has every session it named waiting, on both paths."""
    programs = (_engine_program(seed) for seed in range(150))
    said = _warnings_whose_named_waits_still_wait(monkeypatch, programs)
    fired = sum(any(code == "W-deadlock" for code, _ in w) for w in said)
    assert fired >= 10, fired
