"""The code registry: every code is declared once, well named and described."""

import re

import pytest

from serq.diagnostics import Diagnostic, Span, codes

ID = re.compile(r"[ELW]-[a-z0-9]+(-[a-z0-9]+)*")


def _constants() -> dict[str, codes.Code]:
    return {name: v for name, v in vars(codes).items() if isinstance(v, codes.Code)}


def test_every_code_is_documented_and_well_named() -> None:
    assert codes.ALL
    for code in codes.ALL.values():
        assert ID.fullmatch(code.id), code.id
        assert code.description.strip(), code.id
        assert "\n" not in code.description, code.id
        assert code.category in codes.CATEGORIES, code.id
        assert codes.describe(code.id) == code.description


def test_codes_are_unique_and_registered() -> None:
    constants = _constants()
    ids = [c.id for c in constants.values()]
    assert len(ids) == len(set(ids))
    assert sorted(ids) == sorted(codes.ALL)
    assert all(codes.ALL[c.id] is c for c in constants.values())


def test_duplicate_declaration_is_an_error() -> None:
    with pytest.raises(ValueError):
        codes.Code("E-parse", "again", "syntax")
    assert codes.ALL["E-parse"] is codes.PARSE


def test_declared_codes() -> None:
    assert codes.PARSE.id == "E-parse" and codes.PARSE.category == "syntax"
    assert codes.IO.id == "E-io" and codes.IO.category == "io"


def test_describe_unknown_code() -> None:
    with pytest.raises(KeyError):
        codes.describe("E-no-such-code")


def test_diagnostic_needs_a_declared_code() -> None:
    span = Span.point("f.sq", 0, 1, 1)
    with pytest.raises(ValueError):
        Diagnostic.error("E-no-such-code", span, "nope")
    assert Diagnostic.error(codes.PARSE, span, "ok").code == "E-parse"
