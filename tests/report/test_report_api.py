"""`serq.compile` / `serq.run` (the notebook API, after pyserq's) and its non-raising halves.

Runs use a stand-in simulator (conftest's `stub_sim`), which pins what the API itself
does; `test_report_reference.py` runs the real one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import serq
from serq import ir
from serq.diagnostics import Diagnostic, Severity, Span, codes
from serq.sim import api as sim_api
from tests.report.conftest import FIFO

ROOT = Path(__file__).resolve().parents[2]
MM1 = str(ROOT / "examples" / "mm1.sq")


def test_import_serq_stays_light():
    code = "import serq, sys; print(sorted(m for m in ('serq.sim', 'serq.link', 'rich', 'lark') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_lazy_names():
    assert serq.compile is sim_api.compile and serq.run is sim_api.run
    assert serq.Compiled is sim_api.Compiled
    assert serq.RunWarning is sim_api.RunWarning and issubclass(serq.RunWarning, UserWarning)
    from serq.report import Report

    assert serq.Report is Report
    with pytest.raises(AttributeError):
        serq.no_such_thing  # noqa: B018


def test_compile_a_file_with_overrides():
    compiled = serq.compile(MM1, seed=7, horizon=2000, warmup=100, arrivals=50)
    p = compiled.program
    assert (p.seed, p.horizon, p.warmup, p.arrivals) == (7, 2000, 100, 50)
    assert compiled.base_dir == str(ROOT / "examples") and compiled.path == MM1
    assert serq.compile(MM1).program.horizon == 20000  # the run block's


def test_sets_override_lets_as_numbers_or_expressions():
    assert isinstance(serq.compile(MM1).program.arrival, ir.Poisson)
    assert serq.compile(MM1, sets={"lambda": 0.5}).program.arrival.rate == 0.5
    assert serq.compile(MM1, sets={"lambda": "1/4"}).program.arrival.rate == 0.25
    text = "let a = 2;\nlet b = a * 3;\nstage s : fifo(b);\nrun { horizon 5; }\n"
    stage = serq.compile(source=text, sets={"a": 4}).program.stages[0]
    assert stage.kind == ir.Fifo(12)  # folded wherever the let is read


def test_sets_in_fn_main_are_overridden_too():
    text = "let n = 1;\nfn main() {\n  stage s : fifo(n);\n}\n"
    assert serq.compile(source=text, horizon=10, sets={"n": 3}).program.stages[0].kind == ir.Fifo(3)


@pytest.mark.parametrize(
    ("sets", "expected"),
    [
        (
            {"nope": 1},
            [
                "error[E-unknown-name]: unknown `sets` argument or constant `nope`",
                '<sets["nope"]>:1:5',
                "the program has: lambda",
            ],
        ),
        ({"lambda": "abc"}, ["unknown name `abc`", "let lambda = abc;"]),
        ({"lambda": "1 +"}, ["error[E-parse]"]),
        ({"lambda": "1; let y = 2"}, ["is not one expression"]),
        ({"lambda": float("nan")}, ['`let lambda` is NaN: `sets["lambda"]` makes it so']),
        ({"lambda": "0/0"}, ["error[E-constant]"]),
    ],
)
def test_bad_sets_raise_with_rendered_diagnostics(sets, expected):
    with pytest.raises(ValueError) as caught:
        serq.compile(MM1, sets=sets)
    for part in expected:
        assert part in str(caught.value)


def test_compile_errors_raise_value_error_with_positions():
    with pytest.raises(ValueError) as caught:
        serq.compile(source="stage s : fifo(1);\nsession { run q (1); }\nrun { horizon 5; }\n")
    message = str(caught.value)
    assert "error[E-unknown-name]" in message and "<input>:2:" in message and "^" in message


@pytest.mark.parametrize(
    ("kw", "part"),
    [
        (dict(source="stage s : fifo(1);\nsession { run s (1); }\n"), "the run has no horizon"),
        (dict(source=FIFO, warmup=10), "is not below the horizon"),
        (dict(path="/no/such/file.sq"), "cannot read"),
        (dict(), "a path or a source"),
        (dict(path=MM1, source=FIFO), "a path or a source"),
    ],
)
def test_other_compile_failures(kw, part):
    with pytest.raises(ValueError, match=part):
        serq.compile(**kw)


def test_compile_program_does_not_raise():
    compiled, diagnostics = sim_api.compile_program("stage s : fifo(1);\nsession { run q (1); }\n")
    assert compiled is None and diagnostics[0].code == "E-unknown-name"
    compiled, diagnostics = sim_api.compile_program(FIFO, "dir/prog.sq")
    assert compiled is not None and diagnostics == [] and compiled.base_dir == "dir"


def test_ir_json_round_trip():
    compiled = serq.compile(source=FIFO)
    again = serq.Compiled.from_json(compiled.to_json())
    assert again.program == compiled.program


def test_run_returns_the_report(stub_sim):
    report = serq.run(serq.compile(source=FIFO))
    assert isinstance(report, serq.Report)
    assert report.observe("done").mean == 4 and report.gauge("q").max == 3
    program, base_dir = stub_sim.calls[0]
    assert program.warmup == 1 and base_dir == "."


def test_run_passes_progress(stub_sim):
    seen = []
    serq.run(serq.compile(source=FIFO), progress=seen.append)
    assert seen == [5.0]


def test_run_errors_raise(stub_sim):
    span = Span("<input>", 1, 6, 2, 1, 2, 6)
    stub_sim.errors = [Diagnostic.error(codes.RUNTIME, span, "the guard is 0.5, not 0 or 1")]
    compiled = serq.compile(source=FIFO)
    with pytest.raises(ValueError, match="the guard is 0.5"):
        serq.run(compiled)
    report, diagnostics = sim_api.execute(compiled)
    assert report is None and diagnostics == stub_sim.errors


def test_run_warnings_do_not_fail(stub_sim):
    span = Span("<input>", 1, 6, 2, 1, 2, 6)
    stub_sim.errors = [Diagnostic.warning(codes.RUNTIME, span, "something to know")]
    report, diagnostics = sim_api.execute(serq.compile(source=FIFO))
    assert report is not None and diagnostics[0].severity == Severity.WARNING


def test_a_simulator_crash_is_an_internal_diagnostic(stub_sim):
    stub_sim.raises = RuntimeError("boom")
    report, diagnostics = sim_api.execute(serq.compile(MM1))
    assert report is None and diagnostics[0].code == "E-internal"
    assert "RuntimeError: boom" in diagnostics[0].message


def test_report_json_is_the_codec(stub_sim):
    report = serq.run(serq.compile(source=FIFO))
    assert json.loads(report.json())["observes"]["done"]["count"] == 3
