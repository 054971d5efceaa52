"""`serq_lsp.documents.Document` applies an incremental change exactly as pygls does (the
same line cut, the same conversion of the client's columns), from line starts it keeps and
moves: the kept starts are always those of the text, and a full change resets them."""

from __future__ import annotations

import random

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument

from serq_lsp.documents import Document

PIECES = ["a", "b\n", "\r\n", "\r", "\u2028", "🙂", "xyz", "\x0c", "", "\n\n", "let x = 1;\n"]


@pytest.mark.parametrize("seed", range(4))
def test_changes_apply_as_pygls_applies_them(seed):
    rng = random.Random(seed)
    for _ in range(300):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        theirs, ours = TextDocument("file:///a.sq", text), Document("file:///a.sq", text)
        for _ in range(6):
            count = len(theirs.lines)
            start_line = rng.randint(0, count + 1)
            end_line = rng.randint(start_line, count + 1)
            start, end = rng.randint(0, 6), rng.randint(0, 6)
            if start_line == end_line and end < start:
                end = start
            piece = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 3)))
            for document in (theirs, ours):
                document.apply_change(
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            types.Position(start_line, start), types.Position(end_line, end)
                        ),
                        text=piece,
                    )
                )
            assert ours.source == theirs.source
            assert ours.line_starts() == Document("file:///b.sq", ours.source).line_starts()


def test_a_full_change_resets_the_line_starts():
    document = Document("file:///a.sq", "let a = 1;\nlet b = 2;\n")
    assert document.line_starts() == [0, 11]
    document.apply_change(types.TextDocumentContentChangeWholeDocument(text="x\ny\nz"))
    assert document.line_starts() == [0, 2, 4]
