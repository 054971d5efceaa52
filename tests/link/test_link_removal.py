"""The fix that removes a read the linker refuses (E-moment, E-hidden): one edit, never safe,
and the program it leaves parses and no longer reports the read."""

from __future__ import annotations

from pathlib import Path

import pytest

from serq import api
from serq.link.checks.removal import TITLE

ROOT = Path(__file__).resolve().parents[2]

HEAD = (
    "let B = 64;\nstage s : fifo(1);\n"
    "stage e : step { budget B; cost 1 + tokens; memory kv; }\n"
    "workload { arrive poisson(1); hidden o; turn { set o = 5; set p = -0.5; } }\n"
)
RUN = "run { horizon 10; }\n"


def _apply(text: str, fix) -> str:
    for e in sorted(fix.edits, key=lambda e: e.span.start, reverse=True):
        text = text[: e.span.start] + e.replacement + text[e.span.end :]
    return text


def _refused(text: str) -> list:
    return [d for d in api.check_source(text, "t.sq") if d.code in ("E-moment", "E-hidden")]


# (pool options, session statements, the title's end, the text after the fix)
CASES = {
    "a term of a sum": (
        "",
        "hold kv (p + o) { run e decode (o); } cache (p);",
        "drop its term",
        "hold kv (p) {",
    ),
    "a term with a product around the read": (
        "",
        "hold kv (1 - 2 * o) { run e decode (o); } cache (p);",
        "drop its term",
        "hold kv (1) {",
    ),
    "the first term of a sum": (
        "",
        "set y = size + inf;\n  run s (y);",
        "drop its term",
        "set y = inf;",
    ),
    "the reserve": (
        "",
        "hold kv (p) reserve (o) { run e decode (o); } cache (p);",
        "drop the `reserve`",
        "hold kv (p) { run e decode (o); }",
    ),
    "the reuse": (
        "",
        "hold kv (p) reserve (p) reuse (o) { run e decode (o); } cache (p);",
        "drop the `reuse`",
        "hold kv (p) reserve (p) { run e decode (o); }",
    ),
    "a key of several": (
        "queue by (waited, o);",
        "hold kv (1) { run e decode (o); } cache (p);",
        "drop its key",
        "queue by (waited);",
    ),
    "the first key of several": (
        "evict by (tokens, last);",
        "hold kv (1) { run e decode (o); } cache (p);",
        "drop its key",
        "evict by (last);",
    ),
    "a queue order of one key": (
        "queue by (o);",
        "hold kv (1) { run e decode (o); } cache (p);",
        "drop `queue by`",
        "pool kv { cap 100;  }",
    ),
    "an observe": (
        "",
        "observe t = tokens;\n  run s (p);",
        "drop the `observe`",
        "session {\n  turn;\n  run s (p);",
    ),
    "a choose key": (
        "",
        "choose j in 2 by (used(kv), tokens);\n  run s (j);",
        "drop its key",
        "choose j in 2 by (used(kv));",
    ),
}


def _program(options: str, statements: str) -> str:
    return (
        f"pool kv {{ cap 100; {options} }}\n"
        + HEAD
        + f"session {{\n  turn;\n  {statements}\n}}\n"
        + RUN
    )


@pytest.mark.parametrize(("options", "body", "title", "after"), CASES.values(), ids=CASES.keys())
def test_the_fix_removes_the_read_in_one_edit(options, body, title, after):
    text = _program(options, body)
    (refused,) = _refused(text)
    fix = refused.fix
    assert fix is not None and fix.applicability == "unsafe" and len(fix.edits) == 1
    assert fix.title.startswith(TITLE) and fix.title.endswith(title)
    fixed = _apply(text, fix)
    assert after in fixed
    assert _refused(fixed) == []
    assert [d.code for d in api.check_source(fixed, "t.sq") if d.code.startswith("E-")] == []


def test_a_hidden_read_no_edit_removes_keeps_the_unhiding_fix():
    text = _program("", "hold kv (max(o, 1)) { run e decode (o); } cache (p);")
    (refused,) = _refused(text)
    assert refused.fix is not None and refused.fix.title == "stop hiding `o`"


def test_a_read_that_is_the_whole_required_value_gets_no_fix():
    (refused,) = _refused(_program("", "branch (size > 1) { run s (1); }"))
    assert refused.code == "E-moment" and refused.fix is None


def test_a_removal_that_would_not_parse_is_dropped():
    # the key's own parentheses are not in its span: the edit would leave one open, so
    # the hidden read gets its other fix back
    text = _program("queue by ((o), waited);", "hold kv (1) { run e decode (o); } cache (p);")
    (refused,) = _refused(text)
    assert refused.fix is not None and refused.fix.title == "stop hiding `o`"
    assert "hidden o;" not in _apply(text, refused.fix)
    (moment,) = _refused(_program("", "set y = (size) + 1;\n  run s (y);"))
    assert moment.fix is None  # `(size) + 1`: the sum's span starts with its parenthesis


def test_every_removal_of_the_corpus_fixes_its_read():
    checked = 0
    for path in sorted((ROOT / "tests" / "corpus" / "link_invalid").glob("*.sq")):
        text = path.read_text(encoding="utf-8")
        found = api.check_source(text, str(path))
        for d in found:
            if d.fix is None or not d.fix.title.startswith(TITLE):
                continue
            checked += 1
            after = api.check_source(_apply(text, d.fix), str(path))
            assert not [x for x in after if x.code == "E-parse"], path.name
            same = [x for x in after if (x.code, x.message) == (d.code, d.message)]
            assert len(same) < len([x for x in found if (x.code, x.message) == (d.code, d.message)])
    assert checked >= 15
