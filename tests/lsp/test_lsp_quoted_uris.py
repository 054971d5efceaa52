"""Documents whose URIs are quoted (a space or a non-ASCII letter in the path: `a%20b.sq`):
pygls keys its open documents by the URI unquoted, and the server looked them up as sent,
so such a document never got its diagnostics, and a library open at such a path was read
from disk instead of from its buffer."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROGRAM = """use "lib.sq";
stage s : fifo(1);
workload { arrive poisson(0.5); }
session { run s (twice(1)); observe t = now; }
run { horizon 10; }
"""


@pytest.mark.parametrize("folder", ["with space", "é"])
async def test_a_document_at_a_quoted_uri(client, docs, tmp_path, folder):
    (tmp_path / folder).mkdir()
    program = tmp_path / folder / "main.sq"
    program.write_text(PROGRAM)
    (tmp_path / folder / "lib.sq").write_text("def twice(x) { x * 2 }\n")
    uri = uri_of(program)
    assert "%" in uri
    assert await docs.open(uri, PROGRAM + "let = ;\n") != []
    assert await docs.replace(uri, PROGRAM) == []
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position_of(PROGRAM, "twice(1)"),
        )
    )
    assert hover is not None and "x * 2" in hover.contents.value
    docs.close(uri)


async def test_a_library_open_at_a_quoted_uri_is_read_from_its_buffer(client, docs, tmp_path):
    (tmp_path / "my lib").mkdir()
    library = tmp_path / "my lib" / "lib.sq"
    library.write_text("def twice(x) { x * 2 }\n")
    program = tmp_path / "my lib" / "main.sq"
    program.write_text(PROGRAM)
    lib_uri, uri = uri_of(library), uri_of(program)
    await docs.open(lib_uri, "def thrice(x) { x * 3 }\n")  # `twice` gone, unsaved
    assert [d.code for d in await docs.open(uri, PROGRAM)] == ["E-unknown-name"]
    docs.close(uri)
    docs.close(lib_uri)
