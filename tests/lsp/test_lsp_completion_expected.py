"""Completion's keywords come from the parser's expected set at the cursor (`|` below)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

ITEMS = {
    "let",
    "use",
    "def",
    "pool",
    "stage",
    "queue",
    "workload",
    "session",
    "server",
    "run",
    "gauge",
    "share",
    "claim",
}
STATEMENTS = {
    "turn",
    "request",
    "set",
    "observe",
    "hold",
    "grow",
    "drop",
    "release",
    "load",
    "run",
    "branch",
    "loop",
    "choose",
    "end",
    "mark",
    "prefill",
    "decode",
    "tool",
    "transfer",
}
POOL_OPTIONS = {"cap", "block", "evict", "preempt", "admit", "queue", "spill", "reserve"}
STEP_OPTIONS = {"budget", "cost", "chunk", "serve", "memory"}


async def complete(client, docs, tmp_path, marked: str) -> list[types.CompletionItem]:
    """The completion items where `|` stands in `marked`, in a fresh document."""
    at = marked.index("|")
    text = marked[:at] + marked[at + 1 :]
    uri = uri_of(tmp_path / "completion.sq")
    await docs.open(uri, text)
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position_of(marked, "|"),
        )
    )
    return list(result.items)


async def keywords(client, docs, tmp_path, marked: str) -> set[str]:
    items = await complete(client, docs, tmp_path, marked)
    return {i.label for i in items if i.kind == types.CompletionItemKind.Keyword}


@pytest.mark.parametrize(
    "marked, expected",
    [
        ("stage s : |", {"fifo", "ps", "delay", "step"}),
        ("stage s : fi|", {"fifo", "ps", "delay", "step"}),  # the word being typed is not read
        ("stage s : dé|", {"fifo", "ps", "delay", "step"}),  # ... in any script (§66's names)
        ("stage s : λ|", {"fifo", "ps", "delay", "step"}),
        ("stage s : मा|", {"fifo", "ps", "delay", "step"}),  # a vowel sign (§68)
        ("pool p {\n  |\n}", POOL_OPTIONS),
        ("pool p {\n  cap 64;\n  |\n}", POOL_OPTIONS),
        ("pool p { evict | }", {"lru", "by"}),
        ("pool p { preempt | }", {"none", "lifo", "by"}),
        ("pool p { queue | }", {"fifo", "by"}),
        ("stage s : step {\n  |\n}", STEP_OPTIONS),
        ("stage s : step { serve | }", {"admission", "by", "decode", "exclusive"}),
        ("workload {\n  |\n}", {"arrive", "trace", "init", "turn", "session", "hidden"}),
        ("workload { arrive | }", {"poisson", "renewal", "closed", "batch", "none"}),
        ('workload { trace "t.csv" | }', {"ordered"}),
        ("run {\n  |\n}", {"horizon", "warmup", "seed", "arrivals"}),
        ("queue Q {\n  |\n}", {"pool", "serve", "nic"}),
        ("server { hold kv (1) | { turn; } }", {"at", "reserve", "reuse"}),
        ("server { hold kv (1) at | }", {"admission"}),
        ("server { run engine | (1); }", {"prefill", "decode"}),
        ("gw pull src |;", {"latency", "share"}),
        ("queue D : decoder {\n  decode (p) { turn; }\n  |\n}", {"pool", "serve", "nic"}),
        ("let a = 1;\n|", ITEMS | {"fn"}),
        ("fn main() {\n  |\n}", ITEMS),  # inside `fn main`, no second `fn`
        ("fn main() {\n  pool p { | }\n}", POOL_OPTIONS),
    ],
)
async def test_exact_keywords(client, docs, tmp_path, marked, expected):
    assert await keywords(client, docs, tmp_path, marked) == expected


async def test_the_stage_kinds_only(client, docs, tmp_path):
    items = await complete(client, docs, tmp_path, "let B = 4;\nstage s : |")
    assert {i.label for i in items} == {"fifo", "ps", "delay", "step"}  # no names, no statements


@pytest.mark.parametrize(
    "marked",
    [
        "session {\n  |\n}",
        "server {\n  set x = 1;\n  |\n}",
        "server {\n  set hold = 1;\n  |\n}",  # a keyword used as a name
        "workload { session { loop { | } } }",
    ],
)
async def test_statement_keywords(client, docs, tmp_path, marked):
    found = await keywords(client, docs, tmp_path, marked)
    assert found == STATEMENTS
    assert not found & (POOL_OPTIONS - {"queue"}) and "stage" not in found


async def test_what_follows_a_block(client, docs, tmp_path):
    after_hold = await keywords(client, docs, tmp_path, "server { hold kv (1) { turn; } | }")
    assert after_hold == STATEMENTS | {"cache", "lease"}
    after_branch = await keywords(client, docs, tmp_path, "server { branch (x > 1) { turn; } | }")
    assert after_branch == STATEMENTS | {"else"}


async def test_expressions_keep_names_and_context_variables(client, docs, tmp_path):
    items = await complete(client, docs, tmp_path, "let a = 2;\nlet b = |;")
    labels = {i.label for i in items}
    assert {"a", "now", "min", "floor", "sum"} <= labels and not labels & STATEMENTS
    assert [i.kind for i in items if i.label == "min"] == [types.CompletionItemKind.Function]
    marked = "let B = 4;\nstage s : step {\n  budget 64;\n  cost 0.01 + |tokens;\n}"
    labels = {i.label for i in await complete(client, docs, tmp_path, marked)}
    assert {"tokens", "prefilled", "residents", "B", "now"} <= labels
    assert not labels & STEP_OPTIONS


async def test_nothing_where_no_word_fits(client, docs, tmp_path):
    assert await complete(client, docs, tmp_path, "let a = 1 |;") == []
    assert await complete(client, docs, tmp_path, "// stage s : |") == []
    assert await complete(client, docs, tmp_path, "let a = 1; /* stage s : |") == []
    assert await complete(client, docs, tmp_path, 'use "li|') == []


async def test_a_broken_prefix_falls_back_on_the_ast(client, docs, tmp_path):
    found = await keywords(client, docs, tmp_path, "session {\n  set = ;\n  |\n}")
    assert found >= {"set", "observe", "hold", "loop"} and "cap" not in found
    found = await keywords(client, docs, tmp_path, "pool p {\n  cap ) ;\n  |\n}")
    assert found >= {"cap", "evict"} and "set" not in found
