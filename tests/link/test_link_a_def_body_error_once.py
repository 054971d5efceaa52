"""An error in a def's body is reported once, however many calls reach it (round 31,
NOTES §70).

The linker lowers a def's body at each call, and each lowering reported the body's
unknown name: `g(1) + g(2)` gave the same E-unknown-name twice at the same place, in
`serq check` and in the editor (found by hand, on a workspace where a program calls a
library's def directly and through another library). The linker's `combine` keeps each
diagnostic once now; calls in places that give the error different help (a `let`'s and
a session's) still give both (tests/incremental/test_program.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from serq import api
from serq.expand.loader import read_file
from serq.incremental import Cache, analyze

TAIL = (
    "stage server : fifo(1);\n"
    "workload { arrive poisson(0.5); }\n"
    "session { run server (~exp(a)); }\n"
    "run { horizon 100; warmup 10; seed 1; }\n"
)


def _codes(diagnostics) -> list[tuple[str, str, int]]:
    return [(d.code, Path(d.span.file).name, d.span.start) for d in diagnostics]


@pytest.mark.parametrize("calls", ["g(1) + g(2)", "g(1) + g(2) * g(3) - g(g(4))"])
def test_a_def_called_several_times(tmp_path: Path, calls: str) -> None:
    text = f"def g(x) = 2 * y;\nlet a = {calls};\n{TAIL}"
    path = str(tmp_path / "p.sq")
    assert _codes(api.check_source(text, path)) == [("E-unknown-name", "p.sq", 15)]
    found = analyze(text, path, Cache(), read_file).diagnostics  # the editor's analysis
    assert _codes(found) == [("E-unknown-name", "p.sq", 15)]


def test_a_library_def_reached_directly_and_through_another_library(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "b.sq").write_text("def fb(x) = 2 * y;\n", encoding="utf-8")
    (tmp_path / "lib" / "a.sq").write_text(
        'use "b.sq";\ndef fa(x) = fb(x) + 1;\n', encoding="utf-8"
    )
    text = f'use "lib/a.sq";\nlet a = fa(0.25) - fb(0.1);\n{TAIL}'
    path = str(tmp_path / "main.sq")
    assert _codes(api.check_source(text, path)) == [("E-unknown-name", "b.sq", 16)]
    found = analyze(text, path, Cache(), read_file).diagnostics
    assert [d.code for d in found] == ["E-unknown-name"]


def test_two_different_errors_at_one_place_both_stay(tmp_path: Path) -> None:
    text = f"def g(x) = 2 * y + z;\nlet a = g(1) + g(2);\n{TAIL}"
    found = api.check_source(text, str(tmp_path / "p.sq"))
    assert [d.message for d in found] == ["unknown name `y`", "unknown name `z`"]
