"""What the stall, deadlock, statistics and path-equality tests share: what a run says,
or its report, on one event path or the same on both (the generated code and the
interpreter)."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

from serq.sim import api as sim_api


def run_text(text: str, path: str = "t.sq", **options: Any) -> tuple[Any, list]:
    """The report and the diagnostics of the run of `text` (named `path`) with `execute`'s
    `options` (`codegen`, `fast_forward`), its `RunWarning`s kept quiet; the run must end
    with a report."""
    compiled, diagnostics = sim_api.compile_program(text, path)
    assert compiled is not None, [d.message for d in diagnostics]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report, said = sim_api.execute(compiled, **options)
    assert report is not None, [d.message for d in said]
    return report, said


def report_json(text: str, codegen: bool, **settings: float) -> dict:
    """The report of the run of `text` (with run `settings`) on the generated code or the
    interpreter, as the JSON it writes; the run must end with one."""
    compiled, diagnostics = sim_api.compile_program(text, "t.sq", **settings)
    assert compiled is not None, diagnostics
    report, ran = sim_api.execute(compiled, codegen=codegen)
    assert report is not None, ran
    return json.loads(report.json())


def warnings_on_both_paths(text: str) -> tuple:
    """The warnings of the run of `text` and its report's ended count, the same on the
    generated code and on the interpreter."""
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    said = []
    for codegen in (True, False):
        report, ran = sim_api.execute(compiled, codegen=codegen)
        assert report is not None, ran
        said.append(([(d.code, d.span.line, d.span.column, d.message) for d in ran], report.ended))
    assert said[0] == said[1]
    return said[0]


def failure_on_both_paths(text: str, path: str = "t.sq") -> list[tuple]:
    """The (code, span, message) of the diagnostics of the run of `text`, which stops
    without a report, the same on the generated code and on the interpreter."""
    compiled, diagnostics = sim_api.compile_program(text, path)
    assert compiled is not None, diagnostics
    said = []
    for codegen in (True, False):
        report, ran = sim_api.execute(compiled, codegen=codegen)
        assert report is None
        said.append([(d.code, d.span, d.message) for d in ran])
    assert said[0] == said[1]
    return said[0]


def generated_source(text: str) -> str:
    """The Python source the compiled path runs `text` as (`serq run --emit-python`)."""
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    source, _ = sim_api.python_source(compiled)
    assert source is not None
    return source


# (codegen, straight loop, fast_forward): the generated code with and without the straight
# loop, the interpreter, and every engine iteration stepped
EVERY_PATH = ((True, True, True), (True, False, True), (False, True, True), (True, True, False))


def runs_on_every_path(text: str, path: str = "t.sq", **settings: float) -> list[tuple]:
    """(report, diagnostics) of the run of `text` on each of `EVERY_PATH`; each run must
    end with a report."""
    from serq.sim import straight

    compiled, diagnostics = sim_api.compile_program(text, path, **settings)
    assert compiled is not None, [d.message for d in diagnostics]
    out = []
    for codegen, straight_on, fast_forward in EVERY_PATH:
        straight.ENABLED = straight_on
        try:
            report, ran = sim_api.execute(compiled, codegen=codegen, fast_forward=fast_forward)
        finally:
            straight.ENABLED = True
        assert report is not None, [d.message for d in ran]
        out.append((report, ran))
    return out


EVENTS = 20_000  # about the events a run is cut to (by its horizon)


def program_at(path: Path, seed: int) -> sim_api.Compiled | None:
    """The program at `path` with `seed`; a program without a horizon (a library, a
    `fn main` run from the command line) gets one of 200."""
    text = path.read_text(encoding="utf-8")
    program, _ = sim_api.compile_program(text, str(path), seed=seed)
    if program is None:
        program, _ = sim_api.compile_program(text, str(path), seed=seed, horizon=200.0)
    return program


def run_once(program: sim_api.Compiled, codegen: bool) -> tuple:
    """The JSON report (None without one) and the diagnostics of one run of `program`, on
    the generated code or on the interpreter."""
    report, diagnostics = sim_api.execute(program, codegen=codegen)
    rendered = tuple((d.code, d.severity, d.span, d.message, tuple(d.notes)) for d in diagnostics)
    return (None if report is None else report.json()), rendered


def cut_to_events(program: sim_api.Compiled) -> sim_api.Compiled:
    """`program` with its horizon cut so that the run fires about EVENTS events (from a
    probe run to a tenth of its horizon), keeping its warm-up below it."""
    ir_program = program.program
    horizon, warmup = ir_program.horizon, ir_program.warmup
    if ir_program.arrivals is not None or horizon is None:
        return program
    probe = replace(ir_program, horizon=warmup + (horizon - warmup) / 10)
    report, _ = sim_api.execute(replace(program, program=probe))
    if report is None or report.events * 10 <= EVENTS:
        return program
    scale = EVENTS / (report.events * 10)
    cut = warmup + (horizon - warmup) * scale
    return replace(program, program=replace(ir_program, horizon=cut))


def assert_paths_agree(path: Path, seeds: tuple[int, ...], monkeypatch: Any) -> None:
    """The program at `path`, cut to about `EVENTS` events, gives the same report and
    diagnostics on the generated code (which must take it, not fall back) and on the
    interpreter, at each of `seeds`; `straight.py`'s loop is off, so its shapes run on the
    generated code too."""
    from serq.sim import compiled, straight

    monkeypatch.setattr(straight, "ENABLED", False)
    installed: list[bool] = []
    install = compiled.install
    monkeypatch.setattr(compiled, "install", lambda w: installed.append(install(w)) or True)
    for seed in seeds:
        program = program_at(path, seed)
        assert program is not None, "the program does not compile"
        program = cut_to_events(program)
        installed.clear()
        ours = run_once(program, True)
        assert installed == [True], "the program fell back to the interpreter"
        assert ours == run_once(program, False), f"seed {seed}"
