"""Closed forms of queueing theory, checked on long runs of small programs.

Each run has a fixed seed, so each test is deterministic; the tolerance comes from the
run itself: the 95 % batch-means interval of the observation (20 batches, `batch_means`),
times SAFETY. On 100 seeds of the reference every |error| / CI stayed below 1.9 (at the
horizon 20 000 and 200 seeds, M/M/1 at ρ = 0.8, the most correlated case, reached 2.8),
so SAFETY = 3 fails a correct simulator with another random stream rarely, while an
interval too wide to catch anything is refused (POWER; the widest of those 100 seeds was
0.30 of the value, for the H2 wait). Quantities without an interval (utilisation, throughput) get
a tolerance from the variance of the work that arrived in the window: a compound Poisson
sum of λT jobs has relative standard deviation sqrt((1 + CV²) / (λT)).

Programs: examples/mm1.sq, mg1.sq, ps.sq, closed.sq, and tests/sim/programs/ps_laws.sq
(M/G/1-PS under four laws) and mmc.sq (M/M/2). Horizon 50 000 with a warm-up of 2 000,
the examples' own: about 75 000 events a run, twelve runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PROGRAMS = Path(__file__).resolve().parent / "programs"

HORIZON = 50000
WARMUP = 2000
SAFETY = 3.0
POWER = 0.5  # the interval must be narrower than half the value it checks


@dataclass(frozen=True)
class Case:
    """A run of an M/G/c-like program with the laws that describe it."""

    path: Path
    seed: int
    lam: float  # arrival rate
    mean: float  # E[S]
    cv2: float  # CV² of S
    servers: int = 1
    sets: tuple[tuple[str, float], ...] = ()

    @property
    def rho(self) -> float:
        """Offered load per server."""
        return self.lam * self.mean / self.servers

    def run(self, impl):
        return impl.run(
            self.path, horizon=HORIZON, warmup=WARMUP, seed=self.seed, sets=dict(self.sets)
        )


MM1 = Case(EXAMPLES / "mm1.sq", 1, 0.8, 1.0, 1.0)
MG1 = {
    "det": Case(EXAMPLES / "mg1.sq", 7, 0.7, 1.0, 0.0, sets=(("law", 0),)),
    "exp": Case(EXAMPLES / "mg1.sq", 7, 0.7, 1.0, 1.0, sets=(("law", 1),)),
    "erlang4": Case(EXAMPLES / "mg1.sq", 7, 0.7, 1.0, 0.25, sets=(("law", 2),)),
    "h2": Case(EXAMPLES / "mg1.sq", 7, 0.7, 1.0, 4.0, sets=(("law", 3),)),
}
PS = {
    "det": Case(PROGRAMS / "ps_laws.sq", 3, 0.6, 1.0, 0.0, sets=(("law", 0),)),
    "exp": Case(PROGRAMS / "ps_laws.sq", 3, 0.6, 1.0, 1.0, sets=(("law", 1),)),
    "erlang4": Case(PROGRAMS / "ps_laws.sq", 3, 0.6, 1.0, 0.25, sets=(("law", 2),)),
    "h2": Case(PROGRAMS / "ps_laws.sq", 3, 0.6, 1.0, 9.0, sets=(("law", 3),)),
}
PS_EXAMPLE = Case(EXAMPLES / "ps.sq", 3, 0.6, 1.0, 9.0)
MMC = Case(PROGRAMS / "mmc.sq", 4, 1.4, 1.0, 1.0, servers=2)

# The runs whose one stage is the queue the case describes, for the laws that hold for any
# work-conserving stage: utilisation = ρ, Little's law, throughput = completed / window.
OPEN = {"mm1": MM1, "ps": PS_EXAMPLE, "mmc": MMC}
OPEN.update({f"mg1-{k}": c for k, c in MG1.items()})
OPEN.update({f"ps-{k}": c for k, c in PS.items()})


def within_ci(batch_means, samples, expected: float, what: str) -> None:
    """The mean of `samples` is `expected` within SAFETY batch-means intervals."""
    mean, ci = batch_means(samples)
    assert 0 < ci < POWER * abs(expected), f"{what}: interval ±{ci:.4g} has no power"
    assert abs(mean - expected) <= SAFETY * ci, (
        f"{what}: mean {mean:.5g}, expected {expected:.5g} (±{ci:.4g}, "
        f"{abs(mean - expected) / ci:.2f} intervals off)"
    )


def stage(report, name: str):
    (row,) = [s for s in report.stages if s.name == name]
    return row


# ---------------------------------------------------------------- M/M/1


def test_mm1_sojourn(impl, batch_means):
    """M/M/1 at λ = 0.8, μ = 1: mean sojourn 1 / (μ - λ) = 5."""
    report = MM1.run(impl)
    sojourn = report.observe("sojourn")
    samples = sojourn.samples
    assert sojourn.count == len(samples) > 10000
    assert sojourn.mean == pytest.approx(math.fsum(samples) / len(samples), rel=1e-9)
    within_ci(batch_means, samples, 1 / (1 - 0.8), "M/M/1 sojourn")


# ---------------------------------------------------------------- M/G/1, Pollaczek–Khinchine


def pollaczek_khinchine(case: Case) -> float:
    """Mean wait in queue: λ E[S²] / (2 (1 - ρ)), E[S²] = (1 + CV²) E[S]²."""
    second_moment = (1 + case.cv2) * case.mean**2
    return case.lam * second_moment / (2 * (1 - case.rho))


def test_pollaczek_khinchine_values():
    """The four means of examples/mg1.sq's header: 1.167, 2.333, 1.458, 5.833."""
    values = [round(pollaczek_khinchine(MG1[k]), 3) for k in ("det", "exp", "erlang4", "h2")]
    assert values == [1.167, 2.333, 1.458, 5.833]


