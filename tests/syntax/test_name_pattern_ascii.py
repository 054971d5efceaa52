"""`NamePattern` compiles a pattern that reads names twice: with `[A-Za-z_]` and `\\w` for
ASCII text (at import: what `serq check` of an ASCII file compiles) and with the classes
of names in every script for any other text (on first use). On ASCII text the two must
find the same matches, for every pattern the syntax writes so."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from serq.syntax import document, parser, scanner, source_text
from serq.syntax.source_text import NAME_PART, NAME_START, NamePattern, in_name, is_name

PATTERNS = {
    "scanner": scanner._TOKENS,
    "first token": document.FIRST_TOKEN,
    "word": source_text._NAME_ALONE,
    "family option": parser._FAMILY_OPTION,
}
ASCII_TEXT = st.lists(
    st.sampled_from(
        list("abcXYZ_019 \t\n\r{};.\"/*+-eE") + ["let ", "stage ", "memory ", "admit via "]
    ),
    max_size=40,
).map("".join)


def _full(pattern: NamePattern) -> re.Pattern[str]:
    return re.compile(pattern._source(NAME_START, NAME_PART), pattern._flags)


def _found(compiled: re.Pattern[str], text: str) -> list[tuple]:
    return [(m.span(), m.lastgroup) for m in compiled.finditer(text)]


@settings(max_examples=300, deadline=None)
@given(ASCII_TEXT)
def test_ascii_text_reads_alike_with_either_classes(text):
    for name, pattern in PATTERNS.items():
        assert pattern.of(text) is pattern._ascii, name
        assert _found(pattern.of(text), text) == _found(_full(pattern), text), name


def test_other_text_takes_the_classes_of_every_script():
    word = source_text._NAME_ALONE
    assert word.of("मान").fullmatch("मान")  # a vowel sign, Alphabetic, not `\w`
    assert not word.of("²x").fullmatch("²x")  # a number, `\w`, not Alphabetic
    assert word.of("x²").fullmatch("x²")
    assert word.of("abc") is word._ascii and word.of("é") is not word._ascii
    assert is_name("x²") and is_name("_a") and is_name("मान")
    assert not is_name("²x") and not is_name("1a") and not is_name("")


def test_in_name_on_either_side_of_ascii():
    assert all(in_name(c) for c in "aZ_9")
    assert not any(in_name(c) for c in " .;-")
    assert in_name("é") and in_name("ि") and in_name("²")
    assert not in_name("\u00a0")
