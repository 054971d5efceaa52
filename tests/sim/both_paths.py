"""What the stall, deadlock and statistics tests share: what a run says, or its report,
on one event path or the same on both."""

from __future__ import annotations

import json
import warnings
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
