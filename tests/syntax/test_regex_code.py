"""serq/syntax/regex_code.py: the lexers' patterns built from stored parts are the
patterns `re` compiles, and a second process reads them instead of compiling."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from serq.syntax import regex_code
from serq.syntax.parser import grammar

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "examples").glob("*.sq")) + sorted(
    (ROOT / "tests" / "corpus").glob("*/*.sq")
)


def _lexer_patterns() -> list[tuple[str, int]]:
    """The patterns the grammar's lexers compile (`serq.syntax.lalr.StateLexer`)."""
    g = grammar()
    lexers = {id(x): x for x in g.lexer.lexers.values()}
    lexers[id(g.lexer.root_lexer)] = g.lexer.root_lexer
    return sorted({(p, int(lexer.flags)) for lexer in lexers.values() for p in lexer.patterns})


def test_built_patterns_match_as_re_compiles_them():
    """Every pattern of every lexer, built from its parts, has `re`'s groups and flags and
    finds the same matches in every example and corpus file at every position where a
    token may start."""
    patterns = _lexer_patterns()
    assert len(patterns) > 40  # lexers that differ only by keywords share a pattern
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in SOURCES[:40]]
    starts = [(t, m.start()) for t in texts for m in re.finditer(r"\S+", t)]
    for pattern, flags in patterns:
        built = regex_code._build(pattern, regex_code._parts(pattern, flags))
        plain = re.compile(pattern, flags)
        assert (built.pattern, built.flags, built.groups, built.groupindex) == (
            plain.pattern,
            plain.flags,
            plain.groups,
            plain.groupindex,
        )
        for text, start in starts[::7]:
            a, b = built.match(text, start), plain.match(text, start)
            assert (a and (a.group(0), a.lastgroup)) == (b and (b.group(0), b.lastgroup))


def test_bad_patterns_raise_as_re_does():
    for pattern in ("(", "[a-", "a{2,1}"):
        with pytest.raises(re.error):
            regex_code.compile(pattern)
    assert regex_code.compile("a+", re.IGNORECASE).match("AA").group(0) == "AA"


def test_a_damaged_entry_is_compiled_again():
    pattern = "(?P<X>x+)|(?P<Y>y+)"
    flags, code, groups, groupindex, indexgroup = regex_code._parts(pattern, 0)
    key = (pattern, 0)
    regex_code._compiled.pop(key, None)
    regex_code._STORE.table[key] = (flags, b"\xff\xff\xff\xff" * 3, groups, groupindex, indexgroup)
    try:
        compiled = regex_code.compile(pattern)
        assert compiled.match("yy").lastgroup == "Y"
        assert regex_code._STORE.table[key][1] == code  # the good parts replace the bad
    finally:
        regex_code._compiled.pop(key, None)


def _check(path: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "serq.cli", "check", str(path)],
        env=env,
        capture_output=True,
        text=True,
    )


def test_a_second_process_reads_the_stored_patterns(tmp_path):
    """The first check writes the store; the second reads every pattern it needs and
    writes nothing; both report what a check without any cache reports."""
    env = dict(os.environ, SERQ_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    env.pop("SERQ_CODE_CACHE", None)
    env.pop("SERQ_GRAMMAR_CACHE", None)
    path = ROOT / "tests" / "corpus" / "invalid" / "bad_characters.sq"
    first = _check(path, env)
    (stored,) = tmp_path.glob("regex-code-*.marshal")
    assert oct(stored.stat().st_mode & 0o777) == "0o600"
    written = stored.stat().st_mtime_ns
    second = _check(path, env)
    assert stored.stat().st_mtime_ns == written  # nothing new to write
    plain = _check(path, dict(env, SERQ_CODE_CACHE="0"))
    outcome = (first.returncode, first.stdout, first.stderr)
    assert (second.returncode, second.stdout, second.stderr) == outcome
    assert (plain.returncode, plain.stdout, plain.stderr) == outcome
    assert first.returncode == 1 and "3 errors" in first.stderr


def test_internals_it_lacks_fall_back_to_re(monkeypatch):
    """Where `re`'s internals are not what this module takes apart, `re` compiles."""

    def missing(pattern, flags):
        raise AttributeError("no such internal")

    monkeypatch.setattr(regex_code, "_parts", missing)
    pattern = "(?P<Q>q+)r"
    regex_code._compiled.pop((pattern, 0), None)
    assert regex_code.compile(pattern).match("qqr").lastgroup == "Q"
    assert (pattern, 0) not in regex_code._STORE.table
