"""Workspace symbols over every `.sq` file of the workspace folders, open or not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from serq_lsp.workspace import WorkspaceSymbols, matching, rank
from tests.lsp.conftest import ROOT, SERVER, Docs, position_of, uri_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

CONFIG = ClientServerConfig(server_command=SERVER, server_env={"PYTHONPATH": str(ROOT)})

CLUSTER = "/* é😀 */ pool kvcache { cap 64; }\nstage engine : fifo(2);\nqueue Px { pool kv { cap 8; } serve fifo; }\n"
FILES = {
    "cluster.sq": CLUSTER,
    "lib/defs.sq": "def twice(x) = 2 * x;\n",
    "broken.sq": "pool okpool { cap 1; }\nstage : fifo;\nlet later = 3;\n",
    "node_modules/dep.sq": "pool ignored_dep { cap 1; }\n",
    ".git/x.sq": "pool ignored_git { cap 1; }\n",
    "__pycache__/y.sq": "pool ignored_cache { cap 1; }\n",
    "notes.txt": "pool not_sq { cap 1; }\n",
}
BAD_BYTES = b"let before_bad = 1;\n\xff\xfe\x00 garbage\nlet after_bad = 2;\n"
IGNORED = {"ignored_dep", "ignored_git", "ignored_cache", "not_sq", "outside_root"}


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> tuple[Path, Path]:
    """A workspace folder with files of every sort, and another directory outside it."""
    base = tmp_path_factory.mktemp("ws").resolve()
    folder, outside = base / "folder", base / "outside"
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "bad_bytes.sq").write_bytes(BAD_BYTES)
    outside.mkdir()
    (outside / "other.sq").write_text("pool outside_root { cap 1; }\n")
    return folder, outside


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def ws(lsp_client: LanguageClient, folders):
    """A server whose workspace folder is `folder` (its root, `outside`, is then unused)."""
    folder, outside = folders
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=outside.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name="folder")],
        initialization_options={"debounce": 0.0},
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG, scope="module", params=["root_uri", "root_path"])
async def rooted(lsp_client: LanguageClient, folders, request):
    """A server with no workspace folders, only a root (as a URI, or as a path)."""
    _, outside = folders
    root = {request.param: outside.as_uri() if request.param == "root_uri" else str(outside)}
    params = types.InitializeParams(capabilities=types.ClientCapabilities(), **root)
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def search(client: LanguageClient, query: str) -> list[types.WorkspaceSymbol]:
    return await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query)) or []


def names(found: list[types.WorkspaceSymbol]) -> set[str]:
    return {s.name for s in found}


async def test_unopened_files_of_the_folder(ws: LanguageClient, folders):
    folder, _ = folders
    found = await search(ws, "")
    expected = {"kvcache", "engine", "Px", "Px.kv", "twice", "okpool", "later"}
    assert expected | {"before_bad", "after_bad"} <= names(found)
    assert not names(found) & IGNORED
    by_name = {s.name: s for s in found}
    kv = by_name["kvcache"]
    assert kv.location.uri == uri_of(folder / "cluster.sq")
    start = position_of(CLUSTER, "kvcache")
    assert start.character == 15  # `/* é😀 */ pool `: the emoji is two UTF-16 units
    assert kv.location.range == types.Range(
        start, types.Position(start.line, start.character + len("kvcache"))
    )
    assert kv.kind == types.SymbolKind.Struct
    assert by_name["engine"].kind == types.SymbolKind.Class
    assert by_name["engine"].location.range.start == position_of(CLUSTER, "engine")
    assert by_name["twice"].kind == types.SymbolKind.Function
    assert by_name["twice"].location.uri == uri_of(folder / "lib" / "defs.sq")
    assert by_name["Px.kv"].container_name == "Px"


async def test_the_query_is_matched_without_case(ws: LanguageClient):
    assert names(await search(ws, "kvc")) == {"kvcache"}
    assert names(await search(ws, "KVC")) == {"kvcache"}
    assert names(await search(ws, "twc")) == {"twice"}  # a subsequence
    assert names(await search(ws, "x.k")) == {"Px.kv"}
    assert await search(ws, "qqq") == []
    ordered = [s.name for s in await search(ws, "e")]
    assert ordered.index("engine") < ordered.index("kvcache")  # a prefix before a substring


async def test_an_open_document_counts_with_its_editor_text(ws: LanguageClient, folders):
    folder, outside = folders
    docs = Docs(ws)
    uri = uri_of(folder / "cluster.sq")
    await docs.open(uri, CLUSTER.replace("kvcache", "kvstore"))
    found = await search(ws, "kv")
    assert "kvstore" in names(found) and "kvcache" not in names(found)
    assert next(s for s in found if s.name == "kvstore").location.uri == uri
    await docs.replace(uri, "\n\npool kvnew { cap 2; }\n")
    found = await search(ws, "kv")
    assert {"kvnew"} <= names(found) and not names(found) & {"kvstore", "kvcache", "engine"}
    assert next(s for s in found if s.name == "kvnew").location.range.start == types.Position(2, 5)
    docs.close(uri)
    scratch = uri_of(outside / "scratch.sq")  # open, though outside the workspace folder
    await docs.open(scratch, "stage scratchstage : delay;\n")
    found = await search(ws, "")
    assert {"kvcache", "engine", "scratchstage"} <= names(found) and "kvnew" not in names(found)
    docs.close(scratch)


async def test_files_changed_on_disk(ws: LanguageClient, folders):
    folder, _ = folders
    added = folder / "sub" / "added.sq"
    added.parent.mkdir(exist_ok=True)
    added.write_text("gauge added_gauge = 1;\n")
    assert names(await search(ws, "added")) == {"added_gauge"}
    added.write_text("gauge added_gauge_two = 1;\ndef added_def(a) = a;\n")
    assert names(await search(ws, "added")) == {"added_gauge_two", "added_def"}
    added.unlink()
    assert await search(ws, "added") == []


async def test_the_root_serves_when_there_are_no_folders(rooted: LanguageClient):
    assert names(await search(rooted, "")) == {"outside_root"}


async def test_a_repeated_query_does_not_parse_again(folders):
    folder, _ = folders
    index = WorkspaceSymbols()
    first = {s.name for s in index.on_disk([str(folder)])}
    parses = index.parses
    assert parses == len(list(folder.rglob("*.sq"))) - 3  # the skipped directories' files
    assert {s.name for s in index.on_disk([str(folder)])} == first
    assert index.parses == parses
    target = folder / "lib" / "defs.sq"
    text = target.read_text()
    target.write_text(text + "def thrice(x) = 3 * x;\n")
    try:
        assert "thrice" in {s.name for s in index.on_disk([str(folder)])}
        assert index.parses == parses + 1
        assert {
            s.name for s in index.on_disk([str(folder)], {os.path.realpath(target)})
        } == first - {"twice"}
    finally:
        target.write_text(text)


async def test_the_walk_is_capped(folders, tmp_path):
    for i in range(12):
        (tmp_path / f"f{i:02}.sq").write_text(f"let c{i} = {i};\n")
    assert len(WorkspaceSymbols(max_files=5).on_disk([str(tmp_path)])) == 5
    assert len(WorkspaceSymbols(max_entries=3).on_disk([str(tmp_path)])) == 3
    assert WorkspaceSymbols().on_disk([str(tmp_path / "missing")]) == []


async def test_rank():
    assert [
        rank("", "x"),
        rank("kv", "kvcache"),
        rank("ca", "kvcache"),
        rank("kce", "kvcache"),
    ] == [
        0,
        0,
        1,
        2,
    ]
    assert rank("z", "kvcache") is None
    assert matching([], "a") == []
