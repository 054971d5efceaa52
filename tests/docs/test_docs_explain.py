"""`serq explain` and docs/diagnostics.md: one source, every code explained, every
explanation's example program reports its code."""

from __future__ import annotations

import pytest

from serq import cli
from serq.diagnostics import codes, explain
from tests.docs.blocks import DOCS, EXPLANATIONS, programs, reported


def test_every_code_has_an_explanation() -> None:
    missing = [c for c in codes.ALL if not (EXPLANATIONS / f"{c}.md").is_file()]
    assert missing == [], f"write serq/diagnostics/explanations/CODE.md for {missing}"
    stray = sorted(p.stem for p in EXPLANATIONS.glob("*.md") if p.stem not in codes.ALL)
    assert stray == [], "explanations of codes that codes.py does not declare"
    for code in codes.ALL.values():
        text = explain.body(code)
        assert text is not None and "**How to fix.**" in text, code.id


def test_the_page_is_generated_from_the_explanations() -> None:
    page = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    assert page == explain.render_page(), (
        "docs/diagnostics.md is stale: python -m serq.diagnostics.explain > docs/diagnostics.md"
    )
    for code in codes.ALL:
        assert f"### `{code}`" in page


BLOCKS = programs(sorted(EXPLANATIONS.glob("*.md")))
EXAMPLES = [b for b in BLOCKS if b.expected is not None]
FIXED = [b for b in BLOCKS if b.expected is None]


def test_examples_name_their_own_code_and_come_with_a_fix() -> None:
    for block in EXAMPLES:
        assert block.expected == block.path.stem, block.id
    broken = {b.path.stem for b in EXAMPLES}
    assert broken == {b.path.stem for b in FIXED}, "each broken example has a fixed one"
    # no program text causes E-io or E-internal, and UTF-8 text cannot carry E-utf8's bytes
    assert broken >= set(codes.ALL) - {"E-io", "E-internal", "E-utf8"}


@pytest.mark.parametrize("block", FIXED, ids=lambda b: b.path.stem)
def test_fixed_example_is_clean(block) -> None:
    # As on docs/diagnostics.md: a `use` path is relative to docs/.
    assert reported(block, str(DOCS / "fixed.sq")) == []


@pytest.mark.parametrize("block", EXAMPLES, ids=lambda b: b.path.stem)
def test_example_reports_its_code(block, tmp_path) -> None:
    found = reported(block, str(tmp_path / "example.sq"))
    assert block.expected in found, (block.expected, found)


def test_explain_prints_the_explanation(capsys) -> None:
    assert cli.main(["explain", "E-hidden"]) == 0
    out = capsys.readouterr().out
    assert out == explain.explain(codes.HIDDEN)
    assert out.startswith("E-hidden (link): ") and "How to fix" in out


def test_explain_takes_the_name_without_its_letter(capsys) -> None:
    assert cli.main(["explain", "constant-guard"]) == 0
    assert capsys.readouterr().out.startswith("L-constant-guard (lint)")
    assert cli.main(["explain", "e-PARSE"]) == 0
    assert capsys.readouterr().out.startswith("E-parse (syntax)")


def test_explain_lists_every_code(capsys) -> None:
    assert cli.main(["explain"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(codes.ALL)


def test_explain_an_unknown_code(capsys) -> None:
    assert cli.main(["explain", "E-hiden"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "no diagnostic code `E-hiden`" in captured.err and "`E-hidden`" in captured.err
    assert cli.main(["explain", "nothing-like-it"]) == 2
    assert "did you mean" not in capsys.readouterr().err
