"""The rule checks (`serq.link.checks.check_rules`) on the negative link corpus and the valid ones.

tests/corpus/link_invalid/*.sq: each file breaks one rule once. Its first lines say

    //! CODE LINE:COL                 what check_rules reports, and nothing else
    //~ reference "text"              the reference rejects it at the same position, saying text
    //~ reference LINE:COL "text"     ... at another position (NOTES.md says why)
    //~ reference - "text"            ... without a position (its rule errors carry none)
    //~ reference accepts (...)       a known disagreement, argued in NOTES.md

The reference is pyserq 0.1.2 in process, and for a `fn main` file pyserq 0.1.4 in one
subprocess (0.1.2 has no server-side `hidden` analysis; 0.1.4 has it, in its dialect).
Every program of tests/corpus/valid, tests/corpus/valid_main and examples passes the
checks with nothing to report.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from serq.expand import expand
from serq.expand.context import NotConstant, evaluate
from serq.link.checks import check_rules
from serq.syntax import ast, parse

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
INVALID = sorted((CORPUS / "link_invalid").glob("*.sq"))
VALID = (
    sorted((CORPUS / "valid").glob("*.sq"))
    + sorted((CORPUS / "valid_main").glob("*.sq"))
    + sorted((ROOT / "examples").glob("*.sq"))
)

EXPECT = re.compile(r"\A//! (\S+) (\d+):(\d+)\n")
REFERENCE = re.compile(r'^//~ reference(?: (?P<pos>\d+:\d+|-))?(?: "(?P<says>.*)")?$', re.M)
ACCEPTS = re.compile(r"^//~ reference accepts\b", re.M)
POSITION = re.compile(r"^(\d+):(\d+):")
MAIN = re.compile(r"^\s*fn\s+main\b", re.M)


def lets_of(kernel: ast.Module) -> dict[str, float]:
    """The values of the kernel's `let`s, each folded over the ones above it."""
    lets: dict[str, float] = {}
    for item in kernel.items:
        if isinstance(item, ast.Let):
            try:
                lets[item.name.name] = evaluate(item.value, lets)
            except NotConstant:
                pass
    return lets


def checked(path: Path) -> tuple[list, list[tuple[str, int, int]]]:
    """The parse and expansion errors of the file at `path`, and what check_rules reports."""
    text = path.read_text()
    parsed = parse(text, str(path))
    expansion = expand(parsed.module)
    before = [d for d in (*parsed.diagnostics, *expansion.diagnostics)]
    found = check_rules(expansion.kernel, lets_of(expansion.kernel))
    return before, [(d.code, d.span.line, d.span.column) for d in found]


def _name(path: Path) -> str:
    return path.stem


# --------------------------------------------------------------------- the corpus


def test_corpus_covers_every_rule_family():
    assert len(INVALID) >= 40
    codes = {EXPECT.match(p.read_text()).group(1) for p in INVALID}
    assert codes == {
        "E-moment",
        "E-hidden",
        "E-constant",
        "E-structure",
        "L-set-in-header",
        "L-constant-guard",
    }


@pytest.mark.parametrize("path", INVALID, ids=_name)
def test_file_is_annotated(path):
    text = path.read_text()
    assert EXPECT.match(text), "the first line is `//! CODE LINE:COL`"
    lines = text.splitlines()
    assert REFERENCE.match(lines[1]) or ACCEPTS.match(lines[1]), "the second is `//~ reference`"
    assert lines[2].startswith("// "), "the third says what the file breaks"


@pytest.mark.parametrize("path", INVALID, ids=_name)
def test_reports_exactly_the_violation(path):
    code, line, col = EXPECT.match(path.read_text()).groups()
    before, found = checked(path)
    assert [d.message for d in before] == [], "the program is well formed up to the rules"
    assert found == [(code, int(line), int(col))]


@pytest.mark.parametrize("path", VALID, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_valid_program_passes(path):
    assert checked(path)[1] == []


# ------------------------------------------------------------------ the reference


@pytest.fixture(scope="module")
def pyserq012():
    mod = pytest.importorskip("pyserq", reason="pyserq (0.1.2) is not installed")
    if not mod.__version__.startswith("0.1.2"):
        pytest.skip(f"the reference is pyserq 0.1.2; the installed one is {mod.__version__}")
    return mod


# run014 runs it after its prelude, which imports json, sys and pyserq 0.1.4
_CHILD = r"""
out = {}
for path in json.loads(sys.stdin.read()):
    try:
        pyserq.compile(path, horizon=10)
        out[path] = None
    except ValueError as e:
        out[path] = str(e)
print(json.dumps({"version": pyserq.__version__, "results": out}))
"""


@pytest.fixture(scope="module")
def results014(run014):
    out = run014(_CHILD, [str(p) for p in INVALID if MAIN.search(p.read_text())], timeout=120)
    assert out["version"].startswith("0.1.4")
    return out["results"]


def _reference(path: Path, request) -> str | None:
    """The reference's error on `path` (None when it accepts the program)."""
    if MAIN.search(path.read_text()):
        return request.getfixturevalue("results014")[str(path)]
    mod = request.getfixturevalue("pyserq012")
    try:
        mod.compile(str(path), horizon=10)
        return None
    except ValueError as e:
        return str(e)


@pytest.mark.parametrize("path", INVALID, ids=_name)
def test_reference_agrees(path, request):
    text = path.read_text()
    error = _reference(path, request)
    if ACCEPTS.search(text):
        assert error is None, "a recorded disagreement: the reference accepts this program"
        return
    assert error is not None, "the reference rejects the program too"
    annotation = REFERENCE.search(text)
    _, line, col = EXPECT.match(text).groups()
    pos, says = annotation.group("pos"), annotation.group("says")
    m = POSITION.match(error)
    if pos == "-":
        assert m is None, f"the reference now gives a position: {error}"
    else:
        expected = pos or f"{line}:{col}"
        assert m is not None and f"{m.group(1)}:{m.group(2)}" == expected, error
    assert says and says in error, error
