"""The tools search in CI, kept to a few seconds: a fixed sample of the repository's and
the spec's programs and one mutant of each, through the formatter's promises, the
incremental parser and the CLI (tests/fuzz/tools_search.py), a third of them through the
other commands (`run --emit-python`, `explain`, `--set`/`--def`, `sweep`, `plot`), and a
few documents through the language server (tests/fuzz/lsp_search.py). A larger run by hand:
`python tests/fuzz/tools_search.py --seed N --mutants 6` and
`python tests/fuzz/lsp_search.py --seed N --mutants 2`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lsp_search  # noqa: E402
import tools_search as search  # noqa: E402

SOURCES = search.sources()
SAMPLE = SOURCES[::40] + [s for s in SOURCES if s.name.startswith("serq-workload")][-1:]
SEED = 5


def test_the_sources_are_every_folder_and_the_spec():
    names = [s.name for s in SOURCES]
    for folder in search.FOLDERS:
        assert any(n.startswith(folder + "/") for n in names), folder
    spec = [s for s in SOURCES if "#" in s.name]
    assert any("fn main()" in s.text for s in spec)  # the workload spec's complete program
    assert any(s.name.startswith("serq-language") for s in spec)


def test_the_mutants_are_reproducible_and_cover_every_mutation():
    first = list(search.texts(SOURCES[:60], 3, SEED))
    again = list(search.texts(SOURCES[:60], 3, SEED))
    assert [t.text for t in first] == [t.text for t in again]
    drawn = {m for t in search.texts(SOURCES, 2, SEED) for m in t.mutations}
    assert drawn == {m.__name__ for m in search.MUTATIONS}


@pytest.mark.parametrize("item", list(search.texts(SAMPLE, 1, SEED)), ids=lambda t: t.label)
def test_sample(item):
    only = {"fmt", "meaning", "incremental", "cli"}
    assert search.check(item, only, edits=3) == []


@pytest.mark.parametrize("item", list(search.texts(SAMPLE[::3], 1, SEED)), ids=lambda t: t.label)
def test_sample_of_the_other_commands(item):
    assert search.check(item, {"tools"}, edits=0) == []


def test_language_server_sample():
    server = lsp_search.Server()
    try:
        items = list(search.texts(SAMPLE[:3], 1, SEED))
        found = [p for k, t in enumerate(items) for p in lsp_search.check_document(server, t, 3, k)]
    finally:
        server.close()
    assert found == []
