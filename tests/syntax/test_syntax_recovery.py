"""Syntax errors: where each is reported, what survives it, and the corpus of broken files.

The table gives, for each source, every `E-parse` position the parser must report
(1-based line and column of the offending token), and nothing else. A missing `;`
is reported at the token that stands where the `;` should be, as the reference
pyserq does. Cases marked `xfail` record parser bugs: the test states the right
behaviour and fails until the parser is fixed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from serq.syntax import ast, parse

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
EXPECT = re.compile(r"^//! E-parse (\d+):(\d+)\s*$", re.M)


def positions(source: str) -> list[tuple[int, int]]:
    result = parse(source, "case.sq")
    assert all(d.code == "E-parse" for d in result.diagnostics)
    return sorted((d.span.line, d.span.column) for d in result.diagnostics)


def bug(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


# (source, every (line, column) the parser must report for it)
CASES = [
    # missing `;`: at the next token, whatever it is
    pytest.param("let a = 1\nlet b = 2;\n", [(2, 1)], id="semicolon-before-item"),
    pytest.param("stage s : fifo\nsession { run s (1); }\n", [(2, 1)], id="semicolon-after-stage"),
    pytest.param("session {\n  run s (1)\n}\n", [(3, 1)], id="semicolon-before-brace"),
    pytest.param(
        "session {\n  set x = 1\n  set y = 2;\n}\n", [(3, 3)], id="semicolon-between-statements"
    ),
    pytest.param("gauge g = used(kv)\nshare maxmin;\n", [(2, 1)], id="semicolon-after-gauge"),
    # characters no token begins with
    pytest.param("let a = 1 @ 2;\n", [(1, 11)], id="bad-character-in-let"),
    pytest.param("session { set x = $y; }\n", [(1, 19)], id="bad-character-in-set"),
    pytest.param("let a = 1;\n#\nlet b = 2;\n", [(2, 1)], id="bad-character-between-items"),
    # unterminated string and comment: at the opening quote or `/*`
    pytest.param(
        'workload {\n  trace "t.csv;\n}\nsession { turn; }\n', [(2, 9)], id="unterminated-string"
    ),
    pytest.param("session { run s (1); /* open }\n", [(1, 22)], id="unterminated-comment-in-item"),
    pytest.param("session { run s (1); } /* open", [(1, 24)], id="unterminated-comment-after-item"),
    pytest.param(
        "stage s : fifo;\n/* never closed\nsession { }\n",
        [(2, 1)],
        id="unterminated-comment-between-items",
    ),
    # missing `)`: at the token after the expression
    pytest.param("let y = (1 + 2;\n", [(1, 15)], id="rparen-in-let"),
    pytest.param("session { run s (y; }\n", [(1, 19)], id="rparen-in-run"),
    pytest.param("session { set x = min(y, 2; }\n", [(1, 27)], id="rparen-in-call"),
    # an unclosed `{` at the end of the file: at the `{` (the end of the input is a label)
    pytest.param("session {\n  run s (1);", [(1, 9)], id="unclosed-brace-eof-no-newline"),
    pytest.param(
        "session {\n  run s (1);\n",
        [(1, 9)],
        id="unclosed-brace-eof",
    ),
    pytest.param("fn main() {\n  stage s : delay;\n", [(1, 11)], id="unclosed-fn-main"),
    # pool options
    pytest.param("pool kv { cap 10; evict fifo; }\n", [(1, 25)], id="pool-evict-fifo"),
    pytest.param("pool kv { cap 10 evict lru; }\n", [(1, 18)], id="pool-option-semicolon"),
    pytest.param("pool kv { preempt always; cap 3; }\n", [(1, 19)], id="pool-preempt-always"),
    pytest.param("pool kv { spill t via s (size); }\n", [(1, 31)], id="pool-spill-without-when"),
    pytest.param("pool kv { capacity 5; }\n", [(1, 11)], id="pool-unknown-option"),
    pytest.param("stage e : stepx { budget 1; }\n", [(1, 11)], id="stage-kind-word-prefix"),
    pytest.param("workload { arrive poissons(1); }\n", [(1, 19)], id="arrival-word-prefix"),
    pytest.param("run { horizons 10; }\n", [(1, 7)], id="run-setting-word-prefix"),
    # step options
    pytest.param("stage e : step { budget 1; serve fast; };\n", [(1, 34)], id="step-serve-fast"),
    pytest.param("stage e : step { budget; cost 1; };\n", [(1, 24)], id="step-budget-empty"),
    pytest.param("stage e : step { budget 1 cost 2; };\n", [(1, 27)], id="step-option-semicolon"),
    pytest.param(
        "stage e : step { budget 1; cost; }\nstage s : fifo;\n", [(1, 32)], id="step-cost-empty"
    ),
    pytest.param("stage s : lifo;\n", [(1, 11)], id="stage-unknown-kind"),
    pytest.param("stage s : fifox;\n", [(1, 11)], id="stage-kind-prefix"),
    # workload clauses
    pytest.param("workload { arrive sometimes(1); }\n", [(1, 19)], id="workload-arrive-unknown"),
    pytest.param("workload { trace t.csv; }\n", [(1, 18)], id="workload-trace-unquoted"),
    pytest.param("workload { hidden o,; }\n", [(1, 21)], id="workload-hidden-trailing-comma"),
    pytest.param("workload { arrive poisson(1) }\n", [(1, 30)], id="workload-semicolon"),
    pytest.param("workload { turn set x = 1; }\n", [(1, 17)], id="workload-turn-without-block"),
    # queue members
    pytest.param("queue Q : decode { serve ; }\n", [(1, 26)], id="queue-serve-without-kind"),
    pytest.param("queue Q : decode { decode (p); }\n", [(1, 30)], id="queue-entry-without-block"),
    pytest.param(
        "queue Q : decode { pool kv { cap 1; } serve fifo(2) latency; }\n",
        [(1, 60)],
        id="queue-latency-without-value",
    ),
    pytest.param("queue Q : decode { nic ps 5; }\n", [(1, 27)], id="queue-nic-ps-without-parens"),
    # run settings
    pytest.param("run { horizon 10 }\n", [(1, 18)], id="run-setting-semicolon"),
    pytest.param("run { duration 5; horizon 10; }\n", [(1, 7)], id="run-unknown-setting"),
    pytest.param("run { horizon 10; warmup; }\n", [(1, 25)], id="run-warmup-empty"),
    # statements
    pytest.param("session { hold kv (1) { } cache 2; turn; }\n", [(1, 33)], id="hold-cache-parens"),
    pytest.param("session { grow kv 3; }\n", [(1, 19)], id="grow-without-parens"),
    pytest.param("session { observe = 3; }\n", [(1, 19)], id="observe-without-name"),
    pytest.param("session { transfer (5); }\n", [(1, 23)], id="transfer-without-from"),
    # expressions
    pytest.param("let a = 1 < 2 < 3;\n", [(1, 15)], id="chained-comparison"),
    pytest.param("let a = x ? 1;\n", [(1, 14)], id="conditional-without-colon"),
    pytest.param("let a = max j in 3 used(kv);\n", [(1, 20)], id="aggregate-body-parens"),
    pytest.param('let a = "x";\n', [(1, 9)], id="string-in-expression"),
    # between items
    pytest.param("let a = 1;;\n", [(1, 11)], id="stray-semicolon"),
    pytest.param("session { run s (1); }}\n", [(1, 23)], id="stray-brace"),
    pytest.param("42 + 1;\nstage s : fifo;\n", [(1, 1)], id="number-as-item"),
    # one error per mistake: no cascade after the offending token
    pytest.param("gauge g busy(s);\n", [(1, 9)], id="gauge-without-equal"),
    pytest.param("share fair;\n", [(1, 7)], id="share-unknown-policy"),
    pytest.param("def f(x y) { run s (x); }\n", [(1, 9)], id="def-params-without-comma"),
    # three separate mistakes in one file, each at its place, in one pass
    pytest.param(
        "let a = 1\n"
        "stage s : fifo;\n"
        "pool kv { cap 10; evict fifo; }\n"
        "workload { arrive poisson(a); }\n"
        "session {\n"
        "  set x = a +;\n"
        "  run s (x);\n"
        "}\n"
        "run { horizon 10; }\n",
        [(2, 1), (3, 25), (6, 14)],
        id="three-mistakes",
    ),
    pytest.param(
        "session {\n  hold kv (1) {\n    grow kv 3;\n    run s (1)\n  }\n  observe = 1;\n}\n",
        [(3, 13), (5, 3), (6, 11)],
        id="three-mistakes-one-block",
    ),
    # mistakes inside `fn main() { }`
    pytest.param(
        "fn main() {\n"
        "  pool kv { cap 10 }\n"
        "  stage s : delay;\n"
        "  workload { arrive poisson(1); session { turn; } }\n"
        "  server { run s (cost(s 1)); }\n"
        "}\n",
        [(2, 20), (5, 26)],
        id="main-two-mistakes",
    ),
    pytest.param(
        "fn main() {\n  stage s : delay\n  server { run s (1); }\n}\n",
        [(3, 3)],
        id="main-semicolon",
    ),
    pytest.param(
        "fn main() {\n  server { set x = 1 +; }\n}\n", [(2, 23)], id="main-operator-without-operand"
    ),
    pytest.param("fn main {\n  stage s : delay;\n}\n", [(1, 9)], id="main-without-parens"),
    pytest.param(
        "let a = 1\nfn main() {\n  stage s : delay;\n}\n", [(2, 1)], id="main-item-before-it"
    ),
]


@pytest.mark.parametrize(("source", "expected"), CASES)
def test_error_positions(source, expected):
    assert positions(source) == sorted(expected)


# ------------------------------------------------------------ what survives


def test_items_around_a_broken_item_survive():
    source = "stage s : fifo;\npool kv cap 3;\nsession { run s (1); }\n"
    result = parse(source)
    kinds = [type(i) for i in result.module.items]
    assert kinds == [ast.Stage, ast.ErrorItem, ast.Session]
    assert result.module.items[0].name.name == "s"
    assert isinstance(result.module.items[2].body.body[0], ast.Run)


def test_a_pool_with_a_broken_option_keeps_its_other_options():
    source = "stage s : fifo;\npool kv { cap 10; evict fifo; block 16; }\nsession { run s (1); }\n"
    result = parse(source)
    stage, pool, session = result.module.items
    assert isinstance(stage, ast.Stage) and isinstance(session, ast.Session)
    assert isinstance(pool, ast.Pool) and pool.name.name == "kv"
    keys = [o.key if isinstance(o, ast.Option) else type(o) for o in pool.options]
    assert keys == ["cap", ast.ErrorOption, "block"]


def test_a_broken_statement_becomes_an_error_statement():
    source = "session {\n  set x = ;\n  run s (1);\n  end;\n}\n"
    result = parse(source)
    (session,) = result.module.items
    body = session.body.body
    assert [type(s) for s in body] == [ast.ErrorStmt, ast.Run, ast.End]
    assert source[body[0].span.start : body[0].span.end].startswith("set x =")


def test_a_broken_statement_in_a_nested_block_keeps_the_block():
    source = (
        "session {\n  hold kv (1) {\n    grow kv 3;\n    run s (1);\n  } cache (2);\n  turn;\n}\n"
    )
    (session,) = parse(source).module.items
    hold, turn = session.body.body
    assert isinstance(hold, ast.Hold) and isinstance(turn, ast.Turn)
    assert [type(s) for s in hold.body.body] == [ast.ErrorStmt, ast.Run]
    assert isinstance(hold.cache, ast.Number) and hold.cache.value == 2


def test_broken_workload_clause_queue_member_and_run_setting_are_error_options():
    source = (
        "workload { arrive sometimes(1); hidden o; }\n"
        "queue Q : decode { serve ; decode (p) { run (p); } }\n"
        "run { duration 5; horizon 10; }\n"
    )
    workload, queue, run = parse(source).module.items
    assert [type(c) for c in workload.clauses] == [ast.ErrorOption, ast.Hidden]
    assert [type(m) for m in queue.members] == [ast.ErrorOption, ast.Entry]
    assert [type(s) for s in run.settings] == [ast.ErrorOption, ast.Option]
    assert run.settings[1].key == "horizon"


def test_a_stray_brace_is_one_error_item():
    result = parse("session { run s (1); }}\nstage s : fifo;\n")
    kinds = [type(i) for i in result.module.items]
    assert kinds == [ast.Session, ast.ErrorItem, ast.Stage]
    assert len(result.diagnostics) == 1


def test_a_missing_semicolon_keeps_both_items():
    result = parse("let a = 1\nlet b = 2;\n")
    assert [type(i) for i in result.module.items] == [ast.Let, ast.Let]
    assert [i.name.name for i in result.module.items] == ["a", "b"]


def test_an_unclosed_block_at_the_end_keeps_what_was_read():
    (session,) = parse("session { loop { run s (1); turn;").module.items
    (loop,) = session.body.body
    assert [type(s) for s in loop.body.body] == [ast.Run, ast.Turn]


def test_items_inside_a_broken_main_survive():
    source = "fn main() {\n  pool kv { cap 10 }\n  stage s : delay;\n  server { run s (1); }\n}\n"
    module = parse(source).module
    assert module.main is not None
    assert [type(i) for i in module.main.items] == [ast.Pool, ast.Stage, ast.Server]


@pytest.mark.parametrize(
    "line",
    ["server (1);", "workload (1);", "stage, gauge (1);", "gauge (1);", "let, def (1);"],
)
def test_a_line_beginning_with_an_item_keyword_as_a_name_stays_in_its_item(line):
    # keywords are contextual: `server` may name a stage, and a statement may go on at
    # the start of a line no more indented than its item (`run // c` then `server (1);`,
    # the tools search's comments at seed 51 in examples/vocabulary/mg1_args.sq)
    for head in ("", "fn main() {\n"):
        source = (
            f"{head}stage server : fifo(1);\nstage workload : delay;\n"
            f"server {{\nrun // c\n{line}\n}}\n" + ("}\n" if head else "")
        )
        result = parse(source)
        assert not result.diagnostics, source
        items = result.module.main.items if head else result.module.items
        assert [type(i) for i in items] == [ast.Stage, ast.Stage, ast.Server]


def test_an_item_begun_inside_an_open_brace_starts_a_new_item():
    source = "session {\n  run s (1);\nserver { run s (2); }\nstage t : fifo;\n"
    items = parse(source).module.items
    assert [type(i) for i in items][1:] == [ast.Server, ast.Stage]


# -------------------------------------------------------------- the messages


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("let a = 1\nlet b = 2;\n", ["expected `;`", "found `let`"]),
        ("session {\n  run s (1)\n}\n", ["expected `;`", "found `}`"]),
        ("let y = (1 + 2;\n", ["expected `)`", "found `;`"]),
        ("pool kv { cap 10; evict fifo; }\n", ["`lru`", "`by`", "found `fifo`"]),
        ("stage s : lifo;\n", ["`fifo`", "`ps`", "`delay`", "`step`"]),
        ("session { set x = ; }\n", ["expected an expression"]),
        ("run { duration 5; }\n", ["a run setting", "found `duration`"]),
        ("let a = 1 @ 2;\n", ["unexpected character `@`"]),
        ('workload { trace "t.csv; }\n', ["unterminated string"]),
        ("session { } /* open\n", ["unterminated comment"]),
        ("session {\n  run s (1);", ["`{` is never closed", "the file ends before its `}`"]),
        ("workload { trace t.csv; }\n", ["expected a string"]),
    ],
)
def test_messages_say_what_was_expected(source, words):
    (diagnostic,) = parse(source).diagnostics
    assert diagnostic.code == "E-parse"
    for word in words:
        assert word in diagnostic.message
    assert "SEMICOLON" not in diagnostic.message and "RBRACE" not in diagnostic.message


@pytest.mark.parametrize(
    ("source", "option", "name"),
    [
        ("pool reqs[2] { cap 8; admit via engine[self]; }\n", "admit via", "engine"),
        ("pool reqs[2] { admit   via\n  E[0]; }\n", "admit via", "E"),
        ("stage e[2] : step { budget 8; cost 1; memory kv[1]; }\n", "memory", "kv"),
    ],
)
def test_an_indexed_family_option_says_the_family_is_named_whole(source, option, name):
    (diagnostic,) = parse(source).diagnostics
    assert diagnostic.message == "expected `;`, found `[`"
    assert diagnostic.help is not None
    assert f"write `{option} {name};`" in diagnostic.help


def test_an_index_elsewhere_gets_no_family_help():
    (diagnostic,) = parse("pool kv { cap 8[1]; }\n").diagnostics
    assert diagnostic.help is None


def test_diagnostics_come_sorted_by_position():
    source = "let a = 1\nstage s : fifo\npool kv { cap }\n"
    result = parse(source)
    starts = [d.span.start for d in result.diagnostics]
    assert starts == sorted(starts) and len(starts) == 3


# ------------------------------------------------------------------ corpus

INVALID = sorted((CORPUS / "invalid").glob("*.sq"))
VALID = sorted((CORPUS).glob("valid*/**/*.sq"))

INVALID_BUGS = {}
VALID_BUGS: dict[str, str] = {}


def corpus_params(paths, bugs):
    params = []
    for path in paths:
        name = str(path.relative_to(CORPUS))
        marks = [bug(bugs[path.name])] if path.name in bugs else []
        params.append(pytest.param(path, id=name, marks=marks))
    return params


@pytest.mark.parametrize("path", corpus_params(INVALID, INVALID_BUGS))
def test_invalid_corpus(path):
    text = path.read_text(encoding="utf-8")
    expected = sorted((int(a), int(b)) for a, b in EXPECT.findall(text))
    assert expected, f"{path.name} states no `//! E-parse L:C` expectation"
    result = parse(text, str(path))
    assert all(d.code == "E-parse" for d in result.diagnostics)
    assert sorted((d.span.line, d.span.column) for d in result.diagnostics) == expected


@pytest.mark.parametrize("path", corpus_params(VALID, VALID_BUGS))
def test_valid_corpus(path):
    result = parse(path.read_text(encoding="utf-8"), str(path))
    assert [(d.span.line, d.span.column, d.message) for d in result.diagnostics] == []
