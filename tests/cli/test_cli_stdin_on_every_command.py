"""`-` is standard input on every command that takes a FILE, as it was on `fmt` alone: an
editor's "lint the buffer through a pipe" runs `serq check --json -`. Before, `check`,
`expand`, `ir`, `run` and `sweep` said "cannot read `-`: no such file" (round 28, NOTES
§64). The program is named `<stdin>`, its `use`s are read from the working directory, and a
closed standard input is an `E-io` error, status 2, on every command (`fmt - <&-` was a
traceback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = (ROOT / "examples" / "mm1.sq").read_text()


def serq(*args: str, stdin: str | None = "", cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "serq.cli", *args],
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def test_check_reads_stdin_and_names_it():
    assert serq("check", "-", stdin=PROGRAM).returncode == 0
    broken = serq("check", "--json", "-", stdin="let a = ;\n")
    assert broken.returncode == 1
    (found,) = json.loads(broken.stdout)
    assert found["code"] == "E-parse" and found["span"]["file"] == "<stdin>"
    rendered = serq("check", "-", stdin="let a = ;\n")
    assert "--> <stdin>:1:9" in rendered.stderr and "1 | let a = ;" in rendered.stderr


def test_its_uses_are_read_from_the_working_directory(tmp_path):
    (tmp_path / "lib.sq").write_text("def rate() = 0.5;\n")
    text = PROGRAM.replace("let lambda = 0.8;", 'use "lib.sq";\nlet lambda = rate();')
    assert "use" in text
    assert serq("check", "-", stdin=text, cwd=tmp_path).returncode == 0
    elsewhere = serq("check", "-", stdin=text, cwd=ROOT)
    assert elsewhere.returncode == 1 and "looked for ./lib.sq" in elsewhere.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["expand", "-"],
        ["ir", "--compact", "-"],
        ["run", "-", "--horizon", "200", "--warmup", "10"],
        [
            "sweep",
            "-",
            "--set",
            "lambda=0.5,0.6",
            "--horizon",
            "200",
            "--warmup",
            "10",
            "--jobs",
            "1",
        ],
    ],
    ids=lambda a: a[0],
)
def test_every_command_that_takes_a_file_reads_it(args):
    done = serq(*args, stdin=PROGRAM)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["check", "expand", "ir", "run", "sweep", "fmt"])
def test_a_closed_stdin_is_an_io_error(command):
    args = [command, "-"] + (["--set", "lambda=0.5"] if command == "sweep" else [])
    # close fd 0 in the child: `<&-`
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" <&-', "sh", sys.executable, "-m", "serq.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"},
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "error[E-io]: cannot read standard input" in done.stderr
    assert "Traceback" not in done.stderr
