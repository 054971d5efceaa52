"""The Diagnostic model: severities, constructors, fixes and ordering."""

import pytest

from serq.diagnostics import Diagnostic, Edit, Fix, Label, Severity, Span, codes


def _span(start: int, end: int, file: str = "f.sq") -> Span:
    return Span(file, start, end, 1, start + 1, 1, end + 1)


def test_severity_order_and_labels() -> None:
    assert Severity.NOTE < Severity.WARNING < Severity.ERROR
    assert [s.label for s in Severity] == ["note", "warning", "error"]
    assert int(Severity.ERROR) == 2


def test_constructors_set_severity() -> None:
    span = _span(0, 1)
    assert Diagnostic.error("E-parse", span, "m").severity is Severity.ERROR
    assert Diagnostic.warning("E-parse", span, "m").severity is Severity.WARNING
    assert Diagnostic.note("E-parse", span, "m").severity is Severity.NOTE


def test_sequences_become_tuples_and_diagnostics_hash() -> None:
    diag = Diagnostic.error(
        codes.PARSE, _span(0, 1), "m", labels=[Label(_span(2, 3), "here")], notes=["n"]
    )
    assert diag.labels == (Label(_span(2, 3), "here"),)
    assert diag.notes == ("n",)
    assert hash(diag) == hash(
        Diagnostic.error(
            "E-parse", _span(0, 1), "m", labels=(Label(_span(2, 3), "here"),), notes=("n",)
        )
    )


def test_fix_sorts_edits_and_checks_applicability() -> None:
    late, early = Edit(_span(5, 6), "x"), Edit(_span(1, 1), "y")
    assert Fix("t", (late, early)).edits == (early, late)
    with pytest.raises(ValueError):
        Fix("t", (), "maybe")


def test_sort_key() -> None:
    a = Diagnostic.error("E-parse", _span(4, 5), "m")
    b = Diagnostic.error("E-io", _span(4, 5), "m")
    c = Diagnostic.error("E-parse", _span(1, 9), "m")
    d = Diagnostic.error("E-parse", _span(0, 1, "a.sq"), "m")
    assert sorted([a, b, c, d], key=Diagnostic.sort_key) == [d, c, b, a]
