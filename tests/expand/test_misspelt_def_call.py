"""A call of a misspelt `def` name suggests the `def`, with a quick fix.

`levl(300, 1)` beside `def level(a, b)` (in the program or in a library it `use`s) was
"unknown function `levl`" and nothing more: the linker, which reports unknown functions,
sees the kernel, where `def`s are gone, and suggested only built-in functions (`flor` got
"did you mean `floor`?"). The editor offered no quick fix. The expander, which knows the
`def`s, now reports a call whose one close name is a `def`'s, with the help, a label at
the `def` and the fix; and a misspelt statement call (`serve_itt();`) gets the same help.
"""

from __future__ import annotations

from serq import api
from serq_lsp.analysis import analyze

LIB = "def level(a, b) {\n  a + b\n}\ndef serve_it() { run s (1); }\n"
PROGRAM = """use "lib.sq";
stage s : fifo(1);
workload { arrive poisson(1); }
session { run s (CALL); STMT observe x = 1; }
run { horizon 5; }
"""


def _diagnostics(tmp_path, call="level(1, 2)", stmt=""):
    (tmp_path / "lib.sq").write_text(LIB)
    text = PROGRAM.replace("CALL", call).replace("STMT", stmt)
    path = str(tmp_path / "main.sq")
    return text, path, api.link_source(text, path)[1]


def test_a_misspelt_library_def_in_an_expression(tmp_path):
    text, path, found = _diagnostics(tmp_path, call="levl(1, 2)")
    assert [str(d.code) for d in found] == ["E-unknown-name"]
    d = found[0]
    assert d.message == "unknown function `levl`"
    assert "did you mean `level`?" in str(d.help)
    assert [label.span.file for label in d.labels] == [str(tmp_path / "lib.sq")]
    assert d.fix is not None and [e.replacement for e in d.fix.edits] == ["level"]
    fixed = text[: d.span.start] + "level" + text[d.span.end :]
    assert api.link_source(fixed, path)[1] == []


def test_the_editor_offers_the_fix(tmp_path):
    text, path, _ = _diagnostics(tmp_path, call="levl(1, 2)")
    analysis = analyze(text, path)
    fixes = [d.fix for d in analysis.diagnostics if d.fix is not None]
    assert [e.replacement for f in fixes for e in f.edits] == ["level"]


def test_a_misspelt_statement_def(tmp_path):
    _, _, found = _diagnostics(tmp_path, stmt="serve_itt();")
    assert [str(d.code) for d in found] == ["E-def"]
    assert "did you mean `serve_it`?" in str(found[0].help)
    assert found[0].fix is not None


def test_a_name_close_to_a_builtin_or_to_nothing_is_the_linkers(tmp_path):
    _, _, found = _diagnostics(tmp_path, call="flor(1.5)")
    assert [d.message for d in found] == ["unknown function `flor`"]
    assert "did you mean `floor`?" in str(found[0].help)
    _, _, found = _diagnostics(tmp_path, call="zzzzzz(1)")
    assert [d.message for d in found] == ["unknown function `zzzzzz`"]
    assert found[0].fix is None
