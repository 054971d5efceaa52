"""What the tests that drive `serq-lsp` over raw stdio share: starting the server and
reading its frames."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]


def start(stderr: Any) -> tuple[subprocess.Popen, queue.Queue[dict]]:
    """A `serq-lsp` process of this repository (its error stream to `stderr`) and the queue
    its frames arrive in, read on a thread of their own (`read_frames`)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "serq_lsp.server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    frames: queue.Queue[dict] = queue.Queue()
    threading.Thread(target=read_frames, args=(process.stdout, frames), daemon=True).start()
    return process, frames


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
