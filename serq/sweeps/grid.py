"""The points of a sweep: the product of the values each swept `let` takes.

`serq sweep --set NAME=SPEC` gives one `let` its values. SPEC is a comma-separated list
of expressions (`1,2,4`, `0.5,inf`, `2*B,3*B`; commas inside parentheses belong to the
expression) or a range `START:STOP:STEP` of numbers. A range is computed in decimal
arithmetic, so every value is the number as written (0.5:0.9:0.1 gives 0.5, 0.6, 0.7,
0.8, 0.9, never 0.7000000000000001) and STOP is included when it lies on the grid; a
negative STEP counts down. The values are kept as text, which is what `--set` passes to
`serq.api.override_lets`, and as numbers for the results table.

The grid is the product of the swept lets in the order they were given, the last one
varying fastest (like nested loops, the first outermost).
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation, localcontext

from serq.diagnostics import Diagnostic, Span, codes, spelling

MAX_RANGE_VALUES = 100_000  # a range with more values than this is a typo, not a sweep
MAX_RUNS = 1_000_000  # so is a sweep of more runs (points × seeds) than this
REPEATED_HELP = "give all its values in one --set: NAME=V1,V2 or NAME=START:STOP:STEP"
_LARGEST = Decimal(sys.float_info.max)  # a range's numbers are finite as floats too

Value = int | float | str


@dataclass(frozen=True, slots=True)
class Axis:
    """One swept `let`: its name and its values, as the text given to `--set` and as the
    number (or, for an expression that is not a plain number, the text) in the table."""

    name: str
    texts: tuple[str, ...]
    values: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class Point:
    """One point of the grid: its index in grid order and the value of each swept let."""

    index: int
    sets: tuple[tuple[str, str], ...]  # (name, text) as `--set` gives it
    values: tuple[tuple[str, Value], ...]  # (name, value) for the table


def spec_source(name: str, spec: str) -> tuple[str, str, int]:
    """The file name and text a diagnostic on `--set name=spec` points into, and the offset
    of `spec` in that text."""
    prefix = f"{name}="
    return spelling.source_name("set", name), prefix + spec, len(prefix)


def parse_axis(
    name: str, spec: str | float | int | Sequence[str | float | int]
) -> Axis | Diagnostic:
    """The values `spec` gives the let `name`: a list or range text (see the module
    docstring), one number, or a sequence of numbers and expression texts."""
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return _axis(name, [_number_text(spec)])
    if not isinstance(spec, str):
        items = [_number_text(v) if not isinstance(v, str) else v.strip() for v in spec]
        if not items or any(not item for item in items):
            return _error(name, str(spec), 0, len(str(spec)), codes.PARSE, "an empty value")
        return _axis(name, items)
    parts = _split(spec, ",")
    offsets = list(itertools.accumulate([0] + [len(p) + 1 for p in parts[:-1]]))
    texts: list[str] = []
    for part, offset in zip(parts, offsets, strict=True):
        stripped = part.strip()
        if not stripped:
            return _error(name, spec, offset, offset + len(part), codes.PARSE, "an empty value")
        if len(_split(part, ":")) > 1:
            expanded = _range(name, spec, part, offset)
            if isinstance(expanded, Diagnostic):
                return expanded
            texts.extend(expanded)
        else:
            texts.append(stripped)
    return _axis(name, texts)


def parse_axes(
    sets: Mapping[str, object] | Iterable[tuple[str, object]],
) -> list[Axis] | list[Diagnostic]:
    """The axes of the `--set` pairs `sets` (a let given twice is an error), or the
    diagnostics of the ones that cannot be read."""
    pairs = list(sets.items()) if isinstance(sets, Mapping) else list(sets)
    repeated = repeated_sets(pairs)[0]
    if repeated:
        return repeated
    axes: list[Axis] = []
    errors: list[Diagnostic] = []
    for name, spec in pairs:
        axis = parse_axis(name, spec)  # type: ignore[arg-type]
        if isinstance(axis, Diagnostic):
            errors.append(axis)
        else:
            axes.append(axis)
    return errors if errors else axes


def repeated_sets(pairs: Sequence[tuple[str, object]]) -> tuple[list[Diagnostic], dict[str, str]]:
    """The errors of a let swept by more than one `--set` (as for every command that takes
    `--set`, with a help that says how to sweep several values) and their texts."""
    from serq.api import repeated_overrides

    return repeated_overrides("--set", pairs, help_=REPEATED_HELP)


def points(axes: Sequence[Axis]) -> list[Point]:
    """Every point of the product of `axes` in grid order (the last axis fastest); one
    point without sets when nothing is swept."""
    names = [axis.name for axis in axes]
    choices = [range(len(axis.texts)) for axis in axes]
    grid = []
    for index, picks in enumerate(itertools.product(*choices)):
        chosen = list(zip(names, picks, strict=True))
        sets = tuple((n, axes[i].texts[k]) for i, (n, k) in enumerate(chosen))
        values = tuple((n, axes[i].values[k]) for i, (n, k) in enumerate(chosen))
        grid.append(Point(index, sets, values))
    return grid


def spec_sources(sets: Mapping[str, object] | Iterable[tuple[str, object]]) -> dict[str, str]:
    """The texts the grid's diagnostics point into, by file name."""
    pairs = list(sets.items()) if isinstance(sets, Mapping) else list(sets)
    return {spec_source(n, str(s))[0]: spec_source(n, str(s))[1] for n, s in pairs}


