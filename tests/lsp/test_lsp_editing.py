"""Editing help: semantic tokens, completion, signature help, folding; and a fuzz of edits."""

from __future__ import annotations

import random

import pytest
from lsprotocol import types

from tests.lsp.conftest import EXAMPLES, position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

PATH = EXAMPLES / "vllm_chat.sq"
TEXT = PATH.read_text()
DOC = types.TextDocumentIdentifier(uri=uri_of(PATH))


async def test_semantic_tokens(client, docs):
    await docs.open(DOC.uri, TEXT)
    legend = [
        "keyword",
        "number",
        "string",
        "comment",
        "variable",
        "parameter",
        "function",
        "property",
        "type",
        "class",
        "struct",
        "namespace",
        "method",
        "event",
        "enumMember",
    ]
    tokens = await client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=DOC)
    )
    data = tokens.data
    assert len(data) % 5 == 0 and len(data) > 100
    line = col = 0
    decoded = {}
    for i in range(0, len(data), 5):
        line = line + data[i]
        col = data[i + 1] if data[i] else col + data[i + 1]
        decoded[(line, col)] = legend[data[i + 3]]
    p = position_of(TEXT, "kv {\n")
    assert decoded[(p.line, p.character)] == "struct"
    p = position_of(TEXT, "engine : step")
    assert decoded[(p.line, p.character)] == "class"
    p = position_of(TEXT, "tokens;")
    assert decoded[(p.line, p.character)] == "enumMember"


async def test_semantic_tokens_at_every_line_end(client, docs):
    # a lone `\r` ends a line (and the `//` comment on it) as `\n` and `\r\n` do; no token
    # runs over a line end, the `\r` of a `\r\n` included
    text = "let a = 1; // one\rlet b = a; /* two\r\nthree */\nlet c = b;\n"
    uri = uri_of(EXAMPLES / "line_ends.sq")
    await docs.open(uri, text)
    tokens = await client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    lines = ["let a = 1; // one", "let b = a; /* two", "three */", "let c = b;"]
    line = col = 0
    found = []
    data = tokens.data
    for i in range(0, len(data), 5):
        line = line + data[i]
        col = data[i + 1] if data[i] else col + data[i + 1]
        found.append(lines[line][col : col + data[i + 2]])
    assert found == [
        "let", "a", "1", "// one",
        "let", "b", "a", "/* two", "three */",
        "let", "c", "b",
    ]  # fmt: skip


async def test_completion(client, docs):
    await docs.open(DOC.uri, TEXT)

    async def labels(needle, delta):
        result = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=DOC, position=position_of(TEXT, needle, delta=delta)
            )
        )
        return {item.label for item in result.items}

    in_cost = await labels("cost 0.01 + ", len("cost 0.01 + "))
    assert {"tokens", "prefilled", "B", "bs", "now", "min"} <= in_cost
    in_session = await labels("set arrived = now", len("set arrived = "))
    assert "now" in in_session and "tokens" not in in_session and "Lambda" in in_session
    at_top = await labels("run {\n  horizon", 0)
    assert {"pool", "stage", "queue", "let"} <= at_top


async def test_completion_after_a_comment_ended_by_a_lone_return(client, docs):
    # the code after a lone `\r` is out of the `//` comment before it: completion answers
    text = "stage s : fifo(1);\nsession { // note\r  run "
    uri = uri_of(EXAMPLES / "lone_return.sq")
    await docs.open(uri, text)
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=2, character=6),
        )
    )
    assert "s" in {item.label for item in result.items}


async def test_signature_help(client, docs):
    text = TEXT.replace("set hitmax = floor(", "set hitmax = min(1, ")
    await docs.replace(DOC.uri, text) if DOC.uri in docs.versions else await docs.open(
        DOC.uri, text
    )
    result = await client.text_document_signature_help_async(
        types.SignatureHelpParams(text_document=DOC, position=position_of(text, "min(1, ", delta=7))
    )
    assert result.signatures[0].label == "min(a, b)" and result.active_parameter == 1


async def test_folding(client, docs):
    await docs.open(DOC.uri, TEXT)
    ranges = await client.text_document_folding_range_async(
        types.FoldingRangeParams(text_document=DOC)
    )
    starts = {r.start_line for r in ranges}
    assert position_of(TEXT, "workload {").line in starts
    assert position_of(TEXT, "server {").line in starts


async def test_random_edits_never_kill_the_server(client, docs, tmp_path):
    rng = random.Random(8)
    uri = uri_of(tmp_path / "fuzz.sq")
    text = (EXAMPLES / "pd_queues.sq").read_text()
    await docs.open(uri, text)
    doc = types.TextDocumentIdentifier(uri=uri)
    pieces = [
        "{",
        "}",
        ";",
        "(",
        ")",
        "hold",
        "queue",
        "😀",
        "é",
        "\n",
        "at admission",
        ".",
        "[",
        "~",
    ]
    for step in range(60):
        at = rng.randrange(len(text) + 1)
        if rng.random() < 0.5:
            text = text[:at] + rng.choice(pieces) + text[at:]
        else:
            text = text[:at] + text[at + rng.randrange(1, 30) :]
        await docs.replace(uri, text)
        position = types.Position(
            line=rng.randrange(text.count("\n") + 1), character=rng.randrange(40)
        )
        await client.text_document_hover_async(
            types.HoverParams(text_document=doc, position=position)
        )
        await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc, position=position)
        )
        await client.text_document_completion_async(
            types.CompletionParams(text_document=doc, position=position)
        )
        if step % 10 == 0:
            await client.text_document_semantic_tokens_full_async(
                types.SemanticTokensParams(text_document=doc)
            )
            await client.text_document_document_symbol_async(
                types.DocumentSymbolParams(text_document=doc)
            )
            await client.text_document_folding_range_async(
                types.FoldingRangeParams(text_document=doc)
            )
    assert await docs.replace(uri, (EXAMPLES / "pd_queues.sq").read_text()) == []
