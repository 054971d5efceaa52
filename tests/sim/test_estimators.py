"""The online estimates est_lambda(s), est_rho(s), est_wait(s) and price(s, s_hit, ds)
against the reference (pyserq 0.1.2), exactly, on deterministic programs.

What the reference does (probed with the programs below; serq/sim/stages.py,
`StageBase.measure`): at every completion at stage s (a job that arrived at a, started
service at b, completes at t) it updates three exponentially weighted averages, weight
0.01 for the new sample and the first sample taken as it is (x̄ = 0.99 x̄ + 0.01 x):

- Ĝ of the gaps b - b' between the service starts of consecutive completions (the
  first gap needs two completions; a gap may be negative at fifo(2));
- Ŝ of the measured service t - b (the work at fifo and delay, the sojourn at ps);
- Ŵ of the waits b - a.

est_lambda = 1 / Ĝ (0 before two completions, or while Ĝ <= 0); est_rho = min(λ̂ Ŝ,
0.99), not divided by a fifo(c)'s c (0 while λ̂ is 0); est_wait = Ŵ (0 before the first
completion). Measured from time 0: the warm-up resets nothing. price(s, s_hit, ds) =
ds + λ̂ ((s_hit + ds)² - s_hit²) / (2 (1 - ρ̂)) + λ̂ Ŵ ds / (1 - ρ̂), with ρ̂ the capped
est_rho: the miss's own extra work plus the M/G/1 (Pollaczek-Khinchine) wait it adds to
the others, through the second moment of service and through the load. The values of
these programs are not dyadic, so they pin the order of the floating-point operations
too (the reference's bits, not only its formula).
"""

from __future__ import annotations

from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parent / "programs"

# (arrival times at the stage, work) of the jobs of `_probe_program`
_JOBS = {
    # bursts: two jobs at 0, a queue at 10.5, a negative start gap at fifo(2)
    "bursts": (
        [0, 0, 3, 4, 10, 10.5, 10.5, 16, 16.25, 17],
        [1, 0.5, 0.5, 2, 1, 0.25, 4, 0.375, 0.75, 0.125],
    ),
    # light load: ρ̂ about 0.5, below the cap
    "light": ([0, 2, 2.5, 4.5, 7, 9, 9.25, 12], [1, 0.5, 1.5, 0.75, 1.25, 1, 0.5, 0.25]),
}
_PAIRS = [(h, d) for h in (0, 0.3, 1.5, 7) for d in (0.1, 0.75, 2.3, -0.4)]
_KINDS = ["fifo(1)", "fifo(2)", "delay", "ps(1)", "ps(2)"]


def _pick(values: list[float]) -> str:
    """`serial == 0 ? v0 : serial == 1 ? v1 : ... : 0`"""
    expr = "0"
    for i in reversed(range(len(values))):
        expr = f"(serial == {i} ? {values[i]} : {expr})"
    return expr


def _probe_program(kind: str, jobs: str, warmup: float = 0) -> str:
    """Jobs reach stage `server` (of `kind`) at given times with given work and observe
    the estimates when done; 80 probes observe them every 0.25 s (at odd eighths, so never
    at the instant of a completion) with price at the 16 (s_hit, ds) of `_PAIRS`."""
    arrivals, work = _JOBS[jobs]
    n = len(arrivals)
    prices = "\n".join(
        f"    observe p{i} = price(server, {h}, {d});" for i, (h, d) in enumerate(_PAIRS)
    )
    return f"""
stage gate : delay;
stage server : {kind};
workload {{ arrive batch({n + 80}); }}
session {{
  branch (serial < {n}) {{
    run gate ({_pick(arrivals)});
    run server ({_pick(work)});
    observe job_lambda = est_lambda(server);
    observe job_rho = est_rho(server);
    observe job_wait = est_wait(server);
  }} else {{
    run gate ((serial - {n}) * 0.25 + 0.125);
    observe lambda = est_lambda(server);
    observe rho = est_rho(server);
    observe wait = est_wait(server);
{prices}
  }}
}}
run {{ horizon 40; warmup {warmup}; seed 1; }}
"""


def _assert_same_observes(ours, theirs) -> None:
    names = sorted(theirs.observes)
    assert names and sorted(ours.observes) == names
    for name in names:
        a, b = ours.observe(name), theirs.observe(name)
        for field in ("samples", "times", "sessions", "turns"):
            assert list(getattr(a, field)) == list(getattr(b, field)), f"observe {name}: {field}"


