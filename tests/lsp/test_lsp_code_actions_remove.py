"""The quick fix that removes a read the linker refuses, over the protocol: offered at the read,
never preferred (it changes what the program computes), left out of `source.fixAll`, and the
document it leaves no longer reports the read."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import EXAMPLES, apply_edits, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

REFUSED = """pool kv { cap 100; queue by (waited, o); }
stage e : step { budget 64; cost 1 + tokens; memory kv; }
stage s : fifo(1);
workload { arrive poisson(1); hidden o; turn { set o = 5; set p = 0.25; } }
session {
  turn;
  hold kv (p + o) { run e decode (o); } cache (p);
  observe t = tokens;
}
run { horizon 10; }
"""


async def _actions(client, uri, at, diagnostics, only=None):
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(at, at),
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        )
    )


@pytest.mark.parametrize(
    ("needle", "code", "title", "after"),
    [
        ("p + o", "E-hidden", "Remove the read of `o`: drop its term", "hold kv (p) {"),
        ("o); }", "E-hidden", "Remove the read of `o`: drop its key", "queue by (waited); }"),
        (
            "= tokens",
            "E-moment",
            "Remove the read of `tokens`: drop the `observe`",
            "cache (p);\n}",
        ),
    ],
)
async def test_the_refused_read_is_removed_by_a_quick_fix(client, docs, needle, code, title, after):
    uri = (EXAMPLES / f"remove_read_{title.split()[-1].strip('`')}.sq").as_uri()  # one a case
    diagnostics = await docs.open(uri, REFUSED)
    assert sorted(d.code for d in diagnostics) == ["E-hidden", "E-hidden", "E-moment"]
    delta = needle.index("o") if code == "E-hidden" else 2
    at = position_of(REFUSED, needle, delta=delta)
    actions = await _actions(client, uri, at, diagnostics)
    fixes = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert [a.title for a in fixes] == [title]
    assert not fixes[0].is_preferred
    assert [d.code for d in fixes[0].diagnostics] == [code]
    fixed = apply_edits(REFUSED, fixes[0].edit.changes[uri])
    assert after in fixed
    left = [d.code for d in await docs.replace(uri, fixed)]
    before = [d.code for d in diagnostics]
    assert len(left) == 2 and left.count(code) == before.count(code) - 1
    docs.close(uri)


async def test_removals_are_not_in_fix_all(client, docs):
    uri = (EXAMPLES / "remove_read_all.sq").as_uri()
    await docs.open(uri, REFUSED)
    at = types.Position(0, 0)
    actions = await _actions(client, uri, at, [], only=[types.CodeActionKind.SourceFixAll])
    assert actions is None or actions == []
    docs.close(uri)
