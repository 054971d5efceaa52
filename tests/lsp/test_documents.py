"""`serq_lsp.documents.Document` applies an incremental change as the protocol says, from
line starts it keeps and moves: lines end at `\n`, `\r\n` or `\r` (not at a form feed or
`U+2028`, where pygls' `str.splitlines` cut them), a column counts UTF-16 code units and
past the end of its line is the line's end, a line past the last is the end of the text;
the kept starts are always those of the text, and a full change resets them."""

from __future__ import annotations

import random
import re

import pytest
from lsprotocol import types

from serq_lsp.documents import Document

PIECES = ["a", "b\n", "\r\n", "\r", "\u2028", "🙂", "xyz", "\x0c", "", "\n\n", "let x = 1;\n"]


def _offset(text: str, line: int, character: int) -> int:
    """The offset of an LSP position in `text`, by the protocol's rules, written plainly."""
    lines = re.split(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)", text)
    if text and lines[-1] == "":
        lines.pop()  # a final line break opens no line
    if not text or line >= len(lines):
        return len(text)
    start = sum(len(x) for x in lines[:line])
    content = lines[line].rstrip("\r\n")
    units = k = 0
    while k < len(content) and units < character:
        units += 2 if ord(content[k]) > 0xFFFF else 1
        k += 1
    return start + k


@pytest.mark.parametrize("seed", range(4))
def test_changes_apply_as_the_protocol_says(seed):
    rng = random.Random(seed)
    for _ in range(300):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        ours = Document("file:///a.sq", text)
        for _ in range(6):
            count = len(re.findall(r"\r\n|\r|\n", text)) + 1
            start_line = rng.randint(0, count + 1)
            end_line = rng.randint(start_line, count + 1)
            start, end = rng.randint(0, 6), rng.randint(0, 6)
            if start_line == end_line and end < start:
                end = start
            piece = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 3)))
            ours.apply_change(
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        types.Position(start_line, start), types.Position(end_line, end)
                    ),
                    text=piece,
                )
            )
            a = _offset(text, start_line, start)
            b = max(a, _offset(text, end_line, end))
            text = text[:a] + piece + text[b:]
            assert ours.source == text
            assert ours.line_starts() == Document("file:///b.sq", ours.source).line_starts()


@pytest.mark.parametrize(
    ("text", "position", "offset"),
    [
        ("ab", (0, 9), 2),  # past the end of the last line: its end, not before its last
        ("a\n", (1, 0), 2),  # the line after the final break: the end of the text
        ("a\n", (5, 3), 2),
        ("ab\r\ncd", (0, 3), 2),  # past a line's end: before its `\r\n`, never inside it
        ("a\u2028b\nc", (1, 0), 4),  # U+2028 is no line break
        ("a\x0cb\rc", (1, 1), 5),
        ("🙂x", (0, 2), 1),  # two UTF-16 units
    ],
)
def test_offsets_of_positions(text, position, offset):
    assert Document("file:///a.sq", text).offset_at_position(types.Position(*position)) == offset


def test_a_full_change_resets_the_line_starts():
    document = Document("file:///a.sq", "let a = 1;\nlet b = 2;\n")
    assert document.line_starts() == [0, 11]
    document.apply_change(types.TextDocumentContentChangeWholeDocument(text="x\ny\nz"))
    assert document.line_starts() == [0, 2, 4]
