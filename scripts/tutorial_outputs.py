"""Bring docs/tutorial.md up to date with the examples and what they print.

Each ```serq block introduced by "`examples/tutorial/NAME.sq`:" becomes that file's
text, and each ```sh block that holds one `serq run ...` line and is followed by a
```text block is run (100 columns, `--color never`), the text block becoming what it
printed. Run by hand after a change to an example or to the simulator's numbers:

    python scripts/tutorial_outputs.py           # rewrite docs/tutorial.md
    python scripts/tutorial_outputs.py --check   # exit 1 and name the stale steps
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tutorial.md"
_PAIR = re.compile(r"(```sh\n(serq run [^\n]+)\n```\n\n```text\n)(.*?)(```)", re.S)
_PROGRAM = re.compile(r"(`(examples/tutorial/[\w.]+\.sq)`:\n\n```serq\n)(.*?)(```)", re.S)


def output(command: str) -> str:
    """What `command` (a `serq run` line) prints at 100 columns without color."""
    argv = [sys.executable, "-m", "serq.cli", *shlex.split(command)[1:], "--color", "never"]
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"`{command}` failed:\n{done.stderr}")
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale blocks")
    args = parser.parse_args()
    page = PAGE.read_text(encoding="utf-8")
    stale: list[str] = []

    def refresh(m: re.Match[str]) -> str:
        fresh = output(m.group(2))
        if fresh != m.group(3):
            stale.append(m.group(2))
        return m.group(1) + fresh + m.group(4)

    def program(m: re.Match[str]) -> str:
        text = (ROOT / m.group(2)).read_text(encoding="utf-8")
        if text != m.group(3):
            stale.append(m.group(2))
        return m.group(1) + text + m.group(4)

    updated = _PAIR.sub(refresh, _PROGRAM.sub(program, page))
    if args.check:
        for command in stale:
            print(f"stale: {command}")  # a command, or an example's text
        return 1 if stale else 0
    PAGE.write_text(updated, encoding="utf-8")
    print(f"{len(stale)} block(s) updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
