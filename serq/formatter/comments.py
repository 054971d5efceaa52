"""The comments of a serQ file, found the way the item scanner finds them.

The parser drops comments; the formatter needs them back in their places. A
comment is either on a line of its own (`own_line`) or after code on the same
line (a trailing comment), and keeps the column it was written at, so that
comments an author aligned stay aligned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKENS = re.compile(r'//[^\n]*|/\*[\s\S]*?\*/|"[^"\n]*"?')
_OPEN = re.compile(r'//[^\n]*|/\*[\s\S]*?(?:\*/|$(?![\s\S]))|"[^"\n]*"?')


@dataclass(frozen=True, slots=True)
class Comment:
    """`text[start:end]`, a `//` or `/* */` comment; `column` counts from 0."""

    start: int
    end: int
    text: str
    own_line: bool
    column: int


def comments(text: str) -> list[Comment]:
    """Every comment of `text` in order, strings skipped (a `//` in a path is no comment)."""
    found: list[Comment] = []
    for m in _TOKENS.finditer(text):
        if m.group().startswith('"'):
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        own_line = not text[line_start : m.start()].strip()
        body = m.group().rstrip() if m.group().startswith("//") else m.group()
        found.append(Comment(m.start(), m.end(), body, own_line, m.start() - line_start))
    return found


def open_at_end(text: str) -> tuple[int, int, bool] | None:
    """The span of the unterminated `/*` comment, or string on the last line, that `text`
    ends in, and whether it is a comment; None when it ends in neither. What such a file
    says from there is the comment's or the string's text, up to the end of the file (a
    comment) or of its line (a string)."""
    last = None
    for last in _OPEN.finditer(text):  # noqa: B007 (the last match is the one read)
        pass
    if last is None:
        return None
    token = last.group()
    if token.startswith("/*") and (len(token) < 4 or not token.endswith("*/")):
        return last.start(), len(text), True
    if token.startswith('"') and (len(token) == 1 or not token.endswith('"')):
        if not text[last.end() :].strip():
            return last.start(), last.end(), False
    return None


def has_blank_line(text: str) -> bool:
    """Whether `text`, white space between two things, holds an empty line."""
    return text.count("\n") >= 2
