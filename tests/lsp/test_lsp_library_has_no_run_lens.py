"""A library (a file of `def`s and `use`s, meant to be `use`d) has no Run lens,
and a Run of one says what to do.

examples/lib/vllm.sq had the lenses Run, Show IR and Show kernel, and its Run failed
with "the run has no horizon" at its first line, with the help "give one: `run { horizon
T; }` or --horizon T" (with one, the run was empty). Now a library's lenses are Show IR
and Show kernel, and `serq run` of one (the editor's Run from the command palette too)
says there is nothing to run and to run a program that `use`s it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from serq.sim.api import compile_program
from serq_lsp.analysis import analyze

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lsp_robust import Wire  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "examples" / "lib" / "vllm.sq"
PROGRAM = ROOT / "examples" / "mm1.sq"


@pytest.mark.parametrize(
    ("text", "library"),
    [
        ('use "std/args";\ndef f(x) = x + 1;\ndef g(p) { run p (1); }\n', True),
        ("let a = 1;\ndef f(x) = x + a;\n", False),  # a library holds no `let` (E-use)
        ("let a = 1;\nstage s : fifo(1);\n", False),
        ("session { turn; }\n", False),
        ("fn main() {\n  stage s : delay;\n}\n", False),
        ("let a = 1;\nfn main() {\n}\n", False),
        ("let a = ;\n", False),  # an item in error could be anything: Run is kept
        ("stage s : fifoo(1);\n", False),
        ("", False),
    ],
)
def test_is_library(text, library):
    assert analyze(text, "/nowhere/l.sq").is_library() is library


def _lenses(wire: Wire, msg_id: int, uri: str) -> list[str]:
    wire.request(msg_id, "textDocument/codeLens", {"textDocument": {"uri": uri}})
    return [lens["command"]["title"] for lens in wire.answer(msg_id)["result"]]


def test_a_library_has_no_run_lens_and_its_run_says_what_to_do(wire):
    wire.initialize()
    library, program = LIBRARY.as_uri(), PROGRAM.as_uri()
    wire.open(library, LIBRARY.read_text())
    wire.open(program, PROGRAM.read_text())
    assert _lenses(wire, 1, library) == ["Show IR", "Show kernel"]
    assert _lenses(wire, 2, program) == ["Run", "Show IR", "Show kernel"]
    wire.request(3, "workspace/executeCommand", {"command": "serq.run", "arguments": [library]})
    failed = wire.answer(3, timeout=120)["error"]["message"]
    assert "nothing to run" in failed and "a program that `use`s it" in failed, failed


def test_serq_run_of_a_library_says_it_is_one():
    compiled, diagnostics = compile_program(LIBRARY.read_text(), str(LIBRARY))
    assert compiled is None
    (error,) = diagnostics
    assert error.message.startswith("there is nothing to run")
    assert error.help == "a file of `def`s and `use`s is a library: run a program that `use`s it"


def test_a_program_with_no_horizon_is_told_to_give_one():
    source = ROOT / "examples" / "tutorial" / "08_fn_main.sq"
    compiled, diagnostics = compile_program(source.read_text(), str(source))
    assert compiled is None and diagnostics[-1].message == "the run has no horizon"
