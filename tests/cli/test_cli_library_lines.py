"""A diagnostic that points into a `use`d library shows the library's lines, whichever
command prints it.

`serq check main.sq` printed an error inside lib/defs.sq as its location alone
(` --> lib/defs.sq:2:1` and the help, no source line), where `serq run` and `serq ir`
drew the line and its carets: check gave the renderer the texts of the files it was given
and no other. And every command printed a label that points into a library (`defined
here` under a call with a wrong number of arguments) as a bare `::: lib/defs.sq:6:5`
unless some other diagnostic happened to lie in that library: the texts were read for the
diagnostics' own spans, not their labels'. Now one function (`serq.api.library_sources`)
adds the text of every file a diagnostic or a label points into, for every command.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from serq.cli import main

MAIN = """use "std/args";
use "lib/defs.sq";

fn main() {
  let rate = args.number("rate", 0.5);
  stage server : fifo(1);
  workload {
    arrive poisson(rate);
    turn { set entered = now; }
  }
  server {
    run server (cost(server, service(1)));
    observe sojourn = scaled(now - entered);
  }
}
"""
LIBRARY = "// service laws\ndef service(m) = ~exp(m);\n\ndef scaled(x, k) {\n  x * k\n}\n"
IN_LIBRARY = LIBRARY.replace("// service laws", "let mean_default = 1;")
COMMANDS = [
    ["check"],
    ["expand"],
    ["ir"],
    ["run", "--horizon", "10"],
    ["sweep", "--set", "rate=0.5,0.6", "--horizon", "10"],
]


@pytest.fixture
def program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "lib").mkdir()
    (tmp_path / "main.sq").write_text(MAIN)
    (tmp_path / "lib" / "defs.sq").write_text(LIBRARY)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _stderr(capsys: pytest.CaptureFixture[str], command: list[str]) -> str:
    main([command[0], "main.sq", *command[1:], "--color", "never"])
    return capsys.readouterr().err


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_label_in_a_library_shows_its_line(program: Path, capsys, command: list[str]) -> None:
    err = _stderr(capsys, command)
    assert "error[E-def]: `scaled` takes 2 arguments, given 1" in err
    assert " 4 | def scaled(x, k) {\n   |     ------ defined here" in err, err


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_an_error_in_a_library_shows_its_line(program: Path, capsys, command: list[str]) -> None:
    (program / "lib" / "defs.sq").write_text(IN_LIBRARY)
    err = _stderr(capsys, command)
    assert " --> lib/defs.sq:1:1\n  |\n1 | let mean_default = 1;\n  | ^^^^^" in err, err
