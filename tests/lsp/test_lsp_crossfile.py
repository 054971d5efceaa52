"""Across files: definition, hover, signature help, references and rename of what a `use`d
library defines, from the program and from the library itself (open or not); built-ins'
signatures and hover with their units."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import EXAMPLES, position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROGRAM = EXAMPLES / "vllm.sq"
LIBRARY = EXAMPLES / "lib" / "vllm.sq"
TEXT, LIB_TEXT = PROGRAM.read_text(), LIBRARY.read_text()
URI, LIB_URI = uri_of(PROGRAM), uri_of(LIBRARY)
DOC = types.TextDocumentIdentifier(uri=URI)
CALLERS = {p.name for p in EXAMPLES.glob("*.sq") if "vllm_request(" in p.read_text()}


@pytest_asyncio.fixture(loop_scope="module")
async def opened(client, docs):
    if URI not in docs.client.diagnostics:
        assert await docs.open(URI, TEXT) == []


def where(locations) -> set[tuple[str, int, int]]:
    return {
        (Path(types_uri_path(loc.uri)).name, loc.range.start.line, loc.range.start.character)
        for loc in locations
    }


def types_uri_path(uri: str) -> str:
    from pygls.uris import to_fs_path

    return to_fs_path(uri) or uri


def in_library(needle: str, nth: int = 0) -> tuple[str, int, int]:
    p = position_of(LIB_TEXT, needle, nth)
    return ("vllm.sq", p.line, p.character)


async def test_definition_of_a_library_def_is_in_the_library(client, opened):
    found = await client.text_document_definition_async(
        types.DefinitionParams(text_document=DOC, position=position_of(TEXT, "vllm_request(o"))
    )
    assert [loc.uri for loc in found] == [LIB_URI]
    assert where(found) == {in_library("vllm_request(out")}


async def test_hover_and_signature_of_a_library_def(client, opened):
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=DOC, position=position_of(TEXT, "vllm_request(o"))
    )
    assert "def vllm_request(out, forced)" in hover.contents.value
    assert "in the library `lib/vllm.sq`" in hover.contents.value
    help = await client.text_document_signature_help_async(
        types.SignatureHelpParams(
            text_document=DOC, position=position_of(TEXT, "vllm_request(o, ", delta=16)
        )
    )
    (signature,) = help.signatures
    assert signature.label == "def vllm_request(out, forced)"
    assert help.active_parameter == 1
    assert "lib/vllm.sq" in signature.documentation.value


async def test_a_name_of_the_program_read_in_the_library(client, opened):
    """`kv` in the library's body is the program's pool, as where the call is written out."""
    kv = position_of(TEXT, "kv {\n  cap")
    found = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=DOC,
            position=kv,
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    uris = {loc.uri for loc in found}
    assert uris == {URI, LIB_URI}
    assert in_library("kv (hit)") in where(loc for loc in found if loc.uri == LIB_URI)
    # so renaming it from this program would break the library's other users: refused
    assert (
        await client.text_document_prepare_rename_async(
            types.PrepareRenameParams(text_document=DOC, position=kv)
        )
        is None
    )
    with pytest.raises(JsonRpcException, match="read in the library `vllm.sq`"):
        await client.text_document_rename_async(
            types.RenameParams(text_document=DOC, position=kv, new_name="kvc")
        )


async def test_references_and_rename_of_a_library_def_reach_every_user(client, opened):
    call = position_of(TEXT, "vllm_request(o")
    found = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=DOC,
            position=call,
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    files = {Path(types_uri_path(loc.uri)).name for loc in found}
    assert CALLERS <= files and LIB_URI not in {loc.uri for loc in found}
    edit = await client.text_document_rename_async(
        types.RenameParams(text_document=DOC, position=call, new_name="serve_request")
    )
    assert LIB_URI in edit.changes and URI in edit.changes
    assert {Path(types_uri_path(u)).name for u in edit.changes} >= CALLERS
    for edits in edit.changes.values():
        assert all(e.new_text == "serve_request" for e in edits)


async def test_the_library_opened_finds_its_callers_on_disk(client, docs, opened):
    await docs.open(LIB_URI, LIB_TEXT)
    lib = types.TextDocumentIdentifier(uri=LIB_URI)
    found = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=lib,
            position=position_of(LIB_TEXT, "vllm_request(out"),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    files = {Path(types_uri_path(loc.uri)).name for loc in found}
    assert CALLERS <= files
    assert in_library("vllm_request(out") in where(loc for loc in found if loc.uri == LIB_URI)
    docs.close(LIB_URI)


async def test_workspace_symbols_find_the_library_def_unopened(client, opened):
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="vllm_req"))
    assert any(s.location.uri == LIB_URI and s.name == "vllm_request" for s in found)


@pytest.mark.parametrize(
    "needle, delta, label, unit",
    [
        ("poisson(Lambda", 8, "arrive poisson(rate)", "sessions/time"),
        ("~exp(out_mean", 5, "~exp(mean)", "the unit of the value drawn"),
        ("~uniform(0, 2", 12, "~uniform(lo, hi)", "the greatest value"),
        ("floor(~uniform", 6, "floor(x)", "a number"),
    ],
)
async def test_signature_help_of_built_ins_names_the_units(
    client, opened, needle, delta, label, unit
):
    help = await client.text_document_signature_help_async(
        types.SignatureHelpParams(
            text_document=DOC, position=position_of(TEXT, needle, delta=delta)
        )
    )
    (signature,) = help.signatures
    assert signature.label == label
    active = signature.parameters[help.active_parameter]
    assert unit in active.documentation


@pytest.mark.parametrize(
    "needle, expect",
    [
        ("poisson(Lambda", "arrival law: one session at time 0"),
        ("exp(out_mean", "draw: exponential with the given mean"),
        ("floor(~uniform", "function: x rounded down"),
    ],
)
async def test_hover_of_built_ins(client, opened, needle, expect):
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=DOC, position=position_of(TEXT, needle))
    )
    assert expect in hover.contents.value


async def test_an_open_librarys_unsaved_text_is_the_one_navigated(client, docs, opened):
    """With the library open and edited (not saved), the program's definition lands where
    the def is in the editor's buffer, not on disk."""
    edited = "// a line the disk does not have\n\n" + LIB_TEXT
    client.diagnostics.pop(URI, None)
    await docs.open(LIB_URI, edited)
    assert await docs.published(URI) == []  # the program is checked again with the buffer
    found = await client.text_document_definition_async(
        types.DefinitionParams(text_document=DOC, position=position_of(TEXT, "vllm_request(o"))
    )
    p = position_of(edited, "vllm_request(out")
    assert where(found) == {("vllm.sq", p.line, p.character)}
    docs.close(LIB_URI)


