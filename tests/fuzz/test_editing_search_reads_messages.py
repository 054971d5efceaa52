"""editing_search reads a diagnostic of a `use`d file (`in FILE:LINE:COL: message`, as the
server shows it) apart from one of the file's own that begins with "in ".

`in \\`fn main\\`, the session's \\`turn;\\` runs the server: there is no \\`request;\\`` was
taken for a used file's and cut at its first ": ", so editing_search at seed 28 reported
the server's diagnostics as not serq check's when they were the same."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import editing_search  # noqa: E402

OWN = "in `fn main`, the session's `turn;` runs the server: there is no `request;`"


def _published(message: str) -> dict:
    start = {"line": 8, "character": 18}
    return {"range": {"start": start, "end": start}, "code": "E-dialect", "message": message}


def test_a_message_of_the_files_own_that_begins_with_in():
    assert editing_search.lsp_diagnostics([_published(OWN)]) == [(8, 18, "E-dialect", OWN)]


def test_a_message_of_a_used_file():
    used = "in /a/lib: x.sq:3:14: `x` is not declared\nnote: here\nhelp: declare it"
    assert editing_search.lsp_diagnostics([_published(used)]) == [
        ("E-dialect", "`x` is not declared")
    ]
