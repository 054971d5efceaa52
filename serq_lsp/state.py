"""The server's state: one analysis per open document and version, checked off the loop.

An edit schedules a check (`schedule(uri)`) after the debounce delay; a newer edit restarts
the delay. The check runs on one background thread (`_Checker`), so requests keep being
answered while it runs, and a check that a newer edit has superseded stops at its next
stage (parse, expand, link) and is dropped. When it ends, the loop installs the analysis,
publishes its diagnostics (computed on the thread) and re-checks every open document that
`use`s it.

Three ways to read a document's analysis:
- `analysis(uri)`: the analysis of the current version, waiting for the check in flight or
  running one (features that need the exact program: diagnostics, code actions, runs);
- `parsed(uri)`: the current version as far as its parse (tree, names, index), which a
  check hands over before it expands and links (`Analysis.complete` False), or the whole
  analysis when it is in (features that read only the tree and the names: semantic
  tokens, symbols, folding); it waits for the parse of the check in flight, not the rest;
- `view(uri)`: at once, the last complete analysis seen through the edits since
  (`serq_lsp.stale.View`), for hover, definition and completion; a document never
  analysed yet is seen through `parsed(uri)` until its first check ends (a 10,000-line
  document's first hover waits for the parse, not the seconds of expanding and linking);
- `await settled(uri)`: the end of the check in flight, awaited without holding the loop
  (a first hover on a form whose expansion it shows, which only the expander gives).
`use`d files are read from the editor's buffers when open.
"""

from __future__ import annotations

import asyncio
import gc
import io
import logging
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from serq import __version__
from serq.expand.loader import open_library, read_file
from serq.incremental import Cache
from serq.syntax import ItemCache, ParseResult, parse
from serq_lsp.analysis import Analysis, Stopped, analyze
from serq_lsp.convert import fs_uri, lsp_diagnostics
from serq_lsp.documents import open_document
from serq_lsp.framing import SerqProtocol
from serq_lsp.stale import View

if TYPE_CHECKING:
    from serq_lsp.results import Run

log = logging.getLogger("serq_lsp")

DEBOUNCE = 0.02  # seconds between the last edit and its check; `initializationOptions.debounce`


class _Job:
    """One check: a document's version and text, and the future of its analysis."""

    __slots__ = ("uri", "generation", "version", "text", "path", "future", "parsed")

    def __init__(self, uri: str, generation: int, version, text: str, path: str) -> None:
        self.uri = uri
        self.generation = generation
        self.version = version
        self.text = text
        self.path = path
        self.future: Future = Future()
        self.parsed: Future = Future()  # the analysis as far as the parse, or None


class _Checker:
    """One daemon thread that runs checks in order; a job superseded before or while it
    runs ends with `Stopped`. Once a check's result is out, `after(result)` makes ahead
    what the requests to come read first, unless another check waits."""

    def __init__(
        self, run: Callable[[_Job], object], after: Callable[[object], None] | None = None
    ) -> None:
        self._run = run
        self._after = after
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def submit(self, job: _Job) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="serq-check", daemon=True)
            self._thread.start()
        self._jobs.put(job)

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if not job.future.set_running_or_notify_cancel():
                continue
            try:
                result = self._run(job)
            except BaseException as error:  # Stopped, or a bug: the loop reports it
                _settle(job.parsed, None)
                job.future.set_exception(error)
                continue
            _settle(job.parsed, None)  # it stopped before its parse was out: none
            job.future.set_result(result)
            if self._after is not None and self._jobs.empty():
                try:
                    self._after(result)
                except Exception:  # only a head start: the request makes it again
                    log.exception("preparing an analysis failed")


def _resolve(waiter: asyncio.Future) -> None:
    """End `waiter` unless it is done (a request that waited on it was cancelled)."""
    if not waiter.done():
        waiter.set_result(None)


def _settle(future: Future, result: object) -> None:
    """Give `future` the `result` unless it has one."""
    if not future.done():
        future.set_result(result)


