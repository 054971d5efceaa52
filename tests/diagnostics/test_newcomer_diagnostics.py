"""What a newcomer's first mistakes get: an unclosed bracket named where it opens, and a
did-you-mean (with a rename fix) for misspelled keywords, stage kinds, roles and entries."""

from __future__ import annotations

import pytest

from serq import api

BASE = "workload {{ arrive poisson(1); }}\n{body}\nrun {{ horizon 1; }}\n"


def _diagnostics(text: str):
    return api.check_source(text, "n.sq")


@pytest.mark.parametrize(
    ("text", "opener"),
    [
        ("stage s : fifo;\nsession {\n  turn;\n  loop {\n    run s (1);\n}\n", "session {"),
        ("stage s : fifo;\nsession {\n  turn;\n  branch (now > 1 {\n  }\n}\n", "(now"),
        ("stage s[2 : fifo;\nsession { turn; }\n", "[2"),
    ],
)
def test_an_unclosed_bracket_is_named_where_it_opens(text, opener):
    text = BASE.format(body=text)
    (error, *_) = [d for d in _diagnostics(text) if d.code == "E-parse"]
    at = text.index(opener) + (len(opener) - 1 if opener.endswith("{") else 0)
    labels = [(label.span.start, label.text) for label in error.labels]
    char = text[at]
    assert (at, f"this `{char}` is never closed") in labels


def test_closed_brackets_are_not_named():
    text = BASE.format(body="stage s : fifo;\nsession { turn; run s (1) }\n")
    errors = [d for d in _diagnostics(text) if d.code == "E-parse"]
    assert errors and not any("never closed" in label.text for d in errors for label in d.labels)


@pytest.mark.parametrize(
    ("body", "wrong", "right"),
    [
        ("stage s : fifoo;\nsession { turn; run s (1); }", "fifoo", "fifo"),
        ("stage s : delay;\npool p { cap 1; evict lur; }\nsession { turn; }", "lur", "lru"),
        (
            "queue Q : prefil { serve fifo(1); prefill (p) { run (p); } }\nsession { turn; }",
            "prefil",
            "prefill",
        ),
        (
            "queue Q : prefill { serve fifo(1); prefill (p) { run (p); } }\n"
            "session { turn; Q.prefil(1); }",
            "prefil",
            "prefill",
        ),
    ],
)
def test_did_you_mean_with_a_rename(body, wrong, right):
    text = BASE.format(body=body)
    found = [d for d in _diagnostics(text) if d.help == f"did you mean `{right}`?"]
    assert found, [d.message for d in _diagnostics(text)]
    (edit,) = found[0].fix.edits
    assert text[edit.span.start : edit.span.end] == wrong and edit.replacement == right
    assert found[0].fix.applicability == "unsafe"


def test_many_unclosed_brackets_name_the_outermost_and_count_the_rest():
    # 2,428 labels made one diagnostic that took the renderer 20 s (found by the fuzzer)
    from serq.sim.api import render

    text = BASE.format(body="stage s : fifo;\nsession { turn;" + " loop {" * 3000 + " end;\n")
    (error,) = [d for d in _diagnostics(text) if d.code == "E-parse"]
    first = text.index("session {") + len("session ")
    opened = [i for i, c in enumerate(text) if c == "{" and i >= first][:3]
    assert [(label.span.start, label.text) for label in error.labels] == [
        (at, "this `{` is never closed") for at in opened
    ]
    assert error.notes == ("and 2,998 more brackets inside them are never closed",)
    assert "never closed" in render([error], {"n.sq": text})
