"""The incremental layout: after any edit, rescanning around it gives exactly the chunks,
module and diagnostics of a fresh parse; the units the edit did not reach are the same
objects (with their parses), and the splice names exactly the units it replaced."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from serq.diagnostics import LineIndex
from serq.syntax import ItemCache, parse
from serq.syntax.scanner import scan
from serq.syntax.source_text import lines_ended, text_start

ROOT = Path(__file__).resolve().parents[2]
FILE = "layout.sq"

PIECES = [
    "",
    "x",
    "1",
    ";",
    "}",
    "{",
    "\n",
    "\r\n",
    "\r",
    "let q = 0;\n",
    "def g(a) = a + 1;\n",
    " -0.5 ",
    "🙂",
    "/*",
    "*/",
    '"',
    "//",
    "fn main() {\n",
    "stage s : fifo;",
    "  let ",
    "\ufeff",
]


def _texts() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.sq"))]
    return texts[:8]


def _edit(rng: random.Random, text: str) -> str:
    """A random edit of `text` (a lone `\r` among what it may leave: a line break)."""
    return _one_edit(rng, text)


def _one_edit(rng: random.Random, text: str) -> str:
    start = rng.randint(0, len(text))
    end = min(len(text), start + rng.choice([0, 0, 1, 2, 10, 80]))
    if rng.random() < 0.2:
        at = rng.randint(0, len(text))
        piece = text[at : at + rng.randint(1, 120)]
    else:
        piece = rng.choice(PIECES)
    return text[:start] + piece + text[end:]


def _check(cache: ItemCache, before, text: str) -> None:
    result = parse(text, FILE, cache)
    layout = result.layout
    assert list(layout.chunks()) == scan(lines_ended(text), text_start(text))
    fresh = parse(text, FILE)
    assert result.diagnostics == fresh.diagnostics
    assert result.module == fresh.module
    assert layout.line_index._starts == LineIndex(text)._starts
    assert all(layout.index_of(u) == i for i, u in enumerate(layout.units))
    if before is not None and result.splice is not None:
        sp = result.splice
        assert layout.units[: sp.first] == before.units[: sp.first]
        assert layout.units[sp.new_stop :] == before.units[sp.old_stop :]
        assert len(layout.units) - sp.new_stop == len(before.units) - sp.old_stop


@pytest.mark.parametrize("seed", range(12))
def test_random_edits_equal_a_fresh_parse(seed):
    rng = random.Random(seed)
    texts = _texts()
    text = texts[seed % len(texts)]
    if seed % 3 == 0:  # the fn-main dialect
        text = "let k = 1;\nfn main() {\n" + text + "\n}\n"
    cache = ItemCache()
    parse(text, FILE, cache)
    for _ in range(40):
        before = cache.layouts[FILE]
        text = _edit(rng, text)
        _check(cache, before, text)


def test_an_edit_keeps_every_other_unit():
    text = "".join(f"let c{k} = {k};\n" for k in range(200))
    cache = ItemCache()
    before = parse(text, FILE, cache).layout
    at = text.index("let c100 = 100") + len("let c100 = ")
    edited = text[:at] + "7" + text[at:]  # an insertion: every later unit moves
    result = parse(edited, FILE, cache)
    sp = result.splice
    assert (sp.first, sp.old_stop, sp.new_stop) == (100, 101, 101)
    assert all(a is b for a, b in zip(result.layout.units[101:], before.units[101:], strict=True))
    assert result.layout.starts[150] == before.starts[150] + 1
    assert result.module.items[150] == parse(edited, FILE).module.items[150]


def test_an_edit_on_a_line_moves_the_later_units_of_that_line_sideways():
    text = "let a = 1; let b = 2; let c = 3;\nlet d = 4;\n"
    cache = ItemCache()
    parse(text, FILE, cache)
    edited = text.replace("a = 1", "a = 100")
    _check(cache, None, edited)
    layout = cache.layouts[FILE]
    assert layout.columns[2] == edited.index("let c") + 1


def test_the_same_text_again_is_the_same_layout():
    text = "let a = 1;\n"
    cache = ItemCache()
    first = parse(text, FILE, cache).layout
    assert parse(text, FILE, cache).layout is first


def test_every_unit_is_found_where_it_is():
    rng = random.Random(7)
    text = "".join(f"let c{k} = {k};\n" for k in range(60))
    cache = ItemCache()
    layouts = [parse(text, FILE, cache).layout]
    for _ in range(120):  # many insertions at one place run out of room between labels
        at = text.index("let c30")
        text = text[:at] + f"let n{rng.randint(0, 10**6)} = 1;\n" + text[at:]
        layouts.append(parse(text, FILE, cache).layout)
    for layout in layouts[-3:] + layouts[:2]:
        assert layout.labels == sorted(set(layout.labels))
        for i, unit in enumerate(layout.units):
            assert layout.index_of(unit) == i


def test_a_parse_that_read_to_the_end_of_the_file_is_parsed_again_when_the_file_grows():
    """`w` and `workload {` do not end where their chunks do: the parser closes them at
    the end of the file, so their parses depend on how far the file goes on. An edit far
    below parses them again; the complete items between are kept."""
    text = "w\nworkload {\n" + "".join(f"let c{k} = {k};\n" for k in range(30))
    cache = ItemCache()
    before = parse(text, FILE, cache).layout
    assert [u.parsed.tail is not None for u in before.units[:3]] == [True, True, False]
    edited = text.replace("let c29 = 29;", "let c29 = 290;")
    _check(cache, before, edited)
    after = cache.layouts[FILE]
    assert after.units[0] is not before.units[0] and after.units[1] is not before.units[1]
    assert after.units[5] is before.units[5]
    same_length = text.replace("let c29 = 29;", "let c29 = 291;")
    _check(cache, after, same_length)
    assert cache.layouts[FILE].units[0] is after.units[0]  # the file is as long: kept


def test_a_moved_unit_keeps_its_parse_and_moves_its_nodes_when_read():
    text = "".join(f"let c{k} = {k};\n" for k in range(10))
    cache = ItemCache()
    before = parse(text, FILE, cache).layout
    edited = "\n\n" + text
    after = parse(edited, FILE, cache).layout
    unit = after.units[5]
    assert unit is before.units[5] and unit.parsed is before.units[5].parsed
    moved = after.parsed(5)
    assert moved is after.parsed(5)  # the move is kept
    assert moved.nodes == parse(edited, FILE).module.items[5:6]
    assert before.parsed(5).nodes == parse(text, FILE).module.items[5:6]
