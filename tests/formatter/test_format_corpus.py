"""`serq fmt` over every valid program: the formatted text links to the same IR as the
original (origins aside), formats to itself, and is what the repository holds.

Over the invalid corpus: the items that parse are formatted, the broken ones are
left as written, so the formatted file has the same syntax errors and formats to
itself too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from serq import api
from serq.formatter import format_source

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted(
    [
        *(ROOT / "tests" / "corpus" / "valid").rglob("*.sq"),
        *(ROOT / "tests" / "corpus" / "valid_main").rglob("*.sq"),
        *(ROOT / "examples").rglob("*.sq"),
    ]
)
INVALID = sorted((ROOT / "tests" / "corpus" / "invalid").glob("*.sq"))


def _ir(text: str, path: Path):
    """The IR of `text` as the program at `path`, without origins (positions move)."""
    program, diagnostics = api.link_source(text, str(path))
    if program is None:
        return None, [d.code for d in diagnostics]
    from serq.ir import codec

    return _strip(json.loads(codec.to_json(program))), [d.code for d in diagnostics]


def _strip(value):
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "origin"}
    if isinstance(value, list):
        if len(value) == 7 and all(type(v) is int for v in value):
            return "span"  # an origin written as a bare list: `{"Turn": [file, start, …]}`
        return [_strip(v) for v in value]
    return value


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_format_keeps_the_ir_and_is_idempotent(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    formatted = format_source(text, str(path))
    assert formatted.ok
    assert format_source(formatted.text, str(path)).text == formatted.text
    before, codes_before = _ir(text, path)
    after, codes_after = _ir(formatted.text, path)
    assert after == before
    assert codes_after == codes_before


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_repository_programs_are_formatted(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert format_source(text, str(path)).text == text, f"run `serq fmt {path}`"


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_broken_items_are_left_as_written(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    formatted = format_source(text, str(path))
    again = format_source(formatted.text, str(path))
    assert again.text == formatted.text
    assert [d.message for d in again.diagnostics] == [d.message for d in formatted.diagnostics]
    assert len(formatted.diagnostics) == len(api.parse_source(text, str(path)).diagnostics)
