"""Navigation: go to definition, find references, rename where it is safe."""

from __future__ import annotations

import os
import re

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path

from serq.vocabulary import BUILTIN_ATTRS, CONTEXT_VARS
from serq_lsp.analysis import Analysis
from serq_lsp.convert import lsp_range
from serq_lsp.guard import guarded
from serq_lsp.index import Occurrence
from serq_lsp.state import SerqServer

# Names the user declared, which a rename may change; the language's own may not be renamed.
RENAMEABLE = frozenset({"value", "def", "res", "entry", "mark", "stat", "local"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def register(server: SerqServer) -> None:
    """Add definition, references and rename to `server`."""

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    @guarded
    def definition(ls: SerqServer, params: types.DefinitionParams) -> list[types.Location] | None:
        uri, analysis, occ = _at(ls, params)
        if occ is None:
            return None
        if occ.key[0] == "file":
            if not os.path.exists(occ.key[1]):
                return None
            start = types.Position(line=0, character=0)
            return [
                types.Location(
                    uri=from_fs_path(occ.key[1]) or occ.key[1],
                    range=types.Range(start=start, end=start),
                )
            ]
        found = analysis.index.declarations(occ.key)
        return [_location(uri, analysis, o) for o in found] or None

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    @guarded
    def references(ls: SerqServer, params: types.ReferenceParams) -> list[types.Location] | None:
        uri, analysis, occ = _at(ls, params)
        if occ is None:
            return None
        found = analysis.index.references(occ.key)
        if not params.context.include_declaration:
            found = [o for o in found if not o.is_declaration]
        return [_location(uri, analysis, o) for o in found]

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    @guarded
    def prepare_rename(ls: SerqServer, params: types.PrepareRenameParams):
        _, analysis, occ = _at(ls, params)
        if occ is None or not _renameable(analysis, occ):
            return None
        return lsp_range(occ.span, analysis.lines)

    @server.feature(types.TEXT_DOCUMENT_RENAME, types.RenameOptions(prepare_provider=True))
    @guarded
    def rename(ls: SerqServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        uri, analysis, occ = _at(ls, params)
        if occ is None or not _renameable(analysis, occ):
            return None
        if not _NAME.match(params.new_name):
            raise JsonRpcInvalidParams(f"`{params.new_name}` is not a name")
        if _taken(analysis, occ, params.new_name):
            raise JsonRpcInvalidParams(f"`{params.new_name}` is already a name of this program")
        edits = [
            types.TextEdit(range=lsp_range(o.span, analysis.lines), new_text=params.new_name)
            for o in analysis.index.references(occ.key)
        ]
        return types.WorkspaceEdit(changes={uri: edits})


def _at(ls: SerqServer, params) -> tuple[str, Analysis, Occurrence | None]:
    uri = params.text_document.uri
    analysis = ls.analysis(uri)
    offset = analysis.offset(params.position.line, params.position.character)
    return uri, analysis, analysis.index.at(offset)


def _location(uri: str, analysis: Analysis, occ: Occurrence) -> types.Location:
    return types.Location(uri=uri, range=lsp_range(occ.span, analysis.lines))


def _renameable(analysis: Analysis, occ: Occurrence) -> bool:
    """Safe to rename: a name declared in this document, and no `use`d file can see it."""
    if occ.key[0] not in RENAMEABLE or not analysis.index.declarations(occ.key):
        return False
    return occ.key[0] != "def" or not analysis.uses


def _taken(analysis: Analysis, occ: Occurrence, new: str) -> bool:
    """Whether `new` would clash: a name of the language, or one declared beside `occ`'s."""
    if new in CONTEXT_VARS or new in BUILTIN_ATTRS or new == "inf":
        return True
    namespace, name = occ.key
    prefix = name.rsplit(".", 1)[0] + "." if "." in name else ""
    if namespace == "local":
        prefix = name.split(":", 1)[0] + ":"
    return any(
        o.key[1] in (prefix + new, new) and o.key[0] in ("value", "res", "def", namespace)
        for o in analysis.index.symbols()
    )
