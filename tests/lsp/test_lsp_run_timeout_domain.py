"""The Run command's timeout (its second argument) is a positive number of seconds, `inf`
for none; anything else is refused as invalid params before any run.

A timeout of 0, -1 or NaN started the worker and stopped it at once, answering "the run
took longer than -1 s and was stopped" (an internal error, as if the program were at
fault); `true` ran with a timeout of 1 s.
"""

from __future__ import annotations

import pytest

MM1 = "let lambda = 0.8;\nstage server : fifo(1);\nworkload { arrive poisson(lambda); }\n"
MM1 += "session { run server (~exp(1)); }\nrun { horizon 10; }\n"


def _run(wire, tmp_path, timeout, wait: float) -> dict:
    """The answer to a Run of the M/M/1 program with `timeout` as its second argument."""
    path = tmp_path / "mm1.sq"
    path.write_text(MM1)
    wire.initialize()
    params = {"command": "serq.run", "arguments": [path.as_uri(), timeout]}
    wire.request(1, "workspace/executeCommand", params)
    return wire.answer(1, timeout=wait)


@pytest.mark.parametrize("timeout", [0, -0.0, -1, "nan", "-inf", True, "soon", None, [3]])
def test_a_timeout_out_of_its_domain_is_refused(wire, tmp_path, timeout):
    error = _run(wire, tmp_path, timeout, wait=60)["error"]
    assert error["code"] == -32602, error
    assert error["message"].startswith("a timeout is a positive number of seconds"), error


@pytest.mark.parametrize("timeout", [30, "30", 1e300, "inf"])
def test_a_positive_timeout_runs(wire, tmp_path, timeout):
    answer = _run(wire, tmp_path, timeout, wait=120)
    assert answer["result"].startswith("# Run report"), answer
