"""The pickled parser in the user cache dir (serq/syntax/grammar_cache.py): it parses as a
freshly built one does, and every way the cache can fail falls back to building."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from serq.syntax import grammar_cache, parse
from serq.syntax import parser as parser_module
from serq.syntax.document import ItemCache

ROOT = Path(__file__).resolve().parents[2]
BROKEN = """let a = ;
stage s : fifo(2;
session { run s (1 +); observe x = now; hold p (2) { run s (1); } cache (; }
pool p { cap 4; evict by (-size, ); queue by (waited); }
run { horizon 10; warmup; seed 1; }
"""


@pytest.fixture
def cache_in(tmp_path, monkeypatch):
    monkeypatch.setenv("SERQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SERQ_GRAMMAR_CACHE", raising=False)
    return tmp_path / "cache"


def _source() -> str:
    return parser_module.grammar_path().read_text(encoding="utf-8")


def test_the_key_follows_the_grammar_text(cache_in):
    first = grammar_cache.path_for(_source())
    assert first.parent == cache_in
    assert grammar_cache.path_for(_source()) == first
    assert grammar_cache.path_for(_source() + "\n// another grammar\n") != first


def test_a_stored_parser_parses_as_a_built_one(cache_in, monkeypatch):
    """Every example, and a file of broken items (recovery reads the tables and the
    lexers), parse to the same module and diagnostics with the unpickled parser."""
    path = grammar_cache.path_for(_source())
    built = parser_module.Grammar(_source())
    assert grammar_cache.store(path, built)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    loaded = grammar_cache.load(path, parser_module.Grammar)
    assert isinstance(loaded, parser_module.Grammar) and loaded is not built
    texts = [p.read_text() for p in sorted((ROOT / "examples").glob("*.sq"))] + [BROKEN]
    results = {}
    for name, g in (("built", built), ("loaded", loaded)):
        monkeypatch.setattr(parser_module, "grammar", lambda g=g: g)
        results[name] = [parse(text, "x.sq", ItemCache()) for text in texts]
    assert results["loaded"] == results["built"]
    assert results["built"][-1].diagnostics  # the broken file did recover from errors
    assert loaded.keywords == built.keywords


def test_the_newest_grammars_are_kept_and_older_ones_removed(cache_in):
    """Two serq installs used in turn keep a file each; past `KEEP` files, a new one
    removes the oldest."""
    paths = [grammar_cache.path_for(_source() + f"// {i}\n") for i in range(grammar_cache.KEEP + 2)]
    for i, path in enumerate(paths):
        assert grammar_cache.store(path, {"version": i})
        os.utime(path, ns=(i * 10**9, i * 10**9))  # written in this order, a second apart
    kept = sorted(cache_in.glob("grammar-*.pickle"))
    assert kept == sorted(paths[-grammar_cache.KEEP :])
    assert grammar_cache.load(paths[-2], dict) == {"version": grammar_cache.KEEP}


def test_a_bad_file_is_not_read(cache_in):
    path = grammar_cache.path_for(_source())
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a pickle")
    path.chmod(0o600)
    assert grammar_cache.load(path, parser_module.Grammar) is None  # does not unpickle
    path.write_bytes(pickle.dumps({"a": 1}))
    assert grammar_cache.load(path, parser_module.Grammar) is None  # not a Grammar
    assert grammar_cache.load(path, dict) == {"a": 1}
    path.chmod(0o620)  # others could have written it: a pickle runs code, so not read
    assert grammar_cache.load(path, dict) is None
    assert grammar_cache.load(cache_in / "missing.pickle", dict) is None


def test_an_unwritable_cache_falls_back(tmp_path, monkeypatch):
    """A cache dir that cannot be made (here under a plain file, which even root cannot
    write into) stores nothing, and the grammar is built and parses."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SERQ_CACHE_DIR", str(blocker / "cache"))
    path = grammar_cache.path_for(_source())
    assert grammar_cache.store(path, {"x": 1}) is False
    assert grammar_cache.load(path, dict) is None
    parser_module.grammar.cache_clear()
    try:
        assert parse("let a = 1;\n", "x.sq", ItemCache()).ok
    finally:
        parser_module.grammar.cache_clear()


def test_the_cache_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("SERQ_GRAMMAR_CACHE", "0")
    assert grammar_cache.cache_dir() is None and grammar_cache.path_for(_source()) is None
    assert grammar_cache.store(None, 1) is False and grammar_cache.load(None, int) is None


def test_a_fresh_process_writes_then_reads_the_cache(tmp_path):
    """`serq check` in a process with an empty cache dir writes the pickle; the next
    process reads it and reports the same diagnostics."""
    program = tmp_path / "bad.sq"
    program.write_text(BROKEN)
    env = dict(os.environ, SERQ_CACHE_DIR=str(tmp_path / "c"), PYTHONPATH=str(ROOT))
    env.pop("SERQ_GRAMMAR_CACHE", None)
    argv = [sys.executable, "-m", "serq.cli", "check", "--color", "never", str(program)]
    first = subprocess.run(argv, env=env, capture_output=True, text=True)
    written = list((tmp_path / "c").glob("grammar-*.pickle"))
    assert len(written) == 1
    stamp = written[0].stat().st_mtime_ns
    second = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert written[0].stat().st_mtime_ns == stamp  # read, not written again
    assert (second.returncode, second.stderr) == (first.returncode, first.stderr)
    assert first.returncode != 0 and "E-parse" in first.stderr


def test_a_parser_built_without_larks_cache_pickles_without_lark(monkeypatch):
    """Lark names its rules with its own `Token`s when it builds the grammar from the text
    (the first run on a machine, before Lark's cache in the temp dir exists, or where that
    cannot be written) and with plain strings when it reads its cache: the pickled parser
    holds plain strings either way, so reading it never imports Lark."""
    import lark

    made = lark.Lark

    def without_cache(*args, **options):
        options.pop("cache", None)
        return made(*args, **options)

    monkeypatch.setattr(lark, "Lark", without_cache)
    built = parser_module.Grammar(_source())
    assert b"lark" not in pickle.dumps(built)


def test_reading_the_cache_imports_no_lark(tmp_path):
    """A process that reads the pickled parser parses without importing Lark, nor the
    `regex` that Lark imports when it is installed (some 15 to 30 ms of every `serq
    check` on this machine)."""
    program = tmp_path / "mm1.sq"
    program.write_text((ROOT / "bench" / "shapes" / "mm1.sq").read_text())
    (tmp_path / "t").mkdir()
    env = dict(os.environ, SERQ_CACHE_DIR=str(tmp_path / "c"), PYTHONPATH=str(ROOT))
    env["TMPDIR"] = str(tmp_path / "t")  # no Lark cache yet: a new machine's first run
    env.pop("SERQ_GRAMMAR_CACHE", None)
    script = (
        "import sys\n"
        "from serq.cli import main\n"
        f"status = main(['check', {str(program)!r}])\n"
        "print(status, 'lark' in sys.modules, 'regex' in sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True)
    assert list((tmp_path / "c").glob("grammar-*.pickle"))  # the first process wrote it
    read = subprocess.run(
        [sys.executable, "-c", script], env=env, check=True, capture_output=True, text=True
    )
    assert read.stdout.split() == ["0", "False", "False"]
