"""The server's state: one analysis per open document and version, debounced publishing.

`SerqServer.analysis(uri)` returns the analysis of the document's current version,
computing it on first demand; `schedule(uri)` publishes its diagnostics after the
debounce delay (a newer edit restarts the delay), and then re-checks every open
document that `use`s it. `use`d files are read from the editor's buffers when open.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path

from serq import __version__
from serq.syntax import ItemCache, ParseResult, parse
from serq_lsp.analysis import Analysis, analyze
from serq_lsp.convert import lsp_diagnostics
from serq_lsp.framing import SerqProtocol

log = logging.getLogger("serq_lsp")

DEBOUNCE = 0.02  # seconds between the last edit and its check; `initializationOptions.debounce`


class SerqServer(LanguageServer):
    """A language server that keeps one item cache and the analysis of every open document."""

    def __init__(self) -> None:
        super().__init__("serq-lsp", __version__, protocol_cls=SerqProtocol)
        self.items = ItemCache()
        self.debounce = DEBOUNCE
        self._analyses: dict[str, tuple[int | None, Analysis]] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self.runs: dict[str, asyncio.subprocess.Process] = {}  # uri -> its running worker
        self.run_command: list[str] | None = None  # `initializationOptions.runCommand`
        self.stopping = False  # `shutdown` came: runs in flight are stopped
        self.results: dict[str, list] = {}  # uri -> the last run's anchors (serq_lsp.results)
        # called with (uri, analysis) for each new analysis, e.g. to drop stale results
        self.on_analysis: list[Callable[[str, Analysis], None]] = []

    # ------------------------------------------------------------ analyses

    def analysis(self, uri: str) -> Analysis:
        """The analysis of the current version of the document at `uri`."""
        document = self.workspace.get_text_document(uri)
        try:
            source = document.source  # a document not open is read from its file
        except (OSError, ValueError):  # which is gone: it is empty
            source = ""
        cached = self._analyses.get(uri)
        if cached is not None and cached[0] == document.version and cached[1].text == source:
            return cached[1]
        path = document.path or uri
        result = analyze(source, path, self.items, self._load)
        self._analyses[uri] = (document.version, result)
        for hook in self.on_analysis:
            hook(uri, result)
        return result

    def forget(self, uri: str) -> None:
        """Drop what is kept for the closed document at `uri`."""
        self._analyses.pop(uri, None)
        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()

    def open_analyses(self) -> list[tuple[str, Analysis]]:
        """The latest analysis of every open document."""
        return [(uri, a) for uri, (_, a) in self._analyses.items()]

    def source(self, path: str) -> str | None:
        """The text of the file at `path`: the editor's buffer when it is open, else the
        disk's; None when it cannot be read."""
        document = self.workspace.text_documents.get(from_fs_path(os.path.abspath(path)) or "")
        if document is not None:
            return document.source
        try:  # read as the loader reads a library, so that its spans fall on the same lines
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return None

    def _load(self, path: str) -> ParseResult | str:
        """Read a `use`d file: the editor's buffer when it is open, else the disk."""
        document = self.workspace.text_documents.get(from_fs_path(os.path.abspath(path)) or "")
        if document is not None:
            return parse(document.source, path)
        from serq.expand.loader import read_file

        return read_file(path)

    # ---------------------------------------------------------- publishing

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Publish the diagnostics of `uri` after `delay` (default: the debounce) with no edit."""
        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        delay = self.debounce if delay is None else delay
        loop = asyncio.get_event_loop()
        self._pending[uri] = loop.call_later(delay, self._publish_now, uri)

    def _publish_now(self, uri: str) -> None:
        self._pending.pop(uri, None)
        try:
            self.publish(uri)
            self._recheck_users(uri)
        except Exception as error:  # never let a check take the server down
            log.exception("checking %s failed", uri)
            self.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Error, message=f"checking {uri} failed: {error}"
                )
            )

    def publish(self, uri: str) -> None:
        """Check the document at `uri` and push its diagnostics."""
        if uri not in self.workspace.text_documents:
            return
        analysis = self.analysis(uri)
        version = self.workspace.get_text_document(uri).version
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, diagnostics=lsp_diagnostics(analysis, uri), version=version
            )
        )

    def _recheck_users(self, uri: str) -> None:
        """Check again every open document that `use`s the file at `uri`."""
        path = self.workspace.get_text_document(uri).path
        if not path:
            return
        changed = os.path.abspath(path)
        for other, analysis in self.open_analyses():
            if other != uri and changed in analysis.uses:
                self._analyses.pop(other, None)
                self.publish(other)
