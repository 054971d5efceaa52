"""`serq run FILE --buffer FILE=COPY`: FILE's text read from COPY, FILE keeping its name.

The editor's Run passes its unsaved buffers so (serq_lsp.commands); the copies live in a
folder of their own, and every relative `use` and `trace` is still read beside the file
the copy stands for. The option holds for its run only: `cli.main` called again in the
same process reads the disk.
"""

from __future__ import annotations

import json

from serq import cli

PROGRAM = """use "lib.sq";
stage s : fifo(1);
workload { arrive poisson(1); trace "turns.csv"; }
session { turn; run s (~exp(0.1)); observe x = level() + new; }
run { horizon 20; seed 1; }
"""
TURNS = "session,turn,new,out,think\n0,0,0,1,0\n"


def _mean(capsys, argv: list[str]) -> float:
    assert cli.main(argv) == 0, capsys.readouterr().err
    report = json.loads(capsys.readouterr().out)
    return report["observes"]["x"]["mean"]


def test_buffers_are_read_under_their_files_names(capsys, tmp_path):
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (work / "main.sq").write_text(PROGRAM)
    (work / "lib.sq").write_text("def level() = 1;\n")
    (work / "turns.csv").write_text(TURNS)
    (elsewhere / "a.sq").write_text(PROGRAM.replace("level() + new", "level() + new + 10"))
    (elsewhere / "b.sq").write_text("def level() = 5;\n")
    main, lib = str(work / "main.sq"), str(work / "lib.sq")
    buffers = [
        "--buffer",
        f"{main}={elsewhere / 'a.sq'}",
        "--buffer",
        f"{lib}={elsewhere / 'b.sq'}",
    ]
    assert _mean(capsys, ["run", main, "--json", *buffers]) == 15
    assert _mean(capsys, ["run", main, "--json"]) == 1  # the disk again
    assert _mean(capsys, ["run", main, "--json", "--buffer", f"{lib}={elsewhere / 'b.sq'}"]) == 5


def test_a_diagnostic_names_the_file_not_the_copy(capsys, tmp_path):
    (tmp_path / "main.sq").write_text(PROGRAM)
    (tmp_path / "lib.sq").write_text("def level() = 1;\n")
    (tmp_path / "turns.csv").write_text(TURNS)
    copy = tmp_path / "copy" / "0.sq"
    copy.parent.mkdir()
    copy.write_text(PROGRAM.replace("level()", "levl()"))
    main = str(tmp_path / "main.sq")
    assert cli.main(["run", main, "--buffer", f"{main}={copy}"]) == 1
    err = capsys.readouterr().err
    assert f"{main}:4:" in err and "0.sq" not in err, err


def test_a_malformed_buffer_is_a_usage_error(capsys, tmp_path):
    (tmp_path / "main.sq").write_text(PROGRAM)
    assert cli.main(["run", str(tmp_path / "main.sq"), "--buffer", "nothing"]) == 2
    assert "FILE=COPY" in capsys.readouterr().err
