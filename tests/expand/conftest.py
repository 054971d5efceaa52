"""Fixtures of the expansion tests: expand a program written to disk, render kernel nodes.

`expand_program(text, libs={...})` writes the program (and its libraries, relative to it)
under `tmp_path`, parses it, checks that it parsed cleanly, and expands it. `render(node)`
writes a kernel node back as compact serQ text with every binary operation parenthesised,
so a test states the shape of a rewrite in one string. `sugar_left(module)` lists what
the expander should have removed.

The reference implementation is a black box: `reference_error(path)` is the position of
pyserq 0.1.2's error on a file (`reference014_error` for a `fn main` file, pyserq 0.1.4 in
a subprocess), to confirm a diagnostic's position where the reference agrees;
`reference_ir(path)` is 0.1.2's IR, and `same_ir(expanded)` asserts that the printed kernel
of a program compiles to the IR of the program itself.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from serq.expand import Expansion, expand
from serq.expand.walk import walk
from serq.syntax import ParseResult, ast, parse

SUGAR = ast.SUGAR


def _sugar_left(module: ast.Module) -> list[str]:
    """Every sugar node of `module`, and every hold that still has `at admission`."""
    left = []
    for n in walk(module):
        if isinstance(n, SUGAR):
            left.append(f"{type(n).__name__} at {n.span.line}:{n.span.column}")
        elif isinstance(n, ast.Hold) and (n.bindings or n.at_admission is not None):
            left.append(f"Hold with bindings at {n.span.line}:{n.span.column}")
        elif isinstance(n, ast.Run) and not n.stages:
            left.append(f"Run without a stage at {n.span.line}:{n.span.column}")
    if module.main is not None:
        left.append("fn main")
    return left


@dataclass
class Expanded:
    """A program as parsed and as expanded."""

    path: Path
    parsed: ParseResult
    expansion: Expansion

    @property
    def kernel(self) -> ast.Module:
        return self.expansion.kernel

    @property
    def diagnostics(self) -> list[tuple[str, int, int]]:
        """(code, line, column) of each diagnostic of the expansion."""
        return [(d.code, d.span.line, d.span.column) for d in self.expansion.diagnostics]

    def items(self, kind: type) -> list[Any]:
        return [i for i in self.kernel.items if isinstance(i, kind)]

    @property
    def session(self) -> ast.Session:
        (session,) = self.items(ast.Session)
        return session

    def statements(self) -> list[str]:
        """The kernel session's statements, rendered."""
        return [_render(s) for s in self.session.body.body]


@pytest.fixture
def expand_program(tmp_path):
    """Write `text` as `name` (and `libs`, paths relative to it) under tmp_path and expand it."""

    def go(text: str, libs: dict[str, str] | None = None, name: str = "main.sq", load=None):
        for rel, body in (libs or {}).items():
            p = tmp_path / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(body)
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        parsed = parse(text, str(path))
        assert [d.message for d in parsed.diagnostics] == [], "the test program must parse"
        expansion = expand(parsed.module) if load is None else expand(parsed.module, load=load)
        return Expanded(path, parsed, expansion)

    return go


@pytest.fixture
def sugar_left():
    return _sugar_left


@pytest.fixture
def render():
    return _render


# ------------------------------------------------------------ the reference

_POSITION = re.compile(r"^(?:.*?\.sq:)?(\d+):(\d+):")


def _position(message: str) -> tuple[int, int]:
    """LINE:COL at the head of a reference error; (0, 0) for one without a position."""
    m = _POSITION.match(message)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


@pytest.fixture(scope="session")
def reference():
    """pyserq 0.1.2, in process; skips when another version (or none) is installed."""
    pyserq = pytest.importorskip("pyserq", reason="pyserq 0.1.2 is not installed")
    if not pyserq.__version__.startswith("0.1.2"):
        pytest.skip(f"needs pyserq 0.1.2, found {pyserq.__version__}")
    return pyserq


def _compile(pyserq, path: Path):
    """Compile `path`; a program without a `run { }` block gets the horizon 10."""
    module = parse(path.read_text(), str(path)).module
    if any(isinstance(i, ast.RunSettings) for i in module.all_items()):
        return pyserq.compile(str(path))
    return pyserq.compile(str(path), horizon=10)


@pytest.fixture(scope="session")
def reference_error(reference):
    """The (line, column) of pyserq 0.1.2's error on a file, None when it compiles."""

    def first_error(path: Path) -> tuple[int, int] | None:
        try:
            _compile(reference, path)
        except ValueError as e:
            return _position(str(e))
        return None

    return first_error


@pytest.fixture(scope="session")
def reference_ir(reference):
    """pyserq 0.1.2's IR of a file, as JSON data."""
    return lambda path: json.loads(_compile(reference, path).to_json())


@pytest.fixture
def same_ir(reference_ir):
    """Assert that the printed kernel of `expanded`, written next to it, compiles with pyserq
    0.1.2 to the IR of the original program."""
    printer = pytest.importorskip("serq.expand.printer")

    def check(expanded: Expanded) -> None:
        assert expanded.diagnostics == []
        kernel = expanded.path.with_name("_kernel_" + expanded.path.name)
        kernel.write_text(printer.print_module(expanded.kernel))
        assert reference_ir(kernel) == reference_ir(expanded.path), kernel.read_text()

    return check


