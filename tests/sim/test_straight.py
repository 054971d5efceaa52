"""The straight path (`serq.sim.straight`) against the event path: identical reports.

Each program runs twice per seed, once on the straight path and once with it switched
off; the reports (every observation, time average, count and gauge point) must be equal
to the last bit. The programs cover exact ties between an arrival and a departure (D/D/1
at load 1), runs of no work, draws after the run, renewal gaps that read the stage, a
gauge, a stage observable read inside the session, an `init` block (its draws from the
workload's stream), an `end;` (trailing, or before code it leaves dead) and the stage's
online estimates read before and after the run (measured at completions); and gauges of
every kind: level gauges (a function of `present`, read once per value, with stale ps
completions only counted), and others, one of them possibly NaN, which leave the program to the generated
code (it reads them inline at every instant); that code must give the interpreter's
report on them too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import serq
from serq.sim import straight

ROOT = Path(__file__).resolve().parents[2]

PROGRAMS = {
    "mm1": (ROOT / "examples" / "mm1.sq").read_text(encoding="utf-8"),
    "dd1_ties": """
stage server : fifo(1);
workload { arrive renewal(1); }
session {
  set arrived = now;
  run server (1);
  observe sojourn = now - arrived;
  observe behind = queue(server);
}
gauge n = queue(server) + busy(server);
run { horizon 300; warmup 10; seed 1; }
""",
    "ties_and_zero_work": """
let lambda = 0.9;
stage server : fifo(1);
workload { arrive renewal(~uniform(0, 1) < 0.5 ? 0.5 : 1); }
session {
  set arrived = now;
  set w = ~uniform(0, 1) < 0.2 ? 0 : 1;
  run server (w);
  observe sojourn = now - arrived;
  observe after = ~exp(2);
}
run { horizon 2000; warmup 100; seed 1; }
""",
    "mg1_gauge": """
stage gate : fifo(1);
workload { arrive poisson(0.7); }
session {
  set arrived = now;
  observe ahead = queue(gate);
  run gate (~h2(1, 4));
  set sojourn = now - arrived;
  observe sojourn = sojourn;
  observe left = busy(gate);
}
gauge jobs = queue(gate);
run { horizon 5000; warmup 200; seed 1; }
""",
    "ps": (ROOT / "examples" / "ps.sq").read_text(encoding="utf-8"),
    "ps_ties_and_zero_work": """
stage cpu : ps(2);
workload { arrive renewal(~uniform(0, 1) < 0.5 ? 0.5 : 1); }
session {
  set arrived = now;
  set w = ~uniform(0, 1) < 0.2 ? 0 : (~uniform(0, 1) < 0.5 ? 1 : 2);
  observe ahead = queue(cpu);
  run cpu (w);
  observe sojourn = now - arrived;
  observe left = busy(cpu);
}
gauge jobs = queue(cpu) + busy(cpu);
run { horizon 3000; warmup 100; seed 1; }
""",
    "dd_ps_ties": """
stage cpu : ps(1);
workload { arrive renewal(1); }
session {
  set arrived = now;
  run cpu (1);
  observe sojourn = now - arrived;
}
gauge n = busy(cpu);
run { horizon 300; warmup 10; seed 1; }
""",
    "ps_flat_level_gauge": """
stage cpu : ps(1);
workload { arrive poisson(0.8); }
session {
  set arrived = now;
  run cpu (~exp(1));
  observe sojourn = now - arrived;
}
gauge flat = busy(cpu) > 0 ? 2 * min(queue(cpu), 3) - 1 : -0;
run { horizon 3000; warmup 100; seed 1; }
""",
    "ps_gauge_divides": """
stage cpu : ps(1);
workload { arrive poisson(0.6); }
session {
  set arrived = now;
  run cpu (~h2(1, 4));
  observe sojourn = now - arrived;
}
gauge half = queue(cpu) / 2;
run { horizon 2000; warmup 100; seed 1; }
""",
    "ps_gauge_can_be_nan": """
