"""A usage error names the command it belongs to and, where a usual slip explains it, says
what to write. An option the command does not take was reported with the top level's
usage (`serq: error: unrecognized arguments: --chek`); a file whose name begins with `-`
given before `--` was "the following arguments are required: FILE"; and `serq check - -`
read standard input, then an empty program in its place, so a diagnostic of the first
showed the second's (empty) line under its caret."""

from __future__ import annotations

import pytest

from serq.cli import main

CLEAN = "let a = 1;\n"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = main(list(args))
    return status, capsys.readouterr().err


def test_an_unknown_option_is_reported_by_its_command_with_the_near_one(
    capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sq").write_text(CLEAN)
    status, err = _run(capsys, "fmt", "--chek", "a.sq")
    assert status == 2
    assert err.startswith("usage: serq fmt ")
    assert "serq fmt: error: unrecognized arguments: --chek\n" in err
    assert "help: `--chek` is no option of serq fmt; did you mean `--check`?" in err
    status, err = _run(capsys, "--colour", "check", "a.sq")
    assert status == 2
    assert "serq check: error: unrecognized arguments: --colour" in err
    assert "did you mean `--color`?" in err
    status, err = _run(capsys, "ir", "--json", "a.sq")  # run's option, none of ir's
    assert status == 2
    assert "serq ir: error: unrecognized arguments: --json" in err
    assert "help:" not in err


@pytest.mark.parametrize(
    "args",
    [
        ("check", "-dash.sq"),
        ("run", "-dash.sq"),
        ("check", "a.sq", "-dash.sq"),
        ("fmt", "-dash.sq"),
    ],
)
def test_a_file_named_with_a_leading_dash_is_explained(
    capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch, args: tuple[str, ...]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sq").write_text(CLEAN)
    (tmp_path / "-dash.sq").write_text(CLEAN)
    status, err = _run(capsys, *args)
    assert status == 2
    assert (
        f"help: a file whose name begins with `-` goes after `--`: serq {args[0]} -- -dash.sq"
        in err
    )
    status, err = _run(capsys, args[0], "--", "-dash.sq")  # run: a program with no run block
    assert status == (1 if args[0] == "run" else 0) and "usage:" not in err


def test_a_missing_file_with_a_leading_dash_gets_no_such_help(
    capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    status, err = _run(capsys, "check", "-nothing.sq")
    assert status == 2
    assert "help:" not in err


@pytest.mark.parametrize("command", ["check", "fmt"])
def test_stdin_given_twice_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch, command: str
) -> None:
    read = []
    monkeypatch.setattr("serq.api.read_stdin", lambda: read.append(1) or b"let a = ;\n")
    status, err = _run(capsys, command, "-", "-")
    assert status == 2
    assert (
        f"serq {command}: error: `-` (standard input) is given twice: it can be read only once"
        in err
    )
    assert not read  # nothing was read, nothing checked or written
    status, err = _run(capsys, command, "-", "-", "-")
    assert "is given 3 times" in err


def test_stdin_once_beside_files_is_read(
    capsys: pytest.CaptureFixture[str], monkeypatch, tmp_path
) -> None:
    (tmp_path / "b.sq").write_text("let b = ;\n")
    monkeypatch.setattr("serq.api.read_stdin", lambda: b"let a = ;\n")
    status, err = _run(capsys, "check", "-", str(tmp_path / "b.sq"))
    assert status == 1
    assert "1 | let a = ;" in err and "1 | let b = ;" in err
