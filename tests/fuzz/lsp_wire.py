"""What the tests that drive `serq-lsp` over raw stdio share: reading its frames."""

from __future__ import annotations

import json
import queue
from typing import IO


def read_frames(out: IO[bytes], frames: queue.Queue[dict]) -> None:
    """Put each JSON-RPC message the server writes on `out` into `frames`, until it ends
    (the `Content-Length` header, a blank line, the body)."""
    while True:
        length = None
        while True:
            line = out.readline()
            if not line:
                return
            if not line.strip():
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        frames.put(json.loads(out.read(length)))
