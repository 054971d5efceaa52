"""Hover, semantic tokens and completion know the newer vocabulary (claims, `preempt by`,
`requeue`, `reserve held`, `args.number`, the claim context and aggregates)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from serq_lsp.analysis import analyze
from serq_lsp.completion import complete
from serq_lsp.hover import hover_at
from serq_lsp.semantic_tokens import TOKEN_TYPES, encode

ROOT = Path(__file__).resolve().parents[2]
PATH = ROOT / "examples" / "vocabulary" / "sarathi_claims.sq"
TEXT = PATH.read_text(encoding="utf-8")
ANALYSIS = analyze(TEXT, str(PATH))


def _hover(word: str, skip: int = 1) -> str:
    found = hover_at(ANALYSIS, TEXT.index(word) + skip)
    assert found is not None, word
    return found.contents.value


def test_hover_on_a_claim_says_what_it_checks():
    text = _hover("claim chunked", len("claim c"))
    assert "checks `tokens <= budget` as every iteration of step stage `engine` starts" in text
    assert "claim piggyback" not in text
    assert "at least one iteration" in _hover("claim piggyback", len("claim p"))
    assert "once, when the run ends" in _hover("claim finished", len("claim f"))


def test_hover_on_the_new_words():
    assert "`demand`" in _hover("min(demand", 5)
    assert "every iteration" in _hover(": every iteration", 3)  # the claim's, not a comment's
    assert "smallest first" not in _hover("count(e2e)")  # `count` is its own word
    assert "number of samples" in _hover("count(e2e)")


def test_semantic_tokens_mark_claim_keywords():
    data = encode(ANALYSIS)
    keyword = TOKEN_TYPES.index("keyword")
    lines = TEXT.splitlines()
    tokens, line, col = [], 0, 0
    for i in range(0, len(data), 5):
        dl, dc, length, kind, _ = data[i : i + 5]
        line, col = line + dl, (col + dc if dl == 0 else dc)
        tokens.append((lines[line][col : col + length], kind))
    words = {w for w, k in tokens if k == keyword}
    assert {"claim", "every", "iteration", "of", "some", "at", "end"} <= words


def test_completion_offers_the_new_words():
    text = TEXT.replace("claim piggyback: some", "claim piggyback: ")
    at = text.index("claim piggyback: ") + len("claim piggyback: ")
    labels = {i.label for i in complete(analyze(text, str(PATH)), at)}
    assert {"every", "some", "at"} <= labels
    inside = TEXT.index("(tokens <= budget)") + 1
    items = complete(ANALYSIS, inside)
    names = {i.label for i in items if i.kind == types.CompletionItemKind.Variable}
    assert {"demand", "served", "arrived", "tokens"} <= names
    pool = "fn main() {\n  pool kv { preempt by (position) }\n}\n"
    at = pool.index(") }") + 2
    assert "requeue" in {i.label for i in complete(analyze(pool, "p.sq"), at)}
