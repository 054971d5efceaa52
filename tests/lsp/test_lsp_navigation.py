"""Hover, definition, references, rename and symbols on the PD-disaggregation example."""

from __future__ import annotations

import re

import pytest
import pytest_asyncio
from lsprotocol import types

from tests.lsp.conftest import EXAMPLES, position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

PATH = EXAMPLES / "pd_queues.sq"
TEXT = PATH.read_text()
URI = uri_of(PATH)
DOC = types.TextDocumentIdentifier(uri=URI)


@pytest_asyncio.fixture(loop_scope="module")
async def opened(client, docs):
    if URI not in docs.client.diagnostics:
        assert await docs.open(URI, TEXT) == []


async def hover(client, needle, nth=0, delta=0):
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=DOC, position=position_of(TEXT, needle, nth, delta))
    )
    return result.contents.value if result else None


async def definition(client, needle, nth=0, delta=0):
    found = await client.text_document_definition_async(
        types.DefinitionParams(text_document=DOC, position=position_of(TEXT, needle, nth, delta))
    )
    return [(loc.range.start.line, loc.range.start.character) for loc in found or []]


def at(needle, nth=0, delta=0):
    p = position_of(TEXT, needle, nth, delta)
    return (p.line, p.character)


@pytest.mark.parametrize(
    "needle, delta, expect",
    [
        ("P[i].prefill(prompt)", 6, "entry call expands to"),
        ("request gw", 0, "gateway request expands to"),
        ("at admission (hit", 0, "at admission expands to"),
        ("prefill (prompt - c)", 0, "expands to"),
        ("NP = 2", 0, "folded value **2**"),
        ("reusable(p, b)", 0, "def reusable(p, b)"),
        ("kv {\n", 0, "pool of queue `P`"),
        ("tokens;", 0, "May be read in a step stage's cost"),
        ("queue gw", 7, "queue with roles `gateway`"),
        ("serve step", 7, "**step**"),
        ("prompt = n", 0, "session attribute"),
        ("c = cached", 0, "session attribute"),
    ],
)
async def test_hover(client, opened, needle, delta, expect):
    assert expect in (await hover(client, needle, delta=delta) or "")


async def test_hover_on_nothing(client, opened):
    assert await hover(client, "// Prefill", delta=3) is None


async def test_definitions(client, opened):
    assert await definition(client, "NP by") == [at("NP = 2")]
    assert await definition(client, "reusable(prompt") == [at("reusable(p, b)")]
    assert await definition(client, "kv (min") == [at("kv {\n")]  # P's own kv
    assert await definition(client, "D[j].decode", delta=5) == [
        at("decode (prompt) {"),
        at("decode (prompt) from"),
    ]
    assert await definition(client, "P[i].prefill") == [at("P[NP]")]
    assert await definition(client, "hit +") == [at("hit = min")]
    assert await definition(client, "c = cached") == [at("c = cached")]
    assert await definition(client, "src to") == [at("src {")]


async def test_references_and_rename(client, opened):
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=DOC,
            position=position_of(TEXT, "bs = 16"),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert len(refs) == len(re.findall(r"\bbs\b", TEXT.split("\nlet NP")[1])) == 6
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=DOC, position=position_of(TEXT, "bs = 16"), new_name="block_size"
        )
    )
    assert len(edit.changes[URI]) == len(refs)
    refused = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=DOC, position=position_of(TEXT, "tokens;"))
    )
    assert refused is None


async def test_document_and_workspace_symbols(client, opened):
    outline = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=DOC)
    )
    names = [s.name for s in outline]
    assert names[:5] == ["NP", "ND", "bs", "B", "x0"] and "workload" in names and "run" in names
    queue_p = next(s for s in outline if s.name == "P")
    assert [c.name for c in queue_p.children] == ["reqs", "kv", "serve", "nic", "prefill"]
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="kv"))
    assert {s.name for s in found} >= {"P.kv", "D.kv"}


async def test_use_goes_to_the_file(client, docs, tmp_path):
    (tmp_path / "lib.sq").write_text("def twice(x) = 2 * x;\n")
    text = 'use "lib.sq";\n' + (EXAMPLES / "mm1.sq").read_text()
    uri = uri_of(tmp_path / "main.sq")
    await docs.open(uri, text)
    found = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position_of(text, "lib.sq"),
        )
    )
    assert found[0].uri == uri_of(tmp_path / "lib.sq")
