"""A unit rescanned at the place of an old unit with the same text, while that old unit is
kept further on (moved past the edit), is a new object: the item cache kept the old one
for both, one object twice in the layout, and the incremental analysis saw one `let bs`
where the text declares two (found by tests/fuzz/lsp_search.py --seed 48: another
program pasted into a document, both with `let bs = 16;` at the same place)."""

from __future__ import annotations

from pathlib import Path

import pytest

from serq.expand.loader import read_file
from serq.incremental import Cache, analyze, analyze_whole
from serq.syntax import ItemCache, parse

PATH = str(Path(__file__).resolve().parents[2] / "examples" / "incremental_twice.sq")
BASE = (
    "// a comment\nlet bs = 16;\nstage s : fifo(1);\nworkload { arrive poisson(1); }\n"
    "session { run s (bs); }\nrun { horizon 10; }\n"
)
PASTED = "// b comment\nlet bs = 16;\nstage t : fifo(1);\n"


def test_the_layout_holds_each_unit_once():
    items = ItemCache()
    parse(BASE, PATH, items)
    units = parse(PASTED + BASE, PATH, items).layout.units
    assert len({id(u) for u in units}) == len(units) == 7


@pytest.mark.parametrize("edited", [PASTED + BASE, BASE[:13] + PASTED[13:] + BASE[13:]])
def test_a_declaration_twice_after_an_edit_is_a_clash(edited):
    cache = Cache()
    analyze(BASE, PATH, cache, read_file)
    got = analyze(edited, PATH, cache, read_file).diagnostics
    whole = analyze_whole(parse(edited, PATH), edited, PATH, read_file).diagnostics
    assert got == whole
    assert [d.code for d in got] == ["E-name-clash"]
