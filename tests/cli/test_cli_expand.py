"""`serq expand FILE [--json]`: the kernel on stdout, diagnostics as `check` gives them.

Most cases stand a fake expander in for `serq.expand` (a module with the real
package's path, so `serq.expand.printer` still imports), which pins the
command's own behaviour: exit status, streams, the `E-internal` safety net. The
cases at the end run the real expander and skip while it cannot be imported.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from serq import api, cli
from serq.diagnostics import Diagnostic, Span, codes
from serq.syntax import ast, parse

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "serq" / "expand"
S = Span("k.sq", 0, 0, 1, 1, 1, 1)
PROGRAM = "stage s : delay;\nsession { run s (1); }\n"
KERNEL = ast.Module(
    "k.sq",
    (
        ast.Stage(
            ast.Ident("P.nic", S), ast.Number(2.0, "2", S), ast.Ps(ast.Number(1, "1", S), S), S
        ),
        ast.Session(
            ast.Block((ast.Set(ast.Ident("P.c", S), ast.Name(ast.Ident("cached", S), S), S),), S),
            S,
        ),
    ),
    None,
    S,
)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def program(tmp_path: Path, text: str = PROGRAM) -> str:
    path = tmp_path / "prog.sq"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def expander(monkeypatch):
    """Install a fake `serq.expand` whose `expand` calls `expander.result(module)`."""
    fake = types.ModuleType("serq.expand")
    fake.__path__ = [str(PACKAGE)]
    fake.calls = []

    def expand(module):
        fake.calls.append(module)
        return fake.result(module)

    fake.expand = expand
    fake.result = lambda module: types.SimpleNamespace(kernel=KERNEL, diagnostics=())
    monkeypatch.setitem(sys.modules, "serq.expand", fake)
    return fake


def test_prints_the_kernel(capsys, tmp_path, expander):
    status, out, err = run(capsys, "expand", program(tmp_path))
    assert (status, err) == (0, "")
    assert out == "stage P.nic[2] : ps(1);\n\nsession {\n  set P.c = cached;\n}\n"
    assert parse(out, "out.sq").diagnostics == ()
    assert len(expander.calls) == 1


def test_json(capsys, tmp_path, expander):
    warning = Diagnostic.warning(codes.QUEUE, S, "a warning")
    expander.result = lambda module: types.SimpleNamespace(kernel=KERNEL, diagnostics=(warning,))
    status, out, err = run(capsys, "expand", "--json", program(tmp_path))
    report = json.loads(out)
    assert (status, err) == (0, "")
    assert report["kernel"].startswith("stage P.nic[2] : ps(1);")
    assert [d["code"] for d in report["diagnostics"]] == ["E-queue"]


def test_expansion_errors_exit_1_and_still_print_the_kernel(capsys, tmp_path, expander):
    error = Diagnostic.error(codes.QUEUE, S, "a queue error")
    expander.result = lambda module: types.SimpleNamespace(kernel=KERNEL, diagnostics=(error,))
    status, out, err = run(capsys, "expand", "--color", "never", program(tmp_path))
    assert status == 1
    assert "error[E-queue]: a queue error" in err
    assert out.startswith("stage P.nic[2]")


def test_syntax_errors_stop_before_expansion(capsys, tmp_path, expander):
    status, out, err = run(capsys, "expand", program(tmp_path, "stage s : delay\n"))
    assert (status, out) == (1, "")
    assert "E-parse" in err
    assert expander.calls == []
    status, out, _ = run(capsys, "expand", "--json", program(tmp_path, "stage s : delay\n"))
    report = json.loads(out)
    assert status == 1 and report["kernel"] is None
    assert [d["code"] for d in report["diagnostics"]] == ["E-parse"]


def test_a_failing_expander_is_an_internal_error_not_a_traceback(capsys, tmp_path, expander):
    def fail(module):
        raise RuntimeError("boom")

    expander.result = fail
    status, out, err = run(capsys, "expand", "--color", "never", program(tmp_path))
    assert (status, out) == (1, "")
    assert "E-internal" in err and "RuntimeError: boom" in err
    assert "Traceback" not in err


def test_an_unprintable_kernel_is_an_internal_error(capsys, tmp_path, expander):
    broken = ast.Module("k.sq", (object(),), None, S)
    expander.result = lambda module: types.SimpleNamespace(kernel=broken, diagnostics=())
    status, out, err = run(capsys, "expand", "--color", "never", program(tmp_path))
    assert (status, out) == (1, "")
    assert "E-internal" in err and "TypeError" in err


def test_unreadable_file_and_usage(capsys, tmp_path, expander):
    status, out, err = run(capsys, "expand", str(tmp_path / "missing.sq"))
    assert (status, out) == (2, "")
    assert "E-io" in err
    assert run(capsys, "expand")[0] == 2
    assert run(capsys, "expand", "a.sq", "b.sq")[0] == 2


def test_expand_source(expander):
    kernel, diagnostics = api.expand_source(PROGRAM, "k.sq")
    assert kernel is KERNEL and diagnostics == []
    kernel, diagnostics = api.expand_source("stage s : ;", "k.sq")
    assert kernel is None and [d.code for d in diagnostics] == ["E-parse"]


# ------------------------------------------------------- the real expander


def _real_expand():
    try:
        from serq.expand import expand

        expand(parse(PROGRAM, "probe.sq").module)  # it imports some passes on first use
    except ImportError as error:
        pytest.skip(f"the expander is not importable yet: {error}")
    return expand


EXAMPLES = sorted((ROOT / "examples").rglob("*.sq"))
CORPUS = sorted((ROOT / "tests" / "corpus" / "valid").glob("*.sq")) + sorted(
    (ROOT / "tests" / "corpus" / "valid_main").glob("*.sq")
)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_expand_to_a_kernel_that_parses(capsys, path):
    _real_expand()
    status, out, err = run(capsys, "expand", str(path))
    assert (status, err) == (0, "")
    assert parse(out, str(path)).diagnostics == ()


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_printed_kernels_parse(path):
    _real_expand()
    kernel, _ = api.expand_source(path.read_text(encoding="utf-8"), str(path))
    if kernel is None:
        pytest.skip("no kernel (the expander reported an internal error)")
    text = api.format_kernel(kernel, str(path))
    assert isinstance(text, str)
    assert [d.message for d in parse(text, str(path)).diagnostics] == []
