"""`serq explain E-io` says what serq reports as E-io, and with which status.

The explanation said E-io is a file on the command line that cannot be read, or a
`--dump` that cannot be written, always status 2. serq also reports as E-io a sweep's
`--out` and a plot's `-o` it cannot write, a missing matplotlib, pyarrow or Dask, a
scheduler it cannot reach, and `serq plot` of results with nothing to draw, that last
with status 1. Each case below is run and must be one the explanation names.
"""

from __future__ import annotations

from serq import cli
from serq.diagnostics import codes, explain

PROGRAM = """let lambda = 0.5;
stage server : fifo(1);
workload { arrive poisson(lambda); }
session { run server (~exp(1)); observe w = now; }
run { horizon 20; seed 1; }
"""


def _run(capsys, argv: list[str]) -> tuple[int, str]:
    status = cli.main(argv)
    return status, capsys.readouterr().err


def test_each_e_io_is_one_the_explanation_names(capsys, tmp_path):
    program = tmp_path / "p.sq"
    program.write_text(PROGRAM)
    results = tmp_path / "r.csv"
    assert (
        cli.main(
            ["sweep", str(program), "--set", "lambda=0.5", "--jobs", "1", "--out", str(results)]
        )
        == 0
    )
    capsys.readouterr()
    text = explain.explain(codes.IO)
    cases = [  # argv, status, words of the explanation that name the case
        (["run", str(tmp_path / "none.sq")], 2, "the program (missing"),
        (
            ["sweep", str(program), "--set", "lambda=1", "--out", str(tmp_path / "r.txt")],
            2,
            "`serq sweep --out`",
        ),
        (
            ["plot", str(results), "--x", "lambda", "--y", "w", "-o", str(tmp_path / "no/p.png")],
            2,
            "`serq plot -o`",
        ),
        (
            ["plot", str(results), "--x", "lambda", "--y", "v", "-o", str(tmp_path / "p.png")],
            1,
            "status 1",
        ),
        (
            ["plot", str(results), "--y", "w", "-o", str(tmp_path / "p.png")],
            2,
            "without `--x` and `--y`",
        ),
    ]
    for argv, status, words in cases:
        got, err = _run(capsys, argv)
        assert (got, "error[E-io]" in err) == (status, True), (argv, got, err)
        assert words in text, words
    assert "as a usage error" in text and "status 2" in text
    for needed in ("matplotlib", "pyarrow", "dask.distributed", "Dask scheduler"):
        assert needed in text, needed
