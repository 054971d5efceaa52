"""The first requests after opening a large document answer from its parse: a hover does
not wait for the expander and the linker (seconds on 10,000 lines), and what semantic
tokens, symbols and folding give from the parse is what they give once the analysis is
in. Its own module: a server whose item cache has seen none of the documents."""

from __future__ import annotations

import asyncio
import time

import pytest
from lsprotocol import types

from bench.lsp import program
from tests.lsp.conftest import EXAMPLES, position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

URI = uri_of(EXAMPLES / "lsp_first_request.sq")  # never written: next to examples/lib
DOC = types.TextDocumentIdentifier(uri=URI)


async def _published(client, timeout: float = 300.0) -> float:
    """Wait for the diagnostics of `URI`; the time they came."""
    deadline = time.monotonic() + timeout
    while URI not in client.diagnostics:
        if time.monotonic() > deadline:
            raise TimeoutError("no diagnostics")
        await asyncio.sleep(0.005)
    return time.monotonic()


def _parse_only(client, doc: types.TextDocumentIdentifier) -> list:
    """The requests that read only the tree and the names, sent at once."""
    return [
        client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(doc)),
        client.text_document_document_symbol_async(types.DocumentSymbolParams(doc)),
        client.text_document_folding_range_async(types.FoldingRangeParams(doc)),
    ]


def _document(lines: int) -> str:
    """A program of about `lines` lines whose constants call a `def`: the expander inlines
    every call, so that the analysis after the parse takes as long as the parse or more."""
    calls = "".join(f"let v{k} = sq({k}) + sq(sq({k % 5}));\n" for k in range(lines))
    return "def sq(x) = x * x + 1;\n" + calls + program(100)


async def test_the_first_hover_answers_before_the_analysis_ends(client):
    text = _document(10_000)
    at = position_of(text, "min(prompt, hit", delta=5)
    client.diagnostics.pop(URI, None)
    start = time.monotonic()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=URI, language_id="serq", version=1, text=text)
        )
    )
    early = await client.text_document_hover_async(types.HoverParams(DOC, at))
    hovered = time.monotonic()
    pending = URI not in client.diagnostics  # read at once: the publish may be in flight
    published = await _published(client)
    assert not client.diagnostics[URI]  # the program links: its `use` found the library
    # The hover came while the check was still expanding and linking: well before its
    # diagnostics (the parse is under half of the analysis here); it waited for them.
    times = f"hover at {hovered - start:.2f} s, diagnostics at {published - start:.2f} s"
    assert pending and hovered - start < 0.8 * (published - start), times
    assert early is not None and "prompt" in early.contents.value
    after = await client.text_document_hover_async(types.HoverParams(DOC, at))
    assert after == early  # an attribute's hover needs no kernel: the same from the parse
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=DOC))


async def test_what_the_parse_gives_is_what_the_analysis_gives(client):
    uri = uri_of(EXAMPLES / "lsp_first_request_small.sq")  # never written
    doc = types.TextDocumentIdentifier(uri=uri)
    text = _document(2_000).replace("sq(", "cube(").replace("let v", "let w")
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="serq", version=1, text=text)
        )
    )
    early = await asyncio.gather(*_parse_only(client, doc))  # before the analysis is in
    while uri not in client.diagnostics:
        await asyncio.sleep(0.01)
    assert early == await asyncio.gather(*_parse_only(client, doc))
    tokens, symbols, _ = early
    assert len(symbols) > 2_000 and tokens.data
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc))


async def test_a_first_hover_on_a_def_call_shows_its_expansion(client):
    """The kernel of a `def` call comes from the expander: the first hover on one waits for
    the analysis (and shows what the call expands to, as every later hover does), without
    holding up the requests sent after it, which answer from the parse."""
    uri = uri_of(EXAMPLES / "lsp_first_request_def.sq")  # never written
    doc = types.TextDocumentIdentifier(uri=uri)
    text = _document(10_000).replace("sq(", "sqd(").replace("let v", "let u")
    call = position_of(text, "sqd(7)", delta=1)
    plain = position_of(text, "min(prompt, hit", delta=5)
    client.diagnostics.pop(uri, None)
    start = time.monotonic()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="serq", version=1, text=text)
        )
    )
    answered: dict[str, float] = {}

    async def timed(name: str, request):
        found = await request
        answered[name] = time.monotonic() - start
        return found

    on_call = asyncio.ensure_future(
        timed("call", client.text_document_hover_async(types.HoverParams(doc, call)))
    )
    others = [
        timed("plain", client.text_document_hover_async(types.HoverParams(doc, plain))),
        timed("tokens", client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(doc))),
    ]
    early_plain, _ = await asyncio.gather(*others)
    pending = uri not in client.diagnostics
    early_call = await on_call
    while uri not in client.diagnostics:
        await asyncio.sleep(0.005)
    assert not client.diagnostics[uri]
    times = ", ".join(f"{k} at {v:.2f} s" for k, v in sorted(answered.items()))
    assert pending and max(answered["plain"], answered["tokens"]) < answered["call"], times
    assert early_plain is not None and "prompt" in early_plain.contents.value
    assert early_call is not None and "def call expands to" in early_call.contents.value
    assert "7 * 7 + 1" in early_call.contents.value, early_call.contents.value
    after = await client.text_document_hover_async(types.HoverParams(doc, call))
    assert after == early_call
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc))


async def test_a_waiting_hover_whose_check_is_superseded_says_so(client):
    """An edit while the first hover on a `def` call waits for the analysis supersedes the
    check it waited for: the hover answers from the new version's parse and says that the
    expansion comes once the document is analysed; the next analysis shows it."""
    uri = uri_of(EXAMPLES / "lsp_first_request_edit.sq")  # never written
    doc = types.TextDocumentIdentifier(uri=uri)
    text = _document(10_000).replace("sq(", "sqe(").replace("let v", "let t")
    call = position_of(text, "sqe(7)", delta=1)
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="serq", version=1, text=text)
        )
    )
    hover = asyncio.ensure_future(client.text_document_hover_async(types.HoverParams(doc, call)))
    await asyncio.sleep(0.3)  # the hover is in, waiting for the parse (seconds): edit now
    end = position_of(text, text[-1], nth=text.count(text[-1]) - 1, delta=1)  # at the end
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(range=types.Range(end, end), text="// x\n")
            ],
        )
    )
    early = await hover
    assert early is not None and "expansion: shown once the document is analysed" in early.contents.value
    assert "def call expands to" not in early.contents.value
    while uri not in client.diagnostics:
        await asyncio.sleep(0.01)
    after = await client.text_document_hover_async(types.HoverParams(doc, call))
    assert "def call expands to" in after.contents.value and "shown once" not in after.contents.value
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc))
