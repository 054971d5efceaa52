"""Hover: the kernel a sugar form becomes, what a name is, what a keyword means."""

from __future__ import annotations

import os
import re

from lsprotocol import types

from serq import builtins
from serq.expand.walk import walk_children
from serq.syntax import ast
from serq.syntax.source_text import NAME, in_name
from serq_lsp import crossfile, results, words
from serq_lsp.analysis import Analysis
from serq_lsp.convert import lsp_range
from serq_lsp.describe import describe
from serq_lsp.guard import guarded
from serq_lsp.stale import View
from serq_lsp.state import SerqServer

# The origin kinds a hover shows the kernel of, anywhere in the form; the others (a whole
# session, a queue, a pull) only on their first word.
SUGAR = frozenset(
    {
        "prefill",
        "decode",
        "tool",
        "transfer",
        "request",
        "gateway request",
        "entry call",
        "at admission",
        "branch with",
        "def call",
        "aggregate",
        "turn",
    }
)
_WORD = re.compile(NAME)
# The surface nodes of those forms, as the parse shows them before the expander runs
_ANYWHERE = (
    ast.Serving,
    ast.Transfer,
    ast.Request,
    ast.Turn,
    ast.EntryCall,
    ast.BranchWith,
    ast.Aggregate,
    ast.DefCall,
)
_FIRST_WORD = (ast.Queue, ast.Pull, ast.WorkloadSession, ast.Server)
# the index's namespaces of names the language supplies, which no program declares
_LANGUAGE_NAMESPACES = frozenset({"context", "builtin", "func", "dist", "file", "std"})
# said in a hover on such a form when the check it waited for was superseded by an edit
PENDING = "*expansion: shown once the document is analysed*"


def register(server: SerqServer) -> None:
    """Add hover to `server`."""

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded
    async def hover(ls: SerqServer, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        view = ls.view(uri)  # never waits for a check in flight past its parse
        if not view.analysis.complete and _expands(view, params.position):
            await ls.settled(uri)  # the kernel is the expander's: wait, the loop goes on
            view = ls.view(uri)
        analysis = view.analysis
        offset = view.offset(params.position)
        if offset is None or not _clear(view, offset):
            return None  # on text edited since the last analysis: nothing known yet
        # a library's name its users declare first: `server` there is their stage, not
        # the keyword `server` that `hover_at` would explain
        found = _read_by_users(ls, analysis, offset) or hover_at(analysis, offset)
        if not analysis.complete and expands_at(analysis, offset):  # the check was superseded
            found = with_rows(found, PENDING)
        run = ls.results.get(uri)
        rows = None if run is None else results.hover_rows(analysis, run.anchors, offset, run.stale)
        return moved(view, with_rows(found, rows))


def _expands(view: View, position: types.Position) -> bool:
    offset = view.offset(position)
    return offset is not None and expands_at(view.analysis, offset)


def expands_at(analysis: Analysis, offset: int) -> bool:
    """Whether the parse of `analysis` shows a form at `offset` whose hover shows its kernel
    (`kernel_at`, once the expander has run): a sugar form anywhere in it (a call of a
    `def` among them), or the first word of a queue, a pull, a workload's session or a
    server."""
    word = word_at(analysis.text, offset)
    first_word = word[1] if word is not None else -1
    stack = [i for i in analysis.items_at(offset) if _holds(i, offset)]
    while stack:
        node = stack.pop()
        if isinstance(node, _ANYWHERE) or _admits_at(node, offset):
            return True
        if isinstance(node, _FIRST_WORD) and node.span.start == first_word:
            return True
        if isinstance(node, ast.Server) and _turn_runs(analysis):
            return True
        if isinstance(node, ast.Call) and _calls_def(analysis, node):
            return True
        stack.extend(c for c in walk_children(node) if _holds(c, offset))
    return False


def _admits_at(node: object, offset: int) -> bool:
    """Whether `node` is a hold whose `at admission` clause holds `offset`."""
    if not isinstance(node, ast.Hold) or not node.bindings:
        return False
    span = node.at_admission or node.span
    return span.start <= offset <= span.end


def _turn_runs(analysis: Analysis) -> bool:
    """Whether the document is in `fn main` with no workload session: the server then is
    what the `turn;` the expander writes runs, and its kernel is shown anywhere in it."""
    if not analysis.has_main:
        return False
    workloads = [i for i in analysis.core_items() if isinstance(i, ast.Workload)]
    return not any(isinstance(c, ast.WorkloadSession) for w in workloads for c in w.clauses)


def _holds(node: object, offset: int) -> bool:
    span = getattr(node, "span", None)
    return span is not None and span.start <= offset <= span.end


def _calls_def(analysis: Analysis, call: ast.Call) -> bool:
    occurrence = analysis.index.at(call.func.span.start)
    return occurrence is not None and occurrence.key[0] == "def"


def _clear(view: View, offset: int) -> bool:
    """Whether the word at `offset` of the analysed text is clear of the edits since."""
    word = word_at(view.analysis.text, offset)
    start, end = (word[1], word[1] + len(word[0])) if word else (offset, offset)
    return view.untouched(start, end)


def moved(view: View, found: types.Hover | None) -> types.Hover | None:
    """`found`, an answer of the view's analysis, with its range in the current text; None
    when what it is about meets the edits since."""
    if found is None or found.range is None or view.current:
        return found
    r = view.to_new(found.range)
    return None if r is None else types.Hover(contents=found.contents, range=r)


def _read_by_users(ls: SerqServer, analysis: Analysis, offset: int) -> types.Hover | None:
    """In a library, a name it reads but does not declare: what it is in each program of
    the workspace that uses the library."""
    occurrence = analysis.index.at(offset)
    if occurrence is None or occurrence.key[0] in _LANGUAGE_NAMESPACES:
        return None  # the language's own names (`now`, `min`) are no program's
    if analysis.index.declarations(occurrence.key):
        return None
    lines = []
    for index, there in crossfile.meanings(ls, analysis, occurrence):
        for d in index.declarations(there.key)[:1]:
            name = os.path.basename(d.span.file)
            lines.append(f"- {d.kind} `{there.key[1]}` of `{name}` (line {d.span.line})")
    if not lines:
        return None
    text = f"`{occurrence.key[1]}` is declared by the programs that use this library:\n\n"
    content = types.MarkupContent(kind=types.MarkupKind.Markdown, value=text + "\n".join(lines))
    return types.Hover(contents=content, range=lsp_range(occurrence.span, analysis.lines))


def hover_at(analysis: Analysis, offset: int) -> types.Hover | None:
    """The hover at code-point `offset` of `analysis`' document, or None."""
    parts: list[str] = []
    span = None
    occurrence = analysis.index.at(offset)
    text = describe(analysis, occurrence.key) if occurrence is not None else None
    if text:
        parts.append(text)
        span = occurrence.span
    else:
        word = word_at(analysis.text, offset)
        start = analysis.item_start(word[1]) if word is not None else 0
        if word is not None and words.in_comment_or_string(analysis.text, word[1], start):
            word = None  # `// the hold` and `"in"` say nothing of the keywords
        law = builtins.ARRIVALS.get(word[0]) if word is not None else None
        if law is not None and analysis.text[: word[1]].rstrip().endswith("arrive"):
            parts.append(law.markdown())
        elif word is not None and (said := words.in_context(analysis.text, word[1], word[0])):
            parts.append(f"**{word[0]}**: {said}")
        elif word is not None and word[0] == "cost" and _calls_cost(analysis, word[1]):
            parts.append(f"**cost**(X, amount): {words.COST_CALL}")
        elif word is not None and word[0] in words.KEYWORDS:
            parts.append(f"**{word[0]}**: {words.KEYWORDS[word[0]]}")
        elif (
            word is not None
            and word[0] == "number"
            and words.in_args_member(analysis.text, word[1])
        ):
            parts.append(f"**args.number**: {words.KEYWORDS['args']}")
        elif word is not None and word[0] in words.FUNCTIONS:  # a claim's aggregates
            params, meaning = words.FUNCTIONS[word[0]]
            parts.append(f"**{word[0]}**({', '.join(params)}): {meaning}")
    kernel = kernel_at(analysis, offset)
    if kernel is not None:
        kind, text, origin_span = kernel
        parts.append(f"{kind} expands to:\n```serq\n{text}\n```")
        span = span or origin_span
    if not parts:
        return None
    content = types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts))
    return types.Hover(contents=content, range=lsp_range(span, analysis.lines) if span else None)


