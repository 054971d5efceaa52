"""A run that no session arrives in: `arrive none` (the default), or a renewal whose
first gap passes the horizon. It ran to the horizon in silence and printed a report of
idle stages and empty observations; pyserq 0.1.2 does the same. It is now a W-idle
warning at the arrival clause (under `arrive none`, at the session's first statement,
which never runs), the same on every path (tests/sim/NOTES.md §32).
"""

from __future__ import annotations

import pytest

from tests.sim.both_paths import runs_on_every_path

PROGRAM = """\
pool kv {{ cap 10; }}
stage s : fifo(1);
workload {{ {arrive} }}
session {{ hold kv (1) {{ run s (1); }} observe t = now; }}
run {{ horizon 100; }}
"""
MAIN = """\
use "std/args";
fn main() {
  let gap = args.number("gap", 500);
  stage s : delay;
  workload { arrive renewal(gap); }
  server { run s (cost(s, 1)); }
}
"""


def _said(text: str, **settings) -> list[tuple]:
    runs = []
    for report, ran in runs_on_every_path(text, **settings):
        said = [(d.code, text.count("\n", 0, d.span.start) + 1, d.message) for d in ran]
        runs.append((said, report.arrivals))
    assert all(r == runs[0] for r in runs), runs
    return runs[0]


@pytest.mark.parametrize(
    "arrive, why",
    [
        ("arrive none;", "the workload has no arrival process (`arrive none`, the default)"),
        ("", "the workload has no arrival process (`arrive none`, the default)"),
        ("arrive renewal(1e300);", "the first arrival comes after the horizon 100"),
        ("arrive renewal(100.5);", "the first arrival comes after the horizon 100"),
    ],
)
def test_a_run_no_session_arrives_in_is_a_warning(arrive, why):
    said, arrivals = _said(PROGRAM.format(arrive=arrive))
    assert arrivals == 0
    line = 3 if arrive.startswith("arrive renewal") else 4
    message = f"no session arrived: {why}, so nothing ran and the report is empty"
    assert said == [("W-idle", line, message)]


@pytest.mark.parametrize(
    "arrive", ["arrive renewal(99);", "arrive batch(1);", "arrive poisson(1e-9);"]
)
def test_a_run_with_one_arrival_says_nothing(arrive):
    said, arrivals = _said(PROGRAM.format(arrive=arrive))
    assert said == [] and arrivals >= 1


def test_fn_main_with_a_program_argument():
    said, _ = _said(MAIN, horizon=100.0)
    assert [(code, line) for code, line, _ in said] == [("W-idle", 5)]
    assert _said(MAIN, horizon=100.0, sets={"gap": "40"}) == ([], 2)


def test_a_program_of_a_run_block_alone_is_warned_of_in_its_own_file(tmp_path):
    """With no construct to point at (no statement, pool or stage), the warning points at
    the start of the file, not at a `<program>` of no file (round 21, NOTES §49)."""
    import warnings

    import serq

    path = tmp_path / "only_run.sq"
    path.write_text("// nothing but the run\nrun { horizon 10; }\n", encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        serq.run(serq.compile(str(path)))
    told = [str(w.message) for w in caught if issubclass(w.category, serq.RunWarning)]
    assert len(told) == 1 and "W-idle" in told[0]
    assert f"--> {path}:1:1" in told[0] and "<program>" not in told[0]
