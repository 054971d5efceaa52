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
    # a lease may end on a timer
    ("hold a (1) { run s (1); }", "hold a (1) { run s (1); } lease a (inf)", "", ""),
    # a step engine (one the sessions never use) may preempt a holder in its plan
    ("stage d : delay;", "stage d : delay;\nstage E : step { budget 1; cost 1; }", "", ""),
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


def _hold(rng: random.Random, pools: int, depth: int) -> str:
    """A random hold (one or two pools, a reserve now and then) around runs, a growth now
    and then, and maybe another hold."""
    units = [0, 0.5, 1, 1, 2, 3]
    first = rng.randrange(pools)
    parts = [f"p{first} ({rng.choice(units)})"]
    if rng.random() < 0.2:
        parts[0] += f" reserve ({rng.choice(units)})"
    if rng.random() < 0.25 and pools > 1:
        parts.append(f"p{(first + 1) % pools} ({rng.choice(units)})")
    body = [f"run d ({rng.choice([0, 0.5, 1, 2])});"]
    if depth < 3 and rng.random() < 0.75:
        body.append(_hold(rng, pools, depth + 1))
    if rng.random() < 0.15:
        body.append(f"grow p{first} ({rng.choice([0.5, 1])});")
    body.append(f"run s ({rng.choice([0.5, 1])});")
    return f"hold {', '.join(parts)} {{ {' '.join(body)} }}"


def _program(seed: int) -> str:
    rng = random.Random(seed)
    pools = rng.choice([1, 2, 2, 3])
    lines = [
        f"pool p{i} {{ cap {rng.choice([1, 2, 2.5, 3, 4])}; preempt none; }}" for i in range(pools)
    ]
    lines += ["stage s : fifo(1);", "stage d : delay;"]
    arrival = rng.choice(["batch(3)", "batch(5)", "closed(4)", "poisson(0.5)", "renewal(1)"])
    lines.append(f"workload {{ arrive {arrival}; }}")
    kinds = rng.choice([2, 3])
    body = "loop { run d (1); }" if rng.random() < 0.7 else _hold(rng, pools, 1)
    for k in reversed(range(kinds)):
        body = (
            f"branch (serial - {kinds} * floor(serial / {kinds}) == {k}) "
            f"{{ {_hold(rng, pools, 1)} }} else {{ {body} }}"
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


def test_every_named_wait_still_waits_far_later(monkeypatch):
    """On a seeded family of small programs (pools of caps 1 to 4 under `preempt none`,
    holds nested in random orders with fractional, zero and reserved units, growths, a
    session in a loop of runs, every kind of workload): whenever the rule names sessions
    at the horizon 40, the run to 4000 (the same seed, so the same run up to 40) still has
    each of them waiting, on both paths, and the warnings are the same on both."""
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
    fired = partial = 0
    for seed in range(120):
        text = _program(seed)
        compiled, diagnostics = sim_api.compile_program(text, "t.sq")
        assert compiled is not None, (text, diagnostics)
        said = []
        for codegen in (True, False):
            named.clear()
            report, ran = sim_api.execute(compiled, codegen=codegen)
            said.append([(d.code, d.message) for d in ran])
            stuck = named[-1] if named else set()
            if not any(d.code == "W-deadlock" for d in ran):
                continue
            assert stuck, text
            later, _ = sim_api.compile_program(text, "t.sq", horizon=4000)
            at_end.clear()
            sim_api.execute(later, codegen=codegen)
            assert at_end and stuck <= at_end[-1], (text, stuck, at_end)
        assert said[0] == said[1], text
        if any(code == "W-deadlock" for code, _ in said[0]):
            fired += 1
            partial += any(" live sessions wait " in m for _, m in said[0])
    assert fired >= 10 and partial >= 5, (fired, partial)
