"""`serq run --buffer FILE=COPY` reads FILE's text from COPY; when COPY cannot be read the
error named FILE alone ("cannot read `prog.sq`: no such file" of a file that is there),
so the editor's run sent its user looking at the wrong file. It names the copy now."""

from __future__ import annotations

from pathlib import Path

import pytest

from serq.cli import main

PROGRAM = "let a = 1;\n"


@pytest.mark.parametrize(
    ("copy", "reason"), [("gone.sq", "no such file"), ("folder", "it is a directory")]
)
def test_an_unreadable_copy_of_the_program_is_named(
    tmp_path: Path, monkeypatch, capsys, copy: str, reason: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.sq").write_text(PROGRAM)
    (tmp_path / "folder").mkdir()
    assert main(["run", "--buffer", f"prog.sq={copy}", "prog.sq"]) == 2
    err = capsys.readouterr().err
    assert f"cannot read `prog.sq`: its --buffer copy `{copy}`: {reason}" in err


def test_an_unreadable_copy_of_a_library_is_named(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.sq").write_text('use "lib.sq";\n' + PROGRAM)
    (tmp_path / "lib.sq").write_text("let b = 2;\n")
    assert main(["run", "--buffer", "lib.sq=gone.sq", "prog.sq"]) == 1
    err = capsys.readouterr().err
    assert "cannot read `lib.sq`: its --buffer copy `gone.sq`: no such file" in err


def test_a_file_read_from_itself_says_no_copy(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", "gone.sq"]) == 2
    assert "cannot read `gone.sq`: no such file" in capsys.readouterr().err
