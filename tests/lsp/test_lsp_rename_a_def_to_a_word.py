"""Rename refuses to give a `def` a word of the language as its name.

A library's `def base() = 1;`, called from a program through another library, renamed to
`stage` from the program: the rename edited all three files, and the program then failed
with E-def "`stage` is a word of the language: a definition needs a name of its own". A
`def` may not take a keyword, a function of numbers, an observable, a law or an aggregate
(both references refuse `def min(x)`); the rename now says so. A `let` or an attribute may
take a keyword (they are contextual): that rename goes on, and the program checks clean.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from serq import api

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lsp_robust import Wire  # noqa: E402

PROGRAM = """use "lib/a.sq";

let rate = 1;

stage server : fifo(1);

workload {
  arrive poisson(rate);
}

session {
  run server (~exp(2));
  observe r = level() + base();
}

run {
  horizon 50;
}
"""
A = 'use "b.sq";\n\ndef level() = base() + 1;\n'
B = "def base() = 1;\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "lib").mkdir()
    (tmp_path / "main.sq").write_text(PROGRAM)
    (tmp_path / "lib" / "a.sq").write_text(A)
    (tmp_path / "lib" / "b.sq").write_text(B)
    return tmp_path


def _position(text: str, needle: str) -> dict:
    at = text.index(needle)
    return {"line": text.count("\n", 0, at), "character": at - (text.rfind("\n", 0, at) + 1)}


def test_a_def_is_not_renamed_to_a_word_of_the_language(wire: Wire, tree: Path):
    wire.initialize()
    main = (tree / "main.sq").as_uri()
    wire.open(main, PROGRAM)
    assert wire.diagnostics(main) == []
    msg_id = 0
    for new in ("stage", "min", "exp", "used", "poisson", "total"):
        msg_id += 1
        params = {
            "textDocument": {"uri": main},
            "position": _position(PROGRAM, "base()"),
            "newName": new,
        }
        wire.request(msg_id, "textDocument/rename", params)
        answer = wire.answer(msg_id, timeout=60)
        assert "is a word of the language" in answer["error"]["message"], (new, answer)
    # a let may take a keyword: renamed, the program checks clean
    params = {
        "textDocument": {"uri": main},
        "position": _position(PROGRAM, "rate"),
        "newName": "stage",
    }
    wire.request(99, "textDocument/rename", params)
    (edits,) = wire.answer(99, timeout=60)["result"]["changes"].values()
    assert len(edits) == 2
    renamed = PROGRAM.replace("rate", "stage")
    (tree / "main.sq").write_text(renamed)
    assert api.check_source(renamed, str(tree / "main.sq")) == []
