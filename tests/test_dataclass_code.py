"""serq/dataclass_code.py: serq's dataclasses take their generated methods' code from a
cache, and are the classes `dataclasses` would have made without it."""

from __future__ import annotations

import dataclasses
import marshal
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from serq import dataclass_code
from serq.code_store import CodeStore

ROOT = Path(__file__).resolve().parents[1]

CLASS = '''
from dataclasses import dataclass, field

@dataclass(frozen=True, slots=True)
class Node:
    """x"""
    name: str
    size: float = -0.5
    parts: tuple = field(default=(), repr=False, compare=False)
'''


def _make(module_name: str):
    module = types.ModuleType(module_name)
    sys.modules[module_name] = module
    try:
        exec(compile(CLASS, module_name, "exec"), module.__dict__)
    finally:
        del sys.modules[module_name]
    return module.Node


def test_the_cached_class_behaves_as_the_plain_one():
    """A class of a serq module goes through the cache; one of another module does not;
    both have the same fields, init, repr, equality, hash and frozenness."""
    assert dataclasses.exec is dataclass_code._exec  # installed by `import serq`
    before = len(dataclass_code._STORE.table)
    cached = _make("serq._probe_module")
    assert len(dataclass_code._STORE.table) >= before  # (its texts may already be there)
    used = set(dataclass_code._STORE.used)
    plain = _make("not_serq_probe")
    assert dataclass_code._STORE.used == used  # another module's class is left alone
    for kind in (cached, plain):
        a, b = kind("a", float("inf")), kind("a", float("inf"), ("p",))
        assert [f.name for f in dataclasses.fields(kind)] == ["name", "size", "parts"]
        assert repr(kind("z")) == "Node(name='z', size=-0.5)"
        assert a == b and hash(a) == hash(b) and a != kind("a", 0.0)
        assert dataclasses.replace(a, size=0).size == 0
        with pytest.raises(dataclasses.FrozenInstanceError):
            a.name = "b"
        with pytest.raises(TypeError):
            kind()
        assert kind.__match_args__ == ("name", "size", "parts")
        assert not hasattr(a, "__dict__")


def test_the_code_matches_a_fresh_compilation():
    """Every stored code object is what compiling its text gives."""
    assert dataclass_code._STORE.table, "serq's classes were made through the cache"
    for (_, text), code in list(dataclass_code._STORE.table.items())[:50]:
        fresh = compile(text, "<string>", "exec", dont_inherit=True)
        assert fresh == code


def test_a_foreign_or_writable_file_is_not_read(tmp_path):
    path = tmp_path / "code.marshal"
    key = ("serq.m", "x = 1")
    path.write_bytes(marshal.dumps({key: compile("x = 1", "<string>", "exec")}))
    path.chmod(0o600)
    assert list(dataclass_code._STORE.load(path)) == [key]
    path.chmod(0o660)
    assert dataclass_code._STORE.load(path) == {}
    path.chmod(0o600)
    path.write_bytes(b"\x00garbage")
    assert dataclass_code._STORE.load(path) == {}
    path.write_bytes(marshal.dumps([1, 2]))
    assert dataclass_code._STORE.load(path) == {}
    assert dataclass_code._STORE.load(tmp_path / "missing") == {}


def test_a_changed_module_keeps_only_what_it_still_writes(tmp_path):
    """At exit, a module that compiled new code loses the texts it did not use (its
    classes changed); another module's texts, and a store over its limit, as stated."""
    code = compile("x = 1", "<string>", "exec")
    store = CodeStore("probe", lambda k, v: True, group=lambda key: key[0])
    store.loaded = True
    store.table = {("m", "old"): code, ("m", "kept"): code, ("n", "other"): code}
    assert store.get(("m", "kept")) is code
    store.put(("m", "new"), code)
    path = tmp_path / "probe.marshal"
    store.save(path)
    assert sorted(store.load(path)) == [("m", "kept"), ("m", "new"), ("n", "other")]
    small = CodeStore("probe", lambda k, v: True, max_entries=1)
    small.loaded = True
    small.table = {"a": code, "b": code}
    small.put("c", code)
    small.save(path)
    assert list(small.load(path)) == ["c"]


def _run(code: str, env: dict) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout


def test_a_process_writes_the_cache_and_the_next_reads_it(tmp_path):
    env = dict(os.environ, SERQ_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    env.pop("SERQ_CODE_CACHE", None)
    env.pop("SERQ_GRAMMAR_CACHE", None)
    probe = (
        "import serq.syntax.ast, serq.dataclass_code as d; print(len(d._STORE.table), d._STORE.new)"
    )
    first = _run(probe, env).split()
    files = list(tmp_path.glob("dataclass-code-*.marshal"))
    assert len(files) == 1 and first[1] == "True" and int(first[0]) > 50
    assert oct(files[0].stat().st_mode & 0o777) == "0o600"
    second = _run(probe, env).split()
    assert second == [first[0], "False"]  # all read, nothing compiled
    off = dict(env, SERQ_CODE_CACHE="0")
    assert (
        _run(
            "import dataclasses, serq, builtins; print(dataclasses.__dict__.get('exec'))", off
        ).strip()
        == "None"
    )


def test_an_unwritable_cache_dir_is_no_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    env = dict(os.environ, SERQ_CACHE_DIR=str(blocker / "cache"), PYTHONPATH=str(ROOT))
    env.pop("SERQ_CODE_CACHE", None)
    out = subprocess.run(
        [sys.executable, "-m", "serq.cli", "check", str(ROOT / "examples" / "mm1.sq")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and out.stderr == ""