def table_value(text: str) -> Value:
    """The value of `text` in the results table: an int or float when it is a plain number
    (`inf` included), else the text itself."""
    try:
        number = Decimal(text)
    except InvalidOperation:
        return text
    if number.is_nan():
        return text
    if number.is_infinite():
        return float(number)
    if number == number.to_integral_value() and "." not in text and "e" not in text.lower():
        return int(number)
    return float(number)


def _axis(name: str, texts: list[str]) -> Axis:
    return Axis(name, tuple(texts), tuple(table_value(t) for t in texts))


def _range(name: str, spec: str, part: str, offset: int) -> list[str] | Diagnostic:
    """The texts of the range `part` (at `offset` in `spec`)."""
    fields = _split(part, ":")
    end = offset + len(part)
    if len(fields) != 3:
        return _error(name, spec, offset, end, codes.PARSE, "a range is START:STOP:STEP")
    numbers: list[Decimal] = []
    at = offset
    for field in fields:
        try:
            number = Decimal(field.strip())
        except InvalidOperation:
            number = Decimal("nan")
        if not number.is_finite() or number.copy_abs() > _LARGEST:
            message = f"`{field.strip()}` is not a finite number"
            return _error(name, spec, at, at + len(field), codes.PARSE, message)
        numbers.append(number)
        at += len(field) + 1
    start, stop, step = numbers
    if step == 0:
        return _error(name, spec, offset, end, codes.CONSTANT, "the range's STEP is 0")
    if (stop - start) * step < 0:
        message = f"a STEP of {step} never goes from {start} to {stop}"
        return _error(name, spec, offset, end, codes.CONSTANT, message)
    with localcontext(Context(Emax=MAX_EMAX, Emin=MIN_EMIN)):  # a STEP of 1e-999999 too
        steps = (stop - start) / step
    if steps >= MAX_RANGE_VALUES:
        message = f"the range has more than {MAX_RANGE_VALUES} values"
        return _error(name, spec, offset, end, codes.CONSTANT, message)
    texts = [_decimal_text(start + k * step) for k in range(int(steps) + 1)]
    distinct = len(set(map(float, texts)))
    if distinct < len(texts):  # the same runs again, under other names
        message = (
            f"the range's {len(texts):,} values are only {distinct:,} distinct numbers: a STEP "
            f"of {step} is below what a float can tell apart near {start}"
        )
        return _error(name, spec, offset, end, codes.CONSTANT, message)
    return texts


def _decimal_text(number: Decimal) -> str:
    """`number` in plain notation without trailing zeros (`0.70` → `0.7`, `2.0` → `2`);
    one of more than 30 digits before or after the point as `1E+40` or `1E-400`."""
    if number and not -30 <= number.adjusted() <= 30:
        return str(number.normalize())
    if number == number.to_integral_value():
        return str(int(number))
    text = format(number.normalize(), "f")
    return text


def _number_text(value: float | int) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"  # override_lets reports it
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
    return repr(value)


def _split(text: str, separator: str) -> list[str]:
    """`text` split at each `separator` outside parentheses and brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(depth - 1, 0)
        elif char == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _error(
    name: str, spec: str, start: int, end: int, code: codes.Code, message: str
) -> Diagnostic:
    file, text, offset = spec_source(name, spec)
    first = min(offset + start, len(text))
    last = min(max(offset + end, first + 1), len(text))
    span = Span(file, first, max(last, first), 1, first + 1, 1, max(last, first) + 1)
    help_ = "values are V1,V2,... (expressions) or START:STOP:STEP (numbers)"
    return Diagnostic.error(code, span, f"{spelling.option('set', name)}: {message}", help=help_)
