"""A Run from the editor that passes its time limit says why, when serq knows.

A run stopped at the limit answered only "the run took longer than T s and was stopped".
A program in a livelock (a hold that can never grow to what its body needs, preempted
and executed again until the horizon), or whose sessions wait at the pools for ever
while the arrivals go on, is such a run, and the user could not tell it from a program
that is merely long. The server now stops the worker as Ctrl-C does, so `serq run`
prints the clock it reached and what had stopped moving (`serq.sim.Interrupted`,
tests/cli/test_interrupt_names_what_stopped.py), which the answer carries (each
warning's first line and position, and the clock), naming the user's file.
"""

from __future__ import annotations

import pytest

from tests.cli.test_interrupt_names_what_stopped import DEADLOCK
from tests.cli.test_livelock_notice import LIVELOCK


@pytest.mark.parametrize(
    ("text", "said", "where"),
    [
        (LIVELOCK, "warning[W-stall]: a livelock at pool `kv`", "4:11"),
        (DEADLOCK, "warning[W-deadlock]: ", "1:6"),
    ],
    ids=["livelock", "deadlock"],
)
def test_a_run_stopped_at_the_limit_names_what_stopped(wire, tmp_path, text, said, where):
    path = tmp_path / "stopped.sq"
    path.write_text(text)
    wire.initialize()
    uri = path.as_uri()
    wire.open(uri, text)
    assert wire.diagnostics(uri) == []
    wire.request(
        1, "workspace/executeCommand", {"command": "serq.run", "arguments": [uri, 3]}
    )
    answer = wire.answer(1, timeout=120)
    message = answer["error"]["message"]
    assert message.startswith("the run took longer than 3 s and was stopped:"), message
    assert said in message and f"{path}:{where}" in message, message
    assert message.splitlines()[-1].startswith("serq: interrupted at t = "), message
    assert " | " not in message  # the heads and positions, not the source excerpts
