"""A `def` call may inline at most so much: nodes and levels (docs/limits.md).

A body that uses its parameter twice doubles with each level of nesting, so
`f(f(...f(1)...))` with `def f(x) = x + x;` grew exponentially in time and in the tree
every later phase walks. Past the limit the call is `E-too-deep` at the call, once an
item, and the rest of the file is still checked; under it everything inlines as before.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from serq.diagnostics import Severity
from serq.expand.defs import MAX_INLINED_DEPTH, MAX_INLINED_NODES
from serq.expand.walk import measure, walk
from serq.syntax import ast

TAIL = (
    "stage s : fifo(1);\n"
    "workload { arrive poisson(1); }\n"
    "session {\n  observe v = {e};\n  run s (1);\n}\n"
    "run { horizon 10; }\n"
)


def nested(name: str, depth: int, inner: str = "1") -> str:
    e = inner
    for _ in range(depth):
        e = f"{name}({e})"
    return e


def program(defs: str, expr: str) -> str:
    return defs + TAIL.replace("{e}", expr)


def errors(expanded):
    return [d for d in expanded.expansion.diagnostics if d.severity == Severity.ERROR]


def test_doubling_body_is_an_error_at_the_innermost_call_that_crosses(expand_program):
    text = program("def f(x) = x + x;\n", nested("f", 60))
    out = expand_program(text)
    (err,) = errors(out)
    assert err.code == "E-too-deep"
    assert err.message == (
        "inlining this call of `f` makes an expression of 131,071 nodes (at most 100,000)"
    )
    # 2^17 - 1 nodes: the 16th call from the inside, counted from the line's start
    line = text.splitlines()[4]
    assert (err.span.line, err.span.column) == (5, line.index("f(") + 1 + 2 * 44)
    assert err.labels[0].text == "defined here"


def test_doubling_body_under_the_limit_inlines(expand_program, render):
    out = expand_program(program("def f(x) = x + x;\n", nested("f", 3)))
    assert errors(out) == []
    (observe,) = [n for n in walk(out.expansion.kernel) if isinstance(n, ast.Observe)]
    assert render(observe.value) == "(((1 + 1) + (1 + 1)) + ((1 + 1) + (1 + 1)))"


def test_deep_chain_through_two_defs_is_an_error(expand_program):
    defs = "def f(x) = x + 1;\ndef g(x) = " + nested("f", 10, "x") + ";\n"
    out = expand_program(program(defs, nested("g", 60)))
    (err,) = errors(out)
    assert err.message == (
        f"inlining this call of `g` makes an expression {MAX_INLINED_DEPTH + 1} levels deep "
        f"(at most {MAX_INLINED_DEPTH})"
    )


def test_statement_defs_that_double_are_an_error(expand_program):
    defs = "def g0() { observe a = 1; }\n" + "".join(
        f"def g{i}() {{ g{i - 1}(); g{i - 1}(); }}\n" for i in range(1, 21)
    )
    text = defs + TAIL.replace("observe v = {e};", "g20();")
    (err,) = errors(expand_program(text))
    assert err.message.startswith("inlining this call of `g16` makes statements of ")
    assert int(err.message.split(" of ")[2].split()[0].replace(",", "")) > MAX_INLINED_NODES


def test_the_other_items_are_still_checked(expand_program):
    text = program("def f(x) = x + x;\n", nested("f", 40)) + "let y = f(2);\n"
    out = expand_program(text)
    assert len(errors(out)) == 1
    lets = [i for i in out.expansion.kernel.items if getattr(i, "name", None)]
    assert any(getattr(i.name, "name", "") == "y" for i in lets)


def test_cli_reports_it_quickly(tmp_path):
    path = tmp_path / "blow.sq"
    path.write_text(program("def f(x) = x + x;\n", nested("f", 60)))
    done = subprocess.run(
        [sys.executable, "-m", "serq.cli", "check", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "error[E-too-deep]: inlining this call of `f`" in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def _chain(n: int, body: str) -> str:
    """`n` statement definitions, each calling the one before inside `body`."""
    lines = ["def d0() { set x = 1; }"]
    lines += [f"def d{i}() {{ {body.format(f'd{i - 1}();')} }}" for i in range(1, n)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("n", [149, 400])
def test_long_statement_def_chain_is_an_error_not_a_crash(expand_program, n):
    defs = _chain(n, "loop {{ branch (x > 1) {{ {} }} else {{ end; }} }}")
    text = (
        defs
        + "stage s : fifo(1);\nworkload { arrive poisson(1); }\n"
        + f"session {{ d{n - 1}(); run s (1); }}\nrun {{ horizon 10; }}\n"
    )
    out = expand_program(text)
    (err,) = errors(out)
    assert err.code == "E-too-deep"
    assert "levels deep in its item (at most 250, a call counting as a level)" in err.message
    assert err.message.startswith("inlining this call of `d")
    assert err.labels[0].text == "defined here"
    # at a call inside a definition's body, on its own line
    assert text.splitlines()[err.span.line - 1].startswith("def d")


def test_thousand_deep_expression_def_chain_is_an_error_not_a_crash(expand_program):
    defs = "def d0(x) = x + 1;\n" + "".join(f"def d{i}(x) = d{i - 1}(x);\n" for i in range(1, 1000))
    text = defs + (
        "stage s : fifo(1);\nworkload { arrive poisson(1); }\n"
        "session { run s (d999(1)); }\nrun { horizon 10; }\n"
    )
    (err,) = errors(expand_program(text))
    assert err.code == "E-too-deep"


def test_long_recursive_cycle_is_found_without_recursion(expand_program):
    n = 3000
    defs = "".join(f"def d{i}(x) = d{(i + 1) % n}(x);\n" for i in range(n))
    text = defs + (
        "stage s : fifo(1);\nworkload { arrive poisson(1); }\n"
        "session { run s (d0(1)); }\nrun { horizon 10; }\n"
    )
    errs = errors(expand_program(text))
    assert errs and all(e.code == "E-def" for e in errs)
    assert "calls itself" in errs[0].message


# ------------------------------------------------------------------- aggregates


@pytest.mark.parametrize(
    ("aggregate", "message"),
    [
        ("sum j in 150 (j)", "written out, this `sum` of 150 terms nests 151 levels deep (at most 150)"),
        ("sum j in 500 (j * 2)", "written out, this `sum` of 500 terms nests 502 levels deep (at most 150)"),
        ("max j in 1e9 (j)", "written out, this `max` of 1,000,000,000 terms has 2,000,000,000 nodes (at most 100,000)"),
        ("min j in 60000 (j)", "written out, this `min` of 60,000 terms has 120,000 nodes (at most 100,000)"),
    ],
)  # fmt: skip
def test_an_aggregate_too_big_to_write_out_is_too_deep_at_the_aggregate(
    expand_program, aggregate, message
):
    # `max j in 1e9 (j)` never came back; `sum j in 500 (j)` was a RecursionError
    out = expand_program(program("", aggregate))
    (err,) = errors(out)
    assert (err.code, err.span.line, err.span.column) == ("E-too-deep", 4, 15)
    assert err.message == message


def test_a_sum_within_the_limit_is_written_left_to_right(expand_program, render):
    out = expand_program(program("", "sum j in 149 (j)"))
    assert errors(out) == []
    (observe,) = [n for n in walk(out.expansion.kernel) if isinstance(n, ast.Observe)]
    depth, node = 0, observe.value
    while isinstance(node, ast.Binary):
        depth, node = depth + 1, node.left
    assert depth == 148 and render(node) == "0"


def test_a_long_max_is_written_as_a_balanced_tree_of_the_same_terms(expand_program, render):
    out = expand_program(program("", "max j in 1000 (j)"))
    assert errors(out) == []
    (observe,) = [n for n in walk(out.expansion.kernel) if isinstance(n, ast.Observe)]
    terms = [render(n) for n in walk(observe.value) if isinstance(n, ast.Number)]
    assert sorted(terms, key=float) == [str(k) for k in range(1000)]
    assert measure(observe.value, {})[1] <= 2 * 10 + 2  # ~log2(1000) calls, 2 levels each
    short = expand_program(program("", "max j in 3 (j)"))
    (observe,) = [n for n in walk(short.expansion.kernel) if isinstance(n, ast.Observe)]
    assert render(observe.value) == "max(max(0, 1), 2)"  # as the spec writes it out


def test_aggregates_too_big_to_write_out_run_as_diagnostics(tmp_path):
    path = tmp_path / "agg.sq"
    path.write_text(program("", "sum j in 1000 (j) + max j in 1e12 (j)"))
    done = subprocess.run(
        [sys.executable, "-m", "serq.cli", "run", str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("error[E-too-deep]") == 2



def test_the_limits_page_gives_the_longest_sum_exactly(expand_program):
    # docs/limits.md said "at most about 150 terms" (146 for `used(kv[j])`, 149 for `j`);
    # the page now gives the counts, each checked here: n terms expand, n + 1 do not
    import re
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "limits.md").read_text(encoding="utf-8")
    page = " ".join(page.split())
    assert "about 150 terms" not in page
    (said,) = re.findall(r"at most \*\*(\d+) terms\*\* when the term is a name", page)
    assert int(said) == MAX_INLINED_DEPTH - 1  # n - 1 additions above a name's two levels
    examples = [e for e in re.findall(r"`sum j in (\d+) \(([^`]+)\)`", page) if "sum" not in e[1]]
    assert ("149", "j") in examples and len(examples) == 3, examples
    pool = "pool kv[200] { cap 10; }\n"
    for n, term in [*examples, (str(MAX_INLINED_DEPTH), "7")]:
        assert errors(expand_program(pool + program("", f"sum j in {n} ({term})"))) == []
        (err,) = errors(expand_program(pool + program("", f"sum j in {int(n) + 1} ({term})")))
        assert err.code == "E-too-deep" and "levels deep (at most 150)" in err.message
    # a max as long as the longest sum plus one is a balanced tree, not an error
    assert errors(expand_program(program("", f"max j in {MAX_INLINED_DEPTH} (j)"))) == []
