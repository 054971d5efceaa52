"""Hover says what `cost(X, amount)` and `use "std/args";` are.

Two words a `fn main` program writes on most lines were explained as something else:

- `cost` in `run server (cost(server, ~exp(1)))`, the function that states an amount in a
  stage's unit (docs/language.md#cost), was explained as a step stage's clause ("the
  duration of one iteration"), the keyword's one meaning hover knew;
- the path of `use "std/args";` was "library file `/the/program's/directory/std/args`", a
  file that does not exist: the index resolved it as it resolves a library of the user's.
  It is now serq's own library, and hover says what it gives.
"""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

MAIN = """use "std/args";
let B = 256;
fn main() {
  let rate = args.number("rate", 0.5);
  stage server : fifo(1);
  stage engine : step { budget B; cost 0.01 + 0.0001 * tokens; }
  workload { arrive poisson(rate); }
  server {
    run server (cost(server, ~exp(1)));
    run engine (cost (engine, 10));
  }
}
"""


async def _hover(client, uri, needle, delta) -> str:
    found = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position_of(MAIN, needle, delta=delta),
        )
    )
    assert found is not None
    return found.contents.value


async def test_cost_the_function_and_cost_the_clause(client, docs, tmp_path):
    uri = uri_of(tmp_path / "cost_hover.sq")
    await docs.open(uri, MAIN)
    for needle in ("cost(server", "cost (engine"):
        call = await _hover(client, uri, needle, 1)
        assert call.startswith("**cost**(X, amount): `amount` stated in the unit"), call
        assert "one iteration" not in call
    clause = await _hover(client, uri, "cost 0.01", 1)
    assert clause.startswith("**cost**: The duration of one iteration"), clause


async def test_std_args_is_no_file(client, docs, tmp_path):
    uri = uri_of(tmp_path / "std_hover.sq")
    await docs.open(uri, MAIN)
    text = await _hover(client, uri, '"std/args"', 3)
    assert text.startswith("library `std/args`, supplied by serq: `args.number("), text
    assert "library file" not in text and str(tmp_path) not in text
    definition = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position_of(MAIN, '"std/args"', delta=3),
        )
    )
    assert definition is None
