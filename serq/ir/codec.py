"""The IR as JSON: `to_json(program)` and `from_json(text)`, with from_json(to_json(p)) == p.

The encoding follows the dataclasses' fields and type annotations, so a new IR class
needs no code here:

- an object is a JSON object of its fields; where a field may hold one of several
  classes (an expression, a statement, a stage kind) it is tagged by its class name,
  `{"Binary": {"op": "+", "left": ..., "right": ...}}`, a tagged class with one field
  tags that field's value (`{"Num": 0.5}`, `{"Attr": 9}`), and a class without fields is
  its name alone (`"Lru"`);
- a tuple is a list, None is null, an infinite float is the string "inf" or "-inf";
- an origin span is `[file, start, end, line, column, end_line, end_column]` with
  `file` an index into the top-level `"files"` list.

The top level is `{"version": IR_VERSION, "files": [...], ...Program's fields}`;
`from_json` refuses another version.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from functools import cache
from typing import Any, Union

from serq.diagnostics import Span
from serq.ir import expr as _expr
from serq.ir import program as _program
from serq.ir.program import Program

IR_VERSION = 1

_CLASSES: dict[str, type] = {
    cls.__name__: cls
    for module in (_expr, _program)
    for cls in vars(module).values()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__
}


class IRFormatError(ValueError):
    """JSON that is not a serialised IR program of this version."""


def to_json(program: Program, *, indent: int | None = None) -> str:
    """The JSON text of `program`: one line, or with `indent` one value a line where it
    does not fit in `WIDTH` columns."""
    files: dict[str, int] = {}
    body = _encode(program, Program, files)
    data = {"version": IR_VERSION, "files": list(files), **body}
    if indent is None:
        return json.dumps(data)
    return _layout(data, indent, 0)


def from_json(text: str) -> Program:
    """The program serialised in `text`.

    Raises:
        IRFormatError: `text` is not JSON of an IR program of version `IR_VERSION`.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise IRFormatError(f"not JSON: {e}") from None
    if not isinstance(data, dict):
        raise IRFormatError("an IR program is a JSON object")
    version = data.pop("version", None)
    if version != IR_VERSION:
        raise IRFormatError(f"IR version {version!r}, expected {IR_VERSION}")
    files = data.pop("files", None)
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise IRFormatError("`files` is not a list of file names")
    return _decode_object(data, Program, files)


WIDTH = 100  # the indented layout's line width


def _layout(value: Any, indent: int, depth: int, lead: int = 0) -> str:
    """`value` at nesting `depth`, after `lead` columns of a key on its line."""
    flat = json.dumps(value)
    fits = lead + len(flat) + indent * depth + 1 <= WIDTH  # 1: a comma after it
    if fits or not isinstance(value, dict | list) or not value:
        return flat
    pad = " " * (indent * (depth + 1))
    end = " " * (indent * depth)
    if isinstance(value, list):
        inner = [pad + _layout(v, indent, depth + 1) for v in value]
        return "[\n" + ",\n".join(inner) + "\n" + end + "]"
    inner = []
    for k, v in value.items():
        key = json.dumps(k) + ": "
        inner.append(pad + key + _layout(v, indent, depth + 1, len(key)))
    return "{\n" + ",\n".join(inner) + "\n" + end + "}"


# ---------------------------------------------------------------------- encode


def _encode(value: Any, hint: Any, files: dict[str, int]) -> Any:
    if value is None:
        return None
    if isinstance(value, Span):
        index = files.setdefault(value.file, len(files))
        return [
            index,
            value.start,
            value.end,
            value.line,
            value.column,
            value.end_line,
            value.end_column,
        ]
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if math.isnan(value):
            raise ValueError("NaN in the IR")
        return value
    if isinstance(value, tuple):
        item = _item_hint(hint)
        return [_encode(v, item, files) for v in value]
    if dataclasses.is_dataclass(value):
        cls = type(value)
        hints = _hints(cls)
        body = {
            f.name: _encode(getattr(value, f.name), hints[f.name], files)
            for f in dataclasses.fields(cls)
        }
        if _tagged(hint):
            if not body:
                return cls.__name__
            if len(body) == 1:
                (only,) = body.values()
                return {cls.__name__: only}
            return {cls.__name__: body}
        return body
    raise TypeError(f"cannot encode {type(value).__name__} in the IR")


