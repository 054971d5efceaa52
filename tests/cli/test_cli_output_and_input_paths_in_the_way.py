"""Paths a user mistypes: `serq sweep --out` naming a directory (or a file its `.runs`
companion is a directory, or a file it may not write) ran every point first and then
failed to write; it is now refused before the runs, as a missing directory is. An empty
file name (`serq check ""`) was read as the working directory ("it is a directory")."""

from __future__ import annotations

import os

import pytest

from serq.cli import main

PROGRAM = """let lambda = 0.5;
stage server : fifo(1);
workload { arrive poisson(lambda); }
session { run server (~exp(1)); }
run { horizon 10; }
"""


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "p.sq"
    path.write_text(PROGRAM)
    return path


def _sweep(program, out, capsys):
    status = main(["sweep", str(program), "--jobs", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return status, err


def test_out_naming_a_directory_is_refused_before_the_runs(tmp_path, program, capsys):
    (tmp_path / "d.csv").mkdir()
    status, err = _sweep(program, tmp_path / "d.csv", capsys)
    assert status == 2
    assert "E-io" in err and "d.csv`: it is a directory" in err
    assert "runs (1 point" not in err  # nothing ran


def test_out_whose_runs_file_is_a_directory_is_refused(tmp_path, program, capsys):
    (tmp_path / "e.runs.csv").mkdir()
    status, err = _sweep(program, tmp_path / "e.csv", capsys)
    assert status == 2 and "e.runs.csv`: it is a directory" in err
    assert not (tmp_path / "e.csv").exists()


def test_out_naming_a_read_only_file_is_refused(tmp_path, program, capsys, monkeypatch):
    out = tmp_path / "ro.csv"
    out.write_text("")
    out.chmod(0o444)
    if os.geteuid() == 0:  # root may write it: the check asks os.access, as a user would
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode: real(p, mode) and p != out)
    status, err = _sweep(program, out, capsys)
    assert status == 2 and "ro.csv`: the file is not writable" in err


def test_a_json_out_beside_a_directory_named_as_runs_is_written(tmp_path, program, capsys):
    (tmp_path / "j.runs.json").mkdir()  # .json is one file: nothing beside it is written
    status, _ = _sweep(program, tmp_path / "j.json", capsys)
    assert status == 0 and (tmp_path / "j.json").is_file()


@pytest.mark.parametrize("command", ["check", "run", "ir", "expand", "fmt", "sweep"])
def test_an_empty_file_name_is_no_such_file(command, capsys):
    assert main([command, ""]) == 2
    err = capsys.readouterr().err
    assert "cannot read ``: no such file" in err
    assert "directory" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv", [["run", "P", "--dump", ""], ["plot", "--dump", " ", "-o", "x.png"]]
)
def test_an_empty_dump_directory_is_a_usage_error(program, tmp_path, capsys, monkeypatch, argv):
    """`--dump ""` wrote the run's observe/ into the working directory without a word, and
    `serq plot --dump ""` read it from there."""
    monkeypatch.chdir(tmp_path)
    argv = [str(program) if a == "P" else a for a in argv]
    assert main(argv) == 2
    assert "argument --dump: not a directory name" in capsys.readouterr().err
    assert not (tmp_path / "observe").exists()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_out_where_no_file_can_be_made_is_refused_before_the_runs(program, capsys):
    """`/proc` passes `os.access` for root, but no file can be made there: the sweep ran
    every point and then failed, in the system's words (round 28, NOTES §64)."""
    status = main(["sweep", str(program), "--jobs", "1", "--out", "/proc/serq-sweep.csv"])
    out, err = capsys.readouterr()
    assert status == 2 and "cannot write `/proc/serq-sweep.csv`" in err
    assert out == ""  # nothing ran


def test_the_trial_of_out_changes_no_file(tmp_path, program, capsys):
    (tmp_path / "k.csv").write_text("kept\n")
    (tmp_path / "k.runs.csv").mkdir()
    status, _ = _sweep(program, tmp_path / "k.csv", capsys)
    assert status == 2 and (tmp_path / "k.csv").read_text() == "kept\n"
    (tmp_path / "n.runs.csv").mkdir()
    status, _ = _sweep(program, tmp_path / "n.csv", capsys)
    assert status == 2 and not (tmp_path / "n.csv").exists()


@pytest.mark.parametrize("suffix", ["csv", "json"])
def test_out_ending_with_a_separator_names_a_directory(tmp_path, program, capsys, suffix):
    """`--out r.csv/` wrote `r.csv` (a path drops its trailing separator): a directory was
    meant, or a slip; either way nothing is run or written."""
    out = f"{tmp_path / f'r.{suffix}'}{os.sep}"
    status, err = _sweep(program, out, capsys)
    assert status == 2
    assert "it names a directory (it ends with a separator)" in err
    assert not (tmp_path / f"r.{suffix}").exists()