def _price(lam: float, rho: float, wait: float, s_hit: float, ds: float) -> float:
    s_miss = s_hit + ds
    return (
        ds
        + lam * (s_miss * s_miss - s_hit * s_hit) / (2.0 * (1.0 - rho))
        + lam * wait * ds / (1.0 - rho)
    )


@pytest.mark.parametrize("jobs", sorted(_JOBS))
@pytest.mark.parametrize("kind", _KINDS)
def test_estimates_are_the_reference_s(impl, reference, kind, jobs):
    """Every estimate and price, at every completion and every probe, is the reference's."""
    source = _probe_program(kind, jobs)
    _assert_same_observes(impl.run_fresh(source=source), reference.run(source=source))


def test_estimates_ignore_the_warmup(impl):
    """The estimates are measured from time 0: a warm-up of 5 drops the probes before it
    and changes nothing else."""
    whole = impl.run(source=_probe_program("fifo(1)", "bursts"))
    warm = impl.run(source=_probe_program("fifo(1)", "bursts", warmup=5))
    for name in ("lambda", "rho", "wait"):
        a, b = whole.observe(name), warm.observe(name)
        kept = [(t, x) for t, x in zip(a.times, a.samples, strict=True) if t >= 5]
        assert list(zip(b.times, b.samples, strict=True)) == kept