@pytest.mark.parametrize("law", list(MG1))
def test_pollaczek_khinchine_wait(impl, batch_means, law):
    """M/G/1 FIFO at ρ = 0.7, examples/mg1.sq with `law` set: the mean wait is PK's."""
    case = MG1[law]
    report = case.run(impl)
    within_ci(batch_means, report.observe("wait").samples, pollaczek_khinchine(case), law)
    within_ci(
        batch_means,
        report.observe("sojourn").samples,
        pollaczek_khinchine(case) + case.mean,
        f"{law} sojourn",
    )


def test_deterministic_service_is_exact(impl):
    """With ~det(1) every wait is sojourn - 1, and no wait is negative."""
    report = MG1["det"].run(impl)
    wait = report.observe("wait").samples
    sojourn = report.observe("sojourn").samples
    assert len(wait) == len(sojourn)
    assert all(abs(s - w - 1) < 1e-9 for w, s in zip(wait, sojourn, strict=True))
    assert min(wait) > -1e-9


# ---------------------------------------------------------------- M/G/1-PS


@pytest.mark.parametrize("law", list(PS))
def test_ps_insensitivity(impl, batch_means, law):
    """M/G/1-PS at ρ = 0.6: mean sojourn E[S] / (1 - ρ) = 2.5 and mean slowdown
    T / S = 1 / (1 - ρ) = 2.5, whatever the law."""
    case = PS[law]
    report = case.run(impl)
    within_ci(batch_means, report.observe("sojourn").samples, case.mean / (1 - case.rho), law)
    within_ci(batch_means, report.observe("slowdown").samples, 1 / (1 - case.rho), f"{law} T/S")


def test_ps_example(impl, batch_means):
    """examples/ps.sq (H2 with CV² 9): 2.5, as for an exponential."""
    report = PS_EXAMPLE.run(impl)
    within_ci(batch_means, report.observe("sojourn").samples, 2.5, "ps.sq sojourn")


# ---------------------------------------------------------------- M/M/c, Erlang C


def erlang_c(servers: int, load: float) -> float:
    """The probability that an arrival waits in M/M/c with offered load `load` = λ/μ."""
    rho = load / servers
    top = load**servers / math.factorial(servers) / (1 - rho)
    return top / (sum(load**k / math.factorial(k) for k in range(servers)) + top)


def test_erlang_c(impl, batch_means):
    """M/M/2 at λ = 1.4: P(wait) = C(2, 1.4) = 0.5765, mean wait C / (2 - 1.4) = 0.9608."""
    c = erlang_c(2, 1.4)
    assert round(c, 4) == 0.5765
    report = MMC.run(impl)
    within_ci(batch_means, report.observe("waited").samples, c, "P(wait)")
    within_ci(batch_means, report.observe("wait").samples, c / (2 - 1.4), "M/M/2 wait")


# ---------------------------------------------------------------- M/M/1//N, MVA


def mean_value_analysis(n: int, think: float, service: float) -> tuple[float, float]:
    """Response time and throughput of the closed M/M/1//N (one queue and a delay)."""
    queue = 0.0
    for k in range(1, n + 1):
        response = service * (1 + queue)
        throughput = k / (response + think)
        queue = throughput * response
    return response, throughput


