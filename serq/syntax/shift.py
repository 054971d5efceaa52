"""Moving the spans of one file in a tree of nodes: what a unit's parse needs when the unit
moved (`serq.syntax.layout`), and what the incremental analysis needs to carry what it
kept to where the text now is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any

from serq.diagnostics import Span


class Shift:
    """Moves the spans of one file found in any node (a frozen dataclass, at any depth) by an
    offset and a number of lines; columns move only on `first_line`, the line the moved text
    begins on (the rest of that line moves sideways with it).

    A 2 MB document moves some 10^6 nodes when a line is inserted near its top, so each
    class gets a builder made once (`_builder`) that fills a new node's slots directly,
    past the frozen classes' `__init__` and checks (the values are already checked)."""

    __slots__ = ("file", "offset", "lines", "first_line", "columns")

    def __init__(self, file: str, offset: int, lines: int, first_line: int, columns: int) -> None:
        self.file = file
        self.offset = offset
        self.lines = lines
        self.first_line = first_line
        self.columns = columns

    @classmethod
    def between(
        cls, file: str, start: int, line: int, column: int, to: int, to_line: int, to_column: int
    ) -> Shift:
        """The move of text beginning at `start`, `line`:`column` to `to`, `to_line`:`to_column`."""
        return cls(file, to - start, to_line - line, line, to_column - column)

    def span(self, s: Span) -> Span:
        if s.file != self.file:
            return s
        first, columns = self.first_line, self.columns
        moved = _new(Span)
        _SPAN_FILE(moved, s.file)
        _SPAN_START(moved, s.start + self.offset)
        _SPAN_END(moved, s.end + self.offset)
        _SPAN_LINE(moved, s.line + self.lines)
        _SPAN_COLUMN(moved, s.column + columns if s.line == first else s.column)
        _SPAN_END_LINE(moved, s.end_line + self.lines)
        _SPAN_END_COLUMN(moved, s.end_column + columns if s.end_line == first else s.end_column)
        return moved

    def node(self, value):
        """`value` with every span of the file in it moved."""
        kind = type(value)
        if kind in _ATOMS:
            return value
        if kind is Span:
            return self.span(value)
        if kind is tuple:
            return tuple([self.node(v) for v in value]) if value else value
        build = _BUILDERS.get(kind)
        if build is None:
            if not is_dataclass(value) or isinstance(value, type):
                return value
            build = _BUILDERS[kind] = _builder(kind)
        return build(value, self.node, self.span)


_new = object.__new__
_ATOMS = frozenset({str, int, float, bool, type(None)})
(
    _SPAN_FILE,
    _SPAN_START,
    _SPAN_END,
    _SPAN_LINE,
    _SPAN_COLUMN,
    _SPAN_END_LINE,
    _SPAN_END_COLUMN,
) = (Span.__dict__[f.name].__set__ for f in fields(Span))
_BUILDERS: dict[type, Callable[..., Any]] = {}
_ATOM_TYPES = ("str", "float", "int", "bool")


def _builder(cls: type) -> Callable[..., Any]:
    """A function `build(n, node, span)` that copies a `cls` node `n`: a field declared a
    string or a number as it is, one declared a `Span` through `span`, any other through
    `node`."""
    declared = [(f.name, str(f.type)) for f in fields(cls)]
    slotted = all(isinstance(cls.__dict__.get(n), type(Span.start)) for n, _ in declared)
    env: dict[str, Any] = {"new": _new, "cls": cls, "setattr": object.__setattr__}
    lines = ["def build(n, node, span):", "    o = new(cls)"]
    for i, (name, annotation) in enumerate(declared):
        if annotation in _ATOM_TYPES:
            value = f"n.{name}"
        elif annotation == "Span":
            value = f"span(n.{name})"
        else:
            value = f"node(n.{name})"
        if slotted:
            env[f"s{i}"] = cls.__dict__[name].__set__
            lines.append(f"    s{i}(o, {value})")
        else:
            lines.append(f"    setattr(o, {name!r}, {value})")
    lines.append("    return o")
    exec("\n".join(lines), env)  # noqa: S102 (source made here from a dataclass's fields)
    return env["build"]
