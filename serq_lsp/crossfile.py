"""Names across files: where an occurrence is, and the programs that `use` a library.

The index (`serq.link.index`) already follows a document's `use`s; what it cannot know is
who uses the document: `users(ls, path)` finds them among the open documents and the
`.sq` files of the workspace folders (a bounded walk, `serq_lsp.workspace`), and indexes
each with the server's loader, so references and rename of a library's `def` reach every
program that calls it.
"""

from __future__ import annotations

import os
import re

from lsprotocol import types

from serq.diagnostics import LineIndex
from serq.link.index import Index, Occurrence, build_index
from serq.syntax import parse
from serq_lsp.analysis import Analysis
from serq_lsp.convert import fs_uri, lsp_range
from serq_lsp.state import SerqServer
from serq_lsp.workspace import WorkspaceSymbols, roots_of

_USES = re.compile(r'^\s*use\s*"', re.M)  # a file without one uses no library


def location(ls: SerqServer, analysis: Analysis, occ: Occurrence) -> types.Location | None:
    """The LSP location of `occ`, in `analysis`' document or in the file its span names."""
    file = occ.span.file
    if file == analysis.path:
        return types.Location(
            uri=_uri(analysis, file, ls), range=lsp_range(occ.span, analysis.lines)
        )
    text = ls.source(file)
    if text is None:
        return None
    return types.Location(
        uri=fs_uri(file) or file, range=lsp_range(occ.span, LineIndex(text))
    )


def _uri(analysis: Analysis, file: str, ls: SerqServer) -> str:
    for uri, other in ls.open_analyses():
        if other is analysis:
            return uri
    return fs_uri(file) or file


def users(ls: SerqServer, path: str, skip: str) -> list[Index]:
    """The indexes of the programs that `use` the file at `path` (directly or through another
    library), open or on disk under the workspace folders; the document at `skip` left out."""
    target = _same(path)
    found: list[Index] = []
    seen = {_same(skip)}
    for _, analysis in ls.open_analyses():
        key = _same(analysis.path)
        if key in seen:
            continue
        seen.add(key)
        if target in {_same(f) for f in analysis.index.files}:
            found.append(analysis.index)
    for file, _ in WorkspaceSymbols().files(roots_of(ls.workspace)):
        key = _same(file)
        if key in seen:
            continue
        seen.add(key)
        text = ls.source(file)
        if text is None or not _USES.search(text):
            continue
        index = build_index(parse(text, file).module, ls._load)  # noqa: SLF001
        if target in {_same(f) for f in index.files}:
            found.append(index)
    return found


def _same(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


def meanings(ls: SerqServer, analysis: Analysis, occ: Occurrence) -> list[tuple[Index, Occurrence]]:
    """What the name at `occ`, in a library, means in each program that `use`s it: the
    program's index and the occurrence at the same place there (a library's `def` body
    reads the names of the program it is written out in)."""
    out = []
    for index in users(ls, analysis.path, analysis.path):
        there = next(
            (
                o
                for o in index.elsewhere
                if _same(o.span.file) == _same(occ.span.file)
                and (o.span.start, o.span.end) == (occ.span.start, occ.span.end)
            ),
            None,
        )
        if there is not None:
            out.append((index, there))
    return out
