"""serq against the reference (pyserq 0.1.2) on the same programs.

Deterministic programs (tests/sim/programs/det_*.sq: arrive batch, closed or renewal
with a constant gap, constant or ~det times, no draw anywhere) must give the reference's
run exactly: every observation's samples, times, sessions and turns; every stage's
completions and every pool's admissions, evictions, preemptions, rejections, spills and
stuck sessions; the run's end, arrivals, ended sessions and turns. Their times are dyadic
(sums of halves, quarters, 1/128 ...), so no rounding can differ between two correct
implementations. Time averages (utilisation, mean number, mean used ...) are sums of
products of those times and are compared to 1e-9.

Random programs (tests/sim/programs/rand_*.sq) draw from streams that differ between the
two, so only the means of their observations are compared: the difference of the two
means must lie within SAFETY times the two batch-means intervals combined. The serq run
and the reference run use different seeds, so that with impl = reference the test
compares two independent runs of the reference, which is what the tolerance was
calibrated on (20 pairs of seeds per program: the largest difference was 1.56
combined intervals).

With impl = reference the deterministic comparison runs the reference twice, which checks
that the programs run and are reproducible.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parent / "programs"
SAFETY = 2.5

DETERMINISTIC = [
    ("det_fifo1.sq", {}),
    ("det_fifo2.sq", {}),
    ("det_ps1.sq", {}),
    ("det_ps2.sq", {}),
    ("det_ps_inf.sq", {}),
    ("det_tandem.sq", {}),
    ("det_closed.sq", {}),
    ("det_control.sq", {}),
    ("det_choose.sq", {}),
    ("det_trace.sq", {}),
    ("det_flow.sq", {}),
    ("det_pools.sq", {}),
    *[("det_queue.sq", {"order": k}) for k in range(6)],
    *[("det_evict.sq", {"rule": k}) for k in range(4)],
    ("det_step.sq", {}),
    ("det_step.sq", {"blocks": 14}),
    ("det_step_serve.sq", {}),
    ("det_step_stall.sq", {}),
]

# (program, seed of the run under test, seed of the reference run)
RANDOM = [
    ("rand_tandem.sq", 21, 22),
    ("rand_jsq.sq", 23, 24),
    ("rand_cache.sq", 25, 26),
    ("rand_closed.sq", 27, 28),
    ("rand_step.sq", 29, 30),
]

STAGE_COUNTS = ("completed",)
STAGE_AVERAGES = ("utilization", "mean_number", "throughput", "mean_wait", "mean_service")
POOL_COUNTS = (
    "admissions",
    "evicted_entries",
    "evicted_units",
    "preemptions",
    "rejected",
    "spills",
    "stuck",
)
POOL_AVERAGES = ("mean_used", "mean_cached", "mean_queue", "mean_holders", "mean_wait")


def _label(case) -> str:
    name, sets = case
    return name.removesuffix(".sq") + "".join(f"-{k}={v}" for k, v in sets.items())


def observe_names(report) -> list[str]:
    return sorted(report.observes)


def rows(report, kind: str) -> dict:
    """The stage or pool rows of `report` by (name, index)."""
    return {(r.name, r.index): r for r in getattr(report, kind)}


def first_difference(ours: list, theirs: list) -> str:
    """Where two lists part, in words."""
    if len(ours) != len(theirs):
        return f"{len(ours)} values against the reference's {len(theirs)}"
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if a != b:
            return f"value {i}: {a!r} against the reference's {b!r}"
    return "equal"


def same_float(a: float, b: float) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


# Observations where the spec and the reference part, and we follow the spec (NOTES.md):
# a preempted hold that never grew nor loaded re-executes with `computed` = its
# allocation (spec §3 Pools: "computed is the allocation, or the position a growing run
# or a load reached"); pyserq 0.1.2 reads 0 there.
SPEC_OVER_REFERENCE = {"det_pools.sq": {"seen"}}


def assert_same_run(ours, theirs, skip: frozenset[str] | set[str] = frozenset()) -> None:
    """Everything a deterministic run reports is the reference's (but the observes `skip`)."""
    for field in ("end", "arrivals", "ended", "turns"):
        assert getattr(ours, field) == getattr(theirs, field), field
    names = observe_names(theirs)
    assert names, "the program observes nothing"
    for name in names:
        if name in skip:
            continue
        a, b = ours.observe(name), theirs.observe(name)
        for field in ("samples", "times", "sessions", "turns"):
            va, vb = list(getattr(a, field)), list(getattr(b, field))
            assert va == vb, f"observe {name}, {field}: {first_difference(va, vb)}"
        assert a.count == b.count, f"observe {name}: count"
        assert same_float(a.mean, b.mean), f"observe {name}: mean {a.mean} != {b.mean}"
        assert same_float(a.ci, b.ci), f"observe {name}: ci {a.ci} != {b.ci}"
    for kind, counts, averages in (
        ("stages", STAGE_COUNTS, STAGE_AVERAGES),
        ("pools", POOL_COUNTS, POOL_AVERAGES),
    ):
        mine, reference = rows(ours, kind), rows(theirs, kind)
        assert sorted(mine, key=str) == sorted(reference, key=str), f"{kind} rows"
        for key, row in reference.items():
            for field in counts:
                assert getattr(mine[key], field) == getattr(row, field), f"{kind} {key}: {field}"
            for field in averages:
                a, b = getattr(mine[key], field), getattr(row, field)
                assert same_float(a, b), f"{kind} {key}: {field} {a} != {b}"