stage cpu : ps(1);
workload { arrive poisson(0.6); }
session {
  set arrived = now;
  run cpu (~exp(1));
  observe sojourn = now - arrived;
}
gauge ratio = queue(cpu) / busy(cpu);
run { horizon 2000; warmup 100; seed 1; }
""",
    "init_and_end": """
stage server : fifo(1);
workload {
  arrive poisson(0.9);
  init {
    set t0 = now;
    set scale = ~uniform(0.5, 1.5);
    observe drawn = scale;
  }
}
session {
  run server (~exp(1) * scale);
  observe sojourn = now - t0;
  end;
}
run { horizon 3000; warmup 100; seed 1; }
""",
    "end_before_dead_code": """
stage server : fifo(1);
workload { arrive renewal(~exp(1.2)); init { set w = 0.8; } }
session {
  set arrived = now;
  run server (~uniform(0, 1) < 0.1 ? 0 : ~exp(1 / w));
  observe sojourn = now - arrived;
  end;
  run server (1);
  observe never = now;
}
run { horizon 2000; warmup 50; seed 1; }
""",
    "ps_init_and_end": """
stage cpu : ps(0.5);
workload {
  arrive poisson(0.45);
  init {
    set t0 = now;
    set k = ~uniform(0, 1) < 0.5 ? 1 : 2;
  }
}
session {
  run cpu (~exp(k));
  observe sojourn = now - t0;
  end;
}
gauge n = queue(cpu);
run { horizon 3000; warmup 100; seed 1; }
""",
    "estimates_everywhere": """
stage server : fifo(1);
workload {
  arrive renewal(~uniform(0, 1) < 0.5 ? ~exp(1.1) : 0.9);
  init { set t0 = now; set lam = est_lambda(server); }
}
session {
  observe ahead = est_wait(server) + lam;
  run server (~uniform(0, 1) < 0.1 ? 0 : ~exp(1.2));
  observe sojourn = now - t0;
  observe guess = est_wait(server) + 1 / (1 - min(0.99, est_rho(server)));
  observe p = price(server, 0.5, 0.25) + est_lambda(server);
  end;
}
run { horizon 3000; warmup 100; seed 1; }
""",
    "ps_estimates": """
stage cpu : ps(1);
workload { arrive poisson(0.7); }
session {
  set arrived = now;
  run cpu (~uniform(0, 1) < 0.1 ? 0 : ~exp(1));
  observe sojourn = now - arrived;
  observe guess = est_wait(cpu) + est_rho(cpu) + price(cpu, 1, 0.5);
}
gauge n = queue(cpu);
run { horizon 3000; warmup 100; seed 1; }
""",
    "ps_capacity_of_present": """
stage cpu : ps(min(present, 3) * 0.5 + (present > 5 ? 0.25 : 0));
workload { arrive poisson(1.4); init { set t0 = now; } }
session {
  run cpu (~uniform(0, 1) < 0.1 ? 0 : ~exp(1));
  observe sojourn = now - t0;
  observe jobs = queue(cpu) + busy(cpu);
  end;
}
gauge n = queue(cpu);
run { horizon 3000; warmup 100; seed 1; }
""",
    "fifo_two_gauges": """
stage server : fifo(1);
workload { arrive poisson(0.8); }
session {
  set arrived = now;
  run server (~exp(1));
  observe sojourn = now - arrived;
}
gauge n = queue(server);
gauge b = busy(server);
run { horizon 2000; warmup 100; seed 1; }
""",
    "ps_three_level_gauges": """
stage cpu : ps(min(present, 2));
workload { arrive poisson(1.5); }
session {
  set arrived = now;
  run cpu (~exp(1));
  observe sojourn = now - arrived;
}
gauge q = queue(cpu);
gauge b = busy(cpu) > 0 ? 1 : 0;
gauge flat = min(queue(cpu), 2) - 0.5;
run { horizon 3000; warmup 50; seed 1; }
""",
    "dd3_ties": """
stage servers : fifo(3);
workload { arrive renewal(1); }
session {
  set arrived = now;
  observe busy_before = busy(servers);
  run servers (3);
  observe sojourn = now - arrived;
  observe behind = queue(servers);
}
gauge n = queue(servers) + busy(servers);
gauge free = 3 - busy(servers);
run { horizon 300; warmup 10; seed 1; }
""",
    "mmc_ties_and_zero_work": """