def _calls_cost(analysis: Analysis, start: int) -> bool:
    """Whether the word `cost` at `start` names the function `cost(X, amount)` (a call), not
    a step stage's clause."""
    stack = [i for i in analysis.items_at(start) if _holds(i, start)]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call) and node.func.span.start == start:
            return node.func.name == "cost"
        stack.extend(c for c in walk_children(node) if _holds(c, start))
    return False


def with_rows(found: types.Hover | None, rows: str | None) -> types.Hover | None:
    """`found` with a run's `rows` after it (either may be None)."""
    if rows is None:
        return found
    if found is None:
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=rows))
    value = f"{found.contents.value}\n\n---\n\n{rows}"  # type: ignore[union-attr]
    kind = types.MarkupKind.Markdown
    return types.Hover(contents=types.MarkupContent(kind=kind, value=value), range=found.range)


def word_at(text: str, offset: int) -> tuple[str, int] | None:
    """The word around `offset` and its start, or None."""
    start = offset
    while start > 0 and in_name(text[start - 1]):
        start -= 1
    match = _WORD.match(text, start)
    if match is None or match.end() < offset:
        return None
    return match.group(), start


def kernel_at(analysis: Analysis, offset: int):
    """The innermost sugar form at `offset`: (kind, its kernel text, its span), or None (of
    forms of one size, the first in source order)."""
    best = None
    for span, kind, text in analysis.origins():
        if span.file != analysis.path or not span.start <= offset <= span.end:
            continue
        if kind not in SUGAR:
            word = word_at(analysis.text, offset)
            if word is None or word[1] != span.start:
                continue
        if not text:
            continue
        if best is None or span.end - span.start < best[0].end - best[0].start:
            best = (span, kind, text)
    if best is None:
        return None
    return (best[1], best[2], best[0])
