"""An unknown name's `did you mean` reads every declared name close to it, not only the
names its unit reads: the incremental analysis counts those as read (found by
tests/fuzz/lsp_search.py: after `Lambda` was misspelt in an edit, the diagnostic lost its
help, which a whole analysis gives)."""

from __future__ import annotations

from pathlib import Path

import pytest

from serq.expand.loader import read_file
from serq.incremental import Cache, analyze, analyze_whole
from serq.syntax import parse

PATH = str(Path(__file__).resolve().parents[2] / "examples" / "incremental_near.sq")
PROGRAM = (
    "let {first} = 0.5;\n"
    "let {second} = 1;\n"
    "stage s : delay;\n"
    "workload {{ arrive poisson({read}); }}\n"
    "session {{ run s (1); }}\n"
    "run {{ horizon 1; }}\n"
)


def _text(first="Lambda", second="q", read="Lambda") -> str:
    return PROGRAM.format(first=first, second=second, read=read)


@pytest.mark.parametrize(
    "versions",
    [
        pytest.param([_text(), _text(read="Lmbda")], id="misspelt"),
        pytest.param(
            [_text(read="Lmbda"), _text(second="Lambd", read="Lmbda")], id="a-second-close-name"
        ),
        pytest.param(
            [_text(second="Lambd", read="Lmbda"), _text(read="Lmbda")], id="the-second-removed"
        ),
        pytest.param(
            [_text(read="Lmbda"), _text(first="Lambdo", read="Lmbda")], id="the-close-one-renamed"
        ),
        pytest.param(
            [_text(first="x", read="Lmbda"), _text(read="Lmbda")], id="a-close-one-declared"
        ),
    ],
)
def test_the_help_of_an_unknown_name_is_a_whole_analysis_s(versions):
    cache = Cache()
    for text in versions:
        found = analyze(text, PATH, cache, read_file).diagnostics
        assert found == analyze_whole(parse(text, PATH), text, PATH, read_file).diagnostics
    assert [d.code for d in found] == ["E-unknown-name"]
