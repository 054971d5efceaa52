"""The symbol index (`serq.link.index`) means by each name what the linker means: on every
example, every name the linker's `Scope` declares is declared in the index at the same
place, and the index follows `use` as the expander does."""

from __future__ import annotations

from pathlib import Path

import pytest

from serq.expand import expand
from serq.expand.loader import read_file
from serq.link import link
from serq.link.index import build_index
from serq.syntax import parse

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.sq"))
CORPUS = sorted((ROOT / "tests" / "corpus" / "valid").glob("*.sq")) + sorted(
    (ROOT / "tests" / "corpus" / "valid_main").glob("*.sq")
)


def _index_and_scope(path: Path):
    module = parse(path.read_text(encoding="utf-8"), str(path)).module
    linked = link(expand(module).kernel)
    assert linked.ok, linked.diagnostics
    return build_index(module, read_file), linked.scope


@pytest.mark.parametrize("path", EXAMPLES + CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_name_the_linker_declares_is_declared_in_the_index_at_its_place(path):
    index, scope = _index_and_scope(path)
    declared = {}
    for o in index.everywhere():
        if o.is_declaration:
            declared.setdefault(o.key, []).append(o)
    for name, span in scope.let_spans.items():
        assert [(o.span.file, o.span.start) for o in declared[("value", name)]][0] == (
            span.file,
            span.start,
        )
    for family in [*scope.pools.values(), *scope.stages.values()]:
        if family.name.endswith(".latency"):
            continue  # the stage a `latency` clause (`serve ... latency`, `pull`) makes: unnamed
        (first, *_) = declared[("res", family.name)]
        assert first.kind in (family.kind, "queue")  # a queue is its engine, stage `P`
        assert (first.span.file, first.span.start) == (family.span.file, family.span.start)
    marks_and_bindings = {o.key[1] for o in index.everywhere() if o.kind in ("mark", "binding")}
    bound = {name.rsplit(":", 1)[-1] for name in marks_and_bindings}
    for name in scope.attrs:
        if name in scope.attr_spans and name not in marks_and_bindings | bound:
            assert ("value", name) in declared or any(
                k[0] == "value" and k[1].endswith("." + name) for k in declared
            ), name
    for name in scope.observes:
        assert ("stat", name) in declared, name


def test_the_index_follows_use_into_the_library_and_back():
    path = ROOT / "examples" / "vllm.sq"
    index, _ = _index_and_scope(path)
    library = str((ROOT / "examples" / "lib" / "vllm.sq").resolve())
    assert index.files == (library,)
    (definition,) = index.declarations(("def", "vllm_request"))
    assert definition.span.file == library and definition.kind == "def"
    calls = [o for o in index.references(("def", "vllm_request")) if not o.is_declaration]
    assert [o.span.file for o in calls] == [str(path)]
    # `kv` in the library's body means the program's pool, as where the call is written out
    (pool,) = index.declarations(("res", "kv"))
    assert pool.span.file == str(path)
    assert library in {o.span.file for o in index.references(("res", "kv"))}
    # the module's own occurrences are the ones a cursor finds; the library's are elsewhere
    assert all(o.span.file == str(path) for o in index.occurrences)


def test_without_a_loader_the_index_stays_in_its_file():
    path = ROOT / "examples" / "vllm.sq"
    module = parse(path.read_text(encoding="utf-8"), str(path)).module
    index = build_index(module)
    assert index.files == () and index.elsewhere == []
    assert index.declarations(("def", "vllm_request")) == []


def test_a_library_used_twice_or_in_a_cycle_is_read_once(tmp_path):
    (tmp_path / "a.sq").write_text('use "b.sq";\ndef f(x) = g(x) + 1;\n')
    (tmp_path / "b.sq").write_text('use "a.sq";\ndef g(x) = x * 2;\n')
    main = tmp_path / "main.sq"
    main.write_text('use "a.sq";\nuse "b.sq";\nlet k = f(3);\n')
    reads = []

    def load(file):
        reads.append(file)
        return read_file(file)

    index = build_index(parse(main.read_text(), str(main)).module, load)
    assert sorted(Path(f).name for f in reads) == ["a.sq", "b.sq"]
    (g,) = index.declarations(("def", "g"))
    assert Path(g.span.file).name == "b.sq"
    assert {Path(o.span.file).name for o in index.references(("def", "g"))} == {"a.sq", "b.sq"}


def test_an_unreadable_library_is_skipped(tmp_path):
    main = tmp_path / "main.sq"
    main.write_text('use "missing.sq";\nlet k = 1;\n')
    index = build_index(parse(main.read_text(), str(main)).module, read_file)
    assert index.files == ()
    assert index.declarations(("value", "k"))
