"""Semantic tokens: keywords, numbers, strings, comments, and every name by what it is."""

from __future__ import annotations

import re

from lsprotocol import types

from serq.link.index import occurrence_at
from serq.syntax.source_text import NAME, lines_ended
from serq_lsp import convert, words
from serq_lsp.analysis import Analysis
from serq_lsp.guard import guarded
from serq_lsp.state import SerqServer

TOKEN_TYPES = [
    "keyword",
    "number",
    "string",
    "comment",
    "variable",
    "parameter",
    "function",
    "property",
    "type",
    "class",
    "struct",
    "namespace",
    "method",
    "event",
    "enumMember",
]
TOKEN_MODIFIERS = ["declaration", "readonly", "defaultLibrary"]
_TYPE_INDEX = {name: k for k, name in enumerate(TOKEN_TYPES)}
LEGEND = types.SemanticTokensLegend(token_types=TOKEN_TYPES, token_modifiers=TOKEN_MODIFIERS)

_LEXEME = re.compile(
    r"(?P<comment>//[^\n]*|/\*(?:.|\n)*?\*/)|(?P<string>\"[^\"\n]*\")"
    r"|(?P<number>[0-9][0-9_]*\.?[0-9_]*(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<library>(?<![\w.])args\.number)|(?P<word>" + NAME + ")"
)
# `args.number` is one token of the grammar (ARGS_NUMBER), the library's one function, not
# a reference to `args` and a member: a function of the default library, as VS Code
# colours `min`, and as the TextMate grammar's `support.function.library` does.
# What a name is, by its key's namespace or its declaration's kind.
_BY_KIND = {
    "let": "variable",
    "attribute": "property",
    "def": "function",
    "pool": "struct",
    "stage": "class",
    "queue": "namespace",
    "entry": "method",
    "mark": "event",
    "statistic": "variable",
    "gauge": "variable",
    "claim": "event",
    "parameter": "parameter",
    "binding": "parameter",
}
_BY_NAMESPACE = {
    "value": "variable",
    "def": "function",
    "res": "class",
    "entry": "method",
    "mark": "event",
    "stat": "variable",
    "local": "parameter",
    "context": "enumMember",
    "builtin": "property",
    "func": "function",
    "dist": "function",
    "file": "string",
    "std": "string",
}


def register(server: SerqServer) -> None:
    """Add full-document semantic tokens to `server`."""

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
    @guarded
    def semantic_tokens(ls: SerqServer, params: types.SemanticTokensParams):
        return types.SemanticTokens(data=encode(ls.parsed(params.text_document.uri)))


def encode(analysis: Analysis) -> list[int]:
    """The LSP's relative encoding of every token of `analysis`' document."""
    index, lines, text = analysis.index, analysis.lines, analysis.text
    occurrences = index.listing()  # no declaring node is read
    starts = [o.span.start for o in occurrences]
    kinds = {}  # the kind of each declared key, for references
    for occ in occurrences:
        if occ.is_declaration:
            kinds.setdefault(occ.key, occ.kind)
    data: list[int] = []
    last_line = last_col = 0
    ascii_lines: dict[int, bool] = {}  # line -> whether it is ASCII: a unit a character
    for match in _LEXEME.finditer(lines_ended(text)):  # a lone `\r` ends a `//` comment
        group = match.lastgroup
        modifiers = 0
        if group == "word":
            occ = occurrence_at(occurrences, starts, match.start())
            if occ is not None and occ.span.start == match.start():
                kind = kinds.get(occ.key)
                name = _BY_KIND.get(kind or "") or _BY_NAMESPACE.get(occ.key[0], "variable")
                modifiers |= 1 if occ.is_declaration else 0
                modifiers |= 4 if occ.key[0] in ("context", "builtin", "func", "dist") else 0
            elif match.group() in words.KEYWORDS:
                name = "keyword"
            else:
                continue
        elif group == "library":
            name, modifiers = "function", 4
        else:
            name = group or "comment"
        kind_index = _TYPE_INDEX[name]
        start = match.start()
        for piece in match.group().split("\n"):  # a token spans one line at most
            line, column = lines.position(start)
            plain = ascii_lines.get(line)
            if plain is None:
                plain = ascii_lines[line] = lines.line_text(line).isascii()
            at = column - 1 if plain else convert.character(lines, line, column)
            shown = piece[:-1] if piece.endswith("\r") else piece  # `\r\n` ends the line
            length = len(shown) if plain else convert.length(shown)
            if length:
                delta_line = line - 1 - last_line
                delta_col = at - last_col if delta_line == 0 else at
                data += [delta_line, delta_col, length, kind_index, modifiers]
                last_line, last_col = line - 1, at
            start += len(piece) + 1
    return data
