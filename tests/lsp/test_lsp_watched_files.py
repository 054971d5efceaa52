"""A `use`d library that changes on disk while the program is open: the server checks the
program again when the client says so (`workspace/didChangeWatchedFiles`), and asks a
client that can to watch the `.sq` files for it."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.conftest import uri_of

PROGRAM = """use "lib.sq";
stage s : fifo(1);
workload { arrive poisson(0.5); }
session { run s (twice(1)); observe t = now; }
run { horizon 10; }
"""


def _changed(client, path: Path, kind: types.FileChangeType) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=uri_of(path), type=kind)])
    )


@pytest.mark.asyncio(loop_scope="module")
async def test_a_library_changed_on_disk_is_read_again(client, docs, tmp_path):
    library = tmp_path / "lib.sq"
    library.write_text("def twice(x) { x * 2 }\n")
    program = tmp_path / "main.sq"
    program.write_text(PROGRAM)
    uri = uri_of(program)
    assert await docs.open(uri, PROGRAM) == []
    library.write_text("def thrice(x) { x * 3 }\n")  # `twice` is gone
    client.diagnostics.pop(uri, None)
    _changed(client, library, types.FileChangeType.Changed)
    found = await docs.published(uri)
    assert [d.code for d in found] == ["E-unknown-name"], found
    library.unlink()
    client.diagnostics.pop(uri, None)
    _changed(client, library, types.FileChangeType.Deleted)
    assert "cannot read `lib.sq`" in (await docs.published(uri))[0].message
    library.write_text("def twice(x) { x * 2 }\n")
    client.diagnostics.pop(uri, None)
    _changed(client, library, types.FileChangeType.Created)
    assert await docs.published(uri) == []
    docs.close(uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_library_closed_unsaved_is_read_from_disk_again(client, docs, tmp_path):
    library = tmp_path / "lib.sq"
    library.write_text("def twice(x) { x * 2 }\n")
    program = tmp_path / "main.sq"
    program.write_text(PROGRAM)
    uri, lib_uri = uri_of(program), uri_of(library)
    await docs.open(lib_uri, "def thrice(x) { x * 3 }\n")  # edited, never saved
    assert [d.code for d in await docs.open(uri, PROGRAM)] == ["E-unknown-name"]
    client.diagnostics.pop(uri, None)
    docs.close(lib_uri)  # the buffer is dropped: the disk has `twice`
    assert await docs.published(uri) == []
    docs.close(uri)


def test_a_client_that_can_watch_files_is_asked_to():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
    import lsp_wire

    process, frames = lsp_wire.start(subprocess.DEVNULL)
    try:
        watched = {"didChangeWatchedFiles": {"dynamicRegistration": True}}
        for message in (
            {"id": 1, "method": "initialize", "params": {"capabilities": {"workspace": watched}}},
            {"method": "initialized", "params": {}},
        ):
            body = json.dumps({"jsonrpc": "2.0", **message}).encode()
            process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            process.stdin.flush()
        asked = []
        while not asked:
            frame = frames.get(timeout=20)
            if frame.get("method") == "client/registerCapability":
                asked = frame["params"]["registrations"]
        assert asked[0]["method"] == "workspace/didChangeWatchedFiles"
        assert asked[0]["registerOptions"]["watchers"] == [{"globPattern": "**/*.sq"}]
    except queue.Empty:
        pytest.fail("the server did not register a file watcher")
    finally:
        process.kill()
        process.wait()