def test_estimates_by_hand(impl):
    """Six jobs 0.5 s apart at a fifo(1) stage of work 2: the starts are 2 s apart, so
    λ̂ = 0.5 from the second completion on (0 before), ρ̂ = λ̂ 2 = 1 capped at 0.99, and
    Ŵ averages the waits 0, 1.5, 3, 4.5, 6, 7.5 with weight 0.01."""
    report = impl.run(
        source="""
stage gate : delay;
stage server : fifo(1);
workload { arrive batch(6); }
session {
  observe before = est_lambda(server) + est_rho(server) + est_wait(server);
  observe p0 = price(server, 1, 0.5);
  run gate (serial * 0.5);
  run server (~det(2));
  observe l = est_lambda(server);
  observe r = est_rho(server);
  observe w = est_wait(server);
  observe p = price(server, 1, 0.5);
}
run { horizon 40; warmup 0; seed 1; }
"""
    )

    def samples(name: str) -> list[float]:
        return list(report.observe(name).samples)

    assert samples("before") == [0.0] * 6
    assert samples("p0") == [0.5] * 6  # λ̂ = 0: the miss's own work
    assert list(report.observe("l").times) == [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
    assert samples("l") == [0.0] + [0.5] * 5
    assert samples("r") == [0.0] + [0.99] * 5
    wait, waits = 0.0, []
    for k in range(6):
        wait = 0.0 if k == 0 else 0.99 * wait + 0.01 * (1.5 * k)
        waits.append(wait)
    assert samples("w") == waits
    lams, rhos = [0.0] + [0.5] * 5, [0.0] + [0.99] * 5
    expected = [_price(lam, r, w, 1, 0.5) for lam, r, w in zip(lams, rhos, waits, strict=True)]
    assert samples("p") == expected


def test_a_negative_mean_gap_is_no_rate(impl):
    """At fifo(2) job 1 (start 0.5, work 0.5) completes before job 0 (start 0, work 2):
    the first gap is -0.5, and with job 2's gap of 1 after it the mean is still below 0.
    λ̂ is then 0, as ρ̂ is, and a miss costs its own work (serq gave λ̂ = -2, ρ̂ = -1.03
    and a negative price; inline family program 1226, reduced: NOTES.md §21)."""
    report = impl.run(
        source="""
stage s : fifo(2);
stage d : delay;
workload { arrive batch(3); }
session {
  run d (serial == 0 ? 0 : (serial == 1 ? 0.5 : 1.0));
  run s (serial == 0 ? 2 : (serial == 1 ? 0.5 : 2));
  observe l = est_lambda(s);
  observe r = est_rho(s);
  observe p = price(s, 1, 0.5);
}
run { horizon 20; warmup 0; seed 1; }
"""
    )
    assert list(report.observe("l").times) == [1.0, 2.0, 3.0]
    assert list(report.observe("l").samples) == [0.0] * 3
    assert list(report.observe("r").samples) == [0.0] * 3
    assert list(report.observe("p").samples) == [0.5] * 3


def test_price_formula(impl):
    """price is the formula of the module's docstring on the estimates observed with it."""
    report = impl.run(source=_probe_program("fifo(1)", "light"))
    lam, rho, wait = (list(report.observe(n).samples) for n in ("lambda", "rho", "wait"))
    assert any(0.0 < r < 0.99 for r in rho)
    for i, (h, d) in enumerate(_PAIRS):
        expected = [_price(*e, h, d) for e in zip(lam, rho, wait, strict=True)]
        assert list(report.observe(f"p{i}").samples) == expected, (h, d)


def test_step_stage_estimates(impl, reference):
    """The estimates of a step stage (a completion is a run leaving it) and of a delay
    stage in det_step.sq are the reference's."""
    source = (PROGRAMS / "det_step.sq").read_text()
    anchor = "observe response = now - arrived;"
    assert anchor in source
    extra = (
        " observe el = est_lambda(E); observe er = est_rho(E); observe ew = est_wait(E);"
        " observe ep = price(E, 0.5, 0.25); observe gl = est_lambda(gap);"
        " observe gr = est_rho(gap); observe gp = price(gap, 2, 1);"
    )
    source = source.replace(anchor, anchor + extra)
    ours, theirs = impl.run_fresh(source=source), reference.run(source=source)
    _assert_same_observes(ours, theirs)
    assert any(x > 0 for x in theirs.observe("er").samples)


_EVICT_BY_PRICE = """
// Eight sessions cache prefixes of 4 to 8 units in a pool of 32 with blocks of 2 whose
// eviction key is the price of a miss at the fifo(1) stage every session passes first
// (so the estimates are measured before the first eviction): the hit time grows with the
// entry's age, the extra work with its size; `sign` = -1 reverses the order.
let sign = 1;
pool kv { cap 32; block 2; evict by (sign * price(server, 0.25 * age, 0.125 * size)); }
stage server : fifo(1);
stage work : delay;
workload { arrive batch(8); }
session {
  run work (serial * 0.5);
  run server (0.25 + 0.125 * serial);
  set u = 3 + serial - 6 * floor(serial / 6);
  hold kv (u + 1) { run work (1); } cache (u + 2);
  run work (4 + serial * 0.25);
  observe kv_before = cachedin(kv);
  observe lam = est_lambda(server);
  observe pr = price(server, 1, 0.5);
  hold kv (u + 2) reuse (u) { observe hit = cached; run work (0.5); } cache (u);
  observe kv_after = cachedin(kv);
}
run { horizon 40; warmup 0; seed 1; }
"""


@pytest.mark.parametrize("sign", [1, -1])
def test_evict_by_price(impl, reference, sign):
    """An eviction order by price evicts what the reference evicts."""
    ours = impl.run_fresh(source=_EVICT_BY_PRICE, sets={"sign": sign})
    theirs = reference.run(source=_EVICT_BY_PRICE, sets={"sign": sign})
    _assert_same_observes(ours, theirs)
    for field in ("admissions", "evicted_entries", "evicted_units", "spills"):
        assert [getattr(p, field) for p in ours.pools] == [
            getattr(p, field) for p in theirs.pools
        ], field


def test_price_order_matters(impl):
    """The two signs evict differently (so the test above checks the key's values)."""
    cheapest = impl.run(source=_EVICT_BY_PRICE, sets={"sign": 1})
    dearest = impl.run(source=_EVICT_BY_PRICE, sets={"sign": -1})
    assert list(cheapest.observe("hit").samples) != list(dearest.observe("hit").samples)


def test_straight_path_shape(impl, reference):
    """A renewal stream through one fifo(1) stage (the shape serq runs on its straight
    path, which it leaves when a program reads the estimates) gives the reference's."""
    source = """
stage server : fifo(1);
workload { arrive renewal(0.75); }
session {
  run server (serial == 3 * floor(serial / 3) ? 1.25 : 0.5);
  observe l = est_lambda(server);
  observe r = est_rho(server);
  observe w = est_wait(server);
  observe p = price(server, 0.5, 0.25);
}
run { horizon 30; warmup 0; seed 1; }
"""
    ours, theirs = impl.run_fresh(source=source), reference.run(source=source)
    _assert_same_observes(ours, theirs)
    assert any(x > 0 for x in theirs.observe("w").samples)


def test_flow_stage_estimates(impl, reference):
    """A multi-stage run (det_flow.sq: a flow over `up` and `link[i]`) completes at every
    stage of the flow at once: each measures it, as the reference's do."""
    source = (PROGRAMS / "det_flow.sq").read_text()
    anchor = "observe total = now - t0;"
    assert anchor in source
    extra = (
        " observe ul = est_lambda(up); observe ur = est_rho(up);"
        " observe lp = price(link[1], 1, 0.5); observe ll = est_lambda(link[0]);"
    )
    source = source.replace(anchor, anchor + extra)
    ours, theirs = impl.run_fresh(source=source), reference.run(source=source)
    _assert_same_observes(ours, theirs)
    assert any(x > 0 for x in theirs.observe("ur").samples)
