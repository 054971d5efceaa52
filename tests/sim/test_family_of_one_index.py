"""A stage family of one named by a computed index (tests/sim/NOTES.md §28): the generated
code ran the job at the one member whatever the index said, so `run down[1 - i]` beside
`let N = 1;` ran where the interpreter and pyserq 0.1.4 stop with the index out of range,
and an index that draws (`up[floor(~uniform(0, 1))]`) made no draw there, which moved every
later draw of the session's stream. Found by tests/oracle/sweep_domain.py sweeping `N` of
tests/corpus/valid_main/arrays_gauges_main.sq to 1. Each program runs on the generated
code, the generated code without the straight loop, and the interpreter.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from serq.sim import straight
from serq.sim.api import compile_program, execute

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """\
let N = 1;
stage up[N] : {kind};
workload {{ arrive {arrive}; }}
session {{
  set i = serial - serial;
  run up[{index}] (~exp(1));
  observe done = now;
}}
run {{ horizon 20; warmup 0; seed 1; }}
"""
KINDS = ("fifo(1)", "fifo(2)", "ps(1)", "ps(min(present, 2))", "delay")
ARRIVALS = ("batch(3)", "renewal(0.5)")
OUT_OF_RANGE = ("1 - i", "-1 + i", "0.5 + i", "i + 1e-9")
IN_RANGE = ("i", "-0 * i", "floor(~uniform(0, 1))", "i * ~exp(1) * 0")


def _said(text: str) -> list[tuple[str, object, object]]:
    """(path, diagnostics, report JSON and samples) of `text` on the three paths."""
    compiled, diagnostics = compile_program(text, "t.sq")
    assert compiled is not None, [d.message for d in diagnostics]
    out = []
    for name, codegen, straight_on in (
        ("generated", True, True),
        ("no straight loop", True, False),
        ("interpreter", False, True),
    ):
        straight.ENABLED = straight_on
        try:
            report, ran = execute(compiled, codegen=codegen)
        finally:
            straight.ENABLED = True
        said = [(d.code, d.span, d.message, tuple(d.notes)) for d in ran]
        whole = None
        if report is not None:
            whole = (json.loads(report.json()), list(report.observe("done").samples))
        out.append((name, said, whole))
    return out


@pytest.mark.parametrize("arrive", ARRIVALS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("index", OUT_OF_RANGE)
def test_an_index_out_of_a_family_of_one_stops_every_path(kind, arrive, index):
    runs = _said(PROGRAM.format(kind=kind, arrive=arrive, index=index))
    for name, said, whole in runs:
        assert whole is None, name
        assert said[0][0] == "E-run" and "stage index" in said[0][2], (name, said)
        assert said[0][1].line == 6, (name, said)
    assert runs[0][1] == runs[1][1] == runs[2][1]


@pytest.mark.parametrize("arrive", ARRIVALS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("index", IN_RANGE)
def test_an_index_in_a_family_of_one_is_read_on_every_path(kind, arrive, index):
    runs = _said(PROGRAM.format(kind=kind, arrive=arrive, index=index))
    assert runs[0][2] is not None, runs[0][1]
    assert runs[0][1:] == runs[1][1:] == runs[2][1:]


def test_the_program_that_found_it_against_the_reference(tmp_path):
    source = ROOT / "tests/corpus/valid_main/arrays_gauges_main.sq"
    text = source.read_text(encoding="utf-8")
    compiled, _ = compile_program(text, str(source), sets={"N": "1"}, horizon=20.0, seed=1)
    messages = set()
    for codegen in (True, False):
        report, said = execute(compiled, codegen=codegen)
        assert report is None
        messages.add((said[0].code, said[0].span.line, said[0].message))
    assert messages == {
        ("E-run", 9, "stage index 1 is out of range: the array has 1 member, 0 .. 0")
    }
    sys.path.insert(0, str(ROOT / "tests/oracle"))
    import differential  # noqa: PLC0415

    if not (Path(differential.PYSERQ_014) / "pyserq").is_dir():
        pytest.skip("pyserq 0.1.4 is not installed")
    one = tmp_path / "arrays_gauges_one.sq"
    one.write_text(text.replace("let N = 2;", "let N = 1;"), encoding="utf-8")
    theirs = differential.reference(str(one), 60.0, True, False, horizon=20.0, seed=1)
    assert "index `1 - i` is 1" in theirs.get("error", ""), theirs
