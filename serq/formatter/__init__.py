"""`serq fmt`: a serQ file in the one canonical layout, its comments kept in their places.

`format_source(text, path)` parses the file, prints every item that parsed with the
kernel printer (`serq.expand.printer`: two-space indentation, one statement,
option or clause a line, one space around each binary operator) and puts back
the comments the scanner finds (`comments.py`) where they were: a comment on a
line of its own before the element it stood before, a trailing comment at the
end of the line it ended. Trailing comments that the author aligned in a run of
lines stay aligned. Blank lines between elements are kept (at most one), and a
blank line separates two top-level items when either spans several lines.
Parentheses the author wrote around an operand are kept; none is added that the
precedence does not need.

An item with a syntax error is left as written, and the items around it are
formatted. A file that ends inside an unterminated comment (or a string on its last line)
keeps that comment's (string's) text as written, to its last character: no trailing space
goes, and no line break is added inside the comment. The result parses to the same tree
as the input and formats to itself.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left
from dataclasses import dataclass

from serq.diagnostics import Diagnostic
from serq.expand.printer import INDENT, _Printer
from serq.formatter.comments import Comment, comments, has_blank_line, open_at_end
from serq.syntax import ParseResult, ast, parse
from serq.syntax.scanner import FN_CLOSE, FN_HEAD
from serq.syntax.source_text import BOM, lines_ended

__all__ = ["Formatted", "format_source"]

_TRAIL = "\x00"  # code \0 column \0 comment: a line with a trailing comment, aligned at the end
_HEAD = "\x01"  # \1 comment: a trailing comment that belongs to the line above (`{ // …`)
_NEXT = "\x02"  # between two trailing comments of one line
_BAD_BYTE = re.compile("[\udc80-\udcff]")  # an invalid byte, as `source_text.decode` escapes it


@dataclass(frozen=True, slots=True)
class Formatted:
    """The formatted `text`, the syntax `diagnostics` of the input, and how many items
    were left as written because of them (`kept`)."""

    text: str
    diagnostics: tuple[Diagnostic, ...]
    kept: int

    @property
    def ok(self) -> bool:
        return not self.diagnostics


def format_source(
    text: str,
    path: str = "<input>",
    only: tuple[int, int] | None = None,
    parsed: ParseResult | None = None,
) -> Formatted:
    """The text of `path` (whose contents are `text`) in the canonical layout; with `only`
    (offsets `start`, `end`), only the items that touch that range are formatted. A lone
    `\r` is a line end, written as `\n` (as the parser reads it), and every line ends
    with `\n`, what is copied as written too (but a file whose `fn main` wrapper is
    broken, which is left whole as written). `parsed` is `text`'s
    parse when the caller has it (the language server's analysis), used when `text` has
    no lone `\r`."""
    swap = _free_marks(text)
    if not swap:
        return _format(text, path, only, parsed)
    # the source holds a character the layout uses as a mark (a NUL in a comment, a
    # string, or a line left as written): each is written as a character the text does
    # not hold, and back in the output; the diagnostics are the text's own
    masked = _format(text.translate(str.maketrans(swap)), path, only, None)
    ended = lines_ended(text)
    if parsed is None or ended is not text:
        parsed = parse(ended, path)
    back = str.maketrans({free: mark for mark, free in swap.items()})
    return Formatted(masked.text.translate(back), parsed.diagnostics, masked.kept)


def _free_marks(text: str) -> dict[str, str]:
    """For each of the layout's marks that `text` holds, a private-use character that
    `text` does not hold (none when it holds no mark, as any program a user writes)."""
    held = [mark for mark in (_TRAIL, _HEAD, _NEXT) if mark in text]
    if not held:
        return {}
    free = (
        c
        for c in map(chr, itertools.chain(range(0xE000, 0xF900), range(0xF0000, 0xFFFFE)))
        if c not in text
    )
    return {mark: next(free) for mark in held}


def _format(
    text: str, path: str, only: tuple[int, int] | None, parsed: ParseResult | None
) -> Formatted:
    """`format_source` of a text that holds none of the layout's marks."""
    written = text
    text = lines_ended(text)
    if parsed is None or text is not written:
        parsed = parse(text, path)
    places = [
        p.start for d in parsed.diagnostics for p in (d.span, *(label.span for label in d.labels))
    ]
    # every invalid byte: the parser reports the first alone (`E-utf8 ... and 2 more`), and
    # an item printed from its nodes would drop the others
    places += [m.start() for m in _BAD_BYTE.finditer(text)]
    chunks = list(parsed.chunks)
    ends = [c.start - 1 for c in chunks[1:]] + [len(text)] * bool(chunks)  # to the next chunk
    # a place where one chunk ends and the next begins at once is the next one's: else the
    # first is kept as written here, and formatted once the formatter has put a line
    # break between them (formatting twice would not give the same text)
    places.sort()
    broken = [
        (c.start, c.end)
        for c, end in zip(chunks, ends, strict=True)
        if any(p != end + 1 for p in _between(places, c.start, max(end, c.end) + 1))
    ]
    module = parsed.module
    nodes = list(module.items)
    if module.main is not None:
        nodes.extend(module.main.items)
    at = _Starts(nodes)
    if parsed.diagnostics:
        broken += _uncovered(text, chunks, at, set(broken))
    if only is not None:
        outside = [
            (c.start, c.end)
            for c in chunks
            if c.kind == "item" and (c.end < only[0] or c.start > only[1])
        ]
    else:
        outside = []
    if parsed.diagnostics and _fn_main_broken(parsed, broken):
        return Formatted(written, parsed.diagnostics, len(broken))
    main = module.main.name.name if module.main is not None else "main"
    printer = _Formatter(text, main_dialect=module.main is not None)
    # an item outside the range is kept up to its end: the comments after it stand before
    # the next item, as when the whole file is formatted
    kept = set(outside) - set(broken)
    stops = {
        (c.start, c.end): max(n.span.end for n in inside)
        for c in chunks
        if (c.start, c.end) in kept and (inside := at.between(c.start, c.end))
    }
    out = printer.file(chunks, at, set(broken) | set(outside), main, stops)
    if "\r\n" in out:
        # text copied as written (an item with a syntax error, a block comment over several
        # lines, an item outside a range) kept the CRLF inside it that the output's own
        # line breaks, `\n`, do not have
        out = out.replace("\r\n", "\n")
    if out.startswith(BOM):
        # a U+FEFF after the start of the input (its own leading mark is not printed),
        # kept with an item left as written: first in the output it would be read as a
        # byte-order mark, and the error and the character would go at the next format
        out = "\n" + out
    if parsed.diagnostics and (open_end := open_at_end(text)) is not None:
        out = _ending_open(out, text, *open_end)
    return Formatted(out, parsed.diagnostics, len(broken))


def _ending_open(out: str, text: str, start: int, end: int, comment: bool) -> str:
    """`out`, the layout of `text`, with the unterminated comment (or string) `text` ends
    in at `start`..`end` as written: the layout copied its item as written, but its
    trailing white space went and a line break was added, which are the comment's text."""
    written = text[start:end].replace("\r\n", "\n")
    trimmed = written.rstrip()
    body = out.rstrip("\n")
    if not trimmed or not body.endswith(trimmed):  # not copied as written: left as laid out
        return out
    return body[: len(body) - len(trimmed)] + written + ("" if comment else "\n")


def _between(values: list[int], start: int, end: int) -> list[int]:
    """The values of the sorted `values` from `start` up to before `end`."""
    return values[bisect_left(values, start) : bisect_left(values, end)]


class _Starts:
    """Nodes found by where they start: those starting in a range of offsets, in their
    order, by a bisection (a chunk's nodes, without a pass over every node of the file)."""

    def __init__(self, nodes: list) -> None:
        self.nodes = nodes
        self.order = sorted(range(len(nodes)), key=lambda k: nodes[k].span.start)
        self.starts = [nodes[k].span.start for k in self.order]

    def between(self, start: int, end: int) -> list:
        """The nodes that start from `start` up to before `end`."""
        a, b = bisect_left(self.starts, start), bisect_left(self.starts, end)
        return [self.nodes[k] for k in sorted(self.order[a:b])]


def _uncovered(
    text: str, chunks, nodes: _Starts, broken: set[tuple[int, int]]
) -> list[tuple[int, int]]:
    """The item chunks, not `broken` yet, that hold text no node of theirs and no comment
    covers: text the printer would drop (`out` typed on a line of its own before an item
    is an error reported at the next item's first token, not in its own chunk)."""
    notes = sorted((c.start, c.end) for c in comments(text))
    note_starts = [a for a, _ in notes]
    found = []
    for c in chunks:
        if c.kind != "item" or (c.start, c.end) in broken:
            continue
        first, stop = bisect_left(note_starts, c.start), bisect_left(note_starts, c.end)
        spans = sorted(
            [(n.span.start, n.span.end) for n in nodes.between(c.start, c.end)] + notes[first:stop]
        )
        at = c.start
        for a, b in [*spans, (c.end, c.end)]:
            if text[at : max(at, a)].strip():
                found.append((c.start, c.end))
                break
            at = max(at, b)
    return found


def _fn_main_broken(parsed, broken) -> bool:
    """Whether the `fn main() {` wrapper itself is broken or unclosed: then nothing moves."""
    kinds = {c.kind for c in parsed.chunks}
    if FN_HEAD in kinds and FN_CLOSE not in kinds:
        return True
    return any((c.start, c.end) in broken for c in parsed.chunks if c.kind != "item")


class _Formatter(_Printer):
    """The kernel printer, told where the comments and the author's parentheses are."""

    def __init__(self, text: str, main_dialect: bool) -> None:
        super().__init__(main_dialect=main_dialect)
        self.text = text
        self.comments = comments(text)
        self._comment_at_end = {c.end: c.start for c in self.comments}
        self._comment_at_start = {c.start: c.end for c in self.comments}
        self.next = 0  # index of the first comment not placed yet
        self.pos = 0  # end of the last thing placed
        self.first = True  # nothing placed yet in the current list

    # -------------------------------------------------------------- the file

    def file(
        self,
        chunks,
        nodes: _Starts,
        broken: set[tuple[int, int]],
        main: str,
        stops: dict[tuple[int, int], int] | None = None,
    ) -> str:
        """The whole file, chunk by chunk in source order; `broken` chunks as written (up to
        their offset in `stops`, when they have one)."""
        stops = stops or {}
        lines: list[str] = []
        depth = 0
        previous_multi = previous_kept = False
        self.first = True
        for chunk in chunks:
            indent = INDENT * depth
            if chunk.kind == FN_CLOSE:
                inner = self._rest(chunk.start)
                lines.extend(indent + line for line in inner)
                depth -= 1
                lines.append(INDENT * depth + "}")
                self._placed(chunk.end)
                previous_multi = True
                continue
            first = self.first  # nothing placed yet in this list (the file, or fn main)
            blank = self._blank_before(chunk.start) or (previous_multi and not previous_kept)
            printed = self._leading(chunk.start)
            if (chunk.start, chunk.end) in broken:
                end = stops.get((chunk.start, chunk.end), chunk.end)
                self._skip(end)
                for c in self._trailing(end):  # kept as written too
                    end = c.end
                body = [self.text[chunk.start : end]]
                self._placed(end)
            elif chunk.kind == FN_HEAD:
                body = [f"fn {main}() {{"]
                inner = self._take(chunk.end)  # `fn /* … */ main() /* … */ {`: kept after it
                if inner:
                    body = [_trail(body[0], inner)]
                self._placed(chunk.end)
            else:
                body, end = [], chunk.start
                for node in nodes.between(chunk.start, max(chunk.end, chunk.start + 1)):
                    body.extend(self._element(node, leading=bool(body)))
                    end = max(end, node.span.end)
                self._skip(end)  # a chunk that ends the file holds the comments after it
            body = self._with_trailing(body, end if chunk.kind == "item" else chunk.end)
            multi = len(body) > 1 or any("\n" in line for line in body)
            kept = (chunk.start, chunk.end) in broken
            if not first and (blank or (multi and not (kept and previous_kept))):
                lines.append("")
            previous_kept = kept
            lines.extend(indent + line if line else line for line in printed)
            # text kept as written is not indented past where it began: its later lines
            # keep their columns, and a line no more indented than its first that begins
            # with an item's keyword would start an item of its own (the scanner's rule)
            lead = indent[: chunk.column - 1] if kept else indent
            lines.extend(lead + line if line else line for line in body)
            previous_multi = multi
            self.first = chunk.kind == FN_HEAD
            if chunk.kind == FN_HEAD:
                depth += 1
        rest = self._rest(len(self.text) + 1)
        if rest and lines and not self.first and self._blank_before_comment():
            lines.append("")
        lines.extend(rest)
        return _assemble(lines)

    # --------------------------------------------------------- placing nodes

    def lines(self, node) -> list[str]:
        return self._element(node, leading=True)

    def _element(self, node, leading: bool) -> list[str]:
        """A node's lines with the comments before, inside and after it."""
        span = node.span
        before = self._leading(span.start) if leading else []
        self.first = True
        printed = super().lines(node)
        inner = self._take(span.end)
        if inner:
            if len(printed) > 1 and printed[-1].startswith("}"):
                printed = printed[:-1] + [INDENT + c.text for c in inner] + printed[-1:]
            else:
                printed[-1] = _trail(printed[-1], inner)
        self.first = False
        self._placed(span.end)
        return before + self._with_trailing(printed, span.end)

    def _all(self, nodes) -> list[str]:
        lines: list[str] = []
        self.first = True
        for node in nodes:
            blank = not self.first and self._blank_before(node.span.start)
            printed = self.lines(node)
            if blank and lines:
                lines.append("")
            lines.extend(printed)
        return lines

    def _block(self, head: str, block: ast.Block) -> list[str]:
        inner = self._all(block.body)
        inner.extend(_own(c) for c in self._take(block.span.end))
        return self._braced(head, inner)

    @staticmethod
    def _braced(head: str, inner: list[str]) -> list[str]:
        heads = []
        while inner and inner[0].startswith(_HEAD):
            heads.append(inner[0][1:])
            inner = inner[1:]
        lines = _Printer._braced(head, inner)
        if heads:
            lines[0] = _trail(lines[0], heads)
        return lines

    def _operand(self, e: ast.Expr, minimum: int) -> str:
        if self._parenthesized(e):
            return f"({self.expr(e)})"
        return super()._operand(e, minimum)

    def _parenthesized(self, e: ast.Expr) -> bool:
        """Whether the author wrote `e` in parentheses of its own: `(` before, `)` after
        (white space and comments between: `(a + b /* c */)` keeps its parentheses as
        `(a + b)` does; the text is not copied: that made a file's formatting
        quadratic)."""
        text = self.text
        ends, starts = self._comment_at_end, self._comment_at_start
        before = e.span.start - 1
        while before >= 0:
            if before + 1 in ends:  # first: a `//` comment's end takes its trailing blanks
                before = ends[before + 1] - 1
            elif text[before].isspace():
                before -= 1
            else:
                break
        after = e.span.end
        while after < len(text):
            if text[after].isspace():
                after += 1
            elif after in starts:
                after = starts[after]
            else:
                break
        return before >= 0 and text[before] == "(" and after < len(text) and text[after] == ")"

    # -------------------------------------------------------------- comments

    def _leading(self, start: int) -> list[str]:
        """The comments before `start` not placed yet, each on its own line (blank lines
        between them kept), or the one that ends the line above (`{ // …`)."""
        lines: list[str] = []
        while self.next < len(self.comments) and self.comments[self.next].start < start:
            c = self.comments[self.next]
            if not c.own_line and self.first and not lines:
                lines.append(_HEAD + c.text)
            else:
                if lines and has_blank_line(self.text[self.pos : c.start]):
                    lines.append("")
                lines.append(c.text)
            self.next += 1
            self.pos = c.end
        if lines and lines[-1] != "" and has_blank_line(self.text[self.pos : start]):
            if not lines[-1].startswith(_HEAD):
                lines.append("")
        return lines

    def _blank_before(self, start: int) -> bool:
        """Whether a blank line stands between the last thing placed and what begins at
        `start` (or the first comment before it)."""
        if self.next < len(self.comments) and self.comments[self.next].start < start:
            start = self.comments[self.next].start
        return has_blank_line(self.text[self.pos : start])

    def _blank_before_comment(self) -> bool:
        if self.next < len(self.comments):
            return has_blank_line(self.text[self.pos : self.comments[self.next].start])
        return False

    def _take(self, end: int) -> list[Comment]:
        """The comments before `end` not placed yet."""
        taken = []
        while self.next < len(self.comments) and self.comments[self.next].start < end:
            taken.append(self.comments[self.next])
            self.next += 1
        return taken

    def _rest(self, end: int) -> list[str]:
        """The comments before `end` not placed yet, as own lines: before a closing `}`."""
        lines: list[str] = []
        for c in self._take(end):
            if lines and has_blank_line(self.text[self.pos : c.start]):
                lines.append("")
            lines.append(c.text)
            self.pos = c.end
        return lines

    def _skip(self, end: int) -> None:
        """Mark the comments before `end` as placed: they are inside text kept as written."""
        self._take(end)
        self._placed(end)

    def _trailing(self, end: int) -> list[Comment]:
        """The comments that follow `end` on its source line, taken."""
        trailing = []
        while self.next < len(self.comments):
            c = self.comments[self.next]
            if c.start < end or self.text[end : c.start].strip() or c.own_line:
                break
            trailing.append(c)
            self.next += 1
            end = c.end
        return trailing

    def _with_trailing(self, lines: list[str], end: int) -> list[str]:
        """`lines` with the comments that follow `end` on its source line appended."""
        trailing = self._trailing(end)
        if trailing:
            end = trailing[-1].end
            lines = lines[:-1] + [_trail(lines[-1], trailing)]
            self._placed(end)
        return lines

    def _placed(self, end: int) -> None:
        self.pos = max(self.pos, end)


def _own(c: Comment) -> str:
    return c.text


def _trail(line: str, comments: list) -> str:
    """`line` with trailing comments (`Comment`s, or texts from a `{ // …` head)."""
    texts = [c if isinstance(c, str) else c.text for c in comments]
    column = comments[0].column if isinstance(comments[0], Comment) else -1
    if _TRAIL in line:  # a line that has one already
        return line + _NEXT + _NEXT.join(texts)
    return f"{line}{_TRAIL}{column}{_TRAIL}{_NEXT.join(texts)}"


def _joined(comments: str) -> str:
    """The trailing comments of one line (`_NEXT` between them) as they are written: a `//`
    comment runs to the end of the line, so the `/* */` ones go before the `//` ones (one
    after a `//` would be inside it, and its lines after the first would be code)."""
    texts = comments.split(_NEXT)
    return " ".join(sorted(texts, key=lambda t: t.startswith("//")))


def _assemble(lines: list[str]) -> str:
    """The final text: head comments merged, trailing comments placed and aligned."""
    out: list[str] = []
    for line in lines:
        stripped = line.lstrip(" ")
        if stripped.startswith(_HEAD):  # nowhere to merge it: a line of its own
            line = line[: len(line) - len(stripped)] + stripped[1:]
        out.append(line)
    result: list[str] = []
    i = 0
    while i < len(out):
        if _TRAIL not in out[i]:
            result.append(out[i])
            i += 1
            continue
        j = i
        while j < len(out) and _TRAIL in out[j] and _indent(out[j]) == _indent(out[i]):
            j += 1
        result.extend(_align([out[k].split(_TRAIL) for k in range(i, j)]))
        i = j
    text = "\n".join(result).rstrip("\n")
    return text + "\n" if text else ""


def _align(run: list[list[str]]) -> list[str]:
    """Lines with trailing comments; those the author wrote at one column stay aligned."""
    lines: list[str] = []
    i = 0
    while i < len(run):
        j = i + 1
        while j < len(run) and run[j][1] == run[i][1] and run[i][1] != "-1":
            j += 1
        width = max(len(code.rsplit("\n", 1)[-1]) for code, _, _ in run[i:j]) if j - i > 1 else 0
        for code, _, comment in run[i:j]:
            last = len(code.rsplit("\n", 1)[-1])
            lines.append(code + " " * (max(width - last, 0) + 1) + _joined(comment))
        i = j
    return lines


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))
