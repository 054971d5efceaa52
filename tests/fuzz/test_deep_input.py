"""Long and deep input through every phase: no phase raises, a too-deep item is `E-too-deep`.

Every construct that nests (each bracket kind, `!`, unary minus, `loop { }`) is fed
10,000 deep, and expressions are fed 100,000 characters long, to the parser, the
expander and its printer, the linker and the IR printer, and the simulator. The
language server gets the same texts in tests/lsp/test_lsp_robust.py.
"""

from __future__ import annotations

import pytest

from serq import api
from serq.diagnostics import Severity
from serq.sim import api as sim_api
from serq.syntax import ItemCache
from serq.syntax.depth import MAX_DEPTH

DEEP = 10_000
LONG = 100_000


def program(observed: str = "1", body: str = "") -> str:
    """A runnable program whose session observes `observed` and then does `body`."""
    return (
        "stage server : fifo(1);\n"
        "stage fam[3] : fifo(1);\n"
        "workload { arrive poisson(0.5); }\n"
        "session {\n"
        "  run server (~exp(1));\n"
        f"  observe v = {observed};\n"
        f"  {body}\n"
        "}\n"
        "run { horizon 50; warmup 0; seed 1; }\n"
    )


def nested(kind: str, n: int) -> str:
    if kind == "paren":
        return program("(" * n + "1" + ")" * n)
    if kind == "index":
        return program("queue(fam[" * n + "0" + "])" * n)
    if kind == "call":
        return program("max(0, " * n + "1" + ")" * n)
    if kind == "bang":
        return program("!" * n + "1")
    if kind == "minus":
        return program("- " * n + "1")
    if kind == "loop":
        return program(body="loop { " * n + "end;" + " }" * n)
    if kind == "branch":
        return program(body="branch (1) { " * n + "end;" + " }" * n)
    raise AssertionError(kind)


KINDS = ("paren", "index", "call", "bang", "minus", "loop", "branch")
NESTING = KINDS[1:]  # grouping brackets add no level: 10,000 of them run (below)


def every_phase(text: str, path: str = "deep.sq") -> list:
    """Run `text` through every phase the CLI has (parsing once: the phases share an item
    cache, as in the language server); return every diagnostic seen."""
    cache = ItemCache()
    seen = list(api.parse_source(text, path, cache).diagnostics)
    kernel, diagnostics = api.expand_source(text, path, cache)
    seen += diagnostics
    if kernel is not None:
        printed = api.format_kernel(kernel, path)
        assert isinstance(printed, str), printed
    linked, diagnostics = api.link_source(text, path, cache)
    seen += diagnostics
    if linked is not None:
        printed = api.format_ir(linked, path)
        assert isinstance(printed, str), printed
        report, ran = sim_api.execute(sim_api.Compiled(linked, ".", path))
        seen += ran
        assert report is not None or any(d.severity >= Severity.ERROR for d in ran)
    assert cache.parses <= len(api.parse_source(text, path, cache).chunks)
    assert not [d for d in seen if d.code == "E-internal"], seen
    return seen


@pytest.mark.parametrize("kind", NESTING)
def test_ten_thousand_deep_is_too_deep_at_its_place(kind):
    text = nested(kind, DEEP)
    seen = every_phase(text)
    deep = [d for d in seen if d.code == "E-too-deep"]
    assert deep, seen
    line = 6 if kind not in ("loop", "branch") else 7
    assert {d.span.line for d in deep} == {line}
    assert str(MAX_DEPTH) in deep[0].message


@pytest.mark.parametrize("kind", KINDS)
def test_nesting_within_the_limit_runs(kind):
    half = MAX_DEPTH // 2 - 5  # a block: two levels each; `queue(fam[…])` three
    n = {"loop": half, "branch": half, "index": MAX_DEPTH // 3 - 5}.get(kind, MAX_DEPTH - 8)
    if kind == "paren":
        n = DEEP  # grouping brackets add no level
    seen = every_phase(nested(kind, n))
    errors = [d for d in seen if d.severity >= Severity.ERROR]
    assert not errors, errors[:3]


def test_long_expressions_and_lines_run():
    a, b = "a" * (LONG // 2), "b" * (LONG // 2)
    text = f"let {a} = 1;\nlet {b} = 2;\n" + program(f"{a} * 2 + {b} / 3 - {a}")
    assert not [d for d in every_phase(text) if d.severity >= Severity.ERROR]
    line = "observe w = now + 1; " * (LONG // 21 + 1)
    assert len(line) >= LONG
    assert not [d for d in every_phase(program(body=line)) if d.severity >= Severity.ERROR]


def test_long_chain_is_too_deep_not_a_crash():
    chain = "+".join(["1"] * (LONG // 2))
    seen = every_phase(program(chain))
    (deep,) = {(d.code, d.span.line, d.span.column) for d in seen if d.code == "E-too-deep"}
    assert deep == ("E-too-deep", 6, 15)


@pytest.mark.parametrize(
    "observed", ["n" + "x" * LONG, "1" * LONG, "0." + "0" * LONG + "1", "1e" + "9" * LONG]
)
def test_long_tokens_never_raise(observed):
    every_phase(program(observed))
