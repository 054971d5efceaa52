"""Comments anywhere a statement or brace ends: `serq fmt` keeps every one (the count of
comments is the same) and formats its own output to itself. Seeded, so it is the same
every run: four comments at a time into each valid program, `//` and `/* */` in turn."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from serq.formatter import format_source
from serq.formatter.comments import comments
from serq.syntax import parse
from tests.formatter.test_format_corpus import PROGRAMS, ROOT


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_inserted_comments_are_kept_in_place(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    rng = random.Random(path.name)
    spots = [m.end() for m in re.finditer(r"[;{}]", text)]
    for trial in range(4):
        changed = text
        for k, at in enumerate(sorted(rng.sample(spots, min(4, len(spots))), reverse=True)):
            comment = f" // c{k}\n" if trial % 2 == 0 else f" /* b{k} */ "
            changed = changed[:at] + comment + changed[at:]
        if parse(changed, str(path)).diagnostics:
            continue  # a `//` that swallowed the rest of a line
        formatted = format_source(changed, str(path)).text
        assert [c.text for c in comments(formatted)] == [c.text for c in comments(changed)]
        assert format_source(formatted, str(path)).text == formatted


def test_a_comment_between_a_block_and_its_tail_stays_in_the_block() -> None:
    text = "session {\n  hold kv (1) {\n    turn;\n  } // after\n  cache (1);\n}\n"
    formatted = format_source(text).text
    assert formatted == "session {\n  hold kv (1) {\n    turn;\n    // after\n  } cache (1);\n}\n"


def test_a_lone_carriage_return_ends_a_comment_and_a_line() -> None:
    # the code after a lone `\r` is code (as the parser reads it), printed once, on its line
    formatted = format_source("let a = 1; // one\rlet b = a;\rstage s : fifo(b);\n")
    assert formatted.ok
    assert formatted.text == "let a = 1; // one\nlet b = a;\nstage s : fifo(b);\n"
