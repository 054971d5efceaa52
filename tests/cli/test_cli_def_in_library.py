"""`--def` replaces an expression definition of a `use`d library, as of the program.

`serq run examples/vllm.sq --def long_prefill="residents > 1 ? c : 0"`, the example of
docs/cli.md, was a usage error, "unknown --def `long_prefill`; the program has: none":
`long_prefill` is a `def` of examples/lib/vllm.sq, and `--def` looked at the program's
own items only. pyserq 0.1.4's `defs=` replaces a library's definition too. Now the
libraries the program uses, at any depth, are read once, their definitions replaced, and
the expander reads them from there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from serq import api
from serq.cli import EXIT_OK, EXIT_USAGE, main

ROOT = Path(__file__).resolve().parents[2]

MAIN = """use "std/args";
use "lib/a.sq";
fn main() {
  let rate = args.number("rate", 2);
  stage svc : fifo(2);
  workload {
    arrive poisson(rate);
    turn { set w = scaled(1); }
    session { turn; }
  }
  server {
    twice(w);
    observe w = w;
  }
}
"""
A = 'use "b.sq";\ndef twice(w) {\n  serve_on(w);\n  serve_on(w);\n}\n'
B = "def scaled(x) { x * 0.5 }\ndef serve_on(w) {\n  run svc (cost(svc, w));\n}\n"


@pytest.fixture
def program(tmp_path: Path) -> str:
    (tmp_path / "lib").mkdir()
    (tmp_path / "main.sq").write_text(MAIN)
    (tmp_path / "lib" / "a.sq").write_text(A)
    (tmp_path / "lib" / "b.sq").write_text(B)
    return str(tmp_path / "main.sq")


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main([*argv, "--color", "never"])
    out, err = capsys.readouterr()
    return status, out, err


def _w(capsys, *argv: str) -> float:
    status, out, err = _run(capsys, "run", *argv, "--horizon", "20", "--json")
    assert status == EXIT_OK, err
    return json.loads(out)["observes"]["w"]["mean"]


def test_a_def_two_uses_deep_is_replaced(capsys, program):
    assert _w(capsys, program) == 0.5
    assert _w(capsys, program, "--def", "scaled=x * 3") == 3
    assert _w(capsys, program, "--def", "scaled=x * rate") == 2  # a program argument
    assert _w(capsys, program, "--def", "scaled=x * rate", "--set", "rate=0.25") == 0.25
    # the files are as they were
    assert (Path(program).parent / "lib" / "b.sq").read_text() == B


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("serve_on=1", "`def serve_on` is statements"),
        ("scald=1", "did you mean `scaled`?"),
        ("scaled=y", "unknown name `y`"),
        ("scaled=x *", "expected an expression"),
    ],
)
def test_a_library_def_that_cannot_be_replaced_is_a_usage_error(capsys, program, value, says):
    status, _, err = _run(capsys, "check", program, "--def", value)
    assert status == EXIT_USAGE, err
    assert says in err


def test_the_documented_example(capsys):
    path = str(ROOT / "examples" / "vllm.sq")
    status, _, err = _run(capsys, "check", path, "--def", "long_prefill=residents > 1 ? c : 0")
    assert status == EXIT_OK, err
    text = (ROOT / "examples" / "vllm.sq").read_text()
    kernel, diagnostics = api.expand_source(text, path, defs={"long_prefill": "0"})
    assert kernel is not None, diagnostics
    kept, _ = api.expand_source(text, path)
    assert api.format_kernel(kernel, path) != api.format_kernel(kept, path)
