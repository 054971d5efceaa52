"""Neovim, for real: Debian's Neovim (0.7.2 on Debian 12; scripts/test.sh installs it) runs
headless with the set-up docs/editors.md gives for its version, opens an example, and
drives serq-lsp as a user would (tests/editors/neovim/driver.lua): an error typed in gets
its diagnostic, a hover on a serving form shows its kernel, go to definition on a pool
jumps to it, and the buffer is formatted when the server offers formatting (the step
skips, saying so, when it does not). Without Neovim the test skips; in CI that fails."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
DRIVER = Path(__file__).with_name("neovim") / "driver.lua"
EXAMPLE = ROOT / "examples" / "pd_queues.sq"
STEPS = ("attach", "clean", "diagnostic", "hover", "definition", "format")


def _version(nvim: str) -> tuple[int, int]:
    out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30).stdout
    match = re.search(r"NVIM v(\d+)\.(\d+)", out)
    assert match, out
    return int(match.group(1)), int(match.group(2))


def setup_for(version: tuple[int, int]) -> str:
    """The `init.lua` docs/editors.md gives for Neovim `version`."""
    blocks = re.findall(r"^```lua\n(.*?)^```", DOC, re.M | re.S)
    wanted = "0.7 and later" if version < (0, 10) else "0.10 and later"
    (block,) = [b for b in blocks if f"(Neovim {wanted})" in b.splitlines()[0]]
    return block


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> dict[str, tuple[str, str]]:
    nvim = shutil.which("nvim")
    if nvim is None:
        if os.environ.get("CI") == "true":
            pytest.fail("nvim is not installed: scripts/test.sh installs Debian's neovim")
        pytest.skip("nvim is not installed (scripts/test.sh installs Debian's neovim)")
    home = tmp_path_factory.mktemp("nvim")
    (home / "init.lua").write_text(setup_for(_version(nvim)), encoding="utf-8")
    project = home / "project"
    (project / ".git").mkdir(parents=True)
    program = project / "pd_queues.sq"
    program.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    result = home / "result.txt"
    scripts = os.path.dirname(sys.executable)
    env = {
        **os.environ,
        "PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "SERQ_NVIM_RESULT": str(result),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
    }
    if shutil.which("serq-lsp", path=env["PATH"]) is None:
        pytest.fail("serq-lsp is not on the PATH: `pip install -e .` installs it")
    command = [
        nvim,
        "--headless",
        "-n",
        "-i",
        "NONE",
        "-u",
        str(home / "init.lua"),
        str(program),
        "-c",
        f"luafile {DRIVER}",
    ]
    try:
        ran = subprocess.run(
            command, cwd=project, env=env, capture_output=True, text=True, timeout=300
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"nvim did not finish: {error}")
    lines = result.read_text(encoding="utf-8").splitlines() if result.exists() else []
    steps = {}
    for line in lines:
        status, _, rest = line.partition(" ")
        step, _, detail = rest.partition(": ")
        steps[step] = (status, detail)
    failed = [f"{s}: {d}" for s, (status, d) in steps.items() if status == "fail"]
    assert not failed and ran.returncode == 0 and "done" in steps, (
        f"nvim exited {ran.returncode}\nsteps: {lines}\n"
        f"stdout: {ran.stdout[-2000:]}\nstderr: {ran.stderr[-2000:]}"
    )
    return steps


@pytest.mark.parametrize("step", STEPS)
def test_neovim_drives_serq_lsp(session, step):
    status, detail = session[step]
    if status == "skip":
        pytest.skip(f"{step}: {detail}")
    assert status == "ok", detail


def test_the_diagnostic_is_the_missing_semicolon(session):
    _, detail = session["diagnostic"]
    text = EXAMPLE.read_text(encoding="utf-8").splitlines()
    line = text.index("let ND = 2;") + 1
    # at the line that lost its `;`, or where the parser noticed: the next line's start
    assert re.match(rf"line ({line}|{line + 1}): ", detail), detail
    assert "`;`" in detail


def test_the_hover_is_the_forms_kernel_and_the_jump_lands_on_the_pool(session):
    assert "expands to" in session["hover"][1]
    text = EXAMPLE.read_text(encoding="utf-8").splitlines()
    queue = next(i for i, line in enumerate(text) if line.startswith("queue P[NP]"))
    pool = next(i for i in range(queue, len(text)) if "pool kv {" in text[i])
    assert session["definition"][1].startswith(f"jumped to line {pool + 1},")
