"""Every command's statuses in its `--help`, and a stdout closed before the start (§68).

`serq run x.sq >&-` (file descriptor 1 closed: Python's `sys.stdout` is None) ended in a
traceback (`'NoneType' object has no attribute 'flush'`), status 1, for every command,
a clean `serq check` among them. Now a command with output to write says so in one line,
status 2, as a closed stdin is; one with nothing to write there exits as usual. And the
`--help` of `expand`, `fmt`, `explain`, `plot` and `serq` itself said no exit status;
`check`, `ir` and `run` said nothing of 130 (Ctrl-C) or 141 (`| head`), as docs/cli.md's
table did not. The message of `serq fmt` on a file with one broken item said
"1 item(s) with syntax errors"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {"PYTHONPATH": str(ROOT), "COLUMNS": "200", "PATH": "/usr/bin:/bin"}
EXAMPLE = "examples/tutorial/01_mm1.sq"


def _serq(args: str, redirect: str = "") -> subprocess.CompletedProcess[str]:
    return _sh(f"{sys.executable} -m serq.cli {args} {redirect}")


def _status_to_stderr(args: str, reader: str) -> subprocess.CompletedProcess[str]:
    """`serq ARGS`, its exit status written to stderr, its stdout to `reader`."""
    return _sh(f"{{ {sys.executable} -m serq.cli {args}; echo status=$? >&2; }} {reader}")


def _sh(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", command],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=ENV,
        timeout=300,
    )


@pytest.mark.parametrize(
    "command", ["", "check", "expand", "ir", "run", "sweep", "plot", "fmt", "explain"]
)
def test_every_help_ends_with_its_exit_statuses(command: str) -> None:
    done = _serq(f"{command} --help")
    assert done.returncode == 0
    epilog = " ".join(done.stdout.split("exit status:", 1)[-1].split())
    assert "exit status:" in done.stdout and "0 " in epilog
    assert "130 interrupted (Ctrl-C)" in epilog and "141 the reader" in epilog, command


@pytest.mark.parametrize(
    "args",
    [
        f"run {EXAMPLE}",
        f"ir {EXAMPLE}",
        f"expand {EXAMPLE}",
        "explain E-parse",
        "--help",
        f"check --json {EXAMPLE}",
        f"fmt - < {EXAMPLE}",
    ],
)
def test_a_closed_stdout_is_one_line_and_status_2(args: str) -> None:
    done = _serq(args, ">&-")
    assert "Traceback" not in done.stderr
    assert done.stderr.endswith("serq: cannot write the output: standard output is closed\n")
    assert done.returncode == 2


def test_a_command_with_nothing_to_write_there_runs_as_usual() -> None:
    done = _serq(f"check {EXAMPLE}", ">&-")
    assert (done.returncode, done.stderr) == (0, "")
    broken = _serq("check tests/corpus/invalid/bad_characters.sq", ">&-")
    assert broken.returncode == 1 and "error[E-parse]" in broken.stderr
    assert "Traceback" not in broken.stderr


@pytest.mark.parametrize(
    ("items", "words"), [(1, "1 item with a syntax error"), (2, "2 items with syntax errors")]
)
def test_fmt_counts_the_items_left_as_written(tmp_path: Path, items: int, words: str) -> None:
    source = tmp_path / "broken.sq"
    source.write_text("let a = 1 +;\nlet b = 2;\nlet c = * 3;\n"[: 24 if items == 1 else None])
    done = _serq(f"fmt {source}")
    assert done.returncode == 1
    assert done.stderr.endswith(f"{source}: {words} left as written\n")


SWEEP = f"sweep {EXAMPLE} --set lambda=0.2,0.4 --seeds 2 --jobs 1 --horizon 3000"


@pytest.mark.parametrize("reader", ["| true", ">&-"], ids=["pipe closed by its reader", "closed"])
def test_a_sweep_writes_its_out_files_before_its_table(tmp_path: Path, reader: str) -> None:
    """The table went to stdout first: with its reader gone, rich exited 1 (`| true`) or the
    command stopped (`>&-`) before `--out` was written, and the runs' results were lost."""
    out = tmp_path / "r.csv"
    done = _status_to_stderr(f"{SWEEP} --out {out}", reader)
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("status=141" if reader == "| true" else "status=2")
    assert out.is_file() and (tmp_path / "r.runs.csv").is_file()
    assert out.read_text().count("\n") == 3  # a header and the two points


@pytest.mark.parametrize("reader", ["| true", ">&-"], ids=["pipe closed by its reader", "closed"])
def test_a_run_writes_its_dump_before_its_report(tmp_path: Path, reader: str) -> None:
    """The report went to stdout first: with its reader gone the command ended (141, or 2)
    before `--dump DIR` was written."""
    dump = tmp_path / "dump"
    done = _status_to_stderr(f"run {EXAMPLE} --dump {dump}", reader)
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("status=141" if reader == "| true" else "status=2")
    assert [p.name for p in (dump / "observe").iterdir()] == ["sojourn.csv"]
