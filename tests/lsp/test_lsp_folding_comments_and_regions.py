"""Folding ranges of comments: each block comment where the parser reads one, and the
`// region` ... `// endregion` markers editors/vscode/language-configuration.json names.

The server found block comments with a pattern over the raw text, so a `/*` inside a
`//` comment or a string opened one: `// see /* here` folded every line down to the
next `*/` as a comment, and the real block comment there was not folded. And VS Code
takes a language server's folding ranges instead of the language configuration's
markers, so the `// region` markers the extension declares folded nothing.
"""

from __future__ import annotations

from lsprotocol import types

from serq_lsp.analysis import analyze
from serq_lsp.folding import ranges

TEXT = """// see /* here
let a = 1;
let b = "x/*";
/* real
 */
stage s : fifo(1);
// region setup
let c = 2;
  //#region inner
let d = 3;
  //#endregion
// endregion
workload { arrive poisson(1); }
session {
  run s (1); // and */ here
}
run { horizon 10; }
"""


def _folds(text: str) -> set[tuple[int, int, str | None]]:
    return {(r.start_line, r.end_line, r.kind) for r in ranges(analyze(text, "/nowhere/f.sq"))}


def test_block_comments_are_the_parsers():
    folds = _folds(TEXT)
    comments = {f for f in folds if f[2] == types.FoldingRangeKind.Comment}
    assert comments == {(3, 4, types.FoldingRangeKind.Comment)}, folds


def test_region_markers_fold():
    folds = _folds(TEXT)
    regions = {f for f in folds if f[2] == types.FoldingRangeKind.Region}
    assert regions == {(6, 11, "region"), (8, 10, "region")}, folds
    assert (13, 15, None) in folds  # the session block, as before


def test_crlf_and_lone_cr_fold_alike():
    for end in ("\r\n", "\r"):
        assert _folds(TEXT.replace("\n", end)) == _folds(TEXT), end


def test_unmatched_markers_fold_nothing():
    text = "// endregion\n// region a\nlet x = 1;\n"
    assert {f for f in _folds(text) if f[2] == "region"} == set()
