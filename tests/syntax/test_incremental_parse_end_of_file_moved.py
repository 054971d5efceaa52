"""A parse that closed at the end of the file is made again when the end of the file moves
in line or column, not only in offset.

A chunk whose parse reads past it (an unterminated comment: the parser closes what is open
at the end of the file) depends on where the file ends. The item cache and the layout kept
such a parse while the file's length was the same, so replacing the last line break by
another character (`w/*}é\\n` to `w/*}é:`) kept an `ErrorItem` at line 2, column 1 where
the file now ends at line 1, column 7 (tools_search seed 62, "the item cache's parse
differs from a fresh one"). They now compare how the file goes on past the chunk: its
length, its line breaks and the length of its last line (`layout.tail_of`).
"""

from __future__ import annotations

import pytest

from serq.syntax import ItemCache, parse
from serq.syntax.layout import tail_of

CASES = [
    ("w/*}é\n", "w/*}é:"),  # the last line break replaced: same length, another line
    ("w/*}é:", "w/*}é\n"),
    ("w/*} x\nab", "w/*} x\na\n"),  # as many characters, the break moved
    ("stage a : ps(1);\nw/*}\n\n", "stage a : ps(1);\nw/*}\nxy"),
    ("w /* {\n\n", "w /* {\n  "),
]


@pytest.mark.parametrize(("before", "after"), CASES)
def test_an_edit_that_keeps_the_length_is_parsed_as_afresh(before, after):
    cache = ItemCache()
    assert parse(before, "f.sq", cache).module == parse(before, "f.sq").module
    mine, fresh = parse(after, "f.sq", cache), parse(after, "f.sq")
    assert mine.module == fresh.module
    assert mine.diagnostics == fresh.diagnostics


@pytest.mark.parametrize(("before", "after"), CASES)
def test_a_new_cache_holding_the_other_version_first(before, after):
    """The item cache alone (a fresh layout, the chunk's parse looked up by its text)."""
    cache = ItemCache()
    parse(before, "a.sq", cache)
    assert parse(after, "a.sq", cache).module == parse(after, "a.sq").module


def test_tail_of_tells_where_the_file_ends():
    assert tail_of("ab\nc", 0) == (4, 1, 1)
    assert tail_of("a\nbc", 0) == (4, 1, 2)
    assert tail_of("abc", 1) == (2, 0, 2)
    assert tail_of("abc\n", 1) == (3, 1, 0)