stage servers : fifo(2);
workload { arrive renewal(~uniform(0, 1) < 0.5 ? 0.5 : 1); }
session {
  set arrived = now;
  set w = ~uniform(0, 1) < 0.2 ? 0 : ~uniform(0, 1) < 0.5 ? 1 : 2;
  run servers (w);
  observe sojourn = now - arrived;
  observe waited = est_wait(servers);
}
gauge b = busy(servers);
run { horizon 2000; warmup 100; seed 1; }
""",
    "fifo_level_and_other_gauge": """
stage server : fifo(1);
workload { arrive poisson(0.8); }
session {
  set arrived = now;
  run server (~exp(1));
  observe sojourn = now - arrived;
}
gauge n = queue(server);
gauge half = queue(server) / 2;
run { horizon 2000; warmup 100; seed 1; }
""",
}


def _report(text: str, seed: int, on: bool, monkeypatch: pytest.MonkeyPatch, **options) -> str:
    """The report of `text` on the straight path (`on`) or the event path, as text: its
    repr and, since the repr leaves them out, every sample and gauge change point."""
    monkeypatch.setattr(straight, "ENABLED", on)
    report = serq.run(serq.compile(source=text, seed=seed, **options))
    samples = {
        name: (o.times, o.sessions, o.turns, o.samples) for name, o in report.observes.items()
    }
    points = {name: (g.times, g.values) for name, g in report.gauges.items()}
    return repr((report, samples, points))


def _same(fast: str, slow: str) -> None:
    """Assert that two report texts are equal, showing where they first differ (pytest's
    own diff of texts this long takes minutes)."""
    if fast != slow:
        pairs = enumerate(zip(fast, slow, strict=False))
        at = next((i for i, (a, b) in pairs if a != b), min(len(fast), len(slow)))
        pytest.fail(f"differ at {at}: {fast[at - 80 : at + 80]!r} != {slow[at - 80 : at + 80]!r}")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("seed", [1, 2, 7])
def test_straight_path_equals_event_path(name, seed, monkeypatch):
    text = PROGRAMS[name]
    _same(_report(text, seed, True, monkeypatch), _report(text, seed, False, monkeypatch))


@pytest.mark.parametrize(
    "name",
    [
        "ps",
        "ps_flat_level_gauge",
        "mg1_gauge",
        "dd_ps_ties",
        "fifo_two_gauges",
        "ps_three_level_gauges",
    ],
)
@pytest.mark.parametrize("warmup", [0, 37.5])
def test_gauge_points_and_dump_equal_the_event_paths(name, warmup, tmp_path, monkeypatch):
    # a level gauge's change points come from the loop's trace (taken as they are when
    # every level has its own value); the summaries, the points and the dump all agree
    from serq.report import write_dump

    text = PROGRAMS[name]
    fast = _report(text, 3, True, monkeypatch, warmup=warmup)
    _same(fast, _report(text, 3, False, monkeypatch, warmup=warmup))
    dumps = {}
    for on in (True, False):
        monkeypatch.setattr(straight, "ENABLED", on)
        report = serq.run(serq.compile(source=text, seed=3, warmup=warmup))
        paths = write_dump(report, tmp_path / str(on))
        dumps[on] = {p.relative_to(tmp_path / str(on)): p.read_text() for p in paths}
    assert dumps[True].keys() == dumps[False].keys()
    for path, written in dumps[True].items():
        _same(written, dumps[False][path])
    assert any(p.parts[0] == "gauge" for p in dumps[True])


@pytest.mark.parametrize("name", ["ps", "mm1", "mmc_ties_and_zero_work"])
def test_progress_is_called_as_on_the_event_path(name, monkeypatch):
    # stale ps completions count as events: the progress sees them whether kept or not
    calls = {}
    for on in (True, False):
        monkeypatch.setattr(straight, "ENABLED", on)
        program = serq.compile(source=PROGRAMS[name], horizon=120_000)
        calls[on] = []
        report = serq.run(program, progress=calls[on].append)
        calls[on].append(repr(report))
    assert len(calls[True]) > 2
    assert calls[True] == calls[False]


def test_level_gauges_are_told_apart():
    def gauge(text):
        source = PROGRAMS["dd_ps_ties"].replace("gauge n = busy(cpu);", f"gauge n = {text};")
        return straight._bound(serq.compile(source=source).program.gauges[0].value)

    assert gauge("queue(cpu) + busy(cpu)") <= straight.FINITE
    assert gauge("busy(cpu) > 0 ? 2 * min(queue(cpu), 3) - 1 : -0") <= straight.FINITE
    assert gauge("queue(cpu) / busy(cpu)") > straight.FINITE  # 0/0 is NaN
    assert gauge("queue(cpu) / 2") > straight.FINITE  # a division: not told finite
    assert gauge("queue(cpu) * 1e300") > straight.FINITE  # could overflow: inf - inf


# programs with a gauge other than a level gauge: the generated code reads them
OTHER_GAUGES = ("ps_gauge_divides", "ps_gauge_can_be_nan", "fifo_level_and_other_gauge")


@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - set(OTHER_GAUGES)))
def test_programs_take_the_straight_path(name, monkeypatch):
    taken = []
    real = straight.run
    monkeypatch.setattr(straight, "run", lambda *args: taken.append(1) or real(*args))
    serq.run(serq.compile(source=PROGRAMS[name], horizon=50, warmup=0))
    assert taken


@pytest.mark.parametrize("name", OTHER_GAUGES)
@pytest.mark.parametrize("seed", [1, 2])
def test_other_gauges_take_the_generated_code(name, seed, monkeypatch):
    taken = []
    monkeypatch.setattr(straight, "run", lambda *args: taken.append(1))
    text = PROGRAMS[name]
    reports = []
    for codegen in (True, False):
        report = serq.run(serq.compile(source=text, seed=seed, codegen=codegen))
        points = {name: (g.times, g.values) for name, g in report.gauges.items()}
        reports.append(repr((report, points)))
    assert not taken
    _same(*reports)


@pytest.mark.parametrize("servers", [2, 3, 16])
def test_several_servers_take_the_straight_path(servers, monkeypatch):
    # the first completion in locals, the others in a heap of their own: the same order
    text = PROGRAMS["mm1"].replace("fifo(1)", f"fifo({servers})")
    taken = []
    real = straight.run
    monkeypatch.setattr(straight, "run", lambda *args: taken.append(1) or real(*args))
    fast = _report(text, 5, True, monkeypatch)
    assert taken
    _same(fast, _report(text, 5, False, monkeypatch))


def test_jobs_of_infinite_work_at_several_servers_are_each_told(monkeypatch):
    # sessions 3 and 6 keep a server each for ever; the first to complete is another's
    endless = "run servers (serial == 3 || serial == 6 ? inf : 3);"
    text = PROGRAMS["dd3_ties"].replace("run servers (3);", endless)
    said = {}
    for on in (True, False):
        monkeypatch.setattr(straight, "ENABLED", on)
        with pytest.warns(serq.RunWarning) as caught:
            report = serq.run(serq.compile(source=text, horizon=40))
        said[on] = ([str(w.message) for w in caught], report.events, report.ended)
    assert said[True] == said[False]
    assert "(and 1 more)" in said[True][0][0]


def test_ps_capacity_reading_the_clock_or_a_draw_takes_the_event_path(monkeypatch):
    for capacity in ("now < 20 ? 1 : 2", "present < 2 ? 1 : ~uniform(1, 2)"):
        text = PROGRAMS["ps"].replace("ps(1)", f"ps({capacity})")
        taken = []
        monkeypatch.setattr(straight, "run", lambda *args, taken=taken: taken.append(1))
        serq.run(serq.compile(source=text, horizon=50, warmup=0))
        assert not taken, capacity


@pytest.mark.parametrize("capacity", ["3 - present", "present < 4 ? 1 : 0 / 0"])
def test_a_capacity_of_present_that_fails_fails_as_on_the_event_path(capacity, monkeypatch):
    """A capacity that is not positive with jobs present is the settle's E-run, no
    session's, on both paths (at the same instant, with the same value)."""
    text = PROGRAMS["ps"].replace("ps(1)", f"ps({capacity})").replace("= 0.6;", "= 3;")
    messages = []
    for on in (True, False):
        monkeypatch.setattr(straight, "ENABLED", on)
        with pytest.raises(ValueError) as failure:
            serq.run(serq.compile(source=text, seed=3))
        messages.append(str(failure.value))
    assert messages[0] == messages[1]
    assert "capacity of ps stage `cpu`" in messages[0]


