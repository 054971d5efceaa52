"""The replica's collapse statistics over seeds, against the reference (issue 16, item 6).

examples/replica.sq pushed to Lambda = 1.7 sessions per second sits where its KV pool no
longer holds the live conversations: the hit rate falls, the prefills grow, the slots'
queue builds and some seeds run away (NOTES.md §12). Which seeds do depends on the draws,
so the two implementations cannot agree seed by seed; what must agree is the
distribution over seeds. Each side runs SEEDS seeds at a short horizon, and the per-seed
mean hit rate and mean wait for a request slot are compared with a two-sided
Mann-Whitney U test and a two-sample Kolmogorov-Smirnov test, each at 5 %.

Behind it, the workload alone (tests/sim/programs/replica_workload.sq, the replica's
client side with every draw observed) is compared the same way: the marginals of the
draws, the inter-arrival gaps and the turns per session by KS, and the correlations
between the draws of a turn, of one session's successive turns and of successive turns
in time, over seeds by Mann-Whitney. A workload whose draws were correlated within a
turn, along a session or along time (a draw made once per session where it should be
made per turn, say) fails one of these while its marginals pass.

scipy is the test's one extra dependency (the test extra of pyproject.toml). The seeds
are fixed, so each test gives one answer; the p-values it saw when it was written are
in NOTES.md §12.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise

import pytest
from scipy import stats

from tests.sim.conftest import EXAMPLES, PROGRAMS

ALPHA = 0.05
LOADED = {"Lambda": 1.7}
SEEDS = range(1, 21)
HORIZON, WARMUP = 120.0, 12.0
WORKLOAD = PROGRAMS / "replica_workload.sq"
WORKLOAD_SEEDS = range(1, 9)
WORKLOAD_HORIZON = 3000.0


def _serq():
    from tests.sim.conftest import _impl

    return _impl("serq")


def _per_seed(impl) -> dict[str, list[float]]:
    """The loaded replica's per-seed mean hit rate and mean slot wait on `impl`."""
    out: dict[str, list[float]] = defaultdict(list)
    for seed in SEEDS:
        report = impl.run(
            EXAMPLES / "replica.sq", seed=seed, horizon=HORIZON, warmup=WARMUP, sets=LOADED
        )
        out["hit_rate"].append(report.observe("hit_rate").mean)
        (reqs,) = [p for p in report.pools if p.name == "reqs"]
        out["slot_wait"].append(reqs.mean_wait)
    return out


def _same_distribution(ours: list[float], theirs: list[float], what: str) -> None:
    mw = stats.mannwhitneyu(ours, theirs, alternative="two-sided").pvalue
    ks = stats.ks_2samp(ours, theirs).pvalue
    assert mw >= ALPHA and ks >= ALPHA, (
        f"{what}: serq and the reference differ "
        f"(Mann-Whitney p = {mw:.3g}, KS p = {ks:.3g})"
    )


@pytest.mark.parametrize("statistic", ["hit_rate", "slot_wait"])
def test_replica_collapse_statistics_over_seeds_match_the_reference(reference, statistic):
    """The loaded replica's per-seed hit rate and slot wait have one distribution over
    seeds on both implementations."""
    ours, theirs = _per_seed(_serq()), _per_seed(reference)
    _same_distribution(ours[statistic], theirs[statistic], statistic)


def test_replica_collapse_statistics_are_spread_over_seeds(reference):
    """The test is taken where it can tell: at this load the seeds spread from a kept
    cache to a collapsed one on both sides (the slowest seed waits several times as long
    as the fastest), so a workload that collapsed more or less often would move the
    distribution."""
    for impl in (_serq(), reference):
        waits = _per_seed(impl)["slot_wait"]
        assert max(waits) > 3 * min(waits) > 0, (impl.name, waits)


def _workload(impl, seed: int) -> dict[str, list[float]]:
    """What one run of the replica's workload drew: the pooled draws, and the statistics
    of its joint distribution."""
    report = impl.run(WORKLOAD, seed=seed, horizon=WORKLOAD_HORIZON)

    def table(name: str) -> dict[tuple[int, int], float]:
        o = report.observe(name)
        return {(int(s), int(t)): x for s, t, x in zip(o.sessions, o.turns, o.samples, strict=True)}

    n, o, more = table("n_"), table("o_"), table("more_")
    z = report.observe("z_")
    t0 = sorted(report.observe("t0").samples)
    keys = sorted(n)  # by session, then turn
    turns: dict[int, int] = defaultdict(int)
    for s, _ in keys:
        turns[s] += 1
    successive = [(n[k], n[(k[0], k[1] + 1)]) for k in keys if (k[0], k[1] + 1) in n]
    at = report.observe("n_")
    when = {(int(s), int(t)): x for s, t, x in zip(at.sessions, at.turns, at.times, strict=True)}
    in_time = sorted(keys, key=when.__getitem__)  # the turns in the order they began
    return {
        "n": [n[k] for k in keys],
        "o": [o[k] for k in keys],
        "more": [more[k] for k in keys],
        "z": list(z.samples),
        "gap": [b - a for a, b in pairwise(t0)],
        "turns": [float(c) for c in turns.values()],
        "corr n,o": _corr([n[k] for k in keys], [o[k] for k in keys]),
        "corr n,more": _corr([n[k] for k in keys], [more[k] for k in keys]),
        "corr n, next turn's n": _corr(*zip(*successive, strict=True)),
        "corr n, next n in time": _corr(
            [n[k] for k in in_time[:-1]], [n[k] for k in in_time[1:]]
        ),
    }


def _corr(xs, ys) -> float:
    """Pearson's correlation of two equally long sequences."""
    return float(stats.pearsonr(list(xs), list(ys)).statistic)


@pytest.fixture(scope="module")
def workloads():
    """Each side's workload runs, by implementation name."""
    from tests.sim.conftest import _impl

    return {
        name: [_workload(_impl(name), seed) for seed in WORKLOAD_SEEDS]
        for name in ("serq", "reference")
    }


MARGINALS = ["n", "o", "more", "z", "gap", "turns"]
JOINT = ["corr n,o", "corr n,more", "corr n, next turn's n", "corr n, next n in time"]


@pytest.mark.parametrize("name", MARGINALS)
def test_replica_workload_marginals_match_the_reference(workloads, name):
    """Each draw of the replica's workload, the arrivals' gaps and the turns a session
    makes have one distribution on both sides (pooled runs; KS, and Mann-Whitney, which
    still sees a shift in the discrete ones, more and turns, where KS is weak)."""
    ours = [x for run in workloads["serq"] for x in run[name]]
    theirs = [x for run in workloads["reference"] for x in run[name]]
    _same_distribution(ours, theirs, f"{name} ({len(ours)} against {len(theirs)})")


@pytest.mark.parametrize("name", JOINT)
def test_replica_workload_correlations_match_the_reference(workloads, name):
    """The correlations within a turn, along a session and along time have one
    distribution over seeds on both sides, and are near 0: the draws are independent."""
    ours = [run[name] for run in workloads["serq"]]
    theirs = [run[name] for run in workloads["reference"]]
    p = stats.mannwhitneyu(ours, theirs, alternative="two-sided").pvalue
    assert p >= ALPHA, f"{name}: Mann-Whitney p = {p:.3g}: {ours} against {theirs}"
    # about 6,000 turns a run: a correlation's standard error is about 0.013
    assert all(abs(c) < 0.1 for c in ours + theirs), (name, ours, theirs)
