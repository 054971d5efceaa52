"""Formatting a document whose text begins with a byte-order mark keeps the mark, as
`serq fmt` keeps it in a file (docs/cli.md): the editor's formatting deleted it (the
formatter prints what the parser reads, which drops the leading mark)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import EXAMPLES

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = "\ufefflet  a = 1;\nstage s : fifo(a);\n"


def _applied(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(p: types.Position) -> int:  # the text is ASCII but the mark: one code unit
        return offsets[p.line] + p.character if p.line < len(lines) else len(text)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))[::-1]:
        text = text[: at(edit.range.start)] + edit.new_text + text[at(edit.range.end) :]
    return text


async def test_whole_and_range_formatting_keep_the_mark(client, docs):
    uri = (EXAMPLES / "fmt_bom.sq").as_uri()
    await docs.open(uri, TEXT)
    edits = await docs.format(uri)
    assert _applied(TEXT, edits) == "\ufefflet a = 1;\nstage s : fifo(a);\n"
    ranged = await client.text_document_range_formatting_async(
        types.DocumentRangeFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 3)),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert _applied(TEXT, ranged) == "\ufefflet a = 1;\nstage s : fifo(a);\n"
    docs.close(uri)