async def test_completion_offers_the_librarys_defs(client, opened):
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=DOC, position=position_of(TEXT, "observe response = ", delta=19)
        )
    )
    items = {item.label: item for item in result.items}
    assert items["hit_rate"].detail == "def of vllm.sq"
    assert items["hit_rate"].kind == types.CompletionItemKind.Function


async def test_in_the_library_a_name_it_reads_leads_to_the_programs_that_declare_it(
    client, docs, opened
):
    """`kv` in the library is declared by no library: it is each user program's pool."""
    await docs.open(LIB_URI, LIB_TEXT)
    found = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=LIB_URI),
            position=position_of(LIB_TEXT, "kv (hit)"),
        )
    )
    p = position_of(TEXT, "kv {\n  cap")
    assert ("vllm.sq", p.line, p.character) in where(loc for loc in found if loc.uri == URI)
    users = {Path(types_uri_path(loc.uri)).name for loc in found}
    assert CALLERS <= users
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=LIB_URI),
            position=position_of(LIB_TEXT, "kv (hit)"),
        )
    )
    assert "declared by the programs that use this library" in hover.contents.value
    assert f"- pool `kv` of `vllm.sq` (line {p.line + 1})" in hover.contents.value
    docs.close(LIB_URI)


async def test_in_the_library_references_of_a_name_it_reads_are_those_of_its_meaning(
    client, docs, opened
):
    """From the library, `kv` in `hold reqs (1), kv (hit)` and in `cachedin(kv)` are one
    name: each user program's pool (the library alone indexed the first as a pool, the
    second as a value, and each found only its own kind). References from either find
    both and the declarations definition goes to (found by tests/fuzz: mut15's navigation
    check, definition against references over every example)."""
    await docs.open(LIB_URI, LIB_TEXT)
    lib = types.TextDocumentIdentifier(uri=LIB_URI)
    both = {in_library("kv (hit)"), in_library("kv), floor")}
    for needle in ("kv (hit)", "kv), floor"):
        at = position_of(LIB_TEXT, needle)
        found = await client.text_document_references_async(
            types.ReferenceParams(
                text_document=lib,
                position=at,
                context=types.ReferenceContext(include_declaration=True),
            )
        )
        assert both <= where(loc for loc in found if loc.uri == LIB_URI)
        declared = await client.text_document_definition_async(
            types.DefinitionParams(text_document=lib, position=at)
        )
        assert declared and where(declared) <= where(found)
        p = position_of(TEXT, "kv {\n  cap")
        assert ("vllm.sq", p.line, p.character) in where(loc for loc in found if loc.uri == URI)
    docs.close(LIB_URI)
