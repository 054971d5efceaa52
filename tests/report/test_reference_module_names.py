"""Code written against the reference's module reads serq: pyserq's module-level names
(`Program`, `Observe`, `Gauge`, `Stage`, `Pool`, `read_trace`, `REPORT_VERSION`,
`IR_VERSION`) are serq's too, and `compile` takes its `trace=`, a file for the program's
trace replay to read instead of the one the workload names (`serq run --trace`).

Before, `serq.read_trace`, `serq.Program` and the rest raised `AttributeError`, and
`serq.compile(path, trace=...)` a `TypeError`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import serq
from serq.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, main

ROOT = Path(__file__).resolve().parents[2]
CHAT = ROOT / "examples" / "traces" / "chat.csv"
REPLAY = ROOT / "bench" / "shapes" / "trace.sq"  # draws nothing: both sides agree exactly
MM1 = ROOT / "examples" / "mm1.sq"
PYSERQ_014 = os.environ.get("PYSERQ_014_PATH", str(ROOT / ".cache" / "pyserq-0.1.4"))

# the reference's names serq does not have, and why (the module docstring of `serq`)
NOT_SERQ = {
    "pyserq": "the reference's native module",
    "Rng": "the reference's random generator: serq's runs draw from streams of their own",
    "draw": "0.1.4's deployment picture (`serq draw`), which serq does not draw",
}

TRACE = "session,turn,new,out,think,forced\n0,0,100,10,1.0,0\n0,1,50,20,0,0\n1,0,300,30,0,0\n"


def _reference_names(path: str | None) -> set[str]:
    """The public module-level names of pyserq (0.1.2, or the copy at `path`)."""
    code = "import pyserq; print(' '.join(n for n in dir(pyserq) if not n.startswith('_')))"
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = path
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    if done.returncode != 0:
        pytest.skip(f"pyserq cannot be imported: {done.stderr.strip()[-200:]}")
    return set(done.stdout.split())


@pytest.mark.parametrize("path", [None, PYSERQ_014], ids=["0.1.2", "0.1.4"])
def test_every_name_of_the_reference_module_is_serqs(path):
    if path is not None and not Path(path).is_dir():
        pytest.skip("pyserq 0.1.4 is not installed beside 0.1.2")
    theirs = _reference_names(path)
    missing = sorted(n for n in theirs - set(NOT_SERQ) if not hasattr(serq, n))
    assert not missing
    assert set(serq.__all__) >= theirs - set(NOT_SERQ)


def test_the_names_are_the_classes_a_run_gives():
    report = serq.run(serq.compile(str(REPLAY), horizon=200, warmup=0))
    assert serq.Program is serq.Compiled
    assert isinstance(serq.compile(str(MM1)), serq.Program)
    assert isinstance(report.observe("response"), serq.Observe)
    assert all(isinstance(p, serq.Pool) for p in report.pools) and report.pools
    assert all(isinstance(s, serq.Stage) for s in report.stages) and report.stages
    gauged = serq.run(serq.compile(str(ROOT / "bench" / "shapes" / "gauges.sq"), horizon=300))
    assert gauged.gauges and all(isinstance(g, serq.Gauge) for g in gauged.gauges.values())
    assert json.loads(report.json())["schema"] == serq.REPORT_VERSION
    assert json.loads(serq.compile(str(MM1)).to_json())["version"] == serq.IR_VERSION


def test_read_trace_gives_the_sessions_the_reference_reads(tmp_path, monkeypatch):
    pyserq = pytest.importorskip("pyserq")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text(TRACE, encoding="utf-8")
    (tmp_path / "no_forced.csv").write_text(
        "session,turn,new,out,think\n1,0,5,5,0\n0,0,100,10,1.5\n0,1,7,8,0\n", encoding="utf-8"
    )
    for name in ("t.csv", "no_forced.csv", str(CHAT), Path("t.csv")):
        mine = serq.read_trace(name)
        assert mine == pyserq.read_trace(str(name))
        assert all(type(x) is float for session in mine for turn in session for x in turn)
    assert serq.read_trace("t.csv") == [
        [(100.0, 10.0, 1.0, 0.0), (50.0, 20.0, 0.0, 0.0)],
        [(300.0, 30.0, 0.0, 0.0)],
    ]


def test_read_trace_failures_name_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.csv").write_text(
        "session,turn,new,out,think,forced\n0,0,abc,10,1.0,0\n", encoding="utf-8"
    )
    with pytest.raises(ValueError, match="missing.csv.*no such file"):
        serq.read_trace("missing.csv")
    with pytest.raises(ValueError, match="it is a directory"):
        serq.read_trace(str(tmp_path))
    with pytest.raises(ValueError, match=r"bad\.csv.*line 2"):
        serq.read_trace("bad.csv")
    for bad in (3, None):
        with pytest.raises(TypeError, match="read_trace: `path` is a file name"):
            serq.read_trace(bad)


def _outcome(report) -> tuple:
    o = report.observe("response")
    return report.turns, report.arrivals, list(o.samples), list(o.times), list(o.sessions)


def test_compile_trace_replays_the_file_given(tmp_path, monkeypatch):
    """`trace=` is the program with its trace clause naming that file, relative to the
    current directory (not the program's folder), `ordered` kept; and the reference's."""
    (tmp_path / "alt.csv").write_text(TRACE, encoding="utf-8")
    text = REPLAY.read_text(encoding="utf-8")
    named = tmp_path / "named.sq"
    named.write_text(text.replace("../../examples/traces/chat.csv", "alt.csv"), encoding="utf-8")
    expected = _outcome(serq.run(serq.compile(str(named), horizon=300, warmup=0)))
    default = _outcome(serq.run(serq.compile(str(REPLAY), horizon=300, warmup=0)))
    assert expected != default
    monkeypatch.chdir(tmp_path)
    for given in ("alt.csv", tmp_path / "alt.csv"):
        program = serq.compile(str(REPLAY), horizon=300, warmup=0, trace=given)
        assert program.program.trace.ordered
        assert _outcome(serq.run(program)) == expected
    pyserq = pytest.importorskip("pyserq")
    theirs = pyserq.run(pyserq.compile(str(REPLAY), horizon=300, warmup=0, trace="alt.csv"))
    assert _outcome(theirs) == expected


def test_compile_trace_failures(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"`trace='t\.csv'` gives a trace to replay"):
        serq.compile(str(MM1), trace="t.csv")
    with pytest.raises(TypeError, match="compile: `trace` is a file name"):
        serq.compile(str(REPLAY), trace=1.5)
    program = serq.compile(str(REPLAY), horizon=50, warmup=0, trace="missing.csv")
    with pytest.raises(ValueError, match=r"missing\.csv.*no such file"):
        serq.run(program)


def test_run_trace_on_the_command_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "alt.csv").write_text(TRACE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    settings = ["--horizon", "300", "--warmup", "0", "--json"]
    assert main(["run", str(REPLAY), *settings, "--trace", "alt.csv"]) == EXIT_OK
    mine = json.loads(capsys.readouterr().out)
    api = serq.run(serq.compile(str(REPLAY), horizon=300, warmup=0, trace="alt.csv"))
    assert mine == json.loads(api.json())
    assert main(["run", str(MM1), "--trace", "alt.csv"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--trace alt.csv` gives a trace to replay, but the program replays none" in err
    assert "1 | --trace alt.csv" in err  # the option is shown, underlined
    assert main(["run", str(REPLAY), *settings, "--trace", "nope.csv"]) == EXIT_ERRORS
    err = capsys.readouterr().err
    assert "cannot read trace" in err and "nope.csv" in err and "trace.sq:15:3" in err


def test_sweep_trace_replays_the_file_at_every_point(tmp_path, monkeypatch, capsys):
    """`serq.sweep(..., trace=)` and `serq sweep --trace`: each point is the run
    `serq.compile(..., trace=)` gives, the relative name read from the current directory
    (the runs' workers get the absolute path)."""
    (tmp_path / "alt.csv").write_text(TRACE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    sets = {"r": "0.5,1"}
    text = REPLAY.read_text(encoding="utf-8").replace("renewal(4)", "renewal(4 * r)")
    (tmp_path / "p.sq").write_text(
        "let r = 1;\n" + text.replace("../../examples/traces/chat.csv", "nowhere.csv"),
        encoding="utf-8",
    )
    result = serq.sweep("p.sq", sets, jobs=1, horizon=300, warmup=0, trace="alt.csv")
    for point, r in zip(result.points, (0.5, 1), strict=True):
        one = serq.run(serq.compile("p.sq", horizon=300, warmup=0, sets={"r": r}, trace="alt.csv"))
        assert point["response"] == one.observe("response").mean
    args = ["sweep", "p.sq", "--set", "r=0.5,1", "--jobs", "1", "--horizon", "300"]
    assert main([*args, "--warmup", "0", "--trace", "alt.csv"]) == EXIT_OK
    capsys.readouterr()
    assert main([*args, "--warmup", "0"]) == EXIT_ERRORS  # nowhere.csv: each run fails
    capsys.readouterr()
    assert main(["sweep", str(MM1), "--set", "lambda=0.5", "--trace", "alt.csv"]) == EXIT_USAGE
    assert "the program replays none" in capsys.readouterr().err
    with pytest.raises(ValueError, match="the program replays none"):
        serq.sweep(str(MM1), {"lambda": "0.5"}, jobs=1, trace="alt.csv")


def test_columns_are_new_lists_at_each_access_as_the_references():
    """An observation's `samples`, `times`, `sessions` and `turns` and a gauge's `times`
    and `values` are lists, new at each access, as pyserq's are: they dump to JSON, sort
    and concatenate as code written against the reference does. Before, they were the
    run's typed arrays themselves: `json.dumps` refused them, and a `sort` or an `append`
    failed or changed the report."""
    report = serq.run(serq.compile(str(REPLAY), horizon=300, warmup=0))
    gauged = serq.run(serq.compile(str(ROOT / "bench" / "shapes" / "gauges.sq"), horizon=300))
    o = report.observe("response")
    g = next(iter(gauged.gauges.values()))
    for name, column in [
        *((n, getattr(o, n)) for n in ("samples", "times", "sessions", "turns")),
        *((n, getattr(g, n)) for n in ("times", "values")),
    ]:
        assert type(column) is list and column, name
        assert json.loads(json.dumps(column)) == column
    samples = o.samples
    assert o.samples is not samples and o.samples == samples
    samples.sort()
    samples.append(-1.0)
    assert o.samples != samples and len(o.samples) == o.count
    assert all(type(x) is int for x in o.sessions + o.turns)
    pyserq = pytest.importorskip("pyserq")
    theirs = pyserq.run(pyserq.compile(str(REPLAY), horizon=300, warmup=0)).observe("response")
    assert (o.samples, o.times, o.sessions, o.turns) == (
        theirs.samples,
        theirs.times,
        theirs.sessions,
        theirs.turns,
    )
