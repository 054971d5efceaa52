"""Renderings of a `Diagnostic`: full (the rustc/ruff layout), concise (one line) and JSON.

Full output puts the primary span under `^` carets and each label under `-` dashes:

    error[E-unknown-name]: unknown pool `kvv`
     --> prog.sq:3:8
      |
    1 | pool kv { capacity 4 }
      |      -- declared here
    2 | stage s {
    3 |   hold kvv 1
      |        ^^^ not declared
      |
      = help: did you mean `kv`?

A label whose span equals the primary span gives the text after the carets. A span over several
lines is underlined to the end of its first line. Labels in another file get their own `:::`
header; when no source text is given for a file, its locations are printed with their label
texts and no source lines. Tabs are expanded to `TAB_WIDTH` columns and control characters are
shown as control pictures, so carets line up and no raw escape reaches the terminal. The same
holds for the texts serq writes around them (message, labels, notes, help), which may quote a
file's name. A file name is shown as it is unless it holds a character that would break the
`FILE:LINE:COLUMN` line or reach the terminal raw, or begins with `"`: then it is shown as a
JSON string (`shown_file`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, TextIO

from serq.diagnostics.span import LineIndex, Span

if TYPE_CHECKING:
    from rich.style import Style

    from serq.diagnostics import Diagnostic

TAB_WIDTH = 4

_SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow", "note": "bold cyan"}
_GUTTER = "bold blue"  # line numbers, `|`, `-->`, `=`
_SECONDARY = "bold blue"  # `-` underlines and their texts
_SUBNOTE = "bold cyan"  # `note:` and `help:`
_MESSAGE = "bold"

_Line = list[tuple[str, str]]  # (text, rich style or "")


@dataclass(frozen=True, slots=True)
class _Mark:
    span: Span
    text: str
    primary: bool


def render_full(
    diag: Diagnostic,
    source: str | None = None,
    *,
    color: bool = False,
    sources: Mapping[str, str] | None = None,
) -> str:
    """Return `diag` in the rustc/ruff layout, drawing lines from `source` (the text of the
    diagnostic's file) and `sources` (texts by file, for labels); ANSI colors if `color`."""
    severity = diag.severity.label
    style = _SEVERITY_STYLE[severity]
    marks = _marks(diag)
    indexes = {m.span.file: _index_for(m.span.file, diag, source, sources) for m in marks}
    visible = [m for m in marks if _is_visible(m, indexes[m.span.file])]
    width = max((len(str(m.span.line)) for m in visible), default=1)
    pad = " " * width

    message = _safe(diag.message)
    out: list[_Line] = [[(f"{severity}[{diag.code}]", style), (f": {message}", _MESSAGE)]]
    for file in dict.fromkeys(m.span.file for m in marks):  # primary file first
        group = [m for m in marks if m.span.file == file]
        seen = {id(m) for m in visible}  # by identity: `in` a list compares every field
        shown = [m for m in group if id(m) in seen]
        hidden = [m for m in group if id(m) not in seen]
        out.extend(_location(m, pad, m.text) for m in hidden if m.primary)
        if shown:
            lead = next((m for m in shown if m.primary), shown[0])
            out.append(_location(lead, pad, ""))
            out.append([(pad + " |", _GUTTER)])
            out.extend(_snippet(indexes[file], shown, pad, style))  # type: ignore[arg-type]
        out.extend(_location(m, pad, m.text) for m in hidden if not m.primary)

    trailer = [("note", _safe(note)) for note in diag.notes]
    if diag.help is not None:
        trailer.append(("help", _safe(diag.help)))
    if diag.fix is not None and diag.fix.title != diag.help:
        trailer.append(("help", _safe(diag.fix.title)))
    if trailer:
        out.append([(pad + " |", _GUTTER)])
        for kind, text in trailer:
            first, *rest = text.split("\n")
            out.append([(pad + " =", _GUTTER), (f" {kind}:", _SUBNOTE), (f" {first}", "")])
            out.extend([(f"{pad}   {' ' * len(kind)}  {line}", "")] for line in rest)
    return _join(out, color)


def render_concise(diag: Diagnostic) -> str:
    """Return `diag` as one line: `file:line:column: severity[code]: message`."""
    span = diag.span
    message = _safe(" ".join(diag.message.splitlines()))
    where = f"{shown_file(span.file)}:{span.line}:{span.column}"
    return f"{where}: {diag.severity.label}[{diag.code}]: {message}"


def to_json(diag: Diagnostic) -> dict[str, Any]:
    """Return `diag` as a JSON-ready dict with a fixed key order."""
    fix = diag.fix
    return {
        "code": diag.code,
        "severity": diag.severity.label,
        "message": diag.message,
        "span": _span_json(diag.span),
        "labels": [{"span": _span_json(label.span), "text": label.text} for label in diag.labels],
        "notes": list(diag.notes),
        "help": diag.help,
        "fix": None
        if fix is None
        else {
            "title": fix.title,
            "applicability": fix.applicability,
            "edits": [
                {"span": _span_json(edit.span), "replacement": edit.replacement}
                for edit in fix.edits
            ],
        },
    }


def render_json(diags: Iterable[Diagnostic]) -> str:
    """Return `diags` as a JSON list, indented by 2, keys in a fixed order."""
    return json.dumps([to_json(d) for d in diags], indent=2, ensure_ascii=False)


def print_diagnostics(
    diags: Iterable[Diagnostic],
    sources: Mapping[str, str],
    *,
    file: TextIO | None = None,
    color: bool | None = None,
) -> None:
    """Print `diags` in order, each in full with a blank line after, then a summary line, to
    `file` (stderr by default); `color` None means color when `file` is a tty, NO_COLOR is
    unset and TERM is not `dumb` (the report's rule: rich's)."""
    stream = sys.stderr if file is None else file
    if color is None:
        isatty = getattr(stream, "isatty", None)
        plain = os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb"
        color = bool(isatty and isatty()) and not plain
    ordered = sorted(diags, key=lambda d: d.sort_key())
    if not ordered:
        return
    for diag in ordered:
        text = render_full(diag, sources.get(diag.span.file), color=color, sources=sources)
        print(text, file=stream)
        print(file=stream)
    print(_summary(ordered, color), file=stream)


def _summary(diags: list[Diagnostic], color: bool) -> str:
    counts = Counter(d.severity for d in diags)
    worst = max(counts)
    parts = []
    for severity in sorted(counts, reverse=True):
        count = counts[severity]
        parts.append(f"{count} {severity.label}{'' if count == 1 else 's'}")
    files = sorted({d.span.file for d in diags})
    where = shown_file(files[0]) if len(files) == 1 else f"{len(files)} files"
    line = [(worst.label, _SEVERITY_STYLE[worst.label]), (f": {', '.join(parts)} in {where}", "")]
    return _join([line], color)


def _marks(diag: Diagnostic) -> list[_Mark]:
    """Return the primary mark, then the labels, ordered by file (primary file first) and line."""
    primary_text = next((label.text for label in diag.labels if label.span == diag.span), "")
    marks = [_Mark(diag.span, primary_text, True)]
    marks += [
        _Mark(label.span, label.text, False) for label in diag.labels if label.span != diag.span
    ]
    files = list(dict.fromkeys(m.span.file for m in marks))
    return sorted(
        marks, key=lambda m: (files.index(m.span.file), m.span.line, m.span.column, not m.primary)
    )


def _index_for(
    file: str, diag: Diagnostic, source: str | None, sources: Mapping[str, str] | None
) -> LineIndex | None:
    text = source if file == diag.span.file and source is not None else None
    if text is None and sources is not None:
        text = sources.get(file)
    return None if text is None else _index(text)


@lru_cache(maxsize=16)
def _index(text: str) -> LineIndex:
    """Return the line index of `text`, cached so that many diagnostics of one file share it."""
    return LineIndex(text)


def _is_visible(mark: _Mark, index: LineIndex | None) -> bool:
    return index is not None and mark.span.line <= index.line_count


def _location(mark: _Mark, pad: str, text: str) -> _Line:
    span = mark.span
    arrow = "-->" if mark.primary else ":::"
    line = [(pad + arrow, _GUTTER), (f" {shown_file(span.file)}:{span.line}:{span.column}", "")]
    if text:
        line.append((f": {_safe(text)}", ""))
    return line


def _snippet(index: LineIndex, marks: list[_Mark], pad: str, style: str) -> list[_Line]:
    """Return the numbered source lines of `marks` with an underline line for each mark."""
    out: list[_Line] = []
    previous = 0
    for number in sorted({m.span.line for m in marks}):
        if previous and number - previous == 2:  # one skipped line: show it rather than `...`
            out.append(_source_line(index, previous + 1, len(pad)))
        elif previous and number - previous > 2:
            out.append([("...", _GUTTER)])
        out.append(_source_line(index, number, len(pad)))
        raw = index.line_text(number)
        for mark in (m for m in marks if m.span.line == number):
            out.append(_underline(raw, mark, pad, style if mark.primary else _SECONDARY))
        previous = number
    return out


def _source_line(index: LineIndex, number: int, width: int) -> _Line:
    text = _display(index.line_text(number))
    line = [(f"{number:>{width}} |", _GUTTER)]
    if text:
        line.append((f" {text}", ""))
    return line


def _underline(raw: str, mark: _Mark, pad: str, style: str) -> _Line:
    span = mark.span
    start = min(span.column - 1, len(raw))
    end = min(span.end_column - 1, len(raw)) if span.end_line == span.line else len(raw)
    from rich.cells import cell_len  # rich loads only when a diagnostic is drawn

    before = cell_len(_display(raw[:start]))
    count = max(1, cell_len(_display(raw[: max(start, end)])) - before)
    marker = ("^" if mark.primary else "-") * count
    return [
        (pad + " |", _GUTTER),
        (" " * (before + 1), ""),
        (f"{marker} {_safe(mark.text)}" if mark.text else marker, style),
    ]


def _display(text: str) -> str:
    """Return `text` with tabs expanded and control characters replaced by control pictures."""
    if text.isascii() and text.isprintable():  # fast path: nothing to change
        return text
    from rich.cells import cell_len

    out = []
    column = 0
    for char in text:
        if char == "\t":
            spaces = TAB_WIDTH - column % TAB_WIDTH
            out.append(" " * spaces)
            column += spaces
            continue
        char = _picture(char)
        out.append(char)
        column += cell_len(char)
    return "".join(out)


def _picture(char: str) -> str:
    """`char` as a terminal is given it: a C0 control or DEL as its control picture, a C1
    control (U+009B is an escape to some terminals) or a lone surrogate (a byte that is not
    UTF-8) as U+FFFD, a byte-order mark as nothing, any other character as it is."""
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if 0x80 <= code <= 0x9F or 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return "" if code == 0xFEFF else char


# what a file name may not show raw: C0 and C1 controls and DEL (a newline would break its
# position in two, an escape would reach the terminal), line and paragraph separators, and
# the lone surrogates that stand for bytes that are not UTF-8
_UNSHOWN = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_ESCAPED = re.compile(r'["\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]')  # in a quoted name
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def shown_file(name: str) -> str:
    """`name` as a diagnostic's position shows it: as it is, or, when it holds a character
    of `_UNSHOWN` or begins with `"`, as a JSON string (`"a\\nb.sq"`), so that the position
    still reads as `FILE:LINE:COLUMN` and no control character reaches the terminal."""
    if not name.startswith('"') and not _UNSHOWN.search(name):
        return name
    return '"' + _ESCAPED.sub(_escape, name) + '"'


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _safe(text: str) -> str:
    """`text` (a message, a label, a note or a help, which may quote a file's name) with
    every character but the newline shown as `_picture` shows it (a tab as its control
    picture, where a source line's is expanded), so no control reaches the terminal raw."""
    if text.isascii() and text.isprintable():
        return text
    return "\n".join("".join(map(_picture, line)) for line in text.split("\n"))


@cache
def _style(name: str) -> Style:
    from rich.style import Style

    return Style.parse(name)


def _join(lines: list[_Line], color: bool) -> str:
    """Join styled lines into text, with ANSI escapes (standard colors) only when `color`."""
    if not color:
        return "\n".join("".join(text for text, _ in line) for line in lines)
    from rich.color import ColorSystem

    return "\n".join(
        "".join(
            _style(style).render(text, color_system=ColorSystem.STANDARD)
            if style and text
            else text
            for text, style in line
        )
        for line in lines
    )


def _span_json(span: Span) -> dict[str, Any]:
    return {
        "file": span.file,
        "start": {"line": span.line, "column": span.column, "offset": span.start},
        "end": {"line": span.end_line, "column": span.end_column, "offset": span.end},
    }
