"""The stale view: the last analysis read through the edits since, and a server that answers
hover, definition and completion from it while a check is pending."""

from __future__ import annotations

import asyncio
import random
import re
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from serq_lsp.analysis import analyze
from serq_lsp.stale import View
from tests.lsp.conftest import EXAMPLES, ROOT, SERVER, position_of, uri_of

PATH = EXAMPLES / "vllm_chat.sq"
TEXT = PATH.read_text()


_BREAK = re.compile(r"\r\n|\r|\n")  # LSP's line breaks


def _starts(text: str) -> list[int]:
    return [0] + [m.end() for m in _BREAK.finditer(text)]


def _lsp(text: str, offset: int) -> types.Position:
    starts = _starts(text)
    line = max(i for i, s in enumerate(starts) if s <= offset)
    return types.Position(line, len(text[starts[line] : offset].encode("utf-16-le")) // 2)


def _offset(text: str, p: types.Position) -> int:
    at = _starts(text)[p.line]
    units = 0
    while units < p.character:
        units += len(text[at].encode("utf-16-le")) // 2
        at += 1
    return at


# Pieces an edit inserts: nothing, words, line breaks of each kind, characters outside the
# BMP (two UTF-16 units) and accented letters.
PIECES = ["", "x", "let q = 1;\n", "\n", "\r\n", "\n\n// 🙂 é\n", "é", "🙂", "  ", "\r"]


@pytest.mark.parametrize("seed", range(40))
def test_positions_outside_the_edit_keep_their_character(seed):
    """Every position of the new text outside the edited region maps to the same character
    of the old one, and back; the region's inside maps to nothing."""
    rng = random.Random(seed)
    base = "let a = 1; // é🙂\r\nlet b = a + 2;\n\npool p { cap 4; }\n" * 3
    old = base if seed % 2 else base.replace("\r\n", "\n")
    text = old
    for _ in range(rng.randint(1, 3)):  # one to three edits since the analysis
        start = rng.randint(0, len(text))
        end = min(len(text), start + rng.choice([0, 0, 1, 3, 20]))
        text = text[:start] + rng.choice(PIECES) + text[end:]
    analysis = analyze(old, "<stale>")
    view = View(analysis, text)
    for offset in range(len(text) + 1):
        if offset < len(text) and text[offset] == "\n" and offset and text[offset - 1] == "\r":
            continue  # between the two halves of one line break: no LSP position
        position = _lsp(text, offset)
        mapped = view.to_old(position)
        if mapped is None:
            continue
        back = _offset(old, mapped)
        # a position is a boundary: what is before it is kept up to the region's start
        # (where a deletion's two sides meet, the start is meant), what is after it from
        # the region's end on
        key = (position.line, position.character)
        if view.current:
            assert mapped == position and back == offset
        elif key <= (view.start.line, view.start.character):
            assert old[:back][-2:] == text[:offset][-2:], (offset, position, mapped)
        else:
            assert old[back:][:2] == text[offset:][:2], (offset, position, mapped)
        assert _lsp(old, back) == mapped
    # an untouched word maps forward onto itself
    for word in ("pool", "cap"):
        at = old.rindex(word)
        r = types.Range(_lsp(old, at), _lsp(old, at + len(word)))
        moved = view.to_new(r)
        if moved is not None:
            assert text[_offset(text, moved.start) : _offset(text, moved.end)] == word


def test_an_unchanged_text_is_current():
    analysis = analyze(TEXT, str(PATH))
    view = View(analysis, TEXT)
    assert view.current
    p = types.Position(3, 4)
    assert view.to_old(p) == p


def test_a_line_inserted_above_moves_the_answer_down():
    analysis = analyze(TEXT, str(PATH))
    at = TEXT.index("pool kv")
    text = TEXT[:at] + "let extra = 2;\n" + TEXT[at:]
    view = View(analysis, text)
    new = position_of(text, "pool kv", delta=5)
    old = position_of(TEXT, "pool kv", delta=5)
    assert view.to_old(new) == old
    inside = position_of(text, "extra")
    assert view.to_old(inside) is None
    r = types.Range(old, types.Position(old.line, old.character + 2))
    assert view.to_new(r) == types.Range(new, types.Position(new.line, new.character + 2))
    # a range ending where the edit begins touches it: no answer about it
    before = _lsp(TEXT, at - 1)
    assert view.to_new(types.Range(before, _lsp(TEXT, at))) is None


# ---------------------------------------------------------------- the server


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": str(ROOT)}),
    scope="module",
)
async def slow(lsp_client: LanguageClient):
    """A client whose server waits 60 s after an edit before checking it: every request
    after an edit finds the check pending."""
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=ROOT.as_uri(),
        initialization_options={"debounce": 60.0},
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def _published(client: LanguageClient, uri: str, timeout: float = 60.0):
    """The diagnostics published next for `uri` (popped from the client beforehand)."""
    deadline = time.monotonic() + timeout
    while client.diagnostics.get(uri) is None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no diagnostics for {uri}")
        await asyncio.sleep(0.01)
    return client.diagnostics[uri]


