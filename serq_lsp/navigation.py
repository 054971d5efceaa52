"""Navigation: go to definition, find references, rename where it is safe."""

from __future__ import annotations

import os

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from serq.expand.defs import words as def_words
from serq.expand.serving import FORM_STAGES
from serq.link.index import Occurrence
from serq.syntax import ast
from serq.syntax.source_text import is_name
from serq.vocabulary import BUILTIN_ATTRS, CONTEXT_VARS
from serq_lsp import crossfile
from serq_lsp.analysis import Analysis
from serq_lsp.convert import fs_uri, lsp_range
from serq_lsp.guard import guarded
from serq_lsp.stale import View
from serq_lsp.state import SerqServer

# Names the user declared, which a rename may change; the language's own may not be renamed.
# Not "entry": a queue's entries are named by its roles (`route`, `prefill`, `decode`,
# `transfer`), and one renamed is no entry of its role any more.
RENAMEABLE = frozenset({"value", "def", "res", "mark", "stat", "local"})


def register(server: SerqServer) -> None:
    """Add definition, references and rename to `server`."""

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    @guarded
    def definition(ls: SerqServer, params: types.DefinitionParams) -> list[types.Location] | None:
        view = ls.view(params.text_document.uri)  # never waits for a check in flight
        analysis = view.analysis
        offset = view.offset(params.position)
        occ = analysis.index.at(offset) if offset is not None else None
        if occ is None or not view.untouched(occ.span.start, occ.span.end):
            return None
        if occ.key[0] == "file":
            if ls.source(occ.key[1]) is None:  # neither open in the editor nor on disk
                return None
            start = types.Position(line=0, character=0)
            return [
                types.Location(
                    uri=fs_uri(occ.key[1]) or occ.key[1],
                    range=types.Range(start=start, end=start),
                )
            ]
        found = analysis.index.declarations(occ.key)
        if not found:  # a name a library reads: declared by the programs that use it
            found = [
                d
                for index, o in crossfile.meanings(ls, analysis, occ)
                for d in index.declarations(o.key)
            ]
        return _current(view, params.text_document.uri, _locations(ls, analysis, found)) or None

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    @guarded
    def references(ls: SerqServer, params: types.ReferenceParams) -> list[types.Location] | None:
        uri, analysis, occ = _at(ls, params)
        if occ is None:
            return None
        found = every_reference(ls, uri, analysis, occ)
        if not params.context.include_declaration:
            found = [o for o in found if not o.is_declaration]
        return _locations(ls, analysis, found)

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    @guarded
    def prepare_rename(ls: SerqServer, params: types.PrepareRenameParams):
        uri, analysis, occ = _at(ls, params)
        if occ is None or refusal(ls, uri, analysis, occ) is not None:
            return None
        return lsp_range(occ.span, analysis.lines)

    @server.feature(types.TEXT_DOCUMENT_RENAME, types.RenameOptions(prepare_provider=True))
    @guarded
    def rename(ls: SerqServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        uri, analysis, occ = _at(ls, params)
        if occ is None:
            return None
        reason = refusal(ls, uri, analysis, occ)
        if reason is not None:
            raise JsonRpcInvalidParams(reason)
        if not is_name(params.new_name):
            raise JsonRpcInvalidParams(f"`{params.new_name}` is not a name")
        if occ.key[0] == "def" and params.new_name in def_words():
            raise JsonRpcInvalidParams(
                f"`{params.new_name}` is a word of the language: a definition needs a name of "
                "its own"
            )
        if _taken(analysis, occ, params.new_name):
            raise JsonRpcInvalidParams(f"`{params.new_name}` is already a name of this program")
        user = _taken_by_a_user(ls, analysis, occ, params.new_name)
        if user is not None:
            raise JsonRpcInvalidParams(f"`{params.new_name}` is already a name of `{user}`")
        changes: dict[str, list[types.TextEdit]] = {}
        for location in _locations(ls, analysis, every_reference(ls, uri, analysis, occ)):
            edit = types.TextEdit(range=location.range, new_text=params.new_name)
            changes.setdefault(location.uri, []).append(edit)
        return types.WorkspaceEdit(changes=changes)


def _at(ls: SerqServer, params) -> tuple[str, Analysis, Occurrence | None]:
    uri = params.text_document.uri
    analysis = ls.analysis(uri)
    offset = analysis.offset(params.position.line, params.position.character)
    return uri, analysis, analysis.index.at(offset)


def _current(view: View, uri: str, found: list[types.Location]) -> list[types.Location]:
    """`found` with the ranges in the view's document moved to its current text; a place in
    text edited since is left out."""
    out = []
    for location in found:
        if location.uri == uri:
            r = view.to_new(location.range)
            if r is None:
                continue
            location = types.Location(uri=uri, range=r)
        out.append(location)
    return out


def every_reference(
    ls: SerqServer, uri: str, analysis: Analysis, occ: Occurrence
) -> list[Occurrence]:
    """Every occurrence of `occ`'s name: in the document and its libraries, and for a `def`
    of a library, in every program of the workspace that `use`s it; a name a library reads
    but does not declare, everywhere it means what it means at `occ` in each program that
    `use`s the library, as definition finds it there (each place once)."""
    found = analysis.index.references(occ.key)
    if not analysis.index.declarations(occ.key):
        # a library's `cachedin(kv)` and `hold kv` are indexed apart in the library alone
        # (a value or a pool); the programs that `use` it resolve both to their pool
        found += [
            o
            for index, there in crossfile.meanings(ls, analysis, occ)
            for o in index.references(there.key)
        ]
    if occ.key[0] == "def":
        homes = {d.span.file for d in analysis.index.declarations(occ.key)}
        for home in homes:
            for index in crossfile.users(ls, home, analysis.path):
                found += index.references(occ.key)
    unique: dict[tuple[str, int, int], Occurrence] = {}
    for o in found:
        unique.setdefault((os.path.realpath(o.span.file), o.span.start, o.span.end), o)
    return list(unique.values())


def _locations(ls: SerqServer, analysis: Analysis, found: list[Occurrence]) -> list[types.Location]:
    return [loc for o in found if (loc := crossfile.location(ls, analysis, o)) is not None]


def refusal(ls: SerqServer, uri: str, analysis: Analysis, occ: Occurrence) -> str | None:
    """Why the name at `occ` may not be renamed, or None when it may: a name of the language
    is no one's to rename, and a program's name read in a library cannot be renamed from
    one program (the library's other users read it too)."""
    if occ.key[0] == "entry":
        return f"`{occ.key[1].rsplit('.', 1)[-1]}` is an entry, named by its queue's role"
    declarations = analysis.index.declarations(occ.key)
    if any(isinstance(d.node, ast.QueueNic) for d in declarations):
        return f"`{occ.key[1]}` is a queue's NIC, named by the language"
    if occ.key[1] in FORM_STAGES and any(isinstance(d.node, ast.Stage) for d in declarations):
        return (
            f"the serving form `{occ.key[1]}` finds the stage `{occ.key[1]}` by its name; "
            f"rename it by hand, with `on STAGE` in the forms that use it"
        )
    if occ.key[0] not in RENAMEABLE or not declarations:
        return f"`{occ.key[1]}` is a name of the language, or declared nowhere"
    if occ.key[0] == "def":
        return None
    elsewhere = {o.span.file for o in analysis.index.references(occ.key)} - {analysis.path}
    if elsewhere:
        files = ", ".join(f"`{os.path.basename(f)}`" for f in sorted(elsewhere))
        return f"`{occ.key[1]}` is read in the library {files}, which other programs may use"
    return None


def _taken_by_a_user(ls: SerqServer, analysis: Analysis, occ: Occurrence, new: str) -> str | None:
    """For a library's `def`, the name of a program that `use`s the library and declares
    `new` (a `let`, a pool, a stage or another `def`), or None."""
    if occ.key[0] != "def":
        return None
    for home in {d.span.file for d in analysis.index.declarations(occ.key)}:
        for index in crossfile.users(ls, home, analysis.path):
            for key, found in index.by_key().items():
                if key[1] == new and key[0] in ("value", "res", "def"):
                    declared = [o for o in found if o.is_declaration]
                    if declared:
                        return os.path.basename(declared[0].span.file)
    return None


def _taken(analysis: Analysis, occ: Occurrence, new: str) -> bool:
    """Whether `new` would clash: a name of the language, or one declared beside `occ`'s."""
    if new in CONTEXT_VARS or new in BUILTIN_ATTRS or new == "inf":
        return True
    namespace, name = occ.key
    prefix = name.rsplit(".", 1)[0] + "." if "." in name else ""
    if namespace == "local":
        prefix = name.rsplit(":", 1)[0] + ":"
    return any(
        key[1] in (prefix + new, new) and key[0] in ("value", "res", "def", namespace)
        for key, found in analysis.index.by_key().items()  # the libraries' `def`s too
        if any(o.is_declaration for o in found)
    )
