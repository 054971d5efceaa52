"""The fenced code blocks of the docs' Markdown, and the serQ programs among them.

A block whose info string's first word is `serq` is a serQ program. `serq` alone is a
program that checks clean; `serq E-<name>` (or `L-`, `W-`) is one that reports that
code, through `serq check`, or through a short `serq run` for a run-time code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXPLANATIONS = ROOT / "serq" / "diagnostics" / "explanations"

_FENCE = re.compile(r"^(```+|~~~+)(.*)$")


@dataclass(frozen=True)
class Block:
    """One fenced block: its file, the line of its opening fence, info string and text."""

    path: Path
    line: int
    info: str
    text: str

    @property
    def language(self) -> str:
        return self.info.split()[0] if self.info.split() else ""

    @property
    def expected(self) -> str | None:
        """The code a `serq CODE` block must report, or None for a clean program."""
        words = self.info.split()
        return words[1] if len(words) > 1 else None

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every fenced block of the Markdown file `path`, in order."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        fence, info = m.group(1), m.group(2).strip()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        found.append(Block(path, start + 1, info, "\n".join(body) + "\n"))
        i += 1
    return found


def programs(paths: list[Path]) -> list[Block]:
    """The serQ programs (`serq` blocks) of the files `paths`."""
    return [b for p in paths for b in blocks(p) if b.language == "serq"]


def reported(block: Block, path: str) -> list[str]:
    """The codes the program of `block`, saved as `path`, reports: `serq check`'s, and for
    a block that expects a run-time code, those of a run of at most 100 time units."""
    from serq import api
    from serq.diagnostics import codes
    from serq.sim import api as sim_api

    found = [d.code for d in api.check_source(block.text, path)]
    expected = codes.ALL.get(block.expected or "")
    if found or expected is None or expected.category != "run":
        return found
    compiled, diagnostics = sim_api.compile_program(block.text, path, horizon=100)
    if compiled is None:
        return [d.code for d in diagnostics]
    _, ran = sim_api.execute(compiled)
    return [d.code for d in ran]
