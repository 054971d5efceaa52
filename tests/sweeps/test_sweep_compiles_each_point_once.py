"""A sweep compiles each point of its grid once in its own process: the check of the grid
(`checks.check_points`) keeps the programs it compiled (up to `worker.CACHE_SIZE`), and
the runs of a point, each seed's, take it from there (`worker.remember`) instead of
compiling it again. A grid past the cache compiles the points beyond it again, once
each."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import serq
from serq.sim import api as sim_api
from serq.sweeps import worker

PROGRAM = Path(__file__).resolve().parents[2] / "examples" / "mm1.sq"


def _compiles(monkeypatch, points: str, seeds: int) -> tuple[Counter, object]:
    made: Counter = Counter()
    compile_program = sim_api.compile_program

    def counted(text, path, **options):
        made[tuple(sorted((options.get("sets") or {}).items()))] += 1
        return compile_program(text, path, **options)

    monkeypatch.setattr(sim_api, "compile_program", counted)
    monkeypatch.setattr(worker, "_compiled", type(worker._compiled)())
    result = serq.sweep(str(PROGRAM), sets={"lambda": points}, seeds=seeds, horizon=2000, jobs=1)
    return made, result


def test_each_point_is_compiled_once_for_all_its_seeds(monkeypatch):
    made, result = _compiles(monkeypatch, "0.1:0.9:0.05", seeds=3)
    assert len(made) == 17 and set(made.values()) == {1}
    assert len(result.points) == 17


def test_points_past_the_cache_are_compiled_again_once(monkeypatch):
    monkeypatch.setattr(worker, "CACHE_SIZE", 4)
    made, _ = _compiles(monkeypatch, "0.1:0.9:0.1", seeds=2)
    assert sorted(made.values()) == [1] * 4 + [2] * 5
