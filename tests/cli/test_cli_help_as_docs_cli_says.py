"""Each command's `--help` and its section of docs/cli.md name the same options.

`serq plot --help` listed `--color`, which docs/cli.md's `serq plot` did not; the page
said `--color` is taken by `check`, `expand`, `ir` and `run` (`sweep`, `plot` and `fmt`
take it too); and every command's `--help` said `--color` colors "the report", which only
`run` prints (the others color their diagnostics).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
COMMANDS = ("check", "expand", "ir", "run", "sweep", "plot", "fmt", "explain")
_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b")


def _help(command: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "serq.cli", command, "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "COLUMNS": "200", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _section(command: str) -> str:
    (section,) = [s for s in PAGE.split("\n## ") if s.startswith(f"`serq {command}`")]
    return section


@pytest.mark.parametrize("command", COMMANDS)
def test_the_help_and_the_page_name_the_same_options(command):
    said = set(_OPTION.findall(_help(command))) - {"-h", "--help"}
    written = set(_OPTION.findall(_section(command))) - {"-h", "--help"}
    assert said == written, (command, said - written, written - said)


@pytest.mark.parametrize("command", COMMANDS)
def test_color_is_said_for_what_it_colors(command):
    text = _help(command)
    if command == "explain":
        assert "--color" not in text
        return
    line = re.search(r"--color \{auto,always,never\}\s+(.*)", text).group(1)
    if command == "run":
        assert line.startswith("color the diagnostics and the report"), line
    else:
        assert line.startswith("color the diagnostics ("), line
    assert "taken by every command but `explain`" in PAGE


def test_the_language_servers_options_say_what_they_are():
    # `--host HOST` and `--port PORT` had no text and no default in `serq-lsp --help`
    done = subprocess.run(
        [sys.executable, "-m", "serq_lsp.server", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "COLUMNS": "200", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert "the address --tcp listens on (default 127.0.0.1)" in done.stdout
    assert "the port --tcp listens on (default 2087)" in done.stdout
    editors = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    assert "`serq-lsp --tcp` listens on 127.0.0.1:2087" in editors
