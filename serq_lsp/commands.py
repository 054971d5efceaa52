"""Runs from the editor: code lenses Run, Show IR and Show kernel, and their commands.

Show kernel and Show IR answer at once from the front end. Run starts `serq run FILE --json`
in a worker process (never in the server), with a timeout; cancelling the request, or the
command `serq.cancelRun`, kills the worker. Every answer is markdown.

All three read the program and the files it `use`s as the diagnostics do: from the
editor's buffers where they are open. A Run of a program that is not saved, or that uses
a library that is not, writes each such buffer to a folder of its own (gone after the run)
and tells the worker to read that file's text from its copy (`serq run --buffer
FILE=COPY`): every file keeps its name and folder, so relative `use`s and `trace`s read
what the diagnostics read, and nothing is written beside the user's files.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import signal
import sys
import tempfile

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from serq import api
from serq.cli import EXIT_INTERRUPTED  # `serq run` stopped by Ctrl-C
from serq.diagnostics import Diagnostic
from serq.expand.loader import read_text, unreadable
from serq_lsp import results
from serq_lsp.convert import fs_uri
from serq_lsp.documents import open_document
from serq_lsp.guard import guarded
from serq_lsp.state import SerqServer

RUN, SHOW_IR, SHOW_KERNEL, CANCEL = "serq.run", "serq.showIR", "serq.showKernel", "serq.cancelRun"
TIMEOUT = 120.0  # seconds a run may take; the command's second argument overrides it
# The worker: `{file}` is replaced by the program's path; `initializationOptions.runCommand`.
RUN_COMMAND = [sys.executable, "-m", "serq.cli", "run", "{file}", "--json"]


def _document(ls: SerqServer, uri: object) -> tuple[str, str | None]:
    """The text and path of the document a command names; a bad argument, or a document
    neither open nor on disk, is an invalid-params error (not a failure of the server)."""
    if not isinstance(uri, str):
        raise JsonRpcInvalidParams(f"the command takes a document's URI, not {uri!r}")
    document = ls.workspace.get_text_document(uri)
    try:
        return document.source, document.path
    except OSError as error:
        raise JsonRpcInvalidParams(f"cannot read `{uri}`: {unreadable(error)}") from error
    except ValueError as error:
        raise JsonRpcInvalidParams(f"cannot read `{uri}`: {error}") from error


def _timeout(value: object) -> float:
    """The Run's timeout given as `value`: a positive number of seconds (`inf`: none); any
    other value (0, a negative, NaN, a boolean, a word) is an invalid-params error."""
    try:
        if isinstance(value, bool):
            raise TypeError
        timeout = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        timeout = math.nan
    if not timeout > 0:
        raise JsonRpcInvalidParams(f"a timeout is a positive number of seconds, not {value!r}")
    return timeout


def register(server: SerqServer) -> None:
    """Add the code lenses and the commands to `server`."""

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    @guarded
    def code_lens(ls: SerqServer, params: types.CodeLensParams):
        uri = params.text_document.uri
        line = ls.analysis(uri).first_item_line()
        if line is None:
            return []
        start = types.Position(line=line - 1, character=0)
        where = types.Range(start=start, end=start)
        lenses = (("Run", RUN), ("Show IR", SHOW_IR), ("Show kernel", SHOW_KERNEL))
        if ls.analysis(uri).is_library():  # nothing to run: a program `use`s it
            lenses = lenses[1:]
        return [
            types.CodeLens(range=where, command=types.Command(title=t, command=c, arguments=[uri]))
            for t, c in lenses
        ]

    @server.command(SHOW_KERNEL)
    @guarded
    def show_kernel(ls: SerqServer, uri: str | None = None) -> str:
        source, path = _document(ls, uri)
        with ls.item_lock:  # the checker thread parses with the same item cache
            kernel, diagnostics = api.expand_source(
                source,
                path or uri,
                ls.items,
                load=ls._load,  # noqa: SLF001
            )
        if kernel is None:
            return _failed("kernel", diagnostics, path or uri)
        text = api.format_kernel(kernel, path or uri)
        if isinstance(text, Diagnostic):
            return _failed("kernel", [text], path or uri)
        return f"```serq\n{text}\n```"

    @server.command(SHOW_IR)
    @guarded
    def show_ir(ls: SerqServer, uri: str | None = None) -> str:
        source, path = _document(ls, uri)
        with ls.item_lock:  # the checker thread parses with the same item cache
            program, diagnostics = api.link_source(
                source,
                path or uri,
                ls.items,
                load=ls._load,  # noqa: SLF001
            )
        if program is None:
            return _failed("IR", diagnostics, path or uri)
        text = api.format_ir(program, path or uri)
        if isinstance(text, Diagnostic):
            return _failed("IR", [text], path or uri)
        return f"```json\n{text}\n```"

    @server.command(RUN)
    async def run(ls: SerqServer, uri: str | None = None, *options) -> str:
        timeout = _timeout(options[0]) if options else TIMEOUT
        source, path = _document(ls, uri)
        return await run_program(ls, uri, source, path, timeout)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: SerqServer, *args) -> None:
        # A Run in flight ends with the server. Its request is cancelled here, before
        # pygls walks the pending requests: a cancel that removes one while pygls walks
        # them is the RuntimeError "dictionary changed size during iteration".
        ls.stopping = True
        for worker in list(ls.runs.values()):
            _kill(worker)
        current = ls.protocol.msg_id
        pending = ls.protocol._request_futures  # noqa: SLF001
        for msg_id, future in list(pending.items()):
            if msg_id != current and not future.done():
                future.cancel()

    @server.command(CANCEL)
    def cancel(ls: SerqServer, uri: str | None = None) -> bool:
        worker = ls.runs.get(uri)
        if worker is None:
            return False
        _kill(worker)
        return True


def _kill(worker: asyncio.subprocess.Process) -> None:
    """Kill `worker` unless it has already ended."""
    try:
        worker.kill()
    except ProcessLookupError:
        pass


async def _interrupt(worker: asyncio.subprocess.Process, grace: float = 2.0) -> str:
    """Stop `worker` as Ctrl-C stops `serq run`, so that it says what it had found (the
    clock it reached, and a livelock it had warned of) before it exits with status 130;
    that stderr, or "" when it said nothing of the kind or did not stop within `grace`
    seconds (it is killed then)."""
    if sys.platform == "win32":
        _kill(worker)
        return ""
    try:
        worker.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(worker.communicate(), grace)
    except ProcessLookupError:
        return ""
    except asyncio.TimeoutError:
        _kill(worker)
        return ""
    if worker.returncode != EXIT_INTERRUPTED:
        return ""
    # the heads and positions of its warnings and its last line, not the source excerpts
    # (the answer is one message, shown in a notification)
    kept = ("warning[", "error[", "note[", "-->", "serq: ")
    lines = err.decode(errors="replace").splitlines()
    return "\n".join(line.strip() for line in lines if line.lstrip().startswith(kept))


def _failed(what: str, diagnostics, program: str) -> str:
    """Why there is no `what` (kernel, IR): each error at its line, with its file's name when
    it lies in a `use`d library rather than the program."""

    def where(d: Diagnostic) -> str:
        if d.span.file == program:
            return f"line {d.span.line}"
        return f"`{os.path.basename(d.span.file)}` line {d.span.line}"

    lines = [f"- `{d.code}` {where(d)}: {d.message}" for d in diagnostics]
    return f"**No {what}**: the program has errors.\n\n" + "\n".join(lines)


async def run_program(ls: SerqServer, uri: str, text: str, path: str | None, timeout: float) -> str:
    """Run `text` (the program at `path`) in a worker process; its report as markdown."""
    if uri in ls.runs:
        raise JsonRpcInternalError("a run of this program is already going on")
    # named where its `use`s are read from: for a document with no folder of its own
    # (`untitled:`), the server's working directory, as its diagnostics read them
    program = os.path.abspath(path or "untitled.sq")
    buffers = _buffers(ls, uri, text, program)
    folder, copies = None, {}  # the buffers' folder, and each file's copy there
    try:
        if buffers:
            folder = tempfile.mkdtemp(prefix="serq-run-")
            copies = {file: os.path.join(folder, f"{i}.sq") for i, file in enumerate(buffers)}
            for file, copy in copies.items():
                with open(copy, "w", encoding="utf-8", newline="") as f:
                    f.write(buffers[file])
    except OSError as error:
        _remove(folder)
        raise JsonRpcInternalError(f"cannot write the program to run: {error}") from error
    if ls.run_command:  # another worker: `{file}` is the program's text as the editor has it
        file = copies.get(program, program)
        command = [part.replace("{file}", file) for part in ls.run_command]
    else:
        command = [part.replace("{file}", program) for part in RUN_COMMAND]
        for file, copy in copies.items():
            command += ["--buffer", f"{file}={copy}"]
    cwd = os.path.dirname(program)
    worker = await asyncio.create_subprocess_exec(
        *command,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd if os.path.isdir(cwd) else None,
    )
    ls.runs[uri] = worker
    _kill_on_cancel(ls, worker)
    try:
        out, err = await asyncio.wait_for(worker.communicate(), timeout)
    except asyncio.TimeoutError:
        said = await _interrupt(worker)
        message = f"the run took longer than {timeout:g} s and was stopped"
        if said:  # serq's own account: how far it got, and a livelock it had found
            message += ":\n" + _named_as_the_user_knows(said, program, path or uri)[-2000:]
        raise JsonRpcInternalError(message) from None
    except asyncio.CancelledError:
        _kill(worker)
        raise
    finally:
        ls.runs.pop(uri, None)
        _remove(folder)
    if ls.stopping:
        return "**Run stopped**: the language server shut down."
    if worker.returncode != 0:
        message = err.decode(errors="replace").strip()
        if "invalid choice: 'run'" in message:
            raise JsonRpcInternalError(
                "this serq has no `serq run` command yet: the simulator is not installed"
            )
        if worker.returncode < 0:
            raise JsonRpcInternalError("the run was cancelled")
        message = _named_as_the_user_knows(message, program, path or uri)
        raise JsonRpcInternalError(f"the run failed ({worker.returncode}): {message[-2000:]}")
    output = out.decode(errors="replace")
    results.record(ls, uri, _analysis_of(ls, uri, text), output)
    return report_markdown(output)


def _remove(folder: str | None) -> None:
    """Remove the folder of a Run's copies, if it made one."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _named_as_the_user_knows(message: str, program: str, name: str) -> str:
    """`message`, the worker's diagnostics, with the program named as the editor names it
    (`name`: its path, or its URI when it has no file)."""
    return message.replace(program, name) if program != name else message


