"""A request the server answers with an error on purpose leaves no traceback in its log.

pygls logs every request answered with an error with its traceback. A user met them in
the server's output for a rename refused (the new name taken) and for a Run of a program
that stops with an error (here a library, which has no `run` block): answers, not
failures of the server. The log keeps one line for an internal error and nothing for a
refusal; a failure of serq's own still logs its traceback (`serq_lsp.guard.guarded`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lsp_robust import MM1, Wire  # noqa: E402


def _rename(wire: Wire, msg_id: int, uri: str, line: int, character: int, name: str) -> dict:
    params = {
        "textDocument": {"uri": uri},
        "position": {"line": line, "character": character},
        "newName": name,
    }
    wire.request(msg_id, "textDocument/rename", params)
    return wire.answer(msg_id)


def test_refusals_and_failed_runs_log_no_traceback(wire, tmp_path):
    wire.initialize()
    program = tmp_path / "mm1.sq"
    program.write_text(MM1)
    uri = program.as_uri()
    wire.open(uri, MM1)
    assert wire.diagnostics(uri) == []
    lines = MM1.splitlines()
    line = lines.index("stage server : fifo(1);")
    # a rename to a name the program has: refused (invalid params)
    taken = _rename(wire, 1, uri, line, len("stage s"), "lambda")
    assert taken["error"]["code"] == -32602, taken
    assert "already a name" in taken["error"]["message"]
    # not a name: refused
    assert _rename(wire, 2, uri, line, len("stage s"), "1x")["error"]["code"] == -32602
    # a Run of a file with no `run` block: the run fails, the answer says why
    library = tmp_path / "lib.sq"
    text = "def twice(x) = 2 * x;\n"
    library.write_text(text)
    wire.open(library.as_uri(), text)
    wire.diagnostics(library.as_uri())
    command = {"command": "serq.run", "arguments": [library.as_uri()]}
    wire.request(3, "workspace/executeCommand", command)
    failed = wire.answer(3, timeout=60)
    assert "no horizon" in failed["error"]["message"], failed
    # a command with bad arguments
    wire.request(4, "workspace/executeCommand", {"command": "serq.run", "arguments": [5]})
    assert wire.answer(4)["error"]["code"] == -32602
    status, err = wire.shut_down(5)
    assert status == 0
    assert "Traceback" not in err, err
    assert "already a name" not in err  # a refusal is not logged
    assert "no horizon" in err  # a failed run is, in one line


def test_messages_whose_params_do_not_fit_log_no_traceback(wire):
    # pygls logged each with its traceback ("Unable to deserialize message"), where the
    # server answers the request (-32602) and drops the notification
    wire.initialize()
    wire.notify("$/cancelRequest", {})
    wire.notify("textDocument/didOpen", {"textDocument": {"uri": 3}})
    wire.request(1, "textDocument/hover", {"textDocument": {}, "position": "here"})
    assert wire.answer(1)["error"]["code"] == -32602
    status, err = wire.shut_down(2)
    assert status == 0
    assert "Traceback" not in err and "Unable to deserialize" not in err, err
    assert "dropped a `$/cancelRequest` message whose params do not fit its type" in err, err
    assert "dropped a `textDocument/didOpen` message" in err, err
