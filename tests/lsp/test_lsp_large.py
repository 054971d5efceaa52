"""A large document stays usable: a hover sent while a long check runs is answered before
that check ends, from the last analysis, and says what a fresh analysis says."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

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



async def _published(client, uri: str, fresh: list) -> None:
    """Wait (up to 120 s) until the diagnostics published for `uri` are `fresh`: an older
    check's may come first."""
    from pygls.protocol import default_converter

    converter = default_converter()
    deadline = time.monotonic() + 120
    published = None
    while published != fresh and time.monotonic() < deadline:
        published = client.diagnostics.get(uri)
        published = None if published is None else [converter.unstructure(d) for d in published]
        await asyncio.sleep(0.02)
    assert published == fresh

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


@pytest.mark.parametrize("seed", range(6))
async def test_random_edits_publish_what_a_fresh_analysis_finds(client, seed):
    """Incremental edits of every kind (typed, deleted, pasted, line breaks), sent as fast
    as a typist's and so often superseding a check in flight: the diagnostics published
    last are those of a from-scratch analysis of the final text."""
    import random

    from pygls.protocol import default_converter

    from serq_lsp.analysis import analyze
    from serq_lsp.convert import lsp_diagnostics

    converter = default_converter()
    rng = random.Random(seed)
    uri = uri_of(EXAMPLES / f"lsp_random_{seed}.sq")  # never written
    text = program(300)
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="serq", version=1, text=text)
        )
    )
    await _wait(client, uri)
    pieces = ["", "x", "1", ";", "}", "{", "\n", "let q = 0;\n", " -0.5 ", "🙂", "\r\n", "/*"]
    for version in range(2, 2 + rng.randint(5, 25)):
        start = rng.randint(0, len(text))
        end = min(len(text), start + rng.choice([0, 0, 1, 2, 10, 200]))
        start -= text[start - 1 : start + 1] == "\r\n"  # no LSP position between the two
        end -= text[end - 1 : end + 1] == "\r\n"
        if rng.random() < 0.2:  # paste a span from elsewhere
            at = rng.randint(0, len(text))
            piece = text[at : at + rng.randint(1, 300)]
        else:
            piece = rng.choice(pieces)
        r = types.Range(position_at(text, start), position_at(text, end))
        text = text[:start] + piece + text[end:]
        client.diagnostics.pop(uri, None)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangePartial(range=r, text=piece)],
            )
        )
        if rng.random() < 0.3:
            await asyncio.sleep(rng.choice([0.0, 0.01, 0.05]))
    fresh = lsp_diagnostics(analyze(text, str(EXAMPLES / f"lsp_random_{seed}.sq")), uri)
    fresh = [converter.unstructure(d) for d in fresh]
    await _published(client, uri, fresh)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def _wait(client, uri: str, timeout: float = 120.0):
    """The diagnostics of `uri` once they come."""
    deadline = time.monotonic() + timeout
    while uri not in client.diagnostics:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no diagnostics for {uri}")
        await asyncio.sleep(0.01)
    return client.diagnostics[uri]


def position_at(text: str, offset: int) -> types.Position:
    """The LSP position of code-point `offset` (line breaks \\r\\n, \\r and \\n)."""
    import re

    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    line = max(i for i, s in enumerate(starts) if s <= offset)
    column = len(text[starts[line] : offset].encode("utf-16-le")) // 2
    return types.Position(line, column)


