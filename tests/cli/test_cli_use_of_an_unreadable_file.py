"""A `use` of a file that cannot be read says why in the words of every command.

`serq check` of a missing program said "cannot read `x.sq`: no such file" (E-io), but a
`use` of a missing library "cannot read `nope.sq`: No such file or directory" (E-use, the
system's words), and of a directory "Is a directory" where the program's was "it is a
directory".
"""

from __future__ import annotations

from pathlib import Path

from serq import api


def test_a_use_of_a_missing_file_or_a_directory(tmp_path: Path):
    (tmp_path / "lib.sq").mkdir()
    program = tmp_path / "main.sq"
    text = 'use "nope.sq";\nuse "lib.sq";\nstage s : fifo(1);\n'
    program.write_text(text)
    said = [(d.code, d.message) for d in api.check_source(text, str(program))]
    assert ("E-use", "cannot read `nope.sq`: no such file") in said
    assert ("E-use", "cannot read `lib.sq`: it is a directory") in said
    missing = api.read_source(str(tmp_path / "x.sq"))
    assert missing.message == f"cannot read `{tmp_path / 'x.sq'}`: no such file"
    folder = api.read_source(str(tmp_path / "lib.sq"))
    assert folder.message.endswith(": it is a directory")


def test_a_trace_that_cannot_be_read(tmp_path: Path):
    from serq.sim.api import compile_program, execute

    text = (
        "stage s : fifo(1);\n"
        'workload { arrive poisson(1); trace "none.csv"; }\n'
        "session { turn; run s (1); }\n"
        "run { horizon 10; }\n"
    )
    compiled, _ = compile_program(text, str(tmp_path / "t.sq"))
    report, diagnostics = execute(compiled)
    assert report is None
    assert diagnostics[-1].message == "cannot read trace `none.csv`: no such file"
