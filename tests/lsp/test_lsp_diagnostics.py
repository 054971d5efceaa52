"""Diagnostics pushed on open and change, pulled on request, exact in UTF-16, across `use`."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import EXAMPLES, position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

GOOD = (EXAMPLES / "mm1.sq").read_text()


async def test_example_is_clean(client, docs):
    assert await docs.open(uri_of(EXAMPLES / "mm1.sq"), GOOD) == []


async def test_break_and_repair(client, docs, tmp_path):
    uri = uri_of(tmp_path / "edit.sq")
    assert await docs.open(uri, GOOD) == []
    broken = GOOD.replace("let lambda = 0.8;", "let lambda = 0.8")
    found = await docs.replace(uri, broken)
    assert found and found[0].code == "E-parse" and found[0].source == "serq"
    unknown = GOOD + "\nlet zz = nothing_here;\n"
    found = await docs.replace(uri, unknown)
    assert [d.code for d in found] and all(d.severity == 1 for d in found)
    assert await docs.replace(uri, GOOD) == []
    docs.close(uri)


async def test_utf16_columns_after_non_ascii(client, docs, tmp_path):
    uri = uri_of(tmp_path / "utf16.sq")
    text = GOOD + "\nlet x = 1; /* 😀é */ let x = 2;\n"
    found = await docs.open(uri, text)
    clash = [d for d in found if d.code == "E-name-clash"]
    assert len(clash) == 1, found
    start = position_of(text, "x = 2")
    assert clash[0].range.start == start  # 😀 counts two UTF-16 units, é one
    assert clash[0].range.end.character == start.character + 1
    related = clash[0].related_information
    assert related and related[0].location.range.start == position_of(text, "x = 1")


async def test_pull_diagnostics(client, docs, tmp_path):
    uri = uri_of(tmp_path / "pull.sq")
    await docs.open(uri, GOOD + "\nlet y = ;\n")
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert report.kind == "full" and report.items[0].code == "E-parse"
    again = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            previous_result_id=report.result_id,
        )
    )
    assert again.kind == "unchanged"


async def test_user_of_a_changed_library_is_checked_again(client, docs, tmp_path):
    lib, main = tmp_path / "lib.sq", tmp_path / "main.sq"
    lib_text = "def svc(x) = x * 2;\n"
    lib.write_text(lib_text)
    main_text = 'use "lib.sq";\n' + GOOD.replace("~exp(1)", "~exp(svc(0.5))")
    assert main_text != 'use "lib.sq";\n' + GOOD
    main.write_text(main_text)
    assert await docs.open(uri_of(main), main_text) == []
    client.diagnostics.pop(uri_of(main), None)
    await docs.open(uri_of(lib), lib_text)
    assert await docs.published(uri_of(main)) == []  # opening the library re-checks its user
    client.diagnostics.pop(uri_of(main), None)
    await docs.replace(uri_of(lib), "def other(x) = x * 2;\n")
    found = await docs.published(uri_of(main))
    assert found, "main.sq was not checked again"
    client.diagnostics.pop(uri_of(main), None)
    await docs.replace(uri_of(lib), lib_text)
    assert await docs.published(uri_of(main)) == []
