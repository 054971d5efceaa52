"""Completion: the keywords valid where the cursor is, the names in scope there, and the
context variables readable at that place (the moment table's homes).

The keywords are those the parser itself would accept next (`serq_lsp.expected`); when the
current item does not lex or parse up to the cursor, they come from the AST around it."""

from __future__ import annotations

import os

from lsprotocol import types

from serq.expand.walk import walk
from serq.syntax import ast
from serq.syntax.source_text import in_name
from serq_lsp import words
from serq_lsp.analysis import Analysis
from serq_lsp.expected import expected_at
from serq_lsp.guard import guarded
from serq_lsp.state import SerqServer

ITEMS = (
    "let",
    "use",
    "def",
    "pool",
    "stage",
    "queue",
    "workload",
    "session",
    "server",
    "run",
    "gauge",
    "claim",
    "fn",
)
STATEMENTS = (
    "set",
    "observe",
    "hold",
    "run",
    "branch",
    "loop",
    "choose",
    "end",
    "mark",
    "request",
    "turn",
    "grow",
    "drop",
    "release",
    "load",
    "prefill",
    "decode",
    "tool",
    "transfer",
)
POOL_OPTIONS = ("cap", "block", "evict", "preempt", "admit", "queue", "spill", "reserve")
STEP_OPTIONS = ("budget", "cost", "chunk", "serve", "memory")
CLAUSES = ("arrive", "trace", "init", "turn", "session", "hidden")
SETTINGS = ("horizon", "warmup", "seed", "arrivals")
MEMBERS = ("pool", "serve", "nic")
STAGE_KINDS = ("fifo", "ps", "delay", "step")

# Option keys whose expressions read context variables, and which ones (the moment table).
_PLACE_VARIABLES = {
    "cost": (
        "residents",
        "decoders",
        "kv_decode",
        "kv_prefill",
        "tokens",
        "prefilled",
        "attention",
    ),
    "budget": ("residents", "decoders", "kv_decode", "kv_prefill"),
    "chunk": ("residents", "decoders", "kv_decode", "kv_prefill"),
    "serve by": (
        "residents",
        "decoders",
        "kv_decode",
        "kv_prefill",
        "decoding",
        "admission",
        "remaining",
    ),
    "evict by": ("size", "age", "last", "waiting"),
    "queue by": ("waited",),
    "preempt by": ("decoding", "admission", "position"),
}
# What a claim over iterations reads of the iteration (pyserq 0.1.4).
_ITERATION_VARIABLES = (
    *_PLACE_VARIABLES["cost"],
    "demand",
    "served",
    "arrived",
)
_KINDS = {
    "let": types.CompletionItemKind.Constant,
    "def": types.CompletionItemKind.Function,
    "pool": types.CompletionItemKind.Struct,
    "stage": types.CompletionItemKind.Class,
    "queue": types.CompletionItemKind.Module,
    "attribute": types.CompletionItemKind.Field,
    "entry": types.CompletionItemKind.Method,
}


def register(server: SerqServer) -> None:
    """Add completion to `server`."""

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["."])
    )
    @guarded
    def completion(ls: SerqServer, params: types.CompletionParams):
        uri = params.text_document.uri
        view = ls.view(uri)  # never waits for a check in flight
        if view.typed_before(params.position, "."):
            # a member after a `.` just typed: the older analysis would complete what was
            # before the dot (every name in scope), so read the current text's parse
            analysis = ls.parsed(uri)
            offset = analysis.offset(params.position.line, params.position.character)
            return types.CompletionList(is_incomplete=False, items=complete(analysis, offset))
        offset = view.offset(params.position)
        if offset is None:  # inside text edited since the last analysis: ask again after
            return types.CompletionList(is_incomplete=True, items=[])
        # what was typed right before the cursor since the analysis, which it lacks
        items = complete(view.analysis, offset, view.typed(params.position))
        return types.CompletionList(is_incomplete=False, items=items)


def complete(
    analysis: Analysis, offset: int, before: str | None = None
) -> list[types.CompletionItem]:
    """The completions at `offset` of `analysis`' document; `before`, the document's text
    right before the cursor now, when the analysis is older."""
    found = expected_at(analysis.text, offset, analysis.chunks or None)
    if found is not None and found.nothing:  # only punctuation fits, or in a comment/string
        return []
    if before is None:
        before = analysis.text[max(0, offset - 256) : offset]
    if _ends_in_number(before):  # `cap 1|`: no name or keyword joins a number
        return []
    if words.in_args_member(analysis.text, offset):  # `args.` typed
        return [_args_number("number", 'number("$1", $2)')]
    path = _path(analysis.items_at(offset), offset)
    _OFFSET[0] = offset
    if found is None:  # the item is broken before the cursor: judge by the AST
        keywords, expression = _keywords(path)
        names = expression or not keywords
    else:
        expression = found.expression
        keywords = tuple(
            k
            for k in found.keywords
            if not (expression and k in words.FUNCTIONS)  # `min`, `max`: offered as functions
            and not (k == "fn" and analysis.has_main)
        )
        names = expression or (found.name and not keywords)
    items = [
        types.CompletionItem(
            label=k, kind=types.CompletionItemKind.Keyword, detail=words.KEYWORDS.get(k)
        )
        for k in keywords
    ]
    if names:
        items += _names(analysis, path, offset)
        for name in _context_variables(path):
            items.append(
                types.CompletionItem(
                    label=name,
                    kind=types.CompletionItemKind.Variable,
                    detail=f"context variable: {words.CONTEXT_MEANINGS[name]}",
                )
            )
        items += [
            types.CompletionItem(
                label=f, kind=types.CompletionItemKind.Function, detail=words.signature(p, f)
            )
            for f, (p, _) in words.FUNCTIONS.items()
        ]
        if any(isinstance(n, ast.Let) for n in path):  # a program argument
            items.append(_args_number("args.number", 'args.number("$1", $2)'))
    return items


