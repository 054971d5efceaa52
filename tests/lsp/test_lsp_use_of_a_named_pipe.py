"""A document that `use`s a named pipe: the server's loader opened it and waited for a
writer, so that document got no diagnostics and no request of any document was answered
again. The use is now its `E-use` ("it is a named pipe, not a file") and the server goes on."""

from __future__ import annotations

import os

import pytest
from lsprotocol import types

from tests.lsp.conftest import position_of, uri_of

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes"),
]

PROGRAM = 'use "pipe.sq";\nlet a = 1;\nlet b = a + 1;\n'


async def test_a_named_pipe_is_refused_and_the_server_answers(client, docs, tmp_path):
    os.mkfifo(tmp_path / "pipe.sq")
    uri = uri_of(tmp_path / "prog.sq")
    (shown,) = await docs.open(uri, PROGRAM)
    assert shown.code == "E-use"
    assert shown.message == "cannot read `pipe.sq`: it is a named pipe, not a file"
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position_of(PROGRAM, "a + 1"),
        )
    )
    assert hover is not None and "let a = 1;" in hover.contents.value
    docs.close(uri)