class SerqServer(LanguageServer):
    """A language server that keeps one item cache, what the analysis of each open document
    keeps between its versions (`front`), and the latest analysis of each."""

    def __init__(self) -> None:
        super().__init__("serq-lsp", __version__, protocol_cls=SerqProtocol)
        self.items = ItemCache()
        self.front = Cache(self.items)
        self.debounce = DEBOUNCE
        self._analyses: dict[str, tuple[int | None, Analysis]] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._generation: dict[str, int] = {}  # uri -> the number of its latest scheduled check
        self._jobs: dict[str, _Job] = {}  # uri -> its latest check submitted
        self._lock = threading.Lock()  # one analysis at a time: they share the item cache
        self._checker = _Checker(self._check, lambda found: found[0].prepare())
        self.runs: dict[str, asyncio.subprocess.Process] = {}  # uri -> its running worker
        self.run_command: list[str] | None = None  # `initializationOptions.runCommand`
        self.stopping = False  # `shutdown` came: runs in flight are stopped
        self.results: dict[str, Run] = {}  # uri -> the last run (serq_lsp.results.Run)
        # called with (uri, analysis) for each new analysis, e.g. to drop stale results
        self.on_analysis: list[Callable[[str, Analysis], None]] = []

    @property
    def item_lock(self) -> threading.Lock:
        """Held by whatever parses with the shared item cache (`items`, `front`): one at a
        time, the checker thread's analyses and the commands that parse on the loop."""
        return self._lock

    # ------------------------------------------------------------ analyses

    def analysis(self, uri: str) -> Analysis:
        """The analysis of the current version of the document at `uri` (waits for the
        check in flight of that version, or runs one)."""
        document = self.workspace.get_text_document(uri)
        source = _source(document)
        cached = self._analyses.get(uri)
        if cached is not None and cached[0] == document.version and cached[1].text == source:
            return cached[1]
        job = self._jobs.get(uri)
        if job is not None and job.version == document.version and job.text == source:
            try:
                found = job.future.result()
            except Exception:  # superseded after all, or failed: check here
                found = None
            if found is not None:
                self._install(uri, job.version, found[0])
                return found[0]
        with self._lock:
            result = analyze(source, document.path or uri, self.front, self._load)
        self._install(uri, document.version, result)
        return result

    def parsed(self, uri: str) -> Analysis:
        """The current version of the document at `uri` as far as its parse: the whole
        analysis when it is in, else what the check in flight hands over once it parsed
        (started now if it waits for its debounce), else `analysis(uri)`."""
        document = self.workspace.get_text_document(uri)
        source = _source(document)
        cached = self._analyses.get(uri)
        if cached is not None and cached[0] == document.version and cached[1].text == source:
            return cached[1]
        job = self._job_of(uri, document.version, source)
        if job is not None:
            try:
                early = job.parsed.result()
            except Exception:  # the check failed: check here
                early = None
            if early is not None:
                return early
        return self.analysis(uri)

    def _job_of(self, uri: str, version, source: str) -> _Job | None:
        """The check in flight of the document at `uri` at `version` with text `source`;
        one waiting for its debounce starts now."""
        handle = self._pending.get(uri)
        if handle is not None and self._jobs.get(uri) is None:
            handle.cancel()
            self._start(uri, self._generation.get(uri, 0))
        job = self._jobs.get(uri)
        if job is not None and job.version == version and job.text == source:
            return job
        return None

    async def settled(self, uri: str) -> None:
        """Wait, without holding the loop, until the check in flight of the current version
        of the document at `uri` has ended (at once when there is none); its analysis is
        installed by then. A request that waits and is cancelled leaves the check running."""
        document = self.workspace.get_text_document(uri)
        job = self._job_of(uri, document.version, _source(document))
        if job is None:
            return
        loop = asyncio.get_running_loop()
        ended = loop.create_future()
        # after the callback that installs the analysis (`_start` added it first)
        job.future.add_done_callback(lambda _: loop.call_soon_threadsafe(_resolve, ended))
        await ended

    def view(self, uri: str) -> View:
        """The last complete analysis of the document at `uri`, seen from its current text;
        a document with none yet is seen as far as its parse (`parsed`)."""
        cached = self._analyses.get(uri)
        if cached is None or cached[0] is None:  # none yet, or out of date (`recheck_users`)
            analysis = self.parsed(uri)
            return View(analysis, analysis.text)
        return View(cached[1], _source(self.workspace.get_text_document(uri)))

    def _install(self, uri: str, version: int | None, result: Analysis) -> None:
        """Keep `result` as the latest analysis of `uri`, unless a newer one is kept."""
        cached = self._analyses.get(uri)
        if cached is not None and cached[1] is result:
            return
        if cached is not None and cached[1].serial > result.serial:
            return
        self._analyses[uri] = (version, result)
        for hook in self.on_analysis:
            hook(uri, result)

    def forget(self, uri: str) -> None:
        """Drop what is kept for the closed document at `uri`."""
        analysis = self._analyses.get(uri)
        if analysis is not None:
            with self._lock:
                self.front.forget(analysis[1].path)
        self._analyses.pop(uri, None)
        self._jobs.pop(uri, None)
        self._generation[uri] = self._generation.get(uri, 0) + 1  # a check in flight stops
        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()

    def open_analyses(self) -> list[tuple[str, Analysis]]:
        """The latest analysis of every open document."""
        return [(uri, a) for uri, (_, a) in self._analyses.items()]

    def source(self, path: str) -> str | None:
        """The text of the file at `path`: the editor's buffer when it is open, else the
        disk's; None when it cannot be read."""
        document = open_document(self.workspace, fs_uri(os.path.abspath(path)) or "")
        if document is not None:
            return document.source
        try:  # read as the loader reads a library, so that its spans fall on the same lines
            with io.TextIOWrapper(open_library(path), encoding="utf-8", errors="replace") as f:
                return f.read()
        except (OSError, ValueError):  # ValueError: a path with a NUL byte
            return None

    def _load(self, path: str) -> ParseResult | str:
        """Read a `use`d file: the editor's buffer when it is open, else the disk (parsed with
        the item cache: a library read again at every version costs what changed in it)."""
        document = open_document(self.workspace, fs_uri(os.path.abspath(path)) or "")
        if document is not None:
            return parse(document.source, path, self.items)
        return read_file(path, self.items)

    # ---------------------------------------------------------- publishing

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Check the document at `uri` and publish its diagnostics after `delay` (default:
        the debounce) with no edit; a check scheduled or running before is superseded."""
        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        generation = self._generation.get(uri, 0) + 1
        self._generation[uri] = generation
        delay = self.debounce if delay is None else delay
        loop = asyncio.get_event_loop()
        self._pending[uri] = loop.call_later(delay, self._start, uri, generation)

    def _start(self, uri: str, generation: int) -> None:
        """Hand the current version of `uri` to the checker thread."""
        self._pending.pop(uri, None)
        if self._generation.get(uri) != generation or open_document(self.workspace, uri) is None:
            return
        document = self.workspace.get_text_document(uri)
        cached = self._analyses.get(uri)
        if cached is not None and cached[0] == document.version:  # a request checked it
            if cached[1].text == _source(document):
                self.publish(uri)
                self._recheck_users(uri)
                return
        job = _Job(uri, generation, document.version, _source(document), document.path or uri)
        self._jobs[uri] = job
        loop = asyncio.get_event_loop()
        job.future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._finish, job))
        self._checker.submit(job)

    def _check(self, job: _Job) -> tuple[Analysis, list[types.Diagnostic]]:
        """On the checker thread: the analysis of `job` and its LSP diagnostics."""

        def stale() -> bool:
            return self._generation.get(job.uri) != job.generation

        first = job.uri not in self._analyses  # no older analysis answers in the meantime

        def parsed(early: Analysis) -> None:
            _settle(job.parsed, early)  # the requests waiting for it answer now
            if first:  # what they read first, before the expander and the linker run
                try:
                    early.prepare()
                except Exception:  # only a head start: the request makes it again
                    log.exception("preparing a parse failed")

        with self._lock:
            if stale():
                raise Stopped
            result = analyze(job.text, job.path, self.front, self._load, stale, parsed)
            early = job.parsed.result() if job.parsed.done() else None
            if early is not None:
                result.adopt(early)
            return result, lsp_diagnostics(result, job.uri)

    def _finish(self, job: _Job) -> None:
        """On the loop: install a check's analysis, and publish it if still current."""
        if self._jobs.get(job.uri) is job:
            del self._jobs[job.uri]
        try:
            result, diagnostics = job.future.result()
        except Stopped:
            return
        except Exception as error:  # never let a check take the server down
            log.exception("checking %s failed", job.uri, exc_info=error)
            self.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Error, message=f"checking {job.uri} failed: {error}"
                )
            )
            return
        if open_document(self.workspace, job.uri) is None:
            return
        self._install(job.uri, job.version, result)
        # what the analyses keep lives long: out of the collector's sight, so that its full
        # passes (seconds over a 2 MB document's trees, holding the GIL) stop pausing requests
        gc.freeze()
        if self._generation.get(job.uri) != job.generation:
            return  # a newer edit's check publishes
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=job.uri, diagnostics=diagnostics, version=job.version
            )
        )
        self._recheck_users(job.uri)

    def publish(self, uri: str) -> None:
        """Check the document at `uri` now and push its diagnostics."""
        if open_document(self.workspace, uri) is None:
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
        if path:
            self.recheck_users([path], but=uri)

    def recheck_users(self, paths: list[str], but: str | None = None) -> None:
        """Check again every open document (but the one at `but`) that `use`s one of the
        files at `paths`, or tried to: a library edited, made or deleted."""
        changed = {os.path.abspath(p) for p in paths}
        for other, analysis in self.open_analyses():
            if other != but and changed & analysis.uses:
                # out of date, but kept until its check ends: what the other documents ask
                # of their users meanwhile (a library's hover, references) still finds it
                self._analyses[other] = (None, analysis)
                self.schedule(other, 0)


def _source(document) -> str:
    """The text of `document`; a document not open is read from its file, and one whose file
    is gone is empty."""
    try:
        return document.source
    except (OSError, ValueError):
        return ""
