"""The server's wire: LSP frames read from any byte stream, and the JSON-RPC errors it owes.

pygls' own loop matches `Content-Length: N` case-sensitively, drops a frame whose
body is not JSON or whose params do not fit without an answer, and leaves requests
after `shutdown` unanswered. This loop replaces it on stdio and TCP:

- header names are case-insensitive (`content-length: 12`), other headers are skipped;
- bytes that arrive where a header should be (a body sent without `Content-Length`)
  are read up to the next `Content-Length` header, which may follow on the same line,
  and answered `-32600` if a request id can be read in them; the framing holds;
- a body that is not JSON is answered `-32700` where an id can be read; invalid
  UTF-8 in it is kept as escaped bytes (`serq.syntax.source_text`), so a document
  with such bytes gets its `E-utf8` diagnostic;
- params that do not fit the method's type are answered `-32602` (a notification's are
  logged in one line, without pygls' traceback);
- after `shutdown`, every request but `exit` is answered `-32600`;
- no error response carries a Python traceback in its `data`;
- the process exits 0 after `shutdown` then `exit`, and 1 when the stream ends or
  `exit` comes without `shutdown`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from typing import Any

from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.protocol import LanguageServerProtocol

from serq_lsp import convert

log = logging.getLogger("serq_lsp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)", re.IGNORECASE)
_HEADER = re.compile(rb"^[A-Za-z0-9-]+[ \t]*:")
_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
MAX_BODY = 1 << 30  # a Content-Length past this is not believed


def _negotiate_encoding(params: Any) -> None:
    """Count positions in the encoding pygls will announce for `initialize`'s `params`: the
    client's first of UTF-8, UTF-16 and UTF-32, else UTF-16. pygls applies the document's
    changes in it; `convert` counts every other position in it."""
    capabilities = getattr(params, "capabilities", None)
    kind = types.PositionEncodingKind.Utf16
    if capabilities is not None:
        kind = ServerCapabilitiesBuilder.choose_position_encoding(capabilities)
    kind = getattr(kind, "value", kind)
    convert.use_encoding(kind if kind in convert.ENCODINGS else "utf-16")


class _Unfitting(logging.Filter):
    """pygls' record of a message whose params do not fit their type, which carries its
    traceback: `SerqProtocol.receive` answers such a request (-32602) and logs such a
    notification in one line, so the record is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Unable to deserialize message")


logging.getLogger("pygls.protocol.json_rpc").addFilter(_Unfitting())


class SerqProtocol(LanguageServerProtocol):
    """pygls' protocol, with the answers JSON-RPC requires where pygls is silent."""

    def handle_message(self, message: Any) -> None:
        if getattr(message, "method", None) == types.INITIALIZE:
            _negotiate_encoding(message.params)
        if self._shutdown and getattr(message, "method", "") != types.EXIT:
            msg_id = getattr(message, "id", None)
            if msg_id is not None and getattr(message, "method", None):
                self.send_error(msg_id, INVALID_REQUEST, "the server is shut down")
            return
        super().handle_message(message)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is not None and error.data is not None:  # pygls puts a traceback there
            error = types.ResponseError(code=error.code, message=error.message)
        super()._send_response(msg_id, result, error)

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        """Answer the request `msg_id` with the JSON-RPC error `code` and `message`."""
        self._send_response(msg_id, error=types.ResponseError(code=code, message=message))

    def receive(self, body: bytes) -> None:
        """Handle one frame's `body`: a message, or the error its request id is owed."""
        text = body.decode("utf-8", "surrogateescape")
        try:
            data = json.loads(text)
        except ValueError as error:
            self._answer_unreadable(text, PARSE_ERROR, f"the message is not JSON: {error}")
            return
        if not isinstance(data, dict) or "jsonrpc" not in data:
            self._answer_unreadable(text, INVALID_REQUEST, "the message is not a JSON-RPC object")
            return
        msg_id = data.get("id")
        try:
            message = self.structure_message(data)
        except Exception:  # pygls raises JsonRpcInvalidParams, or an internal error
            if msg_id is not None and "method" in data:
                message = f"invalid params for `{data['method']}`"
                self.send_error(msg_id, INVALID_PARAMS, message)
            else:
                what = f" `{data['method']}`" if isinstance(data.get("method"), str) else ""
                log.warning("dropped a%s message whose params do not fit its type", what)
            return
        self.handle_message(message)

    def _answer_unreadable(self, text: str, code: int, message: str) -> None:
        m = _ID.search(text)
        if m is None:
            log.warning("dropped a message with no readable id: %s", message)
            return
        try:
            msg_id = json.loads(m.group(1))
        except ValueError:
            return
        self.send_error(msg_id, code, message)


async def read_frames(reader: Any, protocol: SerqProtocol, stop: threading.Event) -> None:
    """Read frames from `reader` (with `readline` and `readexactly`) until the stream ends
    or `stop` is set, and hand each body to `protocol`."""
    while not stop.is_set():
        length = await _headers(reader, protocol)
        if length is None:
            return
        try:
            body = await reader.readexactly(length) if length else b""
        except asyncio.IncompleteReadError:
            return
        if len(body) < length:
            return
        try:
            protocol.receive(body)
        except (SystemExit, KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception:  # a bug in a handler pygls did not catch: the loop goes on
            log.exception("handling a message failed")


async def _headers(reader: Any, protocol: SerqProtocol) -> int | None:
    """Read a frame's header block; its Content-Length, or None at the end of the stream."""
    length: int | None = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        if not line.strip():
            if length is not None:
                return length
            continue  # a blank line between frames
        m = _CONTENT_LENGTH.search(line)
        if m is not None:
            junk = line[: m.start()].strip()
            if junk:
                _unframed(protocol, junk)
            value = int(m.group(1))
            length = value if value <= MAX_BODY else None
        elif not _HEADER.match(line):
            _unframed(protocol, line.strip())


def _unframed(protocol: SerqProtocol, data: bytes) -> None:
    """Bytes where a header belongs: a body sent without its Content-Length header."""
    text = data.decode("utf-8", "replace")
    protocol._answer_unreadable(text, INVALID_REQUEST, "a message without a Content-Length header")


def serve_stdio(server: Any) -> int:
    """Serve `server` (a pygls server whose protocol is a `SerqProtocol`) on stdin and
    stdout until `exit` or the end of input; the exit status the process owes."""
    server._stop_event = stop = threading.Event()
    reader = StdinAsyncReader(sys.stdin.buffer, server.thread_pool)
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    status = None
    try:
        asyncio.run(read_frames(reader, server.protocol, stop))
    except SystemExit as exit_:  # the `exit` notification
        status = exit_.code if isinstance(exit_.code, int) else 1
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    finally:
        server.shutdown()
    if status is None:
        status = 0 if server.protocol._shutdown else 1
    return status


def serve_tcp(server: Any, host: str, port: int) -> None:
    """Serve `server` on a TCP port to one client, with the same framing: the process ends
    when that connection does."""
    server._stop_event = stop = threading.Event()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.protocol.set_writer(writer)
        await read_frames(reader, server.protocol, stop)
        server.shutdown()

    async def listen() -> None:
        server._server = await asyncio.start_server(connection, host, port)
        async with server._server:
            await server._server.serve_forever()

    try:
        asyncio.run(listen())
    except asyncio.CancelledError:
        pass
