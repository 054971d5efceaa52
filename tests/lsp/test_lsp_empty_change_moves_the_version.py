"""A `didChange` with no change in it still moves the document to its version.

pygls applies each change of the notification and sets the version as it does, so one
with an empty list left the document at its old version, and the diagnostics that
followed carried it (t26's round, tests/sim/NOTES.md §60). The pull report's id names
the version it is of."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import ROOT

pytestmark = pytest.mark.asyncio(loop_scope="module")

URI = (ROOT / "examples" / "lsp_empty_change.sq").as_uri()  # never written
TEXT = "stage s : fifo(1);\nsession { run s (1); }\nrun { horizon 10; }\n"


async def test_an_empty_change_moves_the_version(client, docs):
    await docs.open(URI, TEXT)
    for version in (5, 6):
        client.diagnostics.pop(URI, None)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
                content_changes=[],
            )
        )
        await docs.published(URI)
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=URI))
        )
        assert f"@{version}#" in report.result_id
    docs.close(URI)