# Step-engine runs that part from the reference (issue 6), label: reason. A stall under
# `preempt none` follows the spec, not pyserq; what a run that preempts itself as the plan
# admits it caches follows pyserq 0.1.4, the reference of that rule (docs/vocabulary.md).
STEP_DIFFERENCES: dict[str, str] = {
    # at 14 blocks sessions 4 and 5 preempt themselves as the plan admits them: 0.1.4
    # caches min(ℓ, position), the prefix each consumed, on each pool of the hold; 0.1.2
    # cached min(ℓ, allocation), so its `reqs` kept a unit and its kv hits differ
    # (tests/sim/NOTES.md §7)
    "det_step-blocks=14": "0.1.4's rule for a run preempted as it arrives; 0.1.2 caches its"
    " allocation",
    # spec §3 grow: under `preempt none` a stalled run "resumes where it was"; pyserq
    # 0.1.2 moves the hold's position by what the growth lacked (NOTES.md §7)
    "det_step_serve": "a stalled growth resumes where it was (spec); pyserq skips ahead",
    "det_step_stall": "a stalled growth resumes where it was (spec); pyserq skips ahead",
}


@pytest.mark.parametrize("case", DETERMINISTIC, ids=_label)
def test_deterministic_program(impl, reference, case, request):
    """A deterministic program gives the reference's run exactly."""
    name, sets = case
    why = STEP_DIFFERENCES.get(_label(case))
    if why and impl.name != "reference":
        request.applymarker(pytest.mark.xfail(reason=why, strict=True))
    ours = impl.run_fresh(PROGRAMS / name, sets=sets)
    theirs = reference.run(PROGRAMS / name, sets=sets)
    assert_same_run(ours, theirs, SPEC_OVER_REFERENCE.get(name, set()))


@pytest.mark.parametrize("case", DETERMINISTIC, ids=_label)
def test_deterministic_program_ignores_the_seed(impl, case):
    """The deterministic programs draw nothing: another seed gives the same run."""
    name, sets = case
    assert_same_run(
        impl.run(PROGRAMS / name, sets=sets, seed=97), impl.run(PROGRAMS / name, sets=sets)
    )


def test_every_program_is_tested():
    """Every program of tests/sim/programs is in a table here or a closed-form test."""
    tested = {name for name, _ in DETERMINISTIC} | {name for name, *_ in RANDOM}
    closed_forms = {"ps_laws.sq", "mmc.sq"}
    collapse = {"replica_workload.sq"}  # test_replica_collapse.py
    scenarios = {p.name for p in PROGRAMS.glob("step_*.sq")}  # test_step_scenarios.py
    spans = {p.name for p in PROGRAMS.glob("ff_*.sq")}  # test_fast_forward.py
    assert {p.name for p in PROGRAMS.glob("*.sq")} == tested | closed_forms | collapse | scenarios | spans


@pytest.mark.parametrize("case", RANDOM, ids=lambda c: c[0].removesuffix(".sq"))
def test_random_program_means(impl, reference, batch_means, case):
    """On a random program every observation's mean is the reference's, within SAFETY
    combined batch-means intervals; the stages and pools are the same rows."""
    name, seed, reference_seed = case
    ours = impl.run(PROGRAMS / name, seed=seed)
    theirs = reference.run(PROGRAMS / name, seed=reference_seed)
    assert sorted(rows(ours, "stages"), key=str) == sorted(rows(theirs, "stages"), key=str)
    assert sorted(rows(ours, "pools"), key=str) == sorted(rows(theirs, "pools"), key=str)
    for field in ("end",):
        assert getattr(ours, field) == getattr(theirs, field)
    names = observe_names(theirs)
    assert names
    for obs in names:
        a, b = ours.observe(obs), theirs.observe(obs)
        samples_a, samples_b = a.samples, b.samples
        assert a.count == len(samples_a) and b.count == len(samples_b)
        assert a.mean == pytest.approx(math.fsum(samples_a) / len(samples_a), rel=1e-9)
        mean_a, ci_a = batch_means(samples_a)
        mean_b, ci_b = batch_means(samples_b)
        tolerance = SAFETY * math.hypot(ci_a, ci_b)
        assert abs(mean_a - mean_b) <= tolerance, (
            f"{name} observe {obs}: mean {mean_a:.5g} against the reference's {mean_b:.5g} "
            f"(tolerance {tolerance:.3g}, {abs(mean_a - mean_b) / math.hypot(ci_a, ci_b):.2f} "
            "combined intervals)"
        )
        # the run's statistics agree with its samples
        assert a.ci == pytest.approx(ci_a, rel=1e-6)


def test_reported_ci_is_batch_means(impl, batch_means):
    """The reported interval of an observation is the 20-batch t interval of its samples
    (the reference's rule, which these tests use as their tolerance)."""
    report = impl.run(PROGRAMS / "rand_tandem.sq", seed=21)
    for name in observe_names(report):
        o = report.observe(name)
        mean, ci = batch_means(o.samples)
        assert o.mean == pytest.approx(mean, rel=1e-9)
        assert o.ci == pytest.approx(ci, rel=1e-6)
