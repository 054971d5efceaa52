"""Completion right after a `.` just typed answers for the text with the dot.

While the check of an edit waits for its debounce, completion answers from the last
analysis, read through the edits since (`serq_lsp.stale.View`). A position right after
an insertion maps to the end of the old text, so the `.` that triggered the request was
not there: typing `let rate = args.` offered every name in scope (`rate`, `now`, `min`,
...), which the editor then inserts after the dot, where the settled document offers the
one member, `number` (found typing examples/vocabulary/mg1_args.sq a key at a time; it
happened when the request came before the check). Now a `.` just typed before the cursor
makes completion read the current text's parse.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lsp_robust import Wire  # noqa: E402

TEXT = 'use "std/args";\nlet rate = args'


def _labels(wire: Wire, msg_id: int, uri: str, text: str) -> list[str]:
    lines = text.split("\n")
    position = {"line": len(lines) - 1, "character": len(lines[-1])}
    params = {"textDocument": {"uri": uri}, "position": position}
    wire.request(msg_id, "textDocument/completion", params)
    answer = wire.answer(msg_id)
    assert "result" in answer, answer
    return [item["label"] for item in answer["result"]["items"]]


def test_args_dot_typed_before_the_check(wire: Wire, tmp_path):
    params = {"processId": None, "rootUri": None, "capabilities": {}}
    params["initializationOptions"] = {"debounce": 60.0}  # the check of an edit waits
    wire.request(0, "initialize", params)
    assert "result" in wire.answer(0)
    wire.notify("initialized", {})
    uri = (tmp_path / "typed.sq").as_uri()
    wire.open(uri, TEXT)  # checked at once
    wire.diagnostics(uri)
    end = {"line": 1, "character": len("let rate = args")}
    change = {"range": {"start": end, "end": end}, "text": "."}
    wire.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]},
    )
    assert _labels(wire, 1, uri, TEXT + ".") == ["number"]
    # a name typed after it: completion of the older text as before (the client filters)
    start = {"line": 1, "character": len("let rate = args.")}
    change = {"range": {"start": start, "end": start}, "text": "n"}
    wire.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [change]},
    )
    assert _labels(wire, 2, uri, TEXT + ".n") == ["number"]
