"""The examples of issue 7 against the reference (pyserq 0.1.2): the colocated replica
(examples/replica.sq), routing across four replicas under five policies
(examples/routing.sq) and llm-d's prefill/decode disaggregation (examples/llmd_pd.sq).

Each example runs on both implementations with its own horizon (routing's a third of
it) and another seed on each side, so the draws differ and only the main observations
are compared: every observation's mean and every gauge's time average lies within
SAFETY times the two batch-means intervals combined (test_differential.py's rule; the
KV in use is a gauge of each example, so it has an interval), and the utilisation of
each stage role (an array's members summed, so that a router's choice between equal
members does not count) lies within REL of the reference's. One run's utilisation
varies by 5-9 % between seeds at these horizons, so REL is a coarse check and the
intervals are the fine one. Then what each example is written to show holds on both: the
cache-keeping policies of routing.sq find more of their context than the balancing
ones, and llm-d's reads hold the NICs. The whole file runs in about ten seconds.
"""

from __future__ import annotations

import math
from collections import defaultdict

import pytest

from tests.sim.conftest import EXAMPLES

SAFETY = 2.5
REL = 0.25  # utilisation of a stage role, against the reference's
GAUGE_FLOOR = 0.005  # a time fraction both sides hold near 0 has no interval to speak of
SEED, REFERENCE_SEED = 11, 12

EXAMPLES_7 = ("replica.sq", "routing.sq", "llmd_pd.sq")

# (label, example, let overrides, horizon)
CASES = [
    ("replica", "replica.sq", {}, None),
    *[(f"routing-policy={k}", "routing.sq", {"policy": k}, 700.0) for k in range(5)],
    ("llmd_pd", "llmd_pd.sq", {}, None),
]


def _serq():
    from tests.sim.conftest import _impl

    return _impl("serq")


def _run_pair(reference, example: str, sets: dict, horizon: float | None):
    options = {"sets": sets} if horizon is None else {"sets": sets, "horizon": horizon}
    ours = _serq().run(EXAMPLES / example, seed=SEED, **options)
    theirs = reference.run(EXAMPLES / example, seed=REFERENCE_SEED, **options)
    return ours, theirs


def _role_sums(rows, field: str) -> dict[str, float]:
    """`field` summed over the members of each stage or pool array, by name."""
    sums: dict[str, float] = defaultdict(float)
    for row in rows:
        sums[row.name] += getattr(row, field)
    return dict(sums)


@pytest.mark.parametrize("name", EXAMPLES_7)
def test_example_says_what_it_shows(name):
    """Each example opens with a comment saying what it shows."""
    lines = (EXAMPLES / name).read_text().splitlines()
    header = []
    for line in lines:
        if not line.startswith("//"):
            break
        header.append(line)
    assert len(header) >= 4 and "shows" in " ".join(header), name


@pytest.mark.parametrize("name", EXAMPLES_7)
def test_example_runs(impl, name):
    """The example compiles and runs on both implementations, and observes something."""
    report = impl.run(EXAMPLES / name, horizon=200.0)
    assert report.end == 200.0
    assert report.observes and report.gauges
    assert all(o.count > 0 for o in report.observes.values())


@pytest.mark.parametrize(("label", "example", "sets", "horizon"), CASES, ids=[c[0] for c in CASES])
def test_example_against_the_reference(reference, batch_means, label, example, sets, horizon):
    """Every observation's mean and every gauge's average within the combined intervals;
    each stage role's utilisation within REL; the same stage and pool rows."""
    ours, theirs = _run_pair(reference, example, sets, horizon)
    key = lambda r: (r.name, r.index)  # noqa: E731
    assert sorted(map(key, ours.stages), key=str) == sorted(map(key, theirs.stages), key=str)
    assert sorted(map(key, ours.pools), key=str) == sorted(map(key, theirs.pools), key=str)
    assert sorted(ours.observes) == sorted(theirs.observes)
    assert sorted(ours.gauges) == sorted(theirs.gauges)
    for name in sorted(theirs.observes):
        mean_a, ci_a = batch_means(list(ours.observe(name).samples))
        mean_b, ci_b = batch_means(list(theirs.observe(name).samples))
        tolerance = SAFETY * math.hypot(ci_a, ci_b)
        assert abs(mean_a - mean_b) <= tolerance, (
            f"{label} observe {name}: {mean_a:.6g} against the reference's {mean_b:.6g} "
            f"({abs(mean_a - mean_b) / math.hypot(ci_a, ci_b):.2f} combined intervals)"
        )
    for name, g in theirs.gauges.items():
        mine = ours.gauges[name]
        tolerance = max(SAFETY * math.hypot(mine.ci, g.ci), GAUGE_FLOOR)
        assert abs(mine.mean - g.mean) <= tolerance, (
            f"{label} gauge {name}: {mine.mean:.6g} ± {mine.ci:.3g} against the "
            f"reference's {g.mean:.6g} ± {g.ci:.3g}"
        )
    mine = _role_sums(ours.stages, "utilization")
    for role, value in _role_sums(theirs.stages, "utilization").items():
        assert math.isclose(mine[role], value, rel_tol=REL, abs_tol=0.01), (
            f"{label} stage {role} utilisation: {mine[role]:.6g} against {value:.6g}"
        )


def _hit_rates(impl) -> list[float]:
    return [
        impl.run(EXAMPLES / "routing.sq", seed=SEED, sets={"policy": k}, horizon=700.0)
        .observe("hit_rate")
        .mean
        for k in range(5)
    ]


@pytest.mark.parametrize("side", ["reference", "serq"])
def test_routing_policies_that_keep_the_session_find_its_context(reference, side):
    """Round robin by serial (1) and prefix affinity (4) send a session's turns where its
    context is cached: their hit rates are well above random's and the balancing
    policies' (0, 2, 3), which scatter the turns over the four replicas."""
    rates = _hit_rates(reference if side == "reference" else _serq())
    assert min(rates[1], rates[4]) > 2 * max(rates[0], rates[2], rates[3]), rates


@pytest.mark.parametrize("side", ["reference", "serq"])
def test_llmd_reads_hold_both_nics(reference, side):
    """Every read of llmd_pd.sq is one flow over a prefiller's NIC and a decoder's: the
    NICs complete as many reads on each side, each after one latency wait, and every
    prefill is read once (but those still waiting at the horizon)."""
    report = (reference if side == "reference" else _serq()).run(
        EXAMPLES / "llmd_pd.sq", seed=SEED, horizon=200.0, warmup=0.0
    )
    done = _role_sums(report.stages, "completed")
    assert done["P.nic"] == done["D.nic"] > 100
    # a read or a wait still running at the horizon is all that may be missing
    assert 0 <= done["D.nic.latency"] - done["D.nic"] <= 3
    assert 0 <= done["P"] - done["P.nic"] <= 3