# ---------------------------------------------------------------------- decode


def _decode(value: Any, hint: Any, files: list[str]) -> Any:
    choices = _choices(hint)
    if value is None:
        if type(None) in choices:
            return None
        raise IRFormatError(f"null where {_name(hint)} goes")
    choices = [c for c in choices if c is not type(None)]
    if not _tagged(hint):
        return _decode_one(value, choices[0], files)
    if isinstance(value, str) and value in _CLASSES and _CLASSES[value] in choices:
        return _decode_object({}, _CLASSES[value], files)
    if isinstance(value, dict) and len(value) == 1:
        ((tag, body),) = value.items()
        cls = _CLASSES.get(tag)
        if cls in choices:
            names = [f.name for f in dataclasses.fields(cls)]
            if len(names) == 1:
                body = {names[0]: body}
            return _decode_object(body, cls, files)
    raise IRFormatError(f"{_short(value)} is not one of {_name(hint)}")


def _decode_one(value: Any, cls: Any, files: list[str]) -> Any:
    if cls is float:
        if value == "inf":
            return math.inf
        if value == "-inf":
            return -math.inf
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif cls is int or cls is str or cls is bool:
        if type(value) is cls:
            return value
    elif cls is Span:
        return _span(value, files)
    elif typing.get_origin(cls) is tuple:
        if isinstance(value, list):
            item = _item_hint(cls)
            return tuple(_decode(v, item, files) for v in value)
    elif dataclasses.is_dataclass(cls):
        return _decode_object(value, cls, files)
    raise IRFormatError(f"{_short(value)} is not {_name(cls)}")


def _decode_object(body: Any, cls: type, files: list[str]) -> Any:
    if not isinstance(body, dict):
        raise IRFormatError(f"{_short(body)} is not a {cls.__name__}")
    hints = _hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    if set(body) != set(names):
        missing = sorted(set(names) - set(body))
        extra = sorted(set(body) - set(names))
        raise IRFormatError(f"{cls.__name__}: missing fields {missing}, unknown fields {extra}")
    return cls(**{n: _decode(body[n], hints[n], files) for n in names})


def _span(value: Any, files: list[str]) -> Span:
    if (
        isinstance(value, list)
        and len(value) == 7
        and all(type(v) is int for v in value)
        and 0 <= value[0] < len(files)
    ):
        try:
            return Span(files[value[0]], *value[1:])
        except ValueError as e:
            raise IRFormatError(str(e)) from None
    raise IRFormatError(f"{_short(value)} is not an origin span")


# ----------------------------------------------------------------- type hints


@cache
def _hints(cls: type) -> dict[str, Any]:
    module = _expr if cls.__module__ == _expr.__name__ else _program
    return typing.get_type_hints(cls, vars(module))


def _choices(hint: Any) -> tuple[Any, ...]:
    if typing.get_origin(hint) in (Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _tagged(hint: Any) -> bool:
    """Whether a value of type `hint` is tagged by its class: it may be one of several."""
    return len([c for c in _choices(hint) if c is not type(None)]) > 1


def _item_hint(hint: Any) -> Any:
    for choice in _choices(hint):
        if typing.get_origin(choice) is tuple:
            return typing.get_args(choice)[0]
    raise TypeError(f"{hint} is not a tuple type")


def _name(hint: Any) -> str:
    return " | ".join(getattr(c, "__name__", str(c)) for c in _choices(hint))


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
