"""`serq fmt` of a file that holds a NUL byte (a binary file named by mistake, `serq fmt *`)
leaves it as it was. Before, its runs of bytes between `;` were items with syntax errors
"left as written", but a `\\r` became `\\n` and a newline went in after each `;`, so the
file was rewritten with bytes changed and added."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from serq.formatter.command import fmt

# an executable's first bytes: NULs, control bytes, `;`, `\r` and bytes that are not UTF-8
BINARY = b"\x7fELF\x02\x01\x01\x00\x00\x00\r\x00;\x16\xa7\x1ek.;n@\t\xda\xb9\x00\x00\x10;\r\nx\x00"


def test_a_file_with_a_nul_byte_is_left_as_it_was(tmp_path: Path, capsys) -> None:
    target = tmp_path / "a.out.sq"
    target.write_bytes(BINARY)
    assert fmt([str(target)]) == 1
    assert target.read_bytes() == BINARY
    err = capsys.readouterr().err
    assert f"serq fmt: {target}: left as it was: it holds a NUL byte (line 1)" in err
    assert fmt([str(target)], check=True) == 1
    assert target.read_bytes() == BINARY
    assert capsys.readouterr().out == ""  # no diff of bytes


def test_stdin_with_a_nul_byte_is_copied_to_stdout(monkeypatch, capsys) -> None:
    class Stdin:
        buffer = io.BytesIO(BINARY)

    out = io.BytesIO()

    class Stdout:
        buffer = out

        def flush(self) -> None:
            pass

    monkeypatch.setattr(sys, "stdin", Stdin())
    monkeypatch.setattr(sys, "stdout", Stdout())
    assert fmt(["-"]) == 1
    assert out.getvalue() == BINARY


@pytest.mark.parametrize(
    ("text", "after"),
    [
        ("let  a =1;\n", "let a = 1;\n"),
        ("let a = ;\nlet  b = 2;\n", "let a = ;\nlet b = 2;\n"),
        ("let  a = 1; // a\x00b\n", "let a = 1; // a\x00b\n"),  # a NUL in a valid program
    ],
)
def test_program_text_is_still_formatted(tmp_path: Path, text: str, after: str) -> None:
    target = tmp_path / "p.sq"
    target.write_text(text)
    fmt([str(target)])
    assert target.read_text() == after
