"""Every command the docs show with its output prints that output.

A command is a ```sh block of one `serq` line followed by a ```text block (the
tutorial's), or a `$ serq ...` line opening a block whose other lines are the output
(a `> FILE` at its end sends the report there: the block shows what is left). The
output is compared as a user sees it on a terminal 100 columns wide with no color: the
diagnostics (stderr) first, then the report; a line ending in `...` stands for the rest.

The tutorial's step 6 at `--set blocks=200` still showed 583 `ttft` samples of a mean
0.1156 after its program came to observe the first token once a request (543, 0.06463),
and said 26 preemptions beside a table of 40; domains-and-stalls.md showed
`examples/mm1.sq` at a line and column it no longer has; step 4's W-reject was left out.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

from tests.docs.blocks import DOCS, ROOT

_FENCE = re.compile(r"^(```+)(.*)$")


def _blocks(path):
    lines = path.read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while not lines[j].startswith(m.group(1)):
            j += 1
        out.append((i + 1, m.group(2).strip(), lines[i + 1 : j]))
        i = j + 1
    return out


def _commands():
    cases = []
    for path in sorted(DOCS.glob("*.md")):
        blocks = _blocks(path)
        for k, (line, info, body) in enumerate(blocks):
            if info == "sh" and len(body) == 1 and body[0].startswith("serq "):
                if k + 1 < len(blocks) and blocks[k + 1][1] == "text":
                    cases.append((path.name, line, body[0], blocks[k + 1][2]))
            elif body and body[0].startswith("$ serq "):
                cases.append((path.name, line, body[0][2:], body[1:]))
    return cases


CASES = _commands()


def test_the_docs_show_commands():
    assert len(CASES) >= 12


@pytest.mark.parametrize(
    ("page", "line", "command", "expected"), CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES]
)
def test_a_command_prints_what_the_page_shows(page, line, command, expected):
    words = shlex.split(command)
    to_file = len(words) > 2 and words[-2] == ">"
    if to_file:
        words = words[:-2]
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100", PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "serq.cli", *words[1:]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    got = (done.stderr if to_file else done.stderr + done.stdout).rstrip("\n").split("\n")
    where = f"{page}:{line}: {command}"
    for i, want in enumerate(expected):
        if want.endswith(" ..."):
            assert i < len(got) and got[i].startswith(want[:-4]), where
            return
        assert i < len(got) and got[i].rstrip() == want.rstrip(), (where, i, got[i : i + 3])
    assert len(got) == len(expected), (where, got[len(expected) :][:5])


def test_the_report_page_example_is_what_serq_run_json_prints():
    # docs/report.md's example had `skipped` 1364 where serq now fast-forwards 1428
    # iterations, and a mean in its last digits from an older summation order
    import json
    import math

    page = (DOCS / "report.md").read_text(encoding="utf-8")
    command = "serq run examples/tutorial/05_step_engine.sq --json --horizon 20 --warmup 5"
    assert f"`{command}`\nprints:" in page
    start = page.index("```json", page.index(command)) + len("```json")
    shown = json.loads(page[start : page.index("```", start)])
    done = subprocess.run(
        [sys.executable, "-m", "serq.cli", *command.split()[1:]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=600,
    )
    printed = json.loads(done.stdout)

    def same(a, b, path="") -> None:
        if isinstance(a, float) or isinstance(b, float):
            assert math.isclose(a, b, rel_tol=1e-9), (path, a, b)
        elif isinstance(a, dict):
            assert list(a) == list(b), path
            for key in a:
                same(a[key], b[key], f"{path}/{key}")
        elif isinstance(a, list):
            assert len(a) == len(b), path
            for x, y in zip(a, b, strict=True):
                same(x, y, path + "[]")
        else:
            assert a == b, (path, a, b)

    same(shown, printed)
