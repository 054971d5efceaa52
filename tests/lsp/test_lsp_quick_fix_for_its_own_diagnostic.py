"""A quick fix is offered for the diagnostic it mends, not for another at the same place.

A hidden `o` read in `reuse (o)` of a hold without `cache` is two errors on the same
`o`: E-hidden, whose fix drops the read, and E-structure (`reuse` without `cache`), which
has none. Asked for the actions of the E-structure diagnostic alone (its hover's quick
fixes), the server offered E-hidden's fix as well, since its range touched the request's.
Now the diagnostics the request names choose the fixes; a request that names none of the
document's (the cursor on a fix's edit elsewhere, or a client's stale copy) still gets
the fixes whose diagnostic or edits its range touches.
"""

from __future__ import annotations

from lsprotocol import types

from serq_lsp.analysis import analyze
from serq_lsp.code_actions import actions
from serq_lsp.convert import lsp_diagnostics

TEXT = """pool kv { cap 100; }
stage s : fifo(1);
workload { arrive poisson(1); hidden o; turn { set o = 5; } }
session {
  turn;
  hold kv (1) reuse (o) { run s (1); }
}
run { horizon 10; }
"""
URI = "file:///nowhere/fix.sq"


def _fixes(diagnostics, at=None):
    analysis = analyze(TEXT, "/nowhere/fix.sq")
    where = diagnostics[0].range if at is None else at
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI),
        range=where,
        context=types.CodeActionContext(
            diagnostics=diagnostics, only=[types.CodeActionKind.QuickFix]
        ),
    )
    return [(a.title, [d.code for d in a.diagnostics]) for a in actions(analysis, URI, params)]


def _published():
    published = lsp_diagnostics(analyze(TEXT, "/nowhere/fix.sq"), URI)
    assert sorted(d.code for d in published) == ["E-hidden", "E-structure"]
    hidden = next(d for d in published if d.code == "E-hidden")
    structure = next(d for d in published if d.code == "E-structure")
    assert hidden.range == structure.range
    return hidden, structure


def test_the_other_diagnostic_gets_no_fix():
    _, structure = _published()
    assert _fixes([structure]) == []


def test_the_diagnostic_with_the_fix_gets_it_once():
    hidden, structure = _published()
    (fix,) = _fixes([hidden])
    assert fix[1] == ["E-hidden"]
    assert _fixes([hidden, structure]) == [fix]


def test_a_request_naming_none_of_them_gets_what_its_range_touches():
    hidden, _ = _published()
    assert [f[1] for f in _fixes([], hidden.range)] == [["E-hidden"]]
    stale = types.Diagnostic(range=hidden.range, message="old", code="E-hidden")
    assert [f[1] for f in _fixes([stale])] == [["E-hidden"]]
    # the cursor on the fix's edit, at `reuse`, where no diagnostic is
    line = TEXT.splitlines().index("  hold kv (1) reuse (o) { run s (1); }")
    at = types.Position(line, TEXT.splitlines()[line].index("reuse"))
    assert [f[1] for f in _fixes([], types.Range(at, at))] == [["E-hidden"]]
