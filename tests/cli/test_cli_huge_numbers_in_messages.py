"""A number past what a float holds exactly is written as Python writes a float (`1e+300`)
in a diagnostic, not as the 301 digits of its integer.

`serq run a.sq --horizon 1e300 --warmup 1e301` said "warmup 1000000000000000052504760...
(301 digits) is not below the horizon 10000...", the flags repeated in the same digits;
a run block's `warmup 2e300;` and a drained run past a warm-up of 1e299 likewise, and
hover showed `let c = 1e300;` folded to the same digits. Each message turned a whole
float into an int to drop its `.0`; now only below 2**53, where it is exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from serq.cli import main
from serq_lsp.describe import _number

MAIN = """fn main() {
  stage server : fifo(1);
  workload { arrive poisson(0.8); }
  server { run server (cost(server, ~exp(1))); }
}
"""
BLOCK = """stage s : fifo(1);
workload { arrive poisson(1); }
session { run s (1); }
run { horizon 1e300; warmup 2e300; }
"""


@pytest.mark.parametrize(
    ("text", "argv", "said"),
    [
        (
            MAIN,
            ["--horizon", "1e300", "--warmup", "1e301"],
            "warmup 1e+301 is not below the horizon 1e+300 (with `--warmup 1e+301` and "
            "`--horizon 1e+300`)",
        ),
        (BLOCK, [], "the warmup must be at least 0 and below the horizon 1e+300, not 2e+300"),
        (
            MAIN,
            ["--horizon", "1e300", "--arrivals", "5", "--warmup", "1e299"],
            "before or at warmup 1e+299: no measurement interval",
        ),
        (MAIN, ["--horizon", "20", "--warmup", "30"], "warmup 30 is not below the horizon 20"),
    ],
    ids=["flags", "run block", "drained", "small"],
)
def test_a_huge_number_in_a_message(tmp_path: Path, capsys, text, argv, said) -> None:
    path = tmp_path / "a.sq"
    path.write_text(text)
    main(["run", str(path), *argv, "--color", "never"])
    err = capsys.readouterr().err
    assert said in err, err
    assert "00000000000000000" not in err


def test_hover_folds_a_huge_let() -> None:
    assert _number(1e300) == "1e+300"
    assert _number(-1e300) == "-1e+300"
    assert _number(2.0**52) == "4503599627370496"
    assert _number(0.5) == "0.5"
