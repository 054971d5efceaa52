"""The item cache: an edit inside one item re-parses that item only, and the result is
exactly a fresh parse (nodes, spans and diagnostics); and the item-wise parse agrees with
the one-piece `parse_whole` on the valid corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from serq.syntax import ItemCache, ast, parse, parse_whole

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
FILE = "prog.sq"


def bug(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


def _program() -> str:
    items = []
    for i in range(5):
        items += [
            f"let c{i} = {i} + 1;",
            f"pool kv{i} {{ cap 100 * c{i}; block 16; evict lru; preempt lifo; }}",
            f"stage s{i} : ps({i + 1});",
            f"def f{i}(x) = x * {i} + c{i};",
            f"def serve{i}(w) {{\n  hold kv{i} (w) {{\n    run s{i} (f{i}(w));\n  }} cache (w);\n}}",
        ]
    items += [
        "stage engine : step { budget 512; cost 0.01 + 0.0001 * tokens; memory kv0; };",
        "workload {\n  arrive poisson(1);\n  init { set K = 0; }\n  turn { set n = 10; }\n}",
        "session {\n  loop {\n    turn;\n    hold kv0 (n) {\n      run s0 (f0(n));\n"
        "      set K = K + 1;\n    } cache (n);\n    branch (K > 3) { end; }\n  }\n}",
        "gauge g = used(kv0) + used(kv1); let tail = 1;",
        "share maxmin;",
        "run { horizon 100; warmup 10; seed 1; }",
    ]
    return "\n".join(items) + "\n"


PROGRAM = _program()

MAIN_PROGRAM = (
    "let rate = 2;\n"
    "def twice(w) { run s (w); run s (w); }\n"
    "fn main() {\n"
    "  pool kv { cap 1000; block 16; evict lru; }\n"
    "  stage s : ps(min(present, 4));\n"
    "  stage t : delay;\n"
    "  workload {\n"
    "    arrive poisson(rate);\n"
    "    turn { set n = 100; }\n"
    "    session { loop { turn; request; tool ~exp(1); } }\n"
    "  }\n"
    "  server {\n"
    "    hold kv (n) {\n"
    "      twice(n / 100);\n"
    "    } cache (n);\n"
    "  }\n"
    "  gauge mem = used(kv);\n"
    "}\n"
)


def at(text: str, marker: str, offset: int = 0) -> int:
    """The offset of `marker` (which must occur once) in `text`, plus `offset`."""
    assert text.count(marker) == 1, marker
    return text.index(marker) + offset


def replace(text: str, pos: int, length: int, new: str) -> str:
    return text[:pos] + new + text[pos + length :]


def assert_same_as_fresh(result, text: str) -> None:
    fresh = parse(text, FILE)
    assert result.module == fresh.module
    assert result.diagnostics == fresh.diagnostics
    assert repr(result.module) == repr(fresh.module)


def reparse(cache: ItemCache, before: str, after: str):
    """Parse `before` then `after` with `cache`; the result of `after` and the parses it cost."""
    parse(before, FILE, cache)
    count = cache.parses
    result = parse(after, FILE, cache)
    return result, cache.parses - count


def test_the_program_is_large_and_valid():
    result = parse(PROGRAM, FILE)
    assert result.diagnostics == ()
    assert len(result.module.items) >= 30
    cache = ItemCache()
    parse(PROGRAM, FILE, cache)
    assert cache.parses == len(result.module.items)
    parse(PROGRAM, FILE, cache)
    assert cache.parses == len(result.module.items)  # the second parse is all cache hits


# (marker, offset in the marker, length replaced, replacement); each lands inside one item
# and at least 16 characters after the item's first character.
EDITS = [
    pytest.param("cap 100 * c2", 5, 1, "2", id="digit"),
    pytest.param("cap 100 * c2", 10, 2, "c3", id="name"),
    pytest.param("evict lru; preempt lifo; }\nstage s3", 6, 3, "lrv", id="bad-option-word"),
    pytest.param("run s3 (f3(w))", 4, 2, "s4", id="stage-name-in-def"),
    pytest.param("set K = K + 1", 10, 1, "-", id="operator"),
    pytest.param("set K = K + 1", 13, 0, ";", id="insert-error"),
    pytest.param("branch (K > 3) { end; }", 21, 1, "", id="delete-semicolon"),
    pytest.param("{ set n = 10; }", 13, 0, " ", id="insert-space"),
    pytest.param("used(kv0) + used(kv1)", 10, 1, "*", id="gauge-operator"),
    pytest.param("warmup 10; seed 1;", 8, 1, "", id="run-setting"),
    pytest.param("f4(x) = x * 4", 12, 1, "y", id="def-body"),
    pytest.param("cost 0.01 + 0.0001 * tokens", 6, 1, "(", id="unbalanced-paren"),
]


@pytest.mark.parametrize(("marker", "offset", "length", "new"), EDITS)
def test_one_character_edit_reparses_one_item(marker, offset, length, new):
    cache = ItemCache()
    edited = replace(PROGRAM, at(PROGRAM, marker, offset), length, new)
    result, parses = reparse(cache, PROGRAM, edited)
    assert parses == 1
    assert_same_as_fresh(result, edited)


@pytest.mark.parametrize(("marker", "offset", "length", "new"), EDITS)
def test_undoing_an_edit_costs_nothing(marker, offset, length, new):
    cache = ItemCache()
    edited = replace(PROGRAM, at(PROGRAM, marker, offset), length, new)
    reparse(cache, PROGRAM, edited)
    result, parses = reparse(cache, edited, PROGRAM)
    assert parses == 0
    assert_same_as_fresh(result, PROGRAM)


def test_a_sequence_of_edits_stays_equal_to_fresh_parses():
    cache = ItemCache()
    text = PROGRAM
    parse(text, FILE, cache)
    for marker, offset, length, new in [p.values for p in EDITS]:
        if text.count(marker) != 1:
            continue
        text = replace(text, at(text, marker, offset), length, new)
        count = cache.parses
        result = parse(text, FILE, cache)
        assert cache.parses - count <= 1
        assert_same_as_fresh(result, text)


def test_an_edit_near_the_start_of_an_item_reparses_only_that_item():
    cache = ItemCache()
    edited = replace(PROGRAM, at(PROGRAM, "pool kv3 {", 7), 1, "9")
    result, parses = reparse(cache, PROGRAM, edited)
    assert_same_as_fresh(result, edited)
    assert parses == 1


def test_an_edit_that_adds_a_line_shifts_later_items():
    cache = ItemCache()
    edited = replace(PROGRAM, at(PROGRAM, "preempt lifo; }\nstage s1", 13), 0, "\n  ")
    result, parses = reparse(cache, PROGRAM, edited)
    assert parses == 1
    assert_same_as_fresh(result, edited)
    before = parse(PROGRAM, FILE).module.items
    after = result.module.items
    index = next(
        i for i, item in enumerate(after) if getattr(item, "name", None) and item.name.name == "s1"
    )
    assert after[index].span.line == before[index].span.line + 1
    assert after[index].span.start == before[index].span.start + 3
    assert after[-1].span.line == before[-1].span.line + 1


def test_an_edit_that_removes_lines_shifts_later_items():
    cache = ItemCache()
    start = at(PROGRAM, "(f1(w));\n  } cache", 7)
    edited = replace(PROGRAM, start, 3, " ")  # "\n  }" -> " }"
    result, parses = reparse(cache, PROGRAM, edited)
    assert parses == 1
    assert_same_as_fresh(result, edited)


def test_an_edit_shifts_the_columns_of_an_item_on_the_same_line():
    cache = ItemCache()
    edited = replace(PROGRAM, at(PROGRAM, "used(kv1); let tail", 7), 1, "10")
    result, parses = reparse(cache, PROGRAM, edited)
    assert parses == 1
    assert_same_as_fresh(result, edited)
    tail = next(i for i in result.module.items if isinstance(i, ast.Let) and i.name.name == "tail")
    assert tail.span.column == len("gauge g = used(kv0) + used(kv10); ") + 1


def test_an_edit_that_adds_an_error_in_one_item_keeps_the_others_cached():
    cache = ItemCache()
    edited = replace(PROGRAM, at(PROGRAM, "stage s2 : ps(3);", 16), 1, "")  # drop the `;`
    result, parses = reparse(cache, PROGRAM, edited)
    assert_same_as_fresh(result, edited)
    assert [(d.span.line, d.message.split(",")[0]) for d in result.diagnostics] == [
        (PROGRAM[: at(PROGRAM, "def f2")].count("\n") + 1, "expected `;`")
    ]
    assert parses <= 2


# ----------------------------------------------------------- across items


BOUNDARY_EDITS = [
    pytest.param("let c1 = 1 + 1;", 14, 1, "", id="delete-item-semicolon"),
    pytest.param("let c1 = 1 + 1;", 14, 1, ";;", id="double-semicolon"),
    pytest.param("preempt lifo; }\nstage s2", 14, 1, "", id="delete-item-brace"),
    pytest.param("preempt lifo; }\nstage s2", 15, 1, " ", id="join-lines"),
    pytest.param("used(kv1); let tail", 10, 1, "\n", id="split-line"),
    pytest.param("cache (w);\n}\nlet c3", 11, 2, "", id="merge-def-and-let"),
    pytest.param("def f2(x)", 0, 0, "}", id="stray-brace-before-item"),
    pytest.param("def f2(x)", 0, 0, "{", id="open-brace-before-item"),
    pytest.param("def f2(x)", 0, 0, "session {\n", id="unclosed-item-before-item"),
    pytest.param("def f2(x)", 0, 0, "/*", id="open-comment"),
    pytest.param("def f2(x)", 0, 0, '"', id="open-string"),
    pytest.param("run { horizon", 0, 0, "}\n", id="stray-brace-before-last"),
]


@pytest.mark.parametrize(("marker", "offset", "length", "new"), BOUNDARY_EDITS)
def test_edits_across_item_boundaries_equal_a_fresh_parse(marker, offset, length, new):
    cache = ItemCache()
    edited = replace(PROGRAM, at(PROGRAM, marker, offset), length, new)
    result, parses = reparse(cache, PROGRAM, edited)
    assert_same_as_fresh(result, edited)
    result, parses = reparse(cache, edited, PROGRAM)
    assert_same_as_fresh(result, PROGRAM)


# ------------------------------------------------------------- fn main


MAIN_EDITS = [
    pytest.param("cap 1000; block 16", 6, 1, "5", id="pool-digit"),
    pytest.param("ps(min(present, 4))", 16, 1, "8", id="stage-arg"),
    pytest.param("session { loop { turn; request;", 25, 1, "x", id="workload-session"),
    pytest.param("twice(n / 100);", 10, 1, "*", id="server-call"),
    pytest.param("gauge mem = used(kv);", 18, 1, "w", id="gauge"),
    pytest.param("hold kv (n) {\n      twice", 14, 0, "\n", id="add-line-in-server"),
    pytest.param("def twice(w) { run s (w); run s (w); }", 34, 1, "t", id="def-before-main"),
]


@pytest.mark.parametrize(("marker", "offset", "length", "new"), MAIN_EDITS)
def test_fn_main_edit_reparses_one_item(marker, offset, length, new):
    assert parse(MAIN_PROGRAM, FILE).diagnostics == ()
    cache = ItemCache()
    edited = replace(MAIN_PROGRAM, at(MAIN_PROGRAM, marker, offset), length, new)
    result, parses = reparse(cache, MAIN_PROGRAM, edited)
    assert parses == 1
    assert_same_as_fresh(result, edited)


@pytest.mark.parametrize(
    ("marker", "offset", "length", "new"),
    [
        pytest.param("fn main() {", 3, 4, "mian", id="rename-main"),
        pytest.param("fn main() {", 10, 1, "", id="delete-main-brace"),
        pytest.param("  gauge mem = used(kv);\n}", 24, 1, "", id="delete-main-close"),
        pytest.param("  gauge mem = used(kv);\n}", 24, 1, "}}", id="double-main-close"),
        pytest.param("let rate = 2;", 12, 1, "", id="semicolon-before-main"),
        pytest.param("  stage t : delay;", 17, 1, "", id="semicolon-in-main"),
        pytest.param("  stage t : delay;", 0, 0, "fn main() {\n", id="nested-main"),
    ],
)
def test_fn_main_structural_edits_equal_a_fresh_parse(marker, offset, length, new):
    cache = ItemCache()
    edited = replace(MAIN_PROGRAM, at(MAIN_PROGRAM, marker, offset), length, new)
    result, _ = reparse(cache, MAIN_PROGRAM, edited)
    assert_same_as_fresh(result, edited)
    result, _ = reparse(cache, edited, MAIN_PROGRAM)
    assert_same_as_fresh(result, MAIN_PROGRAM)


def test_one_cache_serves_two_files():
    cache = ItemCache()
    a = parse(PROGRAM, "a.sq", cache)
    b = parse(PROGRAM, "b.sq", cache)
    assert a.module.file == "a.sq" and b.module.file == "b.sq"
    assert all(i.span.file == "b.sq" for i in b.module.items)
    assert b.module == parse(PROGRAM, "b.sq").module


# ------------------------------------------- item-wise against one piece

VALID = sorted(CORPUS.glob("valid*/**/*.sq"))
WHOLE_BUGS: dict[str, str] = {}


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(
            p,
            id=str(p.relative_to(CORPUS)),
            marks=[bug(WHOLE_BUGS[p.name])] if p.name in WHOLE_BUGS else [],
        )
        for p in VALID
    ],
)
def test_item_wise_and_whole_parse_agree(path):
    text = path.read_text(encoding="utf-8")
    items = parse(text, str(path))
    whole = parse_whole(text, str(path))
    assert items.module == whole.module
    assert [(d.span.line, d.span.column) for d in items.diagnostics] == [
        (d.span.line, d.span.column) for d in whole.diagnostics
    ]


def test_parsing_the_same_text_again_without_a_cache_reuses_the_result():
    """A file parsed again with the same text (a sweep's points, the libraries they use)
    is the result of the first parse; another text or another file is parsed afresh,
    and a parse with a cache goes through the cache."""
    from serq.syntax import document

    text = "stage s : fifo(1);\nsession {\n  run s (~exp(0.5));\n}\n"
    first = document.parse(text, "recent.sq")
    assert document.parse(text, "recent.sq") is first
    assert document.parse(text, "other.sq") is not first
    edited = document.parse(text.replace("0.5", "0"), "recent.sq")
    assert edited is not first and edited.module != first.module
    cache = document.ItemCache()
    assert document.parse(text, "recent.sq", cache) is not first
    for k in range(document._RECENT_FILES):
        document.parse(text, f"f{k}.sq")
    assert document.parse(text, "recent.sq") is not first  # the oldest went first