def test_reading_work_takes_the_event_path(monkeypatch):
    text = PROGRAMS["mm1"].replace(
        "observe sojourn = now - arrived;",
        "observe sojourn = now - arrived;\n  observe left = work(server);",
    )
    taken = []
    monkeypatch.setattr(straight, "run", lambda *args: taken.append(1))
    serq.run(serq.compile(source=text, horizon=50, warmup=0))
    assert not taken


def test_a_recorder_measuring_from_another_warmup_takes_the_event_path(monkeypatch):
    # the loops count the sessions ended from the warm-up on as the completions measured
    from serq.sim import simulate
    from serq.sim.recorder import StatsRecorder

    program = serq.compile(source=PROGRAMS["ps"], horizon=500, warmup=100).program
    taken = []
    real = straight.run
    monkeypatch.setattr(straight, "run", lambda *args: taken.append(1) or real(*args))
    outcomes = []
    for warmup in (100.0, 50.0):
        recorder = StatsRecorder(program, warmup)
        outcomes.append(simulate(program, recorder=recorder))
    assert taken == [1]
    assert outcomes[0].ended == outcomes[1].ended  # ended counts from the run's warm-up


@pytest.mark.parametrize("stage", ["fifo(1)", "ps(1)", "ps(min(present, 2))"])
def test_an_arrivals_limit_drains_on_the_straight_loop(stage, monkeypatch):
    """`run { arrivals N; }`: the loop stops the arrivals at N (no gap drawn after the last)
    and the run where the last session ends, as the event path drains it."""
    text = f"""
stage S : {stage};
workload {{ arrive poisson(0.9); init {{ set t0 = now; }} }}
session {{
  run S (~uniform(0, 1) < 0.1 ? 0 : ~exp(1));
  observe sojourn = now - t0;
  end;
}}
gauge n = queue(S);
run {{ horizon 100000; warmup 20; seed 4; arrivals 500; }}
"""
    taken = []
    real = straight.run
    monkeypatch.setattr(straight, "run", lambda *args: taken.append(1) or real(*args))
    fast = _report(text, 4, True, monkeypatch)
    assert taken
    _same(fast, _report(text, 4, False, monkeypatch))
    report = serq.run(serq.compile(source=text))
    assert report.arrivals == 500 and report.end < 100000


@pytest.mark.parametrize("stage", ["fifo(1)", "ps(1)", "ps(min(present, 2))"])
@pytest.mark.parametrize("horizon", ["500", "inf"])
def test_an_arrivals_limit_that_cannot_drain_fails_as_on_the_event_path(
    stage, horizon, monkeypatch
):
    """After the last arrival nothing may be pending while a job of infinite work keeps
    sessions live: the run stalls (`World._stalled`), at the last event, on every path;
    under a horizon of inf a fifo departure at inf still fires, as the event path fires it."""
    text = f"""
stage S : {stage};
workload {{ arrive poisson(1); }}
session {{
  set arrived = now;
  run S (serial == 3 ? inf : ~exp(0.5));
  observe sojourn = now - arrived;
}}
run {{ horizon {horizon}; warmup 0; seed 1; arrivals 10; }}
"""
    outcomes = []
    for on in (True, False):
        monkeypatch.setattr(straight, "ENABLED", on)
        try:
            report = serq.run(serq.compile(source=text))
            outcomes.append(repr((report, report.observes["sojourn"].samples)))
        except ValueError as error:
            outcomes.append(str(error))
    assert outcomes[0] == outcomes[1]
    if horizon == "500":
        assert "the run stalls" in outcomes[0]
