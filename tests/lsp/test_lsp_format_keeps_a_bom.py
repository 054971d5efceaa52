"""Formatting a document whose text begins with a byte-order mark keeps the mark, as
`serq fmt` keeps it in a file (docs/cli.md): the editor's formatting deleted it (the
formatter prints what the parser reads, which drops the leading mark)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import EXAMPLES, apply_edits

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = "\ufefflet  a = 1;\nstage s : fifo(a);\n"


async def test_whole_and_range_formatting_keep_the_mark(client, docs):
    uri = (EXAMPLES / "fmt_bom.sq").as_uri()
    await docs.open(uri, TEXT)
    edits = await docs.format(uri)
    assert apply_edits(TEXT, edits) == "\ufefflet a = 1;\nstage s : fifo(a);\n"
    ranged = await client.text_document_range_formatting_async(
        types.DocumentRangeFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 3)),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert apply_edits(TEXT, ranged) == "\ufefflet a = 1;\nstage s : fifo(a);\n"
    docs.close(uri)
