"""A library that was not read whole makes no "unknown function" of its own (round 31,
NOTES §70).

A `use`d library with a syntax error in a def (or one that cannot be read) loses that
def; a call of it in the program then got a second error, "unknown function `fa`",
with "did you mean `fb`?" pointing at another def, which was wrong advice (found by
hand in the editor, on a workspace of files that use each other). A single file with a
syntax error is not expanded at all; a program whose library lost items now reports
only the library's error. A misspelt call with every library whole keeps its help."""

from __future__ import annotations

from pathlib import Path

import pytest

from serq import api
from serq.expand.loader import read_file
from serq.incremental import Cache, analyze

TAIL = (
    "stage server : fifo(1);\n"
    "workload { arrive poisson(0.5); }\n"
    "session { run server (~exp(m)); }\n"
    "run { horizon 100; warmup 10; seed 1; }\n"
)


def _found(folder: Path, library: str | None, program: str) -> list[list[str]]:
    """The codes and files of `serq check`'s diagnostics and of the editor's analysis."""
    (folder / "lib").mkdir(exist_ok=True)
    if library is not None:
        (folder / "lib" / "a.sq").write_text(library, encoding="utf-8")
    path = str(folder / "main.sq")
    whole = api.check_source(program, path)
    edited = analyze(program, path, Cache(), read_file).diagnostics
    return [[f"{d.code} {Path(d.span.file).name}" for d in found] for found in (whole, edited)]


PROGRAM = f'use "lib/a.sq";\ndef fb(x) = 2 * x;\nlet m = fa(0.25) + fb(1);\n{TAIL}'


@pytest.mark.parametrize(
    "library",
    ["def fa(x) = x + ;\n", "def fa(x) = x + 1;\ndef fc(x) = x x;\n"],
    ids=["its-def", "another"],
)
def test_a_library_with_a_syntax_error(tmp_path: Path, library: str) -> None:
    whole, edited = _found(tmp_path, library, PROGRAM)
    assert whole == edited == ["E-parse a.sq"]


def test_a_library_that_cannot_be_read(tmp_path: Path) -> None:
    whole, edited = _found(tmp_path, None, PROGRAM)
    assert whole == edited == ["E-use main.sq"]


def test_a_misspelt_call_with_the_libraries_whole_keeps_its_help(tmp_path: Path) -> None:
    misspelt = PROGRAM.replace("fa(0.25)", "faa(0.25)")
    whole, edited = _found(tmp_path, "def fa(x) = x + 1;\n", misspelt)
    assert whole == edited == ["E-unknown-name main.sq"]
    (found,) = api.check_source(misspelt, str(tmp_path / "main.sq"))
    assert found.message == "unknown function `faa`" and found.help == "did you mean `fa`?"
