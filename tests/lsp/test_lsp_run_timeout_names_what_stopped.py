"""A Run from the editor stopped at its time limit names what of the deployment had
stopped moving, not only a livelock: here sessions waiting at the pools for ever while
the arrivals go on (W-deadlock), which a run finds otherwise only at its horizon
(`serq.sim.Interrupted`, tests/cli/test_interrupt_names_what_stopped.py)."""

from __future__ import annotations

from tests.cli.test_interrupt_names_what_stopped import DEADLOCK


def test_a_run_stopped_at_the_limit_names_the_deadlock(wire, tmp_path):
    path = tmp_path / "deadlock.sq"
    path.write_text(DEADLOCK)
    wire.initialize()
    uri = path.as_uri()
    wire.open(uri, DEADLOCK)
    assert wire.diagnostics(uri) == []
    wire.request(
        1, "workspace/executeCommand", {"command": "serq.run", "arguments": [uri, 3]}
    )
    answer = wire.answer(1, timeout=120)
    message = answer["error"]["message"]
    assert message.startswith("the run took longer than 3 s and was stopped:"), message
    assert "warning[W-deadlock]: " in message, message
    assert "wait at the pools for ever" in message, message
    assert f"{path}:1:6" in message, message
    assert "serq: interrupted at t = " in message, message
