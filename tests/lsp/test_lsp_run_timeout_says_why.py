"""A Run from the editor that passes its time limit says why, when serq knows.

A run stopped at the limit answered only "the run took longer than T s and was stopped".
A program in a livelock (a hold that can never grow to what its body needs, preempted
and executed again until the horizon) is such a run, and the user could not tell it
from a program that is merely long. The server now stops the worker as Ctrl-C does, so
`serq run` prints the clock it reached and the livelock's warning, which the answer
carries (each warning's first line and position, and the clock), naming the user's
file.
"""

from __future__ import annotations

from tests.cli.test_livelock_notice import LIVELOCK


def test_a_run_stopped_at_the_limit_names_the_livelock(wire, tmp_path):
    path = tmp_path / "livelock.sq"
    path.write_text(LIVELOCK)
    wire.initialize()
    uri = path.as_uri()
    wire.open(uri, LIVELOCK)
    assert wire.diagnostics(uri) == []
    wire.request(
        1, "workspace/executeCommand", {"command": "serq.run", "arguments": [uri, 3]}
    )
    answer = wire.answer(1, timeout=120)
    message = answer["error"]["message"]
    assert message.startswith("the run took longer than 3 s and was stopped:"), message
    assert "warning[W-stall]: a livelock at pool `kv`" in message, message
    assert f"{path}:4:11" in message, message
    assert message.splitlines()[-1].startswith("serq: interrupted"), message
    assert "4 | session" not in message  # the heads and positions, not the excerpts