@pytest.mark.parametrize("seed", range(4))
async def test_edits_of_names_and_items_publish_what_a_fresh_analysis_finds(client, seed):
    """Edits that change declarations, reads, `def`s, `use`s and lets that other items read,
    insert and delete whole items (moving every later one), sent as a typist's changes: the
    diagnostics published last are those of a from-scratch analysis of the final text."""
    import random

    from pygls.protocol import default_converter

    from serq_lsp.analysis import analyze
    from serq_lsp.convert import lsp_diagnostics
    from tests.incremental.edits import edit

    converter = default_converter()
    rng = random.Random(100 + seed)
    path = EXAMPLES / f"lsp_names_{seed}.sq"  # never written
    uri = uri_of(path)
    text = program(400) if seed % 2 else (EXAMPLES / "vllm_chat.sq").read_text()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="serq", version=1, text=text)
        )
    )
    await _wait(client, uri)
    for version in range(2, 2 + 12):
        new = edit(rng, text, str(path))
        start, old_end, new_end = _changed(text, new)
        change = types.TextDocumentContentChangePartial(
            range=types.Range(position_at(text, start), position_at(text, old_end)),
            text=new[start:new_end],
        )
        text = new
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[change],
            )
        )
        if rng.random() < 0.5:
            await asyncio.sleep(rng.choice([0.0, 0.02, 0.1]))
    fresh = lsp_diagnostics(analyze(text, str(path)), uri)
    fresh = [converter.unstructure(d) for d in fresh]
    await _published(client, uri, fresh)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


def _changed(old: str, new: str) -> tuple[int, int, int]:
    """Where `new` differs from `old`: the start, and the end in each (never inside `\\r\\n`)."""
    from serq.syntax.layout import common_prefix, common_suffix

    p = common_prefix(old, new)
    s = common_suffix(old, new, min(len(old), len(new)) - p)
    while p > 0 and old[p - 1] == "\r":
        p -= 1
    while s > 0 and old[len(old) - s] == "\n" and len(old) - s > 0 and old[len(old) - s - 1] == "\r":
        s -= 1
    return p, len(old) - s, len(new) - s


async def test_edits_of_a_used_library_reach_its_user(client, tmp_path):
    """A library open in the editor is edited (its `def`s renamed, removed, given other
    bodies): the program that uses it is checked again, and what it publishes is what a
    fresh analysis of it finds, reading the library as the editor has it."""
    from pygls.protocol import default_converter

    from serq.expand.loader import read_file
    from serq.syntax import parse
    from serq_lsp.analysis import analyze
    from serq_lsp.convert import lsp_diagnostics

    converter = default_converter()
    lib, main = tmp_path / "lib.sq", tmp_path / "main.sq"
    lib_text = "def svc(x) = x * 2;\ndef unused(y) = y;\n"
    lib.write_text(lib_text)
    main_text = 'use "lib.sq";\n' + (EXAMPLES / "mm1.sq").read_text().replace(
        "~exp(1)", "~exp(svc(0.5))"
    )
    main_text += "".join(f"let pad{k} = svc({k});\n" for k in range(50))
    main.write_text(main_text)
    client.diagnostics.pop(uri_of(main), None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri_of(main), language_id="serq", version=1, text=main_text
            )
        )
    )
    await _wait(client, uri_of(main))
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri_of(lib), language_id="serq", version=1, text=lib_text
            )
        )
    )
    versions = [
        "def other(x) = x * 2;\n",
        "def svc(x) = x * q;\n",
        "def svc(x) = x;\ndef svc(x) = 2;\n",
        "def svc(x) = x * 2;\ndef unused(y) = y;\n",
    ]
    for version, text in enumerate(versions, start=2):
        client.diagnostics.pop(uri_of(main), None)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri_of(lib), version=version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

        def load(path: str, text: str = text):
            return parse(text, path) if Path(path).name == "lib.sq" else read_file(path)

        fresh = lsp_diagnostics(analyze(main_text, str(main), load=load), uri_of(main))
        fresh = [converter.unstructure(d) for d in fresh]
        deadline = time.monotonic() + 60
        published = None
        while published != fresh and time.monotonic() < deadline:
            found = client.diagnostics.get(uri_of(main))
            published = None if found is None else [converter.unstructure(d) for d in found]
            await asyncio.sleep(0.02)
        assert published == fresh
    for path in (lib, main):
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri_of(path))
            )
        )
