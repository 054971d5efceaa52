"""A step stage's inter-token latencies (`mean_itl`, `itl_p50`, `itl_p99`), as both
references measure them, found one case at a time on programs whose iteration times are
known (cost 1 + tokens / 8 on E, 2 + tokens / 8 on F: a decode iteration of one session
takes 1.125 on E):

- a session's token is a decode iteration's, or the last chunk's of a prefill; the
  latency is the time since its previous token from any engine, the stage that gives
  the token counts it, and a token at or after the warm-up does;
- the first token of a turn (`turn;` starts a request) has none, and neither has a
  prefill's token until the session has decoded (or was preempted, after which the token
  the engine that gave its last one computes again is its next, once:
  test_itl_prefill_preempted.py);
- the percentiles are nearest-rank, as the observations' (the reference estimates them
  with a sketch above about twenty samples: tests/oracle/differential.py, `ESTIMATED`).

Each expected triple is pyserq 0.1.2's (0.1.4's for the `fn main` program); serq's three
paths (generated code, interpreter, every iteration stepped) give it exactly.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from itertools import accumulate, repeat
from operator import sub
from pathlib import Path

import pytest

import serq
from serq.sim.step_spans import _count_steps, _count_stretches

HEAD = """\
pool kv { cap 1000; block 4; preempt lifo; }
stage E : step { budget 8; cost 1 + 0.125 * tokens; memory kv; }
stage F : step { budget 8; cost 2 + 0.125 * tokens; }
stage D : delay;
"""


def program(session: str, warmup: float = 0.0, arrivals: int = 1, stagger: bool = False) -> str:
    gap = "run D (serial * 0.5); " if stagger else ""
    return (
        HEAD
        + f"workload {{ arrive batch({arrivals}); }}\n"
        + f"session {{ {gap}{session} }}\n"
        + f"run {{ horizon 100; warmup {warmup}; seed 1; }}\n"
    )


NONE = (None, None, None)
CASES = {
    # decodes: the first token has no latency; the prefill's chunks before its last none
    "decode": (program("run E decode (3);"), {"E": (1.125, 1.125, 1.125)}),
    "chunks": (
        program("hold kv (4) { run E prefill (10) growing kv; run E decode (4) growing kv; }"),
        {"E": (1.125, 1.125, 1.125)},
    ),
    # the time between two runs counts, across a delay and across engines
    "gap": (
        program("run E prefill (10); run D (5); run E decode (4);"),
        {"E": (2.375, 1.125, 6.125)},
    ),
    "engines": (
        program("run E decode (2); run F decode (2); run D (5); run E decode (2);"),
        {"E": (2.7916666666666665, 1.125, 6.125), "F": (2.125, 2.125, 2.125)},
    ),
    "prefill then decode elsewhere": (
        program("run E prefill (3); run D (5); run F decode (3);"),
        {"E": NONE, "F": (3.7916666666666665, 2.125, 7.125)},
    ),
    # a prefill's token counts once the session has decoded
    "decode then prefill": (
        program("run E decode (2); run D (5); run E prefill (3);"),
        {"E": (3.75, 1.125, 6.375)},
    ),
    "prefills": (program("run E prefill (3); run E prefill (3);"), {"E": NONE}),
    "prefills elsewhere": (
        program("run D (1); run E prefill (3); run D (0.25); run F prefill (1); run F decode (2);"),
        {"E": NONE, "F": (2.125, 2.125, 2.125)},
    ),
    "prefills after a decode": (
        program("run E decode (2); run E prefill (3); run E prefill (3);"),
        {"E": (1.2916666666666667, 1.375, 1.375)},
    ),
    # two sessions share iterations of 1.25; each one's first token has none
    "batch": (program("run E decode (3);", arrivals=2, stagger=True), {"E": (1.21875, 1.25, 1.25)}),
    # the warm-up: a latency ending at 9.375 counts from 9.375 on, not from 9.5
    "warm-up in": (
        program("run E prefill (10); run D (5); run E decode (4);", warmup=9.375),
        {"E": (2.375, 1.125, 6.125)},
    ),
    "warm-up out": (
        program("run E prefill (10); run D (5); run E decode (4);", warmup=9.5),
        {"E": (1.125, 1.125, 1.125)},
    ),
}

TURNS = """\
pool kv { cap 1000; block 4; preempt lifo; }
stage E : step { budget 8; cost 1 + 0.125 * tokens; memory kv; }
stage D : delay;
workload { arrive batch(1); session { request; run D (5); request; } }
server { run E prefill (3); run E decode (2); }
run { horizon 100; warmup 0; seed 1; }
"""

PREEMPTED = """\
// horizon: 200
fn main() {
  pool kv { cap 6 * 2; block 2; evict lru; preempt lifo; reserve held; admit via engine; }
  stage engine : step { budget 5; cost 1; chunk 2; memory kv; }
  workload { arrive batch(5); turn { set p = 6; set o = 2; } hidden o; }
  server {
    set t0 = now;
    hold kv (cost(kv, min(p, 4))) reuse (cost(kv, min(p, 4))) {
      prefill (p) growing kv;
      decode (o) growing kv;
    } cache (cost(kv, p));
    observe lat = now - t0;
  }
}
"""


def latencies(path, **options) -> dict[str, tuple]:
    report = json.loads(serq.run(serq.compile(str(path), **options)).json())
    return {
        s["name"]: (s["mean_itl"], s["itl_p50"], s["itl_p99"])
        for s in report["stages"]
        if s["name"] in ("E", "F", "engine")
    }


def check(path, expected: dict[str, tuple], **options) -> None:
    for paths in ({}, {"codegen": False}, {"fast_forward": False}):
        found = latencies(path, **options, **paths)
        assert {k: found[k] for k in expected} == expected, paths


@pytest.mark.parametrize("name", CASES)
def test_latencies_are_the_references(name, tmp_path):
    text, expected = CASES[name]
    path = tmp_path / "p.sq"
    path.write_text(text)
    check(path, expected)


def test_requests_of_a_session_without_turn_count_the_time_between_them(tmp_path):
    """Without `turn;`, two requests of a session are one stream (pyserq 0.1.2): the
    second's prefill token is 6.375 after the first's last decode."""
    path = tmp_path / "p.sq"
    path.write_text(TURNS)
    check(path, {"E": (2.175, 1.125, 6.375)})


def test_a_turn_starts_afresh(tmp_path):
    """With `turn;` before each request the think time is no latency: both references."""
    path = tmp_path / "p.sq"
    path.write_text(
        TURNS.replace(
            "session { request; run D (5); request; }",
            "session { turn; request; run D (5); turn; request; }",
        )
    )
    check(path, {"E": (1.125, 1.125, 1.125)})


def test_a_preempted_request_computes_its_next_token_again(tmp_path):
    """Sessions 1 and 3 finish their prefill (their first token) and are preempted before
    decoding; the prefill computed again gives their next token 5 later (pyserq 0.1.4)."""
    path = tmp_path / "p.sq"
    path.write_text(PREEMPTED)
    check(path, {"engine": (1.6666666666666667, 1, 5)}, horizon=200)


def test_a_run_without_step_stages_has_none(tmp_path):
    path = tmp_path / "p.sq"
    path.write_text(program("run D (1);"))
    assert latencies(path) == {"E": NONE, "F": NONE}


def test_a_spans_gaps_are_counted_by_binade_as_one_at_a_time():
    """`_count_steps`: the gaps between ends a constant cost apart, counted a binade at a
    time, are the gaps counted one by one, over starts, costs (halfway between two grid
    points too: 3 * 2**-k), lengths and binade crossings drawn at random."""
    r = random.Random(7)
    for _ in range(5000):
        e0 = r.choice(
            [
                r.uniform(1e-3, 10),
                r.uniform(0, 1e6) + 1e-3,
                2.0 ** r.randint(-5, 30) - r.choice([0, 1e-9, 1e-3]),
                1e15 * r.random() + 1.0,
            ]
        )
        c = r.choice(
            [
                r.uniform(1e-6, 1.0),
                0.01,
                0.001,
                1 / 3,
                2.0 ** -r.randint(1, 60),
                3 * 2.0 ** -r.randint(10, 60),
                r.uniform(1e-12, 1e-9),
            ]
        )
        ends = list(accumulate(repeat(c, r.randint(1, 300)), initial=e0))
        i = r.randint(0, len(ends) - 1)
        k = r.randint(i + 1, len(ends))
        n = r.randint(1, 3)
        want = Counter(
            {g: j * n for g, j in Counter(map(sub, ends[i + 1 : k], ends[i : k - 1])).items()}
        )
        got: Counter = Counter()
        _count_steps(ends, i, k, n, got)
        assert +got == +want, (e0, c, len(ends), i, k)


def test_a_spans_gaps_are_counted_by_stretch_as_one_at_a_time():
    """`_count_stretches`: the gaps between ends whose cost changes only at the crossings'
    iterations, counted a stretch at a time, are the gaps counted one by one, over
    starts, costs (halfway between two grid points, or below the grid's unit, too),
    stretches (several crossings at one iteration, crossings before the first counted gap
    and past the last) drawn at random; the caller's condition, every end in one binade,
    holds."""
    r = random.Random(11)
    tried = 0
    while tried < 5000:
        e0 = r.choice([r.uniform(1e-3, 10), r.uniform(0, 1e6) + 1e-3, 1e15 * r.random() + 1.0])
        count = r.randint(2, 300)
        cuts = sorted(r.randint(1, count + 3) for _ in range(r.randint(0, 30)))
        costs, cost, j = [], None, 1
        # costs below the grid's unit too (gaps of 0 or one unit, the clock barely moving)
        base = r.choice(
            [r.uniform(1e-6, 1e-2), 3 * 2.0 ** -r.randint(10, 40), 0.01, r.uniform(1e-13, 1e-9)]
        )
        for cut in [*cuts, count]:
            if cost is None or r.random() < 0.7:
                cost = r.choice(
                    [base, base * (1 + r.random() * 1e-3), 3 * 2.0 ** -r.randint(10, 40)]
                )
            costs += [cost] * max(min(cut, count) - j, 0)
            j = max(j, min(cut, count))
        ends = list(accumulate(costs, initial=e0))
        if math.frexp(ends[0])[1] != math.frexp(ends[-1])[1]:
            continue
        tried += 1
        k = len(ends)
        a = r.randint(1, k - 1)
        n = r.randint(1, 3)
        crossings = [(c, 0, None, 1.0) for c in cuts]
        want = Counter(
            {g: i * n for g, i in Counter(map(sub, ends[a:k], ends[a - 1 : k - 1])).items()}
        )
        got: Counter = Counter()
        _count_stretches(ends, a, k, crossings, n, got)
        assert +got == +want, (e0, base, cuts, a, k)


def test_latencies_counted_one_at_a_time_are_the_same_however_often_they_move(monkeypatch):
    """`TokenGaps`: the latencies a step stage appends one token at a time move into the
    counts every `FRESH_MOST` of them; every three or never, the report is the same, on
    each path (bench/vllm_fractional.sq: spans whose cost varies, and stepped tokens)."""
    import serq.sim.step as step

    path = str(Path(__file__).resolve().parents[2] / "bench" / "vllm_fractional.sq")

    def figures(**options) -> list[tuple]:
        report = serq.run(serq.compile(path, horizon=60.0, **options))
        return [(s.name, s.mean_itl, s.itl_p50, s.itl_p99) for s in report.stages]

    paths = [{}, {"fast_forward": False}]
    usual = [figures(**options) for options in paths]
    assert not math.isnan(usual[0][0][1])
    monkeypatch.setattr(step, "FRESH_MOST", 3)
    assert [figures(**options) for options in paths] == usual
    monkeypatch.setattr(step, "FRESH_MOST", 1 << 60)
    assert [figures(**options) for options in paths] == usual
