"""`args.number` without `use "std/args";` has a quick fix that adds the `use`.

The diagnostic's help said "add `use "std/args";` at the top of the file" and the editor
offered nothing to do it. Its fix now inserts the line before the file's first item (the
comments that head the file stay first); one insertion removes every such diagnostic, and
`source.fixAll` makes it once, not once for each `args.number`.
"""

from __future__ import annotations

import pytest
from lsprotocol import types

from serq import api
from tests.lsp.conftest import EXAMPLES, apply_edits, position_of

MAIN = """// an M/M/1 queue with its rate an input
// horizon: 20
fn main() {
  let rate = args.number("rate", 0.5);
  let mean = args.number("mean", 1);
  stage server : fifo(1);
  workload { arrive poisson(rate); }
  server { run server (~exp(mean)); }
}
"""
ITEMS = """stage server : fifo(1);
let rate = args.number("rate", 0.5);
workload { arrive poisson(rate); }
session { run server (~exp(1)); }
run { horizon 20; }
"""


def _fixed(text: str, path: str) -> str:
    found = [d for d in api.check_source(text, path) if d.code == "E-use"]
    assert found and all(d.fix is not None and d.fix.applicability == "safe" for d in found)
    (edit,) = found[0].fix.edits
    return text[: edit.span.start] + edit.replacement + text[edit.span.end :]


@pytest.mark.parametrize(("text", "line"), [(MAIN, 2), (ITEMS, 0)], ids=["fn main", "items"])
def test_the_fix_adds_the_use_before_the_first_item(text, line):
    fixed = _fixed(text, "prog.sq")
    assert fixed.splitlines()[line] == 'use "std/args";'
    assert fixed.replace('use "std/args";\n', "") == text
    assert api.check_source(fixed, "prog.sq") == []


@pytest.mark.asyncio(loop_scope="module")
async def test_the_quick_fix_and_fix_all_remove_every_such_diagnostic(client, docs):
    uri = (EXAMPLES / "args_without_use.sq").as_uri()
    diagnostics = await docs.open(uri, MAIN)
    assert [d.code for d in diagnostics] == ["E-use", "E-use"]
    at = position_of(MAIN, '"mean"', delta=1)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(at, at),
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
    )
    fixes = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert [a.title for a in fixes] == ['Add `use "std/args";` at the top of the file']
    assert fixes[0].is_preferred
    fixed = apply_edits(MAIN, fixes[0].edit.changes[uri])
    (every,) = [a for a in actions if a.kind == types.CodeActionKind.SourceFixAll]
    assert apply_edits(MAIN, every.edit.changes[uri]) == fixed  # once, not once an `args.number`
    assert fixed.count('use "std/args";') == 1
    assert await docs.replace(uri, fixed) == []
    docs.close(uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_the_fix_goes_after_a_byte_order_mark(client, docs):
    """A document that begins with a BOM (which `serq check` drops when it reads the file)
    got the `use` before the mark, which then stood inside the program, an E-parse (§66)."""
    text = "\ufeff" + ITEMS
    uri = (EXAMPLES / "args_after_a_bom.sq").as_uri()
    diagnostics = await docs.open(uri, text)
    assert [d.code for d in diagnostics] == ["E-use"]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range,
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
    )
    for action in actions:
        fixed = apply_edits(text, action.edit.changes[uri])
        assert fixed == "\ufeff" + _fixed(ITEMS, "prog.sq")
    assert len(actions) == 2  # the quick fix and the fix-all
    assert await docs.replace(uri, fixed) == []
    docs.close(uri)
