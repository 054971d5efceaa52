"""Formatting and code actions over the protocol: whole-document and range formatting give
the text `serq fmt` gives; quick fixes come from the diagnostics that carry a fix, the
safe ones preferred, and `source.fixAll` applies the safe set."""

from __future__ import annotations

import pytest
from lsprotocol import types

from serq.formatter import format_source
from tests.lsp.conftest import EXAMPLES, apply_edits, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

UGLY = """// a header comment
let a=1;   // one
let bb = 2; // two
stage s:fifo( 1 );
workload { arrive poisson(a); turn { set w = ~exp(  bb ); } }
session { turn; run s (w*2+1); }
run { horizon 10; }
"""


async def test_formatting_gives_what_serq_fmt_gives(client, docs):
    uri = (EXAMPLES / "fmt_ugly.sq").as_uri()
    await docs.open(uri, UGLY)
    edits = await docs.format(uri)
    formatted = apply_edits(UGLY, edits)
    assert formatted == format_source(UGLY).text
    assert "let a = 1; // one\nlet bb = 2; // two\n" in formatted  # not aligned before
    assert "stage s : fifo(1);" in formatted
    await docs.replace(uri, formatted)
    again = await docs.format(uri)
    assert not again
    docs.close(uri)


async def test_range_formatting_touches_only_the_range(client, docs):
    uri = (EXAMPLES / "fmt_range.sq").as_uri()
    await docs.open(uri, UGLY)
    start = position_of(UGLY, "stage s")
    edits = await client.text_document_range_formatting_async(
        types.DocumentRangeFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start, types.Position(start.line, 5)),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert edits
    assert all(
        e.range.start.line <= start.line <= max(e.range.end.line, e.range.start.line) for e in edits
    )
    result = apply_edits(UGLY, edits)
    assert "stage s : fifo(1);" in result
    assert "let a=1;" in result  # outside the range: as written
    assert "session { turn; run s (w*2+1); }" in result
    docs.close(uri)


BROKEN = """let lambda = 1;
stage s : fifo;
workload { arrive poisson(1); }
session {
  turn
  run s (1);
  set x = lamda;
}
run { horizon 10; }
"""


async def test_quick_fix_inserts_the_missing_semicolon(client, docs):
    uri = (EXAMPLES / "fix_semicolon.sq").as_uri()
    diagnostics = await docs.open(uri, BROKEN)
    assert any(d.code == "E-parse" for d in diagnostics)
    at = position_of(BROKEN, "run s")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(at, at),
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
    )
    fixes = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert [a.title for a in fixes] == ["Insert `;`"]
    assert fixes[0].is_preferred
    fixed = apply_edits(BROKEN, fixes[0].edit.changes[uri])
    assert "  turn;\n" in fixed
    # after the `;`, the linker sees `lamda`: a rename, offered but not preferred
    diagnostics = await docs.replace(uri, fixed)
    at = position_of(fixed, "lamda")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(at, at),
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
    )
    renames = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert len(renames) == 1 and renames[0].title == "Change `lamda` to `lambda`"
    assert "set x = lambda;" in apply_edits(fixed, renames[0].edit.changes[uri])
    assert not renames[0].is_preferred
    assert all(a.kind != types.CodeActionKind.SourceFixAll for a in actions)  # none is safe
    docs.close(uri)


HIDDEN = """stage s : fifo;
workload { arrive poisson(1); hidden o, cached, o; turn { set o = 1; } }
session { turn; run s (o); }
run { horizon 10; }
"""


async def test_fix_all_applies_every_safe_fix(client, docs):
    uri = (EXAMPLES / "fix_hidden.sq").as_uri()
    diagnostics = await docs.open(uri, HIDDEN)
    assert sum(d.code == "E-hidden" for d in diagnostics) == 2
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(
                diagnostics=[], only=[types.CodeActionKind.SourceFixAll]
            ),
        )
    )
    assert [a.kind for a in actions] == [types.CodeActionKind.SourceFixAll]
    fixed = apply_edits(HIDDEN, actions[0].edit.changes[uri])
    assert "hidden o;" in fixed
    assert not [d for d in await docs.replace(uri, fixed) if d.code == "E-hidden"]
    docs.close(uri)
