"""A hover before a document's first analysis knows, from the parse alone, where the
analysis will show a kernel (`expands_at`): the first hover on such a form waits for the
expander (tests/lsp/test_lsp_first_request.py), every other first hover does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from serq.incremental import Cache
from serq_lsp.analysis import Analysis, analyze
from serq_lsp.hover import expands_at, kernel_at

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted(
    p
    for folder in ("examples", "tests/corpus/valid", "tests/corpus/valid_main")
    for p in (ROOT / folder).rglob("*.sq")
)


def _both(path: Path) -> tuple[Analysis, Analysis]:
    """The analysis of `path` as far as its parse, and the whole analysis."""
    text = path.read_text(encoding="utf-8")
    early: list[Analysis] = []
    full = analyze(text, str(path), Cache(), on_parse=early.append)
    return early[0], full


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_parse_knows_every_place_the_analysis_shows_a_kernel(path):
    early, full = _both(path)
    assert not early.complete and full.complete
    shown = [o for o in range(len(full.text) + 1) if kernel_at(full, o) is not None]
    missed = [o for o in shown if not expands_at(early, o)]
    assert not missed, [full.text[o - 10 : o + 10] for o in missed[:5]]


def test_plain_words_do_not_wait():
    """Where nothing expands (a `let`, a built-in call, a plain statement), the parse says so."""
    early, full = _both(ROOT / "examples" / "vllm_chat.sq")
    for plain in ("let chunk", "min(prompt, hit", "set arrived", "observe ttft"):
        at = full.text.index(plain) + 2
        assert kernel_at(full, at) is None and not expands_at(early, at), plain
    for form in ("prefill (prompt", "decode (o", "at admission (hit"):
        at = full.text.index(form) + 2
        assert kernel_at(full, at) is not None and expands_at(early, at), form
