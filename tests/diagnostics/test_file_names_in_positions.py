"""A file's name in a diagnostic's position: as it is, or quoted as a JSON string when it
holds a character that would break `FILE:LINE:COLUMN` or reach the terminal raw (a
newline, an escape, a byte that is not UTF-8) or begins with `"`; the texts around the
source (message, labels, help) show control characters as pictures."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from serq.diagnostics import Diagnostic, Label, Span, codes
from serq.diagnostics.render import render_concise, render_full, shown_file

ROOT = Path(__file__).resolve().parents[2]
_POSITION = re.compile(r"^ *--> (.*):(\d+):(\d+)$", re.MULTILINE)


def _file_of(position: str) -> str:
    """The file of a ` --> ` position as a reader would take it back."""
    return json.loads(position) if position.startswith('"') else position


@pytest.mark.parametrize(
    "name",
    [
        "plain.sq",
        "with space.sq",
        "c:1:2.sq",
        "-dash.sq",
        "é中😀.sq",
        "[bold]x.sq",
        "a\nb.sq",
        "a\r\nb.sq",
        "tab\there.sq",
        "e\x1b[31mred.sq",
        "del\x7f.sq",
        "c1\x9b31m.sq",
        "sep\u2028x.sq",
        "bad\udcff.sq",
        '"quoted".sq',
        'back\\slash "q".sq',
    ],
)
def test_a_position_reads_back_as_its_file_line_and_column(name: str) -> None:
    span = Span(name, 0, 1, 2, 3, 2, 4)
    text = render_full(Diagnostic.error(codes.PARSE, span, "bad"), "x\nab;\n")
    found = _POSITION.findall(text)
    assert len(found) == 1, text
    file, line, column = found[0]
    assert (_file_of(file), line, column) == (name, "2", "3")
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", text)
    concise = render_concise(Diagnostic.error(codes.PARSE, span, "bad"))
    assert "\n" not in concise and "\x1b" not in concise
    where = concise.rsplit(": error[", 1)[0]
    file, line, column = where.rsplit(":", 2)
    assert (_file_of(file), line, column) == (name, "2", "3")


def test_a_name_needing_no_quotes_is_shown_as_it_is() -> None:
    for name in ("a.sq", "dir with space/é.sq", "c:1.sq", "<stdin>", 'x"y.sq'):
        assert shown_file(name) == name


def test_the_texts_around_the_source_show_control_characters_as_pictures() -> None:
    where = Span("lib\x1b[2J.sq", 0, 1, 1, 1, 1, 2)
    diag = Diagnostic.error(
        codes.USE,
        where,
        "cannot read `lib\x1b[2J.sq`",
        labels=(Label(Span("m.sq", 0, 1, 1, 1, 1, 2), "used \x1b[2J here"),),
        help="rename `lib\x1b[2J.sq`\nor move it",
    )
    text = render_full(diag, "x\n", sources={"m.sq": "y\n"})
    assert "\x1b" not in text
    assert "cannot read `lib␛[2J.sq`" in text
    assert "used ␛[2J here" in text
    assert "or move it" in text.splitlines()[-1]  # the help's own line break is kept


def test_serq_check_quotes_a_name_with_a_newline_and_an_escape(tmp_path: Path) -> None:
    name = "a\nb\x1b[31m.sq"
    (tmp_path / name).write_text("let x = ;\n")
    done = subprocess.run(
        [sys.executable, "-m", "serq.cli", "check", name],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "\x1b" not in done.stderr
    assert ' --> "a\\nb\\u001b[31m.sq":1:9' in done.stderr
    assert 'error: 1 error in "a\\nb\\u001b[31m.sq"' in done.stderr
