"""Lines end where LSP says, at `\\n`, `\\r\\n` or `\\r` only: a form feed, `U+0085` or `U+2028`
in a comment is no line break, for the changes the client sends (pygls cut the document at
every `str.splitlines` break, so a change below such a comment landed on another line) and
for the formatting edits the server sends back. Found by tests/fuzz/lsp_search.py, with
formatting a document that is not there."""

from __future__ import annotations

import pytest
from lsprotocol import types

from serq.formatter import format_source
from tests.lsp.conftest import EXAMPLES, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

ODD = ["\u2028", "\x0c", "\x85", "\x0b", "\u2029", "\x1c"]
OPTIONS = types.FormattingOptions(tab_size=2, insert_spaces=True)


def _text(odd: str) -> str:
    return f"// a{odd}b\nstage s : delay;\nsession {{ run s (1); }}\nrun {{ horizon 1; }}\n"


async def _change(client, docs, uri: str, text: str, at: int, length: int, new: str) -> None:
    start = _position(text, at)
    end = _position(text, at + length)
    docs.versions[uri] += 1
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=uri, version=docs.versions[uri]
            ),
            content_changes=[
                types.TextDocumentContentChangePartial(range=types.Range(start, end), text=new)
            ],
        )
    )


def _position(text: str, offset: int) -> types.Position:
    """The LSP position of `offset`: lines cut at `\\n` alone here (the texts have no `\\r`)."""
    line = text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1)
    return types.Position(line=line, character=column)


@pytest.mark.parametrize("odd", ODD, ids=lambda c: f"U+{ord(c):04X}")
async def test_a_change_below_an_odd_break_lands_where_the_client_meant(client, docs, odd):
    uri = uri_of(EXAMPLES / "odd_break.sq")
    text = _text(odd)
    assert await docs.open(uri, text) == []
    at = text.index("(1)") + 1
    await _change(client, docs, uri, text, at, 1, "x")
    edited = text[:at] + "x" + text[at + 1 :]
    found = await docs.published(uri)
    assert [d.code for d in found] == ["E-unknown-name"]
    assert found[0].range.start == _position(edited, at)
    edits = await client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri), options=OPTIONS
        )
    )
    assert _apply(edited, edits) == format_source(edited).text
    docs.close(uri)


@pytest.mark.parametrize("odd", ODD[:2], ids=lambda c: f"U+{ord(c):04X}")
async def test_range_formatting_reads_the_range_on_the_client_s_lines(client, docs, odd):
    uri = uri_of(EXAMPLES / "odd_range.sq")
    text = _text(odd).replace("session { run s (1); }", "session {run s(1);}")
    await docs.open(uri, text)
    line = _position(text, text.index("session")).line
    edits = await client.text_document_range_formatting_async(
        types.DocumentRangeFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(line, 0), types.Position(line, 5)),
            options=OPTIONS,
        )
    )
    assert "session {\n  run s (1);\n}\n" in _apply(text, edits)
    docs.close(uri)


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    """`text` (lines cut at `\\n` alone, columns of ASCII) with LSP `edits` applied."""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def at(p: types.Position) -> int:
        return len(text) if p.line >= len(starts) else starts[p.line] + p.character

    for e in sorted(edits, key=lambda e: at(e.range.start), reverse=True):
        text = text[: at(e.range.start)] + e.new_text + text[at(e.range.end) :]
    return text


async def test_formatting_a_document_neither_open_nor_on_disk_is_no_edit(client, tmp_path):
    """Every other feature answers such a document as an empty one; formatting read its
    file and answered an internal error (FileNotFoundError). Found by the LSP search."""
    doc = types.TextDocumentIdentifier(uri=(tmp_path / "gone.sq").as_uri())
    assert not await client.text_document_formatting_async(
        types.DocumentFormattingParams(text_document=doc, options=OPTIONS)
    )
    whole = types.Range(types.Position(0, 0), types.Position(3, 0))
    assert not await client.text_document_range_formatting_async(
        types.DocumentRangeFormattingParams(text_document=doc, range=whole, options=OPTIONS)
    )
