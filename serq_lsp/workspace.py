"""Workspace symbols: the declarations of every `.sq` file under the workspace folders.

The folders are those of the `initialize` request (`workspaceFolders`, else `rootUri` or
`rootPath`), as pygls keeps them. An open document counts with its editor text, through its
analysis; every other `.sq` file is read from disk and parsed by the same front end
(`serq.syntax.parse`, then `serq.link.index`), its symbols kept until its mtime or size
changes. The walk skips version-control, dependency and cache directories and stops after
`MAX_FILES` files or `MAX_ENTRIES` directory entries, so a huge folder cannot hang the
server. A file that cannot be read or parsed gives what it can and never raises.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from serq.diagnostics import LineIndex
from serq.link.index import Index, build_index
from serq.syntax import ast, parse
from serq_lsp.convert import fs_uri, lsp_range
from serq_lsp.documents import open_document

if TYPE_CHECKING:
    from pygls.workspace import Workspace

    from serq_lsp.analysis import Analysis
    from serq_lsp.state import SerqServer

log = logging.getLogger("serq_lsp")

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
MAX_FILES = 2000  # `.sq` files read per query
MAX_ENTRIES = 100_000  # directory entries looked at per query
MAX_BYTES = 2_000_000  # a larger file is skipped
_LOCALS = ("parameter", "binding")  # declarations that are not the workspace's symbols
_ITEM_KINDS = {
    ast.Let: "let",
    ast.DefExpr: "def",
    ast.DefBlock: "def",
    ast.Pool: "pool",
    ast.Stage: "stage",
    ast.Queue: "queue",
    ast.Gauge: "gauge",
}


@dataclass(frozen=True, slots=True)
class Symbol:
    """A declaration of the workspace: its name, its kind (the index's), where it is."""

    name: str
    kind: str
    uri: str
    range: types.Range
    container: str | None = None


def symbols_of(
    module: ast.Module, lines: LineIndex, uri: str, index: Callable[[], Index] | None = None
) -> list[Symbol]:
    """The declarations of `module`, whose text `lines` indexes, located in `uri`; `index`
    gives the module's index when one is at hand (else it is built)."""
    try:
        occurrences = (index() if index else build_index(module)).symbols()
    except Exception:  # a module the index cannot walk: its items' names still count
        log.exception("indexing %s failed", uri)
        return _item_names(module, lines, uri)
    return [
        Symbol(o.key[1], o.kind, uri, lsp_range(o.span, lines), o.container)
        for o in occurrences
        if o.kind not in _LOCALS
    ]


def _item_names(module: ast.Module, lines: LineIndex, uri: str) -> list[Symbol]:
    out = []
    for item in module.all_items():
        name = getattr(item, "name", None)
        if isinstance(name, ast.Ident) and type(item) in _ITEM_KINDS:
            out.append(Symbol(name.name, _ITEM_KINDS[type(item)], uri, lsp_range(name.span, lines)))
    return out


def rank(query: str, name: str) -> int | None:
    """How well `name` matches the lower-case `query`: 0 a prefix (or an empty query), 1 a
    substring, 2 a subsequence, None no match; case is ignored."""
    if not query:
        return 0
    lowered = name.lower()
    if lowered.startswith(query):
        return 0
    if query in lowered:
        return 1
    rest = iter(lowered)
    return 2 if all(char in rest for char in query) else None


def matching(symbols: list[Symbol], query: str) -> list[Symbol]:
    """The symbols whose name matches `query`, best matches first, else in the given order."""
    query = query.strip().lower()
    ranked = [(r, i) for i, s in enumerate(symbols) if (r := rank(query, s.name)) is not None]
    return [symbols[i] for _, i in sorted(ranked)]


def roots_of(workspace: Workspace) -> list[str]:
    """The directories to search: the workspace folders, else the root (local ones only)."""
    uris = [folder.uri for folder in workspace.folders.values()]
    if not uris and workspace.root_uri:
        uris = [workspace.root_uri]
    roots = []
    for uri in uris:
        path = to_fs_path(uri)
        if path and os.path.isdir(path):
            roots.append(path)
    return roots


def _key(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


class WorkspaceSymbols:
    """The symbols of the workspace's files, each file's kept by its (mtime, size)."""

    def __init__(self, max_files: int = MAX_FILES, max_entries: int = MAX_ENTRIES) -> None:
        self.max_files = max_files
        self.max_entries = max_entries
        self.parses = 0  # files read and parsed from disk, for tests
        self._disk: dict[str, tuple[tuple[int, int], list[Symbol]]] = {}
        self._open: dict[str, tuple[int, list[Symbol]]] = {}

    def search(self, ls: SerqServer, query: str) -> list[Symbol]:
        """The symbols matching `query` in the open documents and the workspace's files."""
        found: list[Symbol] = []
        open_paths: set[str] = set()
        for document in list(ls.workspace.text_documents.values()):
            uri = document.uri  # as the client sent it (the key is unquoted)
            if getattr(document, "language_id", None) != "serq" and not uri.endswith(".sq"):
                continue
            if document.path:
                open_paths.add(_key(document.path))
            try:
                found += self.of_open(uri, ls.analysis(uri))
            except Exception:  # one broken document must not hide the others
                log.exception("symbols of %s failed", uri)
        self._open = {
            u: v for u, v in self._open.items() if open_document(ls.workspace, u) is not None
        }
        found += self.on_disk(roots_of(ls.workspace), open_paths)
        return matching(found, query)

    def of_open(self, uri: str, analysis: Analysis) -> list[Symbol]:
        """The symbols of the open document at `uri`, from its current analysis."""
        cached = self._open.get(uri)
        if cached is not None and cached[0] == analysis.serial:
            return cached[1]
        symbols = symbols_of(analysis.module, analysis.lines, uri, lambda: analysis.index)
        self._open[uri] = (analysis.serial, symbols)
        return symbols

    def on_disk(self, roots: list[str], skip: Collection[str] = ()) -> list[Symbol]:
        """The symbols of the `.sq` files under `roots`, but those whose key is in `skip`."""
        out: list[Symbol] = []
        seen: set[str] = set()
        for path, stamp in self.files(roots):
            key = _key(path)
            if key in seen:
                continue
            seen.add(key)
            if key in skip:
                continue
            cached = self._disk.get(key)
            if cached is None or cached[0] != stamp:
                cached = (stamp, self._read(path, stamp[1]))
                self._disk[key] = cached
            out += cached[1]
        for key in [k for k in self._disk if k not in seen]:  # deleted, or past the cap
            del self._disk[key]
        return out

    def files(self, roots: list[str]) -> Iterator[tuple[str, tuple[int, int]]]:
        """The `.sq` files under `roots` with their (mtime in ns, size), in a bounded walk."""
        files = entries = 0
        pending = list(reversed(roots))
        while pending:
            directory = pending.pop()
            try:
                with os.scandir(directory) as it:
                    listing = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            subdirectories = []
            for entry in listing:
                entries += 1
                if entries > self.max_entries:
                    return
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIP_DIRS:
                            subdirectories.append(entry.path)
                        continue
                    if not entry.name.endswith(".sq") or not entry.is_file():
                        continue
                    stat = entry.stat()
                except OSError:
                    continue
                files += 1
                if files > self.max_files:
                    return
                yield entry.path, (stat.st_mtime_ns, stat.st_size)
            pending.extend(reversed(subdirectories))

    def _read(self, path: str, size: int) -> list[Symbol]:
        """The symbols of the file at `path`; what can be had when it is broken."""
        if size > MAX_BYTES:
            return []
        try:
            with open(path, encoding="utf-8", errors="replace", newline="") as f:
                text = f.read()
        except OSError:
            return []
        self.parses += 1
        uri = fs_uri(path) or path
        try:
            module = parse(text, path).module
        except Exception:  # the parser recovers from any text; this would be a bug in it
            log.exception("parsing %s failed", path)
            return []
        return symbols_of(module, LineIndex(text), uri)