def _on_disk(path: str, text: str) -> bool:
    """Whether the file at `path` holds `text` (read as the loader reads a library)."""
    return _disk(path) == text


def _disk(path: str) -> str | None:
    """The text of the file at `path` as the loader reads it, or None."""
    try:
        return read_text(path)
    except (OSError, ValueError):
        return None


def _buffers(ls: SerqServer, uri: str, text: str, program: str) -> dict[str, str]:
    """The texts a Run reads from the editor rather than from the disk: the program's when
    the file `program` does not hold it, and each file it uses (at any depth) that is open
    with unsaved changes; path -> text. The worker reads each from a copy in a folder of
    its own (`serq run --buffer FILE=COPY`), under the file's own name, so that its `use`s
    and `trace`s are read beside the file, and nothing is written where the user works."""
    buffers = {} if _on_disk(program, text) else {program: text}
    for used in _analysis_of(ls, uri, text).uses:
        document = open_document(ls.workspace, fs_uri(used) or "")
        if document is not None and not _on_disk(used, document.source):
            buffers[os.path.abspath(used)] = document.source
    return buffers


def _analysis_of(ls: SerqServer, uri: str, text: str):
    """The analysis of `text`, the document at `uri` as it was run (it may have changed)."""
    current = ls.analysis(uri)
    if current.text == text:
        return current
    from serq_lsp.analysis import analyze

    with ls.item_lock:  # the checker thread analyses with the same caches
        return analyze(text, current.path, ls.front, ls._load)  # noqa: SLF001


