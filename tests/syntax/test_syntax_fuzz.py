"""Random damage to the corpus programs never breaks the parser.

Mutations delete, insert and replace characters and tokens (from a small alphabet of
serQ's punctuation and keywords, and random text) and truncate programs. For each
result, `parse` must return a whole `Module` without raising, every span (of a node or
a diagnostic) must lie within the text and agree with its line and column, and a parse
through an `ItemCache` warmed on the text before the edit must equal a fresh parse,
after parso's `fuzz_diff_parser.py`. Derandomized, so CI sees the same examples.
"""

from __future__ import annotations

import re
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serq.diagnostics import LineIndex, Span
from serq.syntax import ItemCache, ParseResult, ast, parse

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
FILE = "fuzz.sq"

_FALLBACK = (
    "let a = 1;\n"
    "pool kv { cap 100; block 16; evict lru; }\n"
    "stage s : ps(2);\n"
    "stage e : step { budget 8; cost 0.1; memory kv; };\n"
    "workload { arrive poisson(a); turn { set n = 3; } }\n"
    "session {\n"
    "  hold kv (n) at admission (h = cachedin(kv)) {\n"
    "    run e prefill (n - h) growing kv;\n"
    "    branch (n > 2) { end; } else { turn; }\n"
    "  } cache (n) lease kv (inf);\n"
    "}\n"
    "run { horizon 10; }\n"
)
SOURCES = [p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("**/*.sq"))] or [_FALLBACK]
SOURCES.append(_FALLBACK)

ALPHABET = [
    "{",
    "}",
    "(",
    ")",
    ";",
    ",",
    "=",
    "[",
    "]",
    ".",
    ":",
    "~",
    '"',
    "/*",
    "*/",
    "//",
    "\n",
    " ",
    "\r\n",
    "\t",
    "0",
    "1.5",
    "1.2.3",
    "x",
    "@",
    "é",
    "-",
    "^",
    "?",
    "hold",
    "run",
    "set",
    "pool",
    "stage",
    "fn",
    "main",
    "fn main() {",
    "let",
    "use",
    "def",
    "session",
    "server",
    "queue",
    "workload",
    "prefill",
    "decode",
    "transfer",
    "cache",
    "lease",
    "at admission",
    "max",
    "in",
    "gauge",
    "pull",
    "share",
]
PIECES = st.one_of(st.sampled_from(ALPHABET), st.text(max_size=4))
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d[\d.eE+-]*|/\*|\*/|//|\s+|.", re.S)


def _tokens(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(text)]


@st.composite
def mutations(draw, text: str) -> str:
    """`text` after one to four random edits."""
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(
                ["delete", "insert", "replace", "delete_token", "replace_token", "copy_token"]
            )
        )
        if kind in ("delete", "insert", "replace"):
            pos = draw(st.integers(0, len(text)))
            length = 0 if kind == "insert" else draw(st.integers(1, 6))
            piece = "" if kind == "delete" else draw(PIECES)
            text = text[:pos] + piece + text[pos + length :]
            continue
        tokens = _tokens(text)
        if not tokens:
            continue
        start, end = tokens[draw(st.integers(0, len(tokens) - 1))]
        if kind == "delete_token":
            text = text[:start] + text[end:]
        elif kind == "replace_token":
            text = text[:start] + draw(PIECES) + text[end:]
        else:  # a token of the text, copied to another place
            pos = draw(st.integers(0, len(text)))
            text = text[:pos] + text[start:end] + text[pos:]
    return text


@st.composite
def edits(draw) -> tuple[str, str]:
    """A corpus program and the same program after random edits."""
    before = draw(st.sampled_from(SOURCES))
    return before, draw(mutations(before))


def _spans(node):
    if isinstance(node, Span):
        yield node
    elif isinstance(node, tuple):
        for child in node:
            yield from _spans(child)
    elif is_dataclass(node) and not isinstance(node, type):
        for f in fields(node):
            yield from _spans(getattr(node, f.name))


def check_parse(text: str, cache: ItemCache | None = None) -> ParseResult:
    """Parse `text`; assert the result is whole and every span lies inside the text."""
    result = parse(text, FILE, cache)
    assert isinstance(result, ParseResult)
    assert isinstance(result.module, ast.Module)
    lines = LineIndex(text)
    for diagnostic in result.diagnostics:
        assert diagnostic.code == "E-parse"
        span = diagnostic.span
        assert 0 <= span.start <= span.end <= len(text)
        assert span == lines.span(FILE, span.start, span.end)
    for span in _spans(result.module):
        assert 0 <= span.start <= span.end <= len(text)
        assert span == lines.span(FILE, span.start, span.end)
    return result


def check_incremental(before: str, after: str) -> None:
    cache = ItemCache()
    check_parse(before, cache)
    incremental = check_parse(after, cache)
    fresh = parse(after, FILE)
    assert incremental.module == fresh.module
    assert incremental.diagnostics == fresh.diagnostics


FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@settings(FUZZ, max_examples=3000)
@given(edits())
def test_mutations(pair):
    before, after = pair
    check_incremental(before, after)


@settings(FUZZ, max_examples=300)
@given(st.sampled_from(SOURCES), st.integers(0, 10_000))
def test_truncations(text, cut):
    truncated = text[: cut % (len(text) + 1)]
    check_incremental(text, truncated)
    check_incremental(truncated, text)


@settings(FUZZ, max_examples=300)
@given(st.sampled_from(SOURCES), st.data())
def test_edit_sequences_share_one_cache(text, data):
    """Several successive edits through one cache, each compared with a fresh parse."""
    cache = ItemCache()
    check_parse(text, cache)
    for _ in range(data.draw(st.integers(2, 5))):
        text = data.draw(mutations(text))
        incremental = check_parse(text, cache)
        fresh = parse(text, FILE)
        assert incremental.module == fresh.module
        assert incremental.diagnostics == fresh.diagnostics


@settings(FUZZ, max_examples=200)
@given(st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join))
def test_token_soup(text):
    check_parse(text)


@pytest.mark.parametrize("text", ["\rlet a = 1;", "let a = 1;\rlet b = 2;"])
def test_a_lone_carriage_return_ends_a_line(text):
    check_parse(text)