def _ends_in_number(text: str) -> bool:
    """Whether the word `text` ends in (letters, digits, `_` and `.`) is a number literal
    (`16`, `0.5`, `1e9`): what is typed after it is more of the number."""
    start = end = len(text)
    while start > 0 and (in_name(text[start - 1]) or text[start - 1] == "."):
        start -= 1
    return start < end and text[start].isdigit()


def _args_number(label: str, snippet: str) -> types.CompletionItem:
    return types.CompletionItem(
        label=label,
        kind=types.CompletionItemKind.Function,
        detail='args.number("name", default): a program argument (use "std/args";)',
        insert_text=snippet,
        insert_text_format=types.InsertTextFormat.Snippet,
    )


def _path(items: list, offset: int) -> list:
    """The nodes around `offset` among `items` and what is inside them, outermost first."""
    path: list = []
    nodes = list(items)
    while nodes:
        inner = [n for n in nodes if hasattr(n, "span") and n.span.start < offset <= n.span.end]
        if not inner:
            break
        node = inner[0]
        path.append(node)
        nodes = [c for c in walk(node) if c is not node and hasattr(c, "span")]
        nodes = [c for c in nodes if c.span != node.span]
    return path


def _keywords(path: list) -> tuple[tuple[str, ...], bool]:
    """The keywords that may start what is written at the innermost block of `path`, and
    whether an expression may stand there too."""
    expression = any(isinstance(n, ast.Option) or type(n).__name__ in _EXPR for n in path)
    if any(isinstance(n, (ast.Set, ast.Observe)) for n in path):
        expression = True
    if expression:
        return (), True
    for node in reversed(path):
        if isinstance(node, ast.Block):
            return STATEMENTS, False
        if isinstance(node, (ast.Pool, ast.QueuePool)):
            return POOL_OPTIONS, False
        if isinstance(node, ast.Step):
            return STEP_OPTIONS, False
        if isinstance(node, ast.Workload):
            return CLAUSES, False
        if isinstance(node, ast.RunSettings):
            return SETTINGS, False
        if isinstance(node, ast.Queue):
            return MEMBERS, False
        if isinstance(node, ast.Stage):
            return STAGE_KINDS, False
    return ITEMS, False


_EXPR = {"Binary", "Unary", "Call", "Conditional", "Number", "Name", "Ref", "Draw", "Aggregate"}


def _context_variables(path: list) -> tuple[str, ...]:
    for node in reversed(path):
        if isinstance(node, ast.Option) and node.key in _PLACE_VARIABLES:
            return ("now", *_PLACE_VARIABLES[node.key])
        if isinstance(node, ast.Ps):
            return ("now", "present")
        if isinstance(node, ast.Spill):
            return ("now", *_PLACE_VARIABLES["evict by"])
        if isinstance(node, ast.Claim) and node.kind != "at_end":
            given = node.given is not None and node.given.span.start <= _OFFSET[0]
            given = given and _OFFSET[0] <= node.given.span.end
            return () if given else ("now", *_ITERATION_VARIABLES)
    return ("now",)


_OFFSET = [0]  # the offset `complete` is at, for `_context_variables`
_LOCAL = ("parameter", "binding")


def _names(analysis: Analysis, path: list, offset: int) -> list[types.CompletionItem]:
    enclosing = {id(n) for n in path}
    out = []
    seen = set()
    libraries = [o for o in analysis.index.elsewhere if o.kind == "def"]  # `use`d `def`s
    # a parameter or binding is offered where the node declaring it holds the cursor: only
    # those of the items at the cursor can (their occurrences carry their nodes)
    own = [o for o in analysis.index.symbols() if o.kind not in _LOCAL]
    local = [
        o
        for o in analysis.declarations_near(offset)
        if o.kind in _LOCAL and id(o.node) in enclosing
    ]
    ordered = sorted([*own, *local], key=lambda o: (o.span.start, o.span.end))
    for occ in [*ordered, *libraries]:
        if occ.kind == "claim":  # a claim's name is read by nothing
            continue
        if occ.key in seen:
            continue
        seen.add(occ.key)
        name = occ.key[1].split(":")[-1]
        detail = occ.kind
        if occ.span.file != analysis.path:
            detail = f"def of {os.path.basename(occ.span.file)}"
        out.append(
            types.CompletionItem(
                label=name,
                kind=_KINDS.get(occ.kind, types.CompletionItemKind.Variable),
                detail=detail,
            )
        )
    return out
