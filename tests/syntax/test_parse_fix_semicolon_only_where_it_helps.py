"""The quick fix "insert `;`" is offered only where the `;` lets the parse go on.

A user pasted a top-level item (`stage ...`, `let ...`) into a session body right after a
hold's block: the parser, which accepts a `;` after the block, offered to insert one there
(as the safe fix, taken by "fix all"), and the text with the `;` had the same error. The
fix is now offered only when the parser takes the found token after a `;` (at the end of
the text or of the item, when the item can end after it).
"""

from __future__ import annotations

from serq import api

BODY = """pool kv { cap 100; block 16; }
stage svc : fifo(1);
workload { arrive poisson(1); }
session {
  hold kv (1) { run svc (1); }
PASTED  end;
}
run { horizon 10; }
"""


def _fixes(text: str) -> list[tuple[str, str]]:
    return [(d.message, d.fix.title) for d in api.check_source(text, "t.sq") if d.fix]


def _apply(text: str, fix) -> str:
    for edit in sorted(fix.edits, key=lambda e: -e.span.start):
        text = text[: edit.span.start] + edit.replacement + text[edit.span.end :]
    return text


def test_no_semicolon_offered_before_an_item_pasted_into_a_body():
    for pasted in (
        "stage other : fifo(2);\n",
        "let bs = 16;\n",
        "workload { arrive poisson(2); }\n",
    ):
        text = BODY.replace("PASTED", pasted)
        errors = [d for d in api.check_source(text, "t.sq") if d.code == "E-parse"]
        assert errors, pasted
        offered = [d.fix.title for d in errors if d.fix is not None]
        assert "insert `;`" not in offered, (pasted, offered)


def test_a_forgotten_semicolon_is_still_fixed_and_the_fix_removes_its_error():
    cases = [
        "let a = 1\nlet b = 2;\n",  # before a keyword item
        "stage s : fifo(1)\nworkload { arrive poisson(1); }\n",
        "session {\n  set x = 2\n  observe y = x\n}\n",  # between statements
        "let z = 3",  # at the end of the text
    ]
    for text in cases:
        found = [d for d in api.check_source(text, "t.sq") if d.fix is not None]
        assert found and found[0].fix.title == "insert `;`", (text, found)
        d = found[0]
        fixed = _apply(text, d.fix)
        after = [(e.code, e.message) for e in api.check_source(fixed, "t.sq")]
        assert (d.code, d.message) not in after, (text, after)