def _kill_on_cancel(ls: SerqServer, worker: asyncio.subprocess.Process) -> None:
    """Kill `worker` when the client cancels the request that started it (`$/cancelRequest`
    cancels the request's future, not the coroutine pygls runs the command in)."""
    request = ls.protocol._request_futures.get(ls.protocol.msg_id)  # noqa: SLF001
    if request is None:
        return

    def on_done(future) -> None:
        if future.cancelled() and worker.returncode is None:
            _kill(worker)

    request.add_done_callback(on_done)


def report_markdown(output: str) -> str:
    """A run's `--json` report as markdown: the run's figures, then a table per section."""
    try:
        report = json.loads(output)
    except ValueError:
        return f"```text\n{output.strip()}\n```"
    if not isinstance(report, dict):
        return f"```json\n{json.dumps(report, indent=2)}\n```"
    head = ("horizon", "end", "warmup", "seed", "events", "arrivals", "ended", "turns")
    parts = [
        "# Run report",
        " · ".join(f"**{k}** {_cell(report[k])}" for k in head if k in report),
    ]
    for title, key, columns in _SECTIONS:
        rows = report.get(key)
        if isinstance(rows, dict):
            rows = [
                {"name": name, **row} if isinstance(row, dict) else {"name": name, "mean": row}
                for name, row in rows.items()
            ]
        if isinstance(rows, list):
            rows = [r for r in rows if isinstance(r, dict)]
        if rows:
            parts.append(f"## {title}\n\n{_table(rows, columns)}")
    for note in report.get("notes") or ():
        parts.append(f"> note: {note}")
    return "\n\n".join(parts)


_SECTIONS = (
    ("Observations", "observes", ("name", "count", "mean", "ci", "cv2", "p99")),
    ("Gauges", "gauges", ("name", "mean", "ci", "min", "max")),
    (
        "Stages",
        "stages",
        (
            "name",
            "index",
            "mean_number",
            "utilization",
            "completed",
            "throughput",
            "mean_wait",
            "mean_service",
            "iterations",
            "mean_itl",
            "itl_p99",
        ),
    ),
    (
        "Pools",
        "pools",
        (
            "name",
            "index",
            "mean_used",
            "mean_cached",
            "mean_queue",
            "mean_wait",
            "admissions",
            "evicted_entries",
            "preemptions",
            "rejected",
            "stuck",
        ),
    ),
)


def _cell(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _table(rows: list[dict], columns: tuple[str, ...]) -> str:
    present = [c for c in columns if any(c in r for r in rows)]
    lines = ["| " + " | ".join(present) + " |", "|" + "---|" * len(present)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(c)) for c in present) + " |")
    return "\n".join(lines)
