"""Symbols: the document outline (the named items: lets, defs, pools, stages, queues with their
entries, gauges, claims; and the blocks: workload, session, server, run, use, pull, share)
and workspace symbols over every `.sq` file of the workspace (`serq_lsp.workspace`)."""

from __future__ import annotations

from lsprotocol import types

from serq.syntax import ast
from serq_lsp.analysis import Analysis
from serq_lsp.convert import lsp_range
from serq_lsp.guard import guarded
from serq_lsp.state import SerqServer
from serq_lsp.workspace import WorkspaceSymbols

K = types.SymbolKind
_ITEM_KINDS = {
    ast.Let: K.Constant,
    ast.DefExpr: K.Function,
    ast.DefBlock: K.Function,
    ast.Pool: K.Struct,
    ast.Stage: K.Class,
    ast.Queue: K.Module,
    ast.Gauge: K.Variable,
    ast.Claim: K.Boolean,
}
_KEY_KINDS = {
    "let": K.Constant,
    "def": K.Function,
    "pool": K.Struct,
    "stage": K.Class,
    "queue": K.Module,
    "entry": K.Method,
    "gauge": K.Variable,
    "statistic": K.Variable,
    "attribute": K.Field,
    "mark": K.Event,
    "claim": K.Boolean,
}
_BLOCKS = {
    ast.Workload: "workload",
    ast.Session: "session",
    ast.Server: "server",
    ast.RunSettings: "run",
    ast.Use: "use",
    ast.Pull: "pull",
    ast.Share: "share",
}


def register(server: SerqServer) -> None:
    """Add document and workspace symbols to `server`."""

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @guarded
    def document_symbols(ls: SerqServer, params: types.DocumentSymbolParams):
        return outline(ls.parsed(params.text_document.uri))

    workspace = WorkspaceSymbols()

    @server.feature(types.WORKSPACE_SYMBOL)
    @guarded
    def workspace_symbols(ls: SerqServer, params: types.WorkspaceSymbolParams):
        return [
            types.WorkspaceSymbol(
                name=symbol.name,
                kind=_KEY_KINDS.get(symbol.kind, K.Variable),
                location=types.Location(uri=symbol.uri, range=symbol.range),
                container_name=symbol.container,
            )
            for symbol in workspace.search(ls, params.query)
        ]


def outline(analysis: Analysis) -> list[types.DocumentSymbol]:
    """The outline of `analysis`' document, its items in source order."""
    lines = analysis.lines
    out = []
    for item, place in analysis.placed_items():
        name_ident = getattr(item, "name", None)
        whole = lsp_range(place(item.span), lines)
        if isinstance(name_ident, ast.Ident) and type(item) in _ITEM_KINDS:
            children = (
                _queue_members(item, analysis, place) if isinstance(item, ast.Queue) else None
            )
            out.append(
                types.DocumentSymbol(
                    name=name_ident.name,
                    kind=_ITEM_KINDS[type(item)],
                    range=whole,
                    selection_range=lsp_range(place(name_ident.span), lines),
                    children=children,
                    detail=_detail(item),
                )
            )
        elif type(item) in _BLOCKS:
            out.append(
                types.DocumentSymbol(
                    name=_BLOCKS[type(item)],
                    kind=K.Namespace,
                    range=whole,
                    selection_range=whole,
                    detail=getattr(item, "path", None),
                )
            )
    return out


def _detail(item) -> str | None:
    if isinstance(item, ast.Stage):
        return type(item.kind).__name__.lower()
    if isinstance(item, ast.Queue):
        return ", ".join(r.name for r in item.roles) or None
    return None


def _queue_members(q: ast.Queue, analysis: Analysis, place) -> list[types.DocumentSymbol]:
    lines = analysis.lines
    members = []
    for m in q.members:
        whole = lsp_range(place(m.span), lines)
        if isinstance(m, ast.QueuePool):
            members.append(
                types.DocumentSymbol(
                    name=m.name.name,
                    kind=K.Struct,
                    range=whole,
                    selection_range=lsp_range(place(m.name.span), lines),
                    detail=f"{q.name.name}.{m.name.name}",
                )
            )
        elif isinstance(m, ast.Entry):
            params = ", ".join(p.name for p in m.params)
            members.append(
                types.DocumentSymbol(
                    name=m.verb.name,
                    kind=K.Method,
                    range=whole,
                    selection_range=lsp_range(place(m.verb.span), lines),
                    detail=f"({params})",
                )
            )
        elif isinstance(m, (ast.QueueServe, ast.QueueNic)):
            name = "serve" if isinstance(m, ast.QueueServe) else "nic"
            members.append(
                types.DocumentSymbol(
                    name=name,
                    kind=K.Class,
                    range=whole,
                    selection_range=whole,
                    detail=type(m.kind).__name__.lower(),
                )
            )
    return members
