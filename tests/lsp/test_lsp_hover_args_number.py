"""Hover on `number` of `args.number(...)` says what a program argument is, as on `args`.

`args.number` is one token; hover read the word under the cursor and knew `args` only, so
a hover over `number` (where the eye lands) answered nothing.
"""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

MAIN = """use "std/args";
fn main() {
  let rate = args.number("rate", 0.5);
  let number = 2;
  stage server : fifo(1);
  workload { arrive poisson(rate * number); }
  server { run server (~exp(1)); }
}
"""


async def _hover(client, uri, needle, delta):
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position_of(MAIN, needle, delta=delta),
        )
    )


async def test_hover_on_number_and_on_args_alike(client, docs, tmp_path):
    uri = uri_of(tmp_path / "args_hover.sq")
    assert await docs.open(uri, MAIN) == []
    on_args = await _hover(client, uri, "args.number", 1)
    on_number = await _hover(client, uri, "args.number", 8)
    assert on_args is not None and on_number is not None
    assert "`use \"std/args\";`" in on_number.contents.value
    assert on_args.contents.value.split(": ", 1)[1] == on_number.contents.value.split(": ", 1)[1]
    # a `let` named `number` is still itself
    let = await _hover(client, uri, "* number", 3)
    assert "let number = 2;" in let.contents.value
