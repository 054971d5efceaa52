"""A spill whose write is of infinite work (`spill host via pcie (size / 0) when (...)`)
puts a job of infinite work on its stage, as a `run` of `inf` does: the stage holds it
to the end of the run (at a fifo stage it keeps a server, and the writes behind it wait),
and the run warns of it (W-stall, docs/domains-and-stalls.md). serq dropped such a write's
job, as it drops one of no work, so the stage reported itself idle and nothing was said;
pyserq 0.1.2 keeps the job (its report of these programs is serq's now). The prefix is in
the tier at the eviction either way (tests/sim/NOTES.md §4, §36). Each program runs on
every path.
"""

from __future__ import annotations

import json

import pytest

from tests.sim.both_paths import runs_on_every_path

# session 0 caches 4 units at t = 1; session 1's hold evicts them at t = 1, which spills
# them to `host` with a write on `pcie`; the horizon is 10
PROGRAM = """\
pool m {{ cap 4; evict lru; spill host via pcie ({work}) when (1); }}
pool host {{ cap 100; evict lru; }}
stage pcie : {kind};
stage svc : delay;
workload {{ arrive batch(2); }}
session {{ run svc (serial); hold m (4) {{ run svc (1); }} cache (4); observe t = now; }}
run {{ horizon 10; warmup 0; seed 1; }}
"""


def _runs(work: str, kind: str) -> list[tuple[dict, list]]:
    out = []
    for report, ran in runs_on_every_path(PROGRAM.format(work=work, kind=kind)):
        data = json.loads(report.json())
        data.pop("skipped", None)
        out.append((data, [(d.code, d.span.line, d.message) for d in ran]))
    assert all(x == out[0] for x in out)
    return out


def _stage(data: dict, name: str) -> dict:
    return next(s for s in data["stages"] if s["name"] == name)


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        (
            "fifo(1)",
            "has kept a server for a spill's job of infinite work since t = 1; it never completes",
        ),
        ("delay", "has held a spill's job of infinite work since t = 1; it never completes"),
        (
            "ps(1)",
            "has shared its capacity with a spill's job of infinite work since t = 1; it never completes",
        ),
    ],
)
def test_a_spill_of_infinite_work_holds_its_stage_to_the_end(kind: str, said: str) -> None:
    (data, ran), *_ = _runs("size / 0", kind)
    pcie = _stage(data, "pcie")
    assert pcie["mean_number"] == pytest.approx(0.9)  # from t = 1 to the horizon 10
    assert pcie["completed"] == 0
    assert [p["spills"] for p in data["pools"]] == [1, 0]
    assert ran == [("W-stall", 3, f"stage `pcie` {said}")]
    assert data["ended"] == 2  # the sessions do not wait for the write


@pytest.mark.parametrize("work", ["0", "-size", "size / 0 - size / 0"])
def test_a_spill_of_no_work_puts_no_job_on_its_stage(work: str) -> None:
    (data, ran), *_ = _runs(work, "fifo(1)")
    pcie = _stage(data, "pcie")
    assert pcie["mean_number"] == 0 and pcie["completed"] == 0
    assert [p["spills"] for p in data["pools"]] == [1, 0]
    assert ran == []


def test_a_spill_of_finite_work_completes() -> None:
    (data, ran), *_ = _runs("2", "fifo(1)")
    pcie = _stage(data, "pcie")
    assert pcie["completed"] == 1
    assert pcie["mean_number"] == pytest.approx(0.2)
    assert ran == []
