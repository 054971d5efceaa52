"""Completion after `args.` offers the one member, `number`, not the names in scope.

Typing `let rate = args.` in a `fn main` program offered every name (`rate`, `server`,
`now`, `min`...) and the item `args.number`, each of which the editor inserts after the
dot (`args.server`, `args.args.number`). `args.number` is one token of the grammar, so
the parser's expected set at the dot is an expression's. Now `args.` followed by what of
a member is typed gives the single item `number`, its snippet the call.
"""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.test_lsp_completion_expected import complete

pytestmark = pytest.mark.asyncio(loop_scope="module")

MAIN = """use "std/args";
fn main() {
  let rate = args.number("rate", 0.5);
  let mean = {typed}
  stage server : fifo(1);
  workload { arrive poisson(rate); }
  server { run server (~exp(1)); }
}
"""


@pytest.mark.parametrize("typed", ["args.|", "args.nu|", "args.number|"])
async def test_after_args_dot_only_number(client, docs, tmp_path, typed):
    items = await complete(client, docs, tmp_path, MAIN.replace("{typed}", typed))
    assert [(i.label, i.insert_text) for i in items] == [("number", 'number("$1", $2)')]
    assert items[0].insert_text_format == types.InsertTextFormat.Snippet


async def test_a_let_still_offers_args_number_whole(client, docs, tmp_path):
    items = await complete(client, docs, tmp_path, MAIN.replace("{typed}", "|1;"))
    labels = [i.label for i in items]
    assert "args.number" in labels and "number" not in labels
    assert "rate" in labels


@pytest.mark.parametrize("typed", ["rate.|", "myargs.|", "// args.|"])
async def test_other_dots_are_not_args(client, docs, tmp_path, typed):
    items = await complete(client, docs, tmp_path, MAIN.replace("{typed}", typed))
    assert "number" not in [i.label for i in items]