def test_mva_values():
    """examples/closed.sq's header: R = 2.24, X = 0.801 for N = 5, Z = 4, S = 1."""
    r, x = mean_value_analysis(5, 4, 1)
    assert (round(r, 2), round(x, 3)) == (2.24, 0.801)


def test_closed_mva(impl, batch_means):
    """examples/closed.sq: the response time is MVA's; the throughput obeys the response
    time law X = N / (R + Z) and is MVA's; the server is busy X S of the time."""
    r, x = mean_value_analysis(5, 4, 1)
    report = impl.run(EXAMPLES / "closed.sq", horizon=HORIZON, warmup=WARMUP, seed=5)
    response = report.observe("response").samples
    within_ci(batch_means, response, r, "M/M/1//5 response")
    server = stage(report, "server")
    measured_r = math.fsum(response) / len(response)
    # Z is the law's mean, not the run's: 4.5 standard deviations of a mean of as many
    # exponential think times, a share Z / (R + Z) of the cycle.
    z_error = 4.5 / math.sqrt(server.completed) * 4 / (measured_r + 4)
    assert server.throughput == pytest.approx(5 / (measured_r + 4), rel=z_error)
    # Completions of the server in the window: a count of about X T whose relative
    # standard deviation is below that of a Poisson count.
    tolerance = 4.5 / math.sqrt(x * (HORIZON - WARMUP))
    assert server.throughput == pytest.approx(x, rel=tolerance)
    assert server.utilization == pytest.approx(x * 1.0, rel=tolerance * math.sqrt(2))


# ---------------------------------------------------------------- laws of every stage


def one_stage(report):
    (row,) = report.stages
    return row


def busy_probability(case: Case) -> float:
    """The probability that the stage is not empty: ρ for one server (any work-conserving
    discipline), 1 - P(0) for M/M/c."""
    if case.servers == 1:
        return case.rho
    load = case.lam * case.mean
    top = load**case.servers / math.factorial(case.servers) / (1 - case.rho)
    return 1 - 1 / (sum(load**k / math.factorial(k) for k in range(case.servers)) + top)


@pytest.mark.parametrize("name", list(OPEN))
def test_utilisation_is_rho(impl, name):
    """The stage row's utilisation is ρ, within 4.5 standard deviations of the work that
    arrived in the window. For fifo(c) the reference reports the time fraction with a job
    in service, not the busy servers over c (tests/sim/NOTES.md): 1 - P(0) = 0.8235 for
    M/M/2 at λ = 1.4, where ρ = 0.7."""
    case = OPEN[name]
    row = one_stage(case.run(impl))
    jobs = case.lam * (HORIZON - WARMUP)
    tolerance = 4.5 * math.sqrt((1 + case.cv2) / jobs)
    assert row.utilization == pytest.approx(busy_probability(case), rel=tolerance)


@pytest.mark.parametrize("name", list(OPEN))
def test_little_law(impl, name):
    """Little's law on the stage row: the time-average number present is the throughput
    times the mean time at the stage (wait + service), and times the observed sojourn;
    the throughput is the completions over the window end - warmup."""
    case = OPEN[name]
    report = case.run(impl)
    row = one_stage(report)
    assert row.throughput == pytest.approx(row.completed / (report.end - WARMUP), rel=1e-9)
    assert report.end == HORIZON
    assert row.mean_number == pytest.approx(
        row.throughput * (row.mean_wait + row.mean_service), rel=0.02
    )
    assert row.mean_number == pytest.approx(
        row.throughput * report.observe("sojourn").mean, rel=0.02
    )
    # Work conservation on one server: the busy fraction is the work done per unit time.
    if case.servers > 1:
        return
    if name.startswith("ps"):  # E[S] per completion, within the error of a mean of S
        tolerance = 4.5 * math.sqrt((1 + case.cv2) / row.completed)
        assert row.utilization == pytest.approx(row.throughput * case.mean, rel=tolerance)
    else:
        assert row.utilization == pytest.approx(row.throughput * row.mean_service, rel=0.01)


def test_mean_service_is_the_law(impl, batch_means):
    """The stage row's mean service of a fifo stage is E[S] = 1, within the error of a
    mean of that many exponential draws."""
    row = one_stage(MM1.run(impl))
    assert row.mean_service == pytest.approx(1.0, abs=4.5 / math.sqrt(row.completed))
