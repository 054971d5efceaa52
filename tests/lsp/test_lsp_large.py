"""A large document stays usable: a hover sent while a long check runs is answered before
that check ends, from the last analysis, and says what a fresh analysis says."""

from __future__ import annotations

import asyncio
import time

import pytest
from lsprotocol import types

from bench.lsp import program
from tests.lsp.conftest import EXAMPLES, position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

URI = uri_of(EXAMPLES / "lsp_large_test.sq")  # never written: next to examples/lib, it links
DOC = types.TextDocumentIdentifier(uri=URI)


def _paste(count: int) -> str:
    """`count` new items, each its own parse: a check of them takes seconds."""
    return "".join(f"let pasted{k} = {k} * 0.5 - 1 / (1 + {k});\n" for k in range(count))


async def _next_diagnostics(client, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while URI not in client.diagnostics:
        if time.monotonic() > deadline:
            raise TimeoutError("no diagnostics")
        await asyncio.sleep(0.01)
    return client.diagnostics[URI]


async def test_hover_during_a_long_check(client):
    text = program(2000)
    client.diagnostics.pop(URI, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=URI, language_id="serq", version=1, text=text)
        )
    )
    assert not await _next_diagnostics(client)  # the program links: `use` found its lib
    at = position_of(text, "min(prompt, hit", delta=5)
    fresh = await client.text_document_hover_async(types.HoverParams(DOC, at))
    assert fresh is not None and "prompt" in fresh.contents.value

    end = types.Position(line=text.count("\n"), character=0)
    client.diagnostics.pop(URI, None)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(end, end), text=_paste(4000)
                )
            ],
        )
    )
    stale = await client.text_document_hover_async(types.HoverParams(DOC, at))
    pending = URI not in client.diagnostics  # the check of the paste has not ended
    assert stale == fresh
    assert pending
    published = await _next_diagnostics(client)
    assert not published
    after = await client.text_document_hover_async(types.HoverParams(DOC, at))
    assert after == fresh
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=DOC))
