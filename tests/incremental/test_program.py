"""The incremental analysis (`serq.incremental`) says after every edit what a whole analysis
of the final text says, and re-does only what the edit can change.

Each cache has a test of an edit that must invalidate an entry and of one that must not:
the units' summaries, the program's reports (which units an edit runs the front end on),
the libraries a `use` read, and the index."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from serq.expand.loader import read_file
from serq.incremental import Cache, analyze, analyze_whole
from serq.link.index import build_index
from serq.syntax import parse
from tests.incremental.edits import edit

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _whole(text: str, path: str, load=read_file) -> list:
    return analyze_whole(parse(text, path), text, path, load).diagnostics


def _programs() -> list[tuple[str, str]]:
    from bench.lsp import program

    texts = [(p.read_text(encoding="utf-8"), str(p)) for p in sorted(EXAMPLES.glob("*.sq"))]
    texts.append((program(150), str(EXAMPLES / "incremental_test.sq")))  # never written
    return texts


PROGRAMS = _programs()


@pytest.mark.parametrize("seed", range(len(PROGRAMS) * 2))
def test_random_edits_report_what_a_whole_analysis_reports(seed):
    rng = random.Random(seed)
    text, path = PROGRAMS[seed % len(PROGRAMS)]
    cache = Cache()
    for _ in range(12):
        assert analyze(text, path, cache, read_file).diagnostics == _whole(text, path)
        text = edit(rng, text, path)
    assert analyze(text, path, cache, read_file).diagnostics == _whole(text, path)


# --------------------------------------------------------------- what is re-done

LETS = "".join(f"let c{k} = {k} * 2 + 1;\n" for k in range(50))
PROGRAM = (
    LETS
    + "let rate = c7 / 10;\n"
    + "def twice(x) = 2 * x + c9;\n"
    + "stage s : fifo;\n"
    + "workload { arrive poisson(rate); }\n"
    + "session { run s (twice(1)); }\n"
    + "run { horizon 10; }\n"
)
PATH = str(EXAMPLES / "incremental_lets.sq")


def _edited(old: str, new: str, text: str = PROGRAM) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def _again(text: str, cache: Cache):
    found = analyze(text, PATH, cache, read_file)
    assert found.diagnostics == _whole(text, PATH)
    return cache.programs[PATH]


def test_an_edit_of_a_let_nothing_reads_runs_on_that_let_alone():
    cache = Cache()
    _again(PROGRAM, cache)
    program = _again(_edited("let c3 = 3 * 2", "let c3 = 4 * 2"), cache)
    stale_old, stale_new, scope_old, scope_new = program.last
    assert [len(s) for s in (stale_old, stale_new, scope_old, scope_new)] == [1, 1, 1, 1]


def test_an_edit_of_a_let_read_by_the_deployment_runs_on_the_deployment():
    cache = Cache()
    _again(PROGRAM, cache)
    program = _again(_edited("let c7 = 7 * 2", "let c7 = 0 * 2"), cache)
    _, stale_new, _, scope_new = program.last
    texts = sorted(u.text.split(" ")[0] + " " + u.text.split(" ")[1] for u in stale_new)
    assert "let c7" in texts and "let rate" in texts and "workload {" in texts
    assert "session {" in texts  # the core goes with it
    assert "let c3" not in texts  # read by nothing the edit touches
    assert len(scope_new) < 15


def test_an_insertion_moves_the_reports_of_later_items():
    cache = Cache()
    broken = _edited("let c40 = 40 * 2 + 1;", "let c40 = nothing + 1;")
    first = analyze(broken, PATH, cache, read_file).diagnostics
    assert [d.code for d in first] == ["E-unknown-name"]
    moved = _edited("let c3 = 3", "let c3 = 33", broken)
    found = analyze(moved, PATH, cache, read_file).diagnostics
    assert found == _whole(moved, PATH)
    assert found[0].span.start == first[0].span.start + 1
    last = cache.programs[PATH].last
    assert last is not None and len(last[1]) == 1  # only `let c3` was re-done


def test_a_new_declaration_of_a_read_name_reaches_its_readers():
    cache = Cache()
    text = PROGRAM + "let late = missing * 2;\n"
    assert [d.code for d in analyze(text, PATH, cache, read_file).diagnostics] == ["E-unknown-name"]
    text = _edited("let c5 = 5 * 2 + 1;", "let c5 = 5 * 2 + 1;\nlet missing = 1;", text)
    assert analyze(text, PATH, cache, read_file).diagnostics == []
    assert _whole(text, PATH) == []


def test_a_second_declaration_is_a_clash_with_the_first():
    cache = Cache()
    _again(PROGRAM, cache)
    text = _edited("let c5 = 5 * 2 + 1;", "let c5 = 5 * 2 + 1;\nlet c9 = 0;")
    found = analyze(text, PATH, cache, read_file).diagnostics
    assert found == _whole(text, PATH) and [d.code for d in found] == ["E-name-clash"]


def test_a_summary_is_kept_for_a_unit_that_did_not_change():
    cache = Cache()
    first = analyze(PROGRAM, PATH, cache, read_file)
    unit = first.parsed.layout.units[20]
    summary = unit.memo["summary"]
    second = analyze(_edited("let c3 = 3", "let c3 = 33"), PATH, cache, read_file)
    assert second.parsed.layout.units[20] is unit and unit.memo["summary"] is summary
    changed = second.parsed.layout.units[3]
    assert changed is not first.parsed.layout.units[3]
    assert changed.memo["summary"].declares == {"c3"}


# ------------------------------------------------------------------ libraries


def test_a_changed_library_counts_as_a_changed_use():
    libraries = {"lib.sq": "def svc(x) = x * 2;\n"}

    def load(path: str):
        name = Path(path).name
        return parse(libraries[name], path) if name in libraries else "no such file"

    text = 'use "lib.sq";\nlet a = svc(1);\nlet b = 2;\n'
    path = str(EXAMPLES / "uses_lib.sq")
    cache = Cache()
    assert analyze(text, path, cache, load).diagnostics == []
    libraries["lib.sq"] = "def other(x) = x * 2;\n"  # the file changed, not the program
    found = analyze(text, path, cache, load).diagnostics
    assert [d.code for d in found] == ["E-unknown-name"] and found == _whole(text, path, load)
    program = cache.programs[path]
    texts = {u.text for u in program.last[1]}
    assert texts == {'use "lib.sq";', "let a = svc(1);"}  # not `let b`
    libraries["lib.sq"] = "def svc(x) = x;\n"
    assert analyze(text, path, cache, load).diagnostics == []


# ---------------------------------------------------------------------- index


@pytest.mark.parametrize("seed", range(4))
def test_the_index_of_a_version_is_the_index_of_its_module(seed):
    rng = random.Random(seed)
    text, path = PROGRAMS[(seed * 5) % len(PROGRAMS)]
    cache = Cache()
    for _ in range(6):
        found = analyze(text, path, cache, read_file)
        if found.version is not None:
            from serq_lsp.analysis import Analysis
            from serq_lsp.folding import ranges
            from serq_lsp.symbols import outline

            analysis = Analysis(path, text, found, read_file)
            index = analysis.index
            whole = build_index(parse(text, path).module, read_file)
            fresh = Analysis(path, text, analyze(text, path, Cache(), read_file), read_file)
            assert outline(analysis) == outline(fresh)  # read off moved spans, not nodes
            assert ranges(analysis) == ranges(fresh)
            listed = [(o.key, o.span, o.kind, o.container) for o in index.listing()]
            assert listed == [(o.key, o.span, o.kind, o.container) for o in whole.occurrences]
            assert index.occurrences == whole.occurrences
            assert index.elsewhere == whole.elsewhere
            for offset in range(0, len(text), 7):
                assert index.at(offset) == whole.at(offset)
            for key in {o.key for o in whole.occurrences[::5]}:
                assert index.references(key) == whole.references(key)
        text = edit(rng, text, path)


def test_reports_of_one_place_keep_the_order_the_passes_report_them_in():
    """A `def` whose body reads an unknown name, called from two lets and the session: four
    errors at one place (the lets' without help, the session's with), from different runs."""
    text = (
        "def g(x) = x + q;\n"
        "stage s : fifo;\n"
        "session {\n  run s (g(1));\n  run s (g(2));\n}\n"
        "let a = g(3);\n"
        + "".join(f"let pad{k} = {k};\n" for k in range(20))
        + "let b = g(4);\n"
    )
    path = str(EXAMPLES / "incremental_ties.sq")
    cache = Cache()
    for edited in (
        text,
        text.replace("let pad3 = 3;", "let pad3 = 33;"),
        text.replace("let b = g(4);", "let b = g(5);"),
        text.replace("let a = g(3);", "let a = 3;"),
        text.replace("run s (g(2));", "run s (2);"),
    ):
        found = analyze(edited, path, cache, read_file).diagnostics
        assert found == _whole(edited, path)
    assert len({d.help for d in _whole(text, path)}) == 2


def test_a_unit_keeps_its_part_of_the_index_where_it_did_not_move():
    from serq_lsp.analysis import Analysis

    cache = Cache()
    first = analyze(PROGRAM, PATH, cache, read_file)
    index = Analysis(PATH, PROGRAM, first, read_file).index
    offset = PROGRAM.index("let c30") + 4
    assert index.at(offset).key == ("value", "c30")
    unit = first.parsed.layout.units[30]
    kept = unit.memo["index"]
    same = _edited("let c3 = 3", "let c3 = 4")  # as long: nothing moves
    second = analyze(same, PATH, cache, read_file)
    Analysis(PATH, same, second, read_file).index.at(offset)
    assert unit.memo["index"] is kept
    longer = _edited("let c3 = 3", "let c3 = 33")  # every later unit moves one character
    third = analyze(longer, PATH, cache, read_file)
    occurrence = Analysis(PATH, longer, third, read_file).index.at(offset + 1)
    assert occurrence.key == ("value", "c30") and occurrence.span.start == offset + 1
    assert unit.memo["index"] is not kept and unit.memo["index"][0][0] == kept[0][0] + 1


def test_an_edit_that_reads_no_library_leaves_the_use_alone():
    loads = []

    def load(path: str):
        loads.append(path)
        return parse("def svc(x) = x * 2;\n", path)

    text = 'use "lib.sq";\nlet a = svc(1);\nlet b = 2;\n'
    path = str(EXAMPLES / "uses_lib_2.sq")
    cache = Cache()
    analyze(text, path, cache, load)
    analyze(text.replace("let b = 2;", "let b = 3;"), path, cache, load)
    stale = {u.text for u in cache.programs[path].last[1]}
    assert stale == {"let b = 3;"}  # the library was read again, found the same: kept
    assert loads  # each version reads its libraries
