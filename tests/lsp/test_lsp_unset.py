"""W-unset over the protocol: a warning at the read, its path in the message, the first `set`
as related information, and no code action (nothing to apply: the fix is the author's)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import EXAMPLES, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = """stage s : fifo(1);
workload { arrive poisson(0.5); }
session {
  branch (~bernoulli(0.25)) {
    set x = -1.5;
  }
  run s (abs(x));
}
run { horizon 10; }
"""


async def test_an_unset_read_is_a_warning_with_its_path(client, docs):
    uri = (EXAMPLES / "unset_read.sq").as_uri()
    (d,) = await docs.open(uri, TEXT)
    assert d.code == "W-unset" and d.severity == types.DiagnosticSeverity.Warning
    assert d.range.start == position_of(TEXT, "x));")
    assert d.message.startswith(
        "`x` is read here before anything sets it, so it reads 0: on the path past the "
        "`branch` at 4:3 with its test false"
    )
    related = d.related_information or []
    assert [(r.location.range.start, r.message) for r in related] == [
        (position_of(TEXT, "x = -1.5"), "first set here")
    ]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d]),
        )
    )
    assert not actions
    fixed = TEXT.replace("session {\n", "session {\n  set x = 0;\n")
    assert await docs.replace(uri, fixed) == []
    docs.close(uri)
