"""The server survives any byte stream: framing, JSON-RPC errors, shutdown and exit, odd text.

These tests speak to `serq-lsp` over raw pipes, byte for byte, because the faults they
send (a lowercase header, a frame without one, a body that is not JSON) are what a
well-behaved client library cannot produce.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MM1 = (ROOT / "examples" / "mm1.sq").read_text()
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
import lsp_wire  # noqa: E402
from test_deep_input import DEEP, NESTING, nested  # noqa: E402


class Wire:
    """A serq-lsp process and the frames it writes, read on a thread."""

    def __init__(self) -> None:
        self.process, self.frames = lsp_wire.start(subprocess.PIPE)
        self.seen: list[dict] = []

    def raw(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict, header: str = "Content-Length") -> None:
        body = json.dumps(message).encode()
        self.raw(f"{header}: {len(body)}\r\n\r\n".encode() + body)

    def request(self, msg_id: Any, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, match, timeout: float = 30.0) -> dict:
        """The first frame (seen or to come) for which `match(frame)` holds."""
        for frame in self.seen:
            if match(frame):
                self.seen.remove(frame)
                return frame
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no such frame")
            try:
                frame = self.frames.get(timeout=left)
            except queue.Empty:
                continue
            if match(frame):
                return frame
            self.seen.append(frame)

    def answer(self, msg_id: Any, timeout: float = 30.0) -> dict:
        return self.wait(lambda f: f.get("id") == msg_id and "method" not in f, timeout)

    def diagnostics(self, uri: str, timeout: float = 60.0) -> list[dict]:
        def published(f: dict) -> bool:
            method = f.get("method") == "textDocument/publishDiagnostics"
            return method and f["params"]["uri"] == uri

        return self.wait(published, timeout)["params"]["diagnostics"]

    def initialize(self) -> None:
        params = {"processId": None, "rootUri": None, "capabilities": {}}
        params["initializationOptions"] = {"debounce": 0.0}
        self.request(0, "initialize", params)
        assert "result" in self.answer(0)
        self.notify("initialized", {})

    def open(self, uri: str, text: str) -> None:
        document = {"uri": uri, "languageId": "serq", "version": 1, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": document})

    def shut_down(self, msg_id: Any) -> tuple[int, str]:
        """`shutdown` (answered with null), `exit`, and then `finish`."""
        self.request(msg_id, "shutdown")
        assert self.answer(msg_id)["result"] is None
        self.notify("exit")
        return self.finish()

    def finish(self, timeout: float = 30.0) -> tuple[int, str]:
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        status = self.process.wait(timeout)
        return status, self.process.stderr.read().decode(errors="replace")


def _no_traceback(frame: dict) -> None:
    assert "Traceback" not in json.dumps(frame)
    data = frame.get("error", {}).get("data")
    assert not data or "traceback" not in json.dumps(data).lower()


def test_lowercase_content_length(wire):
    wire.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": {}},
        },
        header="content-length",
    )
    assert "capabilities" in wire.answer(0)["result"]
    wire.request(
        1,
        "shutdown",
        None,
    )
    assert wire.answer(1)["result"] is None


def test_frame_without_content_length_keeps_the_framing(wire):
    wire.initialize()
    lost = json.dumps(
        {"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {}}
    ).encode()
    wire.raw(b"Content-Type: application/vscode-jsonrpc\r\n\r\n" + lost)  # no length
    wire.request(6, "shutdown")
    assert wire.answer(5)["error"]["code"] == -32600
    assert wire.answer(6)["result"] is None
    wire.raw(lost + b"\r\n")  # a bare body on a line of its own
    assert wire.answer(5)["error"]["code"] == -32600


def test_body_that_is_not_json(wire):
    wire.initialize()
    body = b'{"jsonrpc": "2.0", "id": 9, "method": "textDocument/hover", "params": {'
    wire.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    error = wire.answer(9)["error"]
    assert error["code"] == -32700
    wire.raw(b"Content-Length: 4\r\n\r\n\xff\xfe{]")  # no id to answer: nothing, no crash
    wire.request(10, "shutdown")
    assert wire.answer(10)["result"] is None


def test_invalid_params_are_answered(wire):
    wire.initialize()
    wire.request(3, "textDocument/hover", {"textDocument": 5, "position": "here"})
    frame = wire.answer(3)
    assert frame["error"]["code"] == -32602
    _no_traceback(frame)


def test_requests_after_shutdown_and_a_clean_exit(wire):
    wire.initialize()
    wire.request(1, "shutdown")
    assert wire.answer(1)["result"] is None
    wire.request(
        2,
        "textDocument/hover",
        {"textDocument": {"uri": "file:///x.sq"}, "position": {"line": 0, "character": 0}},
    )
    assert wire.answer(2)["error"]["code"] == -32600
    wire.request(3, "shutdown")
    assert wire.answer(3)["error"]["code"] == -32600
    wire.notify("exit")
    status, err = wire.finish()
    assert status == 0, err
    assert "Traceback" not in err


def test_exit_without_shutdown_exits_1(wire):
    wire.initialize()
    wire.notify("exit")
    assert wire.finish()[0] == 1


def test_end_of_input_without_shutdown_exits_1(wire):
    wire.initialize()
    assert wire.finish()[0] == 1


def test_internal_errors_carry_no_traceback(wire):
    wire.initialize()
    wire.request(4, "workspace/executeCommand", {"command": "serq.run", "arguments": []})
    frame = wire.answer(4)
    assert "error" in frame
    _no_traceback(frame)


def test_shutdown_while_a_run_is_in_flight(wire, tmp_path):
    wire.initialize()
    path = tmp_path / "long.sq"
    path.write_text(MM1.replace("horizon 20000", "horizon 1e12"))
    wire.open(path.as_uri(), path.read_text())
    wire.request(
        1, "workspace/executeCommand", {"command": "serq.run", "arguments": [path.as_uri()]}
    )
    time.sleep(2.0)
    wire.request(2, "shutdown")
    assert wire.answer(2)["result"] is None
    assert "error" in wire.answer(1)  # cancelled or stopped, answered either way
    wire.notify("exit")
    status, err = wire.finish()
    assert status == 0
    assert "RuntimeError" not in err and "Traceback" not in err, err


def test_hover_on_a_document_whose_file_is_gone(wire, tmp_path):
    wire.initialize()
    path = tmp_path / "gone.sq"
    path.write_text(MM1)
    uri = path.as_uri()
    wire.open(uri, MM1)
    assert wire.diagnostics(uri) == []
    path.unlink()
    at = {"line": MM1.splitlines().index("stage server : fifo(1);"), "character": 8}
    wire.request(1, "textDocument/hover", {"textDocument": {"uri": uri}, "position": at})
    assert "result" in wire.answer(1)
    never = (tmp_path / "never.sq").as_uri()
    wire.request(2, "textDocument/hover", {"textDocument": {"uri": never}, "position": at})
    frame = wire.answer(2)
    assert "result" in frame or frame["error"]["code"] != -32603, frame
    _no_traceback(frame)


def test_bom_is_kept_in_positions_and_bad_bytes_are_e_utf8(wire):
    wire.initialize()
    wire.open("file:///bom.sq", "\ufefflet x = ;\n")
    (d,) = wire.diagnostics("file:///bom.sq")
    assert d["code"] == "E-parse" and d["range"]["start"] == {"line": 0, "character": 9}
    text = '{"uri": "file:///bad.sq", "languageId": "serq", "version": 1, "text": "let x = 1;'
    body = (
        b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": '
        + text.encode()
        + b' // \xff\\n"}}}'
    )
    wire.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    (d,) = wire.diagnostics("file:///bad.sq")
    assert d["code"] == "E-utf8" and d["range"]["start"] == {"line": 0, "character": 14}


@pytest.mark.parametrize("kind", NESTING)
def test_deep_documents_through_the_server(wire, kind):
    wire.initialize()
    uri = f"file:///deep-{kind}.sq"
    text = nested(kind, DEEP)
    wire.open(uri, text)
    assert "E-too-deep" in {d["code"] for d in wire.diagnostics(uri, timeout=120)}
    line = len(text.splitlines()) // 2
    document = {"uri": uri}
    at = {"line": line, "character": 20}
    asks = [
        ("textDocument/hover", {"textDocument": document, "position": at}),
        ("textDocument/definition", {"textDocument": document, "position": at}),
        ("textDocument/documentSymbol", {"textDocument": document}),
        ("textDocument/semanticTokens/full", {"textDocument": document}),
        ("textDocument/foldingRange", {"textDocument": document}),
        ("textDocument/completion", {"textDocument": document, "position": at}),
    ]
    for n, (method, params) in enumerate(asks, 1):
        wire.request(n, method, params)
    for n, (method, _) in enumerate(asks, 1):
        frame = wire.answer(n, timeout=120)
        assert "result" in frame, (method, frame)
