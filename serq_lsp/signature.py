"""Signature help for `def`s, built-in functions and distributions, read from the text so that
it works while the call is still being typed."""

from __future__ import annotations

from lsprotocol import types

from serq.syntax import ast
from serq_lsp import words
from serq_lsp.analysis import Analysis
from serq_lsp.guard import guarded
from serq_lsp.state import SerqServer


def register(server: SerqServer) -> None:
    """Add signature help to `server`."""

    @server.feature(
        types.TEXT_DOCUMENT_SIGNATURE_HELP,
        types.SignatureHelpOptions(trigger_characters=["(", ","]),
    )
    @guarded
    def signature_help(ls: SerqServer, params: types.SignatureHelpParams):
        analysis = ls.analysis(params.text_document.uri)
        offset = analysis.offset(params.position.line, params.position.character)
        return help_at(analysis, offset)


def open_call(text: str, offset: int) -> tuple[str, bool, int] | None:
    """The call whose parentheses are open at `offset`: (name, is a draw, argument index)."""
    depth, commas, i = 0, 0, offset - 1
    while i >= 0 and text[i] not in ";{}":
        char = text[i]
        if char == ")":
            depth += 1
        elif char == "(":
            if depth == 0:
                end = i
                while end > 0 and text[end - 1] == " ":
                    end -= 1
                start = end
                while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                    start -= 1
                if start == end:
                    return None
                return text[start:end], start > 0 and text[start - 1] == "~", commas
            depth -= 1
        elif char == "," and depth == 0:
            commas += 1
        i -= 1
    return None


def help_at(analysis: Analysis, offset: int) -> types.SignatureHelp | None:
    """Signature help for the call open at `offset`, or None."""
    call = open_call(analysis.text, offset)
    if call is None:
        return None
    name, draw, active = call
    signature = _signature(analysis, name, draw)
    if signature is None:
        return None
    label, params, doc = signature
    info = types.SignatureInformation(
        label=label,
        documentation=doc,
        parameters=[types.ParameterInformation(label=p) for p in params],
        active_parameter=min(active, max(len(params) - 1, 0)),
    )
    return types.SignatureHelp(signatures=[info], active_signature=0, active_parameter=active)


def _signature(analysis: Analysis, name: str, draw: bool):
    if draw:
        if name in words.DISTRIBUTIONS:
            params, doc = words.DISTRIBUTIONS[name]
            return words.signature(params, name, "~"), params, doc
        return None
    for occ in analysis.index.declarations(("def", name)):
        item = occ.node
        if isinstance(item, (ast.DefExpr, ast.DefBlock)):
            params = tuple(p.name for p in item.params)
            return f"def {words.signature(params, name)}", params, "a `def` of this program"
    if name in words.FUNCTIONS:
        params, doc = words.FUNCTIONS[name]
        return words.signature(params, name), params, doc
    return None
