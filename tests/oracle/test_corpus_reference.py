"""Check the syntax corpus (tests/corpus) against the reference implementation.

* tests/corpus/valid/*.sq       top-level dialect, must compile with pyserq 0.1.2 (in process)
* tests/corpus/valid_main/*.sq  `fn main() { }` dialect, must compile with pyserq 0.1.4, which
                                is imported from $PYSERQ_014_PATH (default .cache/pyserq-0.1.4 in the repository, where scripts/test.sh installs it) in a
                                subprocess so that the two versions never share an interpreter
* tests/corpus/invalid/*.sq     must be rejected; the reference's (first and only) error must sit
                                at the first `//! E-parse LINE:COL` of the file, or at the
                                `//~ reference LINE:COL` line when the file has one (the cases
                                where the reference reports another position than the offending
                                token; see tests/corpus/NOTES-reference.md). Files containing
                                `fn main` are checked with 0.1.4, the others with 0.1.2.

A `// horizon: N` comment gives the horizon passed to compile (0.1.4 takes the horizon from
outside the program); the default is 10.
"""

import re
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
VALID = sorted((CORPUS / "valid").glob("*.sq"))  # lib/ is not globbed: libraries only
VALID_MAIN = sorted((CORPUS / "valid_main").glob("*.sq"))
INVALID = sorted((CORPUS / "invalid").glob("*.sq"))

EXPECT_RE = re.compile(r"^//! E-parse (\d+):(\d+)\s*$", re.M)
OVERRIDE_RE = re.compile(r"^//~ reference (\d+):(\d+)\b", re.M)
HORIZON_RE = re.compile(r"^// horizon: (\S+)\s*$", re.M)
MAIN_RE = re.compile(r"^\s*fn\s+main\b", re.M)
POS_RE = re.compile(r"^(\d+):(\d+):")


def _horizon(text):
    m = HORIZON_RE.search(text)
    return float(m.group(1)) if m else 10.0


def _is_main(text):
    return MAIN_RE.search(text) is not None


def _expected_first(text):
    exp = [(int(a), int(b)) for a, b in EXPECT_RE.findall(text)]
    over = OVERRIDE_RE.search(text)
    first = (int(over.group(1)), int(over.group(2))) if over else (exp[0] if exp else None)
    return exp, first


def _position(message):
    m = POS_RE.match(message)
    return (int(m.group(1)), int(m.group(2))) if m else None


# --- pyserq 0.1.2, in process -------------------------------------------------------------


@pytest.fixture(scope="module")
def pyserq012():
    mod = pytest.importorskip("pyserq", reason="pyserq (0.1.2) is not installed")
    version = tuple(int(x) for x in re.findall(r"\d+", mod.__version__)[:3])
    if version >= (0, 1, 4):
        pytest.skip(
            f"the top-level corpus needs pyserq 0.1.2; the installed one is {mod.__version__}"
        )
    return mod


def _compile012(mod, path):
    """None when accepted, else the first line of the error message."""
    try:
        mod.compile(str(path))
        return None
    except ValueError as e:
        return str(e).splitlines()[0]


# --- pyserq 0.1.4, in one subprocess for the whole corpus ---------------------------------

# run014 runs it after its prelude, which imports json, sys and pyserq 0.1.4
_CHILD = r"""
out = {"version": pyserq.__version__, "results": {}}
for path, horizon in json.loads(sys.stdin.read()):
    try:
        pyserq.compile(path, horizon=horizon)
        out["results"][path] = None
    except ValueError as e:
        out["results"][path] = str(e).splitlines()[0]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results014(run014):
    files = list(VALID_MAIN) + [p for p in INVALID if _is_main(p.read_text())]
    return run014(_CHILD, [(str(p), _horizon(p.read_text())) for p in files])["results"]


# --- the corpus is well formed ------------------------------------------------------------


def test_corpus_sizes():
    assert 25 <= len(VALID) <= 40
    assert 6 <= len(VALID_MAIN) <= 10
    assert 12 <= len(INVALID) <= 20


@pytest.mark.parametrize(
    "path", VALID + VALID_MAIN + INVALID, ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_file_starts_with_comment(path):
    assert path.read_text().startswith("//"), (
        "each corpus file starts with a // comment saying what it covers"
    )


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_annotations(path):
    text = path.read_text()
    exp, first = _expected_first(text)
    assert exp, "an invalid program carries at least one `//! E-parse LINE:COL`"
    assert exp == sorted(exp), "expected errors are listed in source order"
    lines = text.split("\n")
    for line, col in exp:
        assert 1 <= line <= len(lines) and 1 <= col <= len(lines[line - 1]) + 1, (line, col)


# --- the reference agrees -----------------------------------------------------------------


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_accepted_by_012(pyserq012, path):
    err = _compile012(pyserq012, path)
    assert err is None, f"pyserq 0.1.2 rejects {path.name}: {err}"


@pytest.mark.parametrize("path", VALID_MAIN, ids=lambda p: p.name)
def test_valid_main_accepted_by_014(results014, path):
    err = results014[str(path)]
    assert err is None, f"pyserq 0.1.4 rejects {path.name}: {err}"


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_rejected_at_first_expected(request, path):
    text = path.read_text()
    _, first = _expected_first(text)
    if _is_main(text):
        err = request.getfixturevalue("results014")[str(path)]
        version = "0.1.4"
    else:
        err = _compile012(request.getfixturevalue("pyserq012"), path)
        version = "0.1.2"
    assert err is not None, f"pyserq {version} accepts {path.name}"
    assert _position(err) == first, (
        f"pyserq {version}: {err!r}; expected the first error at {first}"
    )
