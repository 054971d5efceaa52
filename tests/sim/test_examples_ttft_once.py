"""The examples that observe the time to first token inside a hold a step engine may
preempt: a preempted request runs the hold's body again, computing its prompt anew, but
its first token was given once. Past the cliff (preemptions by the hundred) each request
still has one `ttft` sample: the samples exceed the finished requests only by those
still running at the horizon, which have had their first token and no response yet."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import serq

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _preempting(name: str, cap: str, small: str, tmp_path: Path) -> Path:
    """A copy of example `name` whose KV pool `cap` is `small` (the examples write theirs
    as a literal): written beside nothing it `use`s, so only for self-contained ones."""
    text = (EXAMPLES / name).read_text()
    assert text.count(cap) == 1
    path = tmp_path / Path(name).name
    path.write_text(text.replace(cap, small))
    return path


@pytest.mark.parametrize(
    ("path", "sets", "preempted", "running_most"),
    [
        ("tutorial/06_vllm.sq", {"Lambda": 3, "blocks": 120}, 300, 32),
        ("tutorial/05_step_engine.sq", {"Lambda": 12}, 100, 16),
        ("replica.sq", {"Lambda": 2}, 30, 4),  # at most 4 running: few preemptions
    ],
)
def test_one_ttft_a_request_past_the_cliff(path, sets, preempted, running_most, tmp_path):
    program = EXAMPLES / path
    if path == "tutorial/05_step_engine.sq":
        program = _preempting(path, "cap 800 * bs;", "cap 60 * bs;", tmp_path)
    elif path == "replica.sq":
        program = _preempting(path, "cap 600 * bs;", "cap 300 * bs;", tmp_path)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        report = serq.run(serq.compile(str(program), sets=sets, horizon=100, warmup=0))
    # preempted, not rejected; the step engine's example this far past its cliff (29 of
    # 2,482 admissions completed, none after t = 11.5) is a livelock of holders preempting
    # one another, which the run names
    livelock = [str(w.message) for w in said if "still short of it" in str(w.message)]
    assert len(livelock) == (path == "tutorial/05_step_engine.sq")
    assert len(said) == len(livelock), [str(w.message) for w in said]
    kv = next(p for p in report.pools if p.name == "kv")
    assert kv.preemptions >= preempted  # past the cliff
    first, done = report.observe("ttft").count, report.observe("response").count
    assert 0 <= first - done <= running_most