_CHILD_014 = r"""
import sys
sys.path.insert(0, sys.argv[1])
import pyserq
try:
    pyserq.compile(sys.argv[2], horizon=10)
    print("OK")
except ValueError as e:
    print(str(e).splitlines()[0])
"""


@pytest.fixture(scope="session")
def reference014_error():
    """The (line, column) of pyserq 0.1.4's error on a `fn main` file, None when it compiles.

    0.1.4 runs in a subprocess (from $PYSERQ_014_PATH, default .cache/pyserq-0.1.4), as in
    tests/oracle/test_corpus_reference.py, so that the two versions never share an
    interpreter; skips when it is not there."""
    root = Path(__file__).resolve().parents[2]
    where = os.environ.get("PYSERQ_014_PATH", str(root / ".cache" / "pyserq-0.1.4"))
    if not (Path(where) / "pyserq").is_dir():
        pytest.skip(f"pyserq 0.1.4 not found in {where} (set PYSERQ_014_PATH)")

    def first_error(path: Path) -> tuple[int, int] | None:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD_014, where, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout.strip().splitlines()[-1]
        return None if out == "OK" else _position(out)

    return first_error


# ---------------------------------------------------------------- rendering


def _render(n: Any) -> str:
    """`n` as compact serQ text; binary and conditional expressions in parentheses."""
    r = _render
    if n is None:
        return ""
    if isinstance(n, ast.Number):
        return n.text
    if isinstance(n, ast.Name):
        return n.name
    if isinstance(n, ast.Ident):
        return n.name
    if isinstance(n, ast.Ref):
        return ".".join(
            p.ident.name + (f"[{r(p.index)}]" if p.index is not None else "") for p in n.parts
        )
    if isinstance(n, ast.Unary):
        return f"({n.op}{r(n.operand)})"
    if isinstance(n, ast.Binary):
        return f"({r(n.left)} {n.op} {r(n.right)})"
    if isinstance(n, ast.Conditional):
        return f"({r(n.test)} ? {r(n.then)} : {r(n.otherwise)})"
    if isinstance(n, ast.Call):
        return f"{n.func.name}({', '.join(r(a) for a in n.args)})"
    if isinstance(n, ast.Draw):
        return f"~{n.dist.name}({', '.join(r(a) for a in n.args)})"
    if isinstance(n, ast.Aggregate):
        return f"{n.func} {n.var.name} in {r(n.count)} ({r(n.body)})"
    if isinstance(n, ast.Block):
        return "{ " + " ".join(r(s) for s in n.body) + " }" if n.body else "{ }"
    if isinstance(n, ast.Run):
        stages = ", ".join(r(s) for s in n.stages)
        mode = f" {n.mode}" if n.mode else ""
        growing = f" growing {r(n.growing)}" if n.growing is not None else ""
        return f"run {stages}{mode} ({r(n.work)}){growing};".replace("run  (", "run (")
    if isinstance(n, ast.Load):
        return f"load {r(n.pool)} ({r(n.amount)});"
    if isinstance(n, ast.Release):
        return f"release {r(n.pool)};"
    if isinstance(n, ast.Drop):
        return f"drop {r(n.pool)};"
    if isinstance(n, ast.Grow):
        return f"grow {r(n.pool)} ({r(n.amount)});"
    if isinstance(n, ast.Set):
        return f"set {n.target.name} = {r(n.value)};"
    if isinstance(n, ast.Observe):
        return f"observe {n.target.name} = {r(n.value)};"
    if isinstance(n, (ast.Turn, ast.End)):
        return f"{type(n).__name__.lower()};"
    if isinstance(n, ast.Request):
        return f"request {n.gateway.name};" if n.gateway else "request;"
    if isinstance(n, ast.Hold):
        pools = ", ".join(
            f"{r(p.pool)} ({r(p.units)})" + (f" reserve ({r(p.reserve)})" if p.reserve else "")
            for p in n.pools
        )
        reuse = f" reuse ({r(n.reuse)})" if n.reuse is not None else ""
        at = (
            " at admission (" + ", ".join(f"{b.name.name} = {r(b.value)}" for b in n.bindings) + ")"
            if n.bindings
            else ""
        )
        cache = f" cache ({r(n.cache)})" if n.cache is not None else ""
        lease = f" lease {r(n.lease.pool)} ({r(n.lease.duration)})" if n.lease else ""
        return f"hold {pools}{reuse}{at} {r(n.body)}{cache}{lease}"
    if isinstance(n, (ast.Branch, ast.BranchWith)):
        head = (
            f"branch ({r(n.test)})"
            if isinstance(n, ast.Branch)
            else (f"branch with ({r(n.probability)})")
        )
        other = f" else {r(n.otherwise)}" if n.otherwise is not None else ""
        return f"{head} {r(n.then)}{other}"
    if isinstance(n, ast.Loop):
        return f"loop {r(n.body)}"
    if isinstance(n, ast.Choose):
        keys = ", ".join(r(k) for k in n.keys)
        return f"choose {n.target.name} in {r(n.count)} by ({keys});"
    if isinstance(n, ast.DefCall):
        return f"{n.name.name}({', '.join(r(a) for a in n.args)});"
    return f"<{type(n).__name__}>"
