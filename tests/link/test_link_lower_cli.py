"""`serq ir FILE` and `api.link_source`: the IR JSON on stdout, diagnostics on stderr.

Exit status 0 when the program links, 1 when it has an error of any phase (nothing on
stdout then), 2 when the file cannot be read or the command line is wrong; whatever the
input, a diagnostic and never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from serq import api, cli, ir

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = "stage s : fifo;\nworkload { arrive poisson(1); }\nsession { run s (1); }\n"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def write(tmp_path: Path, text: str, name: str = "prog.sq") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_program_that_links_prints_its_ir(capsys, tmp_path):
    path = write(tmp_path, PROGRAM + "run { horizon 10; }\n")
    status, out, err = run(capsys, "ir", path)
    assert (status, err) == (0, "")
    program = ir.from_json(out)
    assert program == api.link_source(Path(path).read_text(), path)[0]
    assert program.horizon == 10.0
    assert out.endswith("}\n") and "\n  " in out  # indented


def test_compact_output_and_the_run_overrides(capsys, tmp_path):
    path = write(tmp_path, PROGRAM)  # no run block: the horizon comes from outside
    status, out, _ = run(capsys, "ir", "--compact", "--horizon", "50", "--arrivals", "7", path)
    assert status == 0
    assert out.count("\n") == 1
    data = json.loads(out)
    assert (data["horizon"], data["arrivals"]) == (50.0, 7)


def test_errors_of_every_phase_go_to_stderr_with_status_1(capsys, tmp_path):
    for text, code in [
        ("session { run s (1) }\n", "E-parse"),
        ("session { prefill (1); }\n", "E-serving-stage"),
        (PROGRAM + "session { }\n" + "let x = 0/0;\n", "E-constant"),
        ("stage s : fifo;\nsession { run s (foo); run t (1); }\n", "E-unknown-name"),
    ]:
        path = write(tmp_path, text)
        status, out, err = run(capsys, "ir", "--color", "never", path)
        assert (status, out) == (1, ""), text
        assert f"error[{code}]" in err
        assert "Traceback" not in err


def test_every_link_error_is_reported_at_once(capsys, tmp_path):
    path = write(tmp_path, "stage s : fifo;\nsession { run s (a); run s (b); run s[0] (1); }\n")
    status, _, err = run(capsys, "ir", "--color", "never", path)
    assert status == 1
    assert err.count("error[") == 3
    assert f"{path}:2:18" in err and f"{path}:2:29" in err and f"{path}:2:39" in err


def test_a_file_that_cannot_be_read_is_status_2(capsys, tmp_path):
    status, out, err = run(capsys, "ir", str(tmp_path / "missing.sq"))
    assert (status, out) == (2, "")
    assert "error[E-io]" in err


@pytest.mark.parametrize(
    "argv", [["ir"], ["ir", "a.sq", "--horizon", "x"], ["ir", "--arrivals", "-1", "a.sq"]]
)
def test_a_wrong_command_line_is_status_2(capsys, argv):
    assert run(capsys, *argv)[0] == 2


def test_a_bug_in_the_linker_is_a_diagnostic_not_a_traceback(capsys, tmp_path, monkeypatch):
    import serq.link

    def broken(kernel):
        raise RuntimeError("boom")

    monkeypatch.setattr(serq.link, "link", broken)
    path = write(tmp_path, PROGRAM)
    status, out, err = run(capsys, "ir", "--color", "never", path)
    assert (status, out) == (1, "")
    assert "error[E-internal]" in err and "RuntimeError: boom" in err


def test_link_source_stops_before_linking_a_program_that_does_not_expand():
    program, diagnostics = api.link_source("session { request; }\n", "t.sq")
    assert program is None
    assert [d.code for d in diagnostics] == ["E-sides"]


def test_link_source_on_an_example():
    path = ROOT / "examples" / "mm1.sq"
    program, diagnostics = api.link_source(path.read_text(encoding="utf-8"), str(path))
    assert diagnostics == []
    assert program is not None and program.stages[0].kind == ir.Fifo(1)
