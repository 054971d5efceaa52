"""Signature help for `def`s (this program's and its libraries'), built-in functions, draws
and arrival laws (`serq.builtins`, with each parameter's unit), read from the text so that
it works while the call is still being typed."""

from __future__ import annotations

import os

from lsprotocol import types

from serq import builtins
from serq.syntax import ast
from serq.syntax.source_text import in_name
from serq_lsp import words
from serq_lsp.analysis import Analysis
from serq_lsp.guard import guarded
from serq_lsp.state import SerqServer

# the calls that are forms of the language rather than functions: label, parameters, text
FORMS = {
    "cost": (
        "cost(X, amount)",
        (("X", "the pool or stage in whose unit `amount` is stated"), ("amount", "the quantity")),
        words.COST_CALL,
    ),
    "args.number": (
        'args.number("name", default)',
        (
            ("name", "the argument's name, given as `--set name=VALUE`"),
            ("default", "its value when it is not given"),
        ),
        words.KEYWORDS["args"],
    ),
}


def register(server: SerqServer) -> None:
    """Add signature help to `server`."""

    @server.feature(
        types.TEXT_DOCUMENT_SIGNATURE_HELP,
        types.SignatureHelpOptions(trigger_characters=["(", ","]),
    )
    @guarded
    def signature_help(ls: SerqServer, params: types.SignatureHelpParams):
        analysis = ls.parsed(params.text_document.uri)  # reads the index only
        offset = analysis.offset(params.position.line, params.position.character)
        return help_at(analysis, offset)


def _code_before(text: str, offset: int, start: int) -> str | None:
    """`text[start:offset]` with every comment and string blanked (their brackets, commas
    and semicolons are no code), or None when `offset` lies inside one; `start` lies
    outside every comment and string."""
    parts, last = [], start
    for m in words.OPAQUE.finditer(text, start, offset):
        word = m.group()
        if m.end() == offset:
            closed = (word.startswith("/*") and len(word) >= 4 and word.endswith("*/")) or (
                word.startswith('"') and len(word) >= 2 and word.endswith('"')
            )
            if not closed:
                return None
        parts.append(text[last : m.start()])
        parts.append(" " * len(word))
        last = m.end()
    parts.append(text[last:offset])
    return "".join(parts)


def open_call(text: str, offset: int, start: int = 0) -> tuple[str, str, int] | None:
    """The call whose parentheses are open at `offset`: (name, how it is written: "draw"
    after `~`, "arrival" after `arrive`, else "call", the argument index). Comments and
    strings are read past: their brackets and commas are not the call's. The call is read
    from `start` on, the beginning of its item (`Analysis.item_start`: a call does not
    span items), which lies outside every comment and string."""
    code = _code_before(text, offset, start)
    if code is None:
        return None
    text = code
    depth, commas, i = 0, 0, len(code) - 1
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
                while start > 0 and (in_name(text[start - 1]) or text[start - 1] == "."):
                    start -= 1
                if start == end:
                    return None
                return text[start:end], _how(text, start), commas
            depth -= 1
        elif char == "," and depth == 0:
            commas += 1
        i -= 1
    return None


def _how(text: str, start: int) -> str:
    if start > 0 and text[start - 1] == "~":
        return "draw"
    before = text[:start].rstrip()
    if before.endswith("arrive"):
        return "arrival"
    if text.startswith("cost", start) and _in_step_stage(text, start):
        return "clause"  # a step stage's `cost (...)` clause, not the call `cost(X, amount)`
    return "call"


def _in_step_stage(text: str, offset: int) -> bool:
    """Whether `offset` lies directly in the block of a `stage NAME : step { }`."""
    depth, i = 0, offset - 1
    while i >= 0:
        if text[i] == "}":
            depth += 1
        elif text[i] == "{":
            if depth == 0:
                return text[:i].rstrip().endswith("step")
            depth -= 1
        i -= 1
    return False


def help_at(analysis: Analysis, offset: int) -> types.SignatureHelp | None:
    """Signature help for the call open at `offset`, or None."""
    call = open_call(analysis.text, offset, analysis.item_start(offset))
    if call is None:
        return None
    name, how, active = call
    signature = _signature(analysis, name, how)
    if signature is None:
        return None
    label, params, doc = signature
    info = types.SignatureInformation(
        label=label,
        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=doc),
        parameters=[
            types.ParameterInformation(label=p, documentation=d or None) for p, d in params
        ],
        active_parameter=min(active, max(len(params) - 1, 0)),
    )
    return types.SignatureHelp(signatures=[info], active_signature=0, active_parameter=active)


def _signature(analysis: Analysis, name: str, how: str):
    """(label, [(parameter, its documentation)], documentation) of `name` called as `how`."""
    if how == "call":
        for occ in analysis.index.declarations(("def", name)):
            item = occ.node
            if isinstance(item, (ast.DefExpr, ast.DefBlock)):
                params = [(p.name, "") for p in item.params]
                label = f"def {name}({', '.join(p for p, _ in params)})"
                where = os.path.relpath(occ.span.file, os.path.dirname(analysis.path))
                doc = (
                    "a `def` of this program"
                    if occ.span.file == analysis.path
                    else (f"a `def` of `{where}`, which this program `use`s")
                )
                return label, params, doc
    if how == "call" and name in FORMS:
        label, params, doc = FORMS[name]
        return label, list(params), doc
    if how == "call" and name in words.FUNCTIONS and builtins.lookup(name) is None:
        params, meaning = words.FUNCTIONS[name]  # a claim's aggregates
        return f"{name}({', '.join(params)})", [(p, "") for p in params], meaning
    builtin = builtins.lookup(name, draw=how == "draw", arrival=how == "arrival")
    if builtin is None:
        return None
    params = [(p.name, f"{p.unit}: {p.meaning}") for p in builtin.params]
    return builtin.signature(), params, builtin.markdown()