def _insert(uri: str, version: int, at: types.Position, text: str):
    return types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[
            types.TextDocumentContentChangePartial(range=types.Range(at, at), text=text)
        ],
    )


@pytest.mark.asyncio(loop_scope="module")
async def test_hover_definition_completion_while_a_check_is_pending(slow: LanguageClient):
    uri = uri_of(EXAMPLES / "stale_view_pending.sq")  # never written: lives in the editor
    doc = types.TextDocumentIdentifier(uri=uri)
    slow.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="serq", version=1, text=TEXT)
        )
    )
    before = position_of(TEXT, "min(prompt, hit", delta=4)
    fresh = await slow.text_document_hover_async(types.HoverParams(doc, before))
    assert fresh is not None and "prompt" in fresh.contents.value
    declared = await slow.text_document_definition_async(types.DefinitionParams(doc, before))

    # two lines above the hover, one of them an error: the check that finds it never runs
    top = position_of(TEXT, "let Lambda")
    slow.text_document_did_change(_insert(uri, 2, top, "let broken = ;\nlet more = 1;\n"))
    text = TEXT.replace("let Lambda", "let broken = ;\nlet more = 1;\nlet Lambda", 1)
    after = position_of(text, "min(prompt, hit", delta=4)
    assert after.line == before.line + 2
    start = time.monotonic()
    stale = await slow.text_document_hover_async(types.HoverParams(doc, after))
    took = time.monotonic() - start
    assert took < 5  # answered, not after the 60 s the check waits for
    assert stale.contents.value == fresh.contents.value
    assert stale.range.start.line == fresh.range.start.line + 2
    assert stale.range.start.character == fresh.range.start.character
    moved = await slow.text_document_definition_async(types.DefinitionParams(doc, after))
    assert [loc.range.start.line for loc in moved] == [loc.range.start.line + 2 for loc in declared]
    # on the text typed since, the view knows nothing yet; it says nothing, at once
    inside = position_of(text, "more")
    assert await slow.text_document_hover_async(types.HoverParams(doc, inside)) is None
    # completion right after text typed into an expression: the names of the last analysis
    typed = position_of(text, "let Z = 3", delta=len("let Z = 3"))
    slow.text_document_did_change(_insert(uri, 3, typed, " + La"))
    text = text.replace("let Z = 3", "let Z = 3 + La", 1)
    end = position_of(text, "let Z = 3 + La", delta=len("let Z = 3 + La"))
    listed = await slow.text_document_completion_async(types.CompletionParams(doc, end))
    assert {"Lambda", "bs", "min"} <= {item.label for item in listed.items}
    # saving checks at once: the error is published, and hover reads the new analysis
    slow.diagnostics.pop(uri, None)
    slow.text_document_did_save(types.DidSaveTextDocumentParams(doc))
    published = await _published(slow, uri)
    assert any(d.range.start.line == top.line for d in published)
    again = await slow.text_document_hover_async(types.HoverParams(doc, after))
    assert again.range.start.line == after.line
