"""Renames that left a broken program, found by tests/fuzz/lsp_search.py (a rename must
leave the program's diagnostics as they were): a queue's entry (`route`, `prefill`,
`decode`: named by the queue's role), its NIC (`nic`) and a stage a serving form finds by
its name (`prefill`, `tool`, ...) were offered for rename; a hold's
binding read by a later binding of the same `at admission` was renamed where declared
and not where that binding read it. And formatting a document that holds a lone
surrogate (JSON may carry one) failed on its UTF-16 length, and a `use` of a path with one
was never analysed; the commands answered an internal error for a document that is not
there."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from serq.formatter import format_source
from tests.lsp.conftest import EXAMPLES, ROOT, position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

PD = (EXAMPLES / "pd_queues.sq").read_text()
ADMISSION = ROOT / "tests" / "sim" / "programs" / "step_serve_admission.sq"


@pytest.mark.parametrize(
    ("needle", "nth"),
    [("route {", 0), ("prefill (prompt) {", 0), ("decode (prompt) {", 0), ("nic ps", 0)],
)
async def test_an_entry_or_a_nic_is_not_renamed(client, docs, needle, nth):
    uri = uri_of(EXAMPLES / "rename_pd.sq")
    assert await docs.open(uri, PD) == []
    doc = types.TextDocumentIdentifier(uri=uri)
    at = position_of(PD, needle, nth)
    prepared = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=doc, position=at)
    )
    assert prepared is None
    with pytest.raises(JsonRpcInvalidParams):
        await client.text_document_rename_async(
            types.RenameParams(text_document=doc, position=at, new_name="renamed")
        )
    docs.close(uri)


def applied(text: str, edits) -> str:
    """`text` with the text edits `edits` made, the last first."""
    lines = text.splitlines(keepends=True)
    starts = [sum(len(x) for x in lines[:k]) for k in range(len(lines))]
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        a = starts[e.range.start.line] + e.range.start.character
        b = starts[e.range.end.line] + e.range.end.character
        text = text[:a] + e.new_text + text[b:]
    return text


async def test_a_binding_read_by_a_later_binding_is_renamed_there_too(client, docs):
    text = ADMISSION.read_text()
    uri = uri_of(ADMISSION.parent / "rename_binding.sq")
    assert await docs.open(uri, text) == []
    doc = types.TextDocumentIdentifier(uri=uri)
    at = position_of(text, "known = computed")
    edit = await client.text_document_rename_async(
        types.RenameParams(text_document=doc, position=at, new_name="renamed")
    )
    renamed = applied(text, edit.changes[uri])
    assert "known" not in renamed.split("at admission", 1)[1].split("{", 1)[0]
    assert "floor((renamed - 1) / bs)" in renamed
    assert await docs.replace(uri, renamed) == []
    docs.close(uri)


async def test_formatting_a_document_with_a_lone_surrogate(client, docs):
    uri = uri_of(EXAMPLES / "surrogate.sq")
    text = "let  a = 1;\nlet b = 2; // \udce2"  # no final line break: its UTF-16 length is measured
    await docs.open(uri, text)
    edits = await docs.format(uri)
    assert any(e.new_text.startswith("let a = 1;") for e in edits)
    assert format_source(text).text.startswith("let a = 1;")
    docs.close(uri)


SERVING = ROOT / "tests" / "corpus" / "valid" / "serving_forms.sq"


@pytest.mark.parametrize("needle", ["prefill[2] : fifo", "link : ps", "tool : delay"])
async def test_a_stage_a_serving_form_finds_by_name_is_not_renamed(client, docs, needle):
    """`prefill (n);` runs on the stage named `prefill`: renaming the stage alone left the
    form without a stage (E-serving-stage, E-index)."""
    text = SERVING.read_text()
    uri = uri_of(SERVING.parent / "rename_serving.sq")
    assert await docs.open(uri, text) == []
    doc = types.TextDocumentIdentifier(uri=uri)
    at = position_of(text, needle)
    prepared = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=doc, position=at)
    )
    assert prepared is None
    docs.close(uri)


async def test_a_use_of_a_path_with_an_invalid_byte(client, docs):
    """The server made the library's URI to look for it among the open documents, and
    quoting the path's escaped byte raised: no diagnostics were ever published, and every
    request on the document was an internal error."""
    uri = uri_of(EXAMPLES / "use_bad_byte.sq")
    text = 'use "\udcff.sq";\nlet f = 1;\n'
    found = await docs.open(uri, text)
    assert [d.code for d in found] == ["E-utf8"]
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(1, 4)
        )
    )
    assert hover is not None
    docs.close(uri)


@pytest.mark.parametrize("command", ["serq.showIR", "serq.showKernel", "serq.run"])
@pytest.mark.parametrize("arguments", [None, ["file:///nowhere/gone.sq"]])
async def test_a_command_on_a_document_that_is_not_there(client, command, arguments):
    """Invalid params, not an internal error: the commands read a document neither open
    nor on disk (FileNotFoundError), or were called without one (TypeError)."""
    with pytest.raises(JsonRpcInvalidParams):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=arguments)
        )


async def test_a_run_s_timeout_that_is_not_a_number(client):
    uri = uri_of(EXAMPLES / "mm1.sq")
    with pytest.raises(JsonRpcInvalidParams):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="serq.run", arguments=[uri, "soon"])
        )


async def test_an_entry_parameter_set_in_its_body_is_renamed_there_too(client, docs):
    """`set prompt = c;` in `prefill (prompt)` is an E-queue error (the entry sets its
    parameter); renaming the parameter left that `set` as it was, an attribute of the
    queue from then on, and the error was gone (lsp_search.py --seed 46, a swap_lines
    mutant of tests/corpus/valid/expr_aggregates_indexing.sq)."""
    text = PD.replace(
        "      set c = cached;\n", "      set c = cached;\n      set prompt = c;\n", 1
    )
    uri = uri_of(EXAMPLES / "rename_parameter.sq")
    codes = [d.code for d in await docs.open(uri, text)]
    assert codes == ["E-queue"]
    doc = types.TextDocumentIdentifier(uri=uri)
    at = position_of(text, "prefill (prompt) {", 0, len("prefill ("))
    edit = await client.text_document_rename_async(
        types.RenameParams(text_document=doc, position=at, new_name="renamed")
    )
    renamed = applied(text, edit.changes[uri])
    assert "set renamed = c;" in renamed and "prefill (renamed) {" in renamed
    assert [d.code for d in await docs.replace(uri, renamed)] == codes
    docs.close(uri)
