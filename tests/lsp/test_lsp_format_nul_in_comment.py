"""Formatting a document whose comment holds a NUL (a valid program): the formatter used NUL
as a mark of its own and raised, so the request failed; it now gives no edit, the text
being already formatted, and a trailing comment with a U+0002 keeps its place."""

from __future__ import annotations

import pytest

from tests.lsp.conftest import EXAMPLES

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = "let a = 1; // a\x00b\nlet b = 2; // c\x02d\n\nrun {\n  horizon 10;\n}\n"


async def test_formatting_a_comment_with_a_nul_gives_no_edit(client, docs):
    uri = (EXAMPLES / "fmt_nul_comment.sq").as_uri()
    assert await docs.open(uri, TEXT) == []
    edits = await docs.format(uri)
    assert not edits
    docs.close(uri)
