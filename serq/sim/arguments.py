"""The notebook API's arguments, checked where the caller gives them.

`serq.compile`, `serq.run` and `serq.sweep` take what a notebook has at hand: a `str`
or a `pathlib.Path`, numbers that are Python's or numpy's. Each function here takes one
argument as given and returns it in the one form the rest of serq reads (a `str` path,
a `float` time, an `int` seed, numbers in `sets` as Python's own), or raises `TypeError`
(the wrong kind of thing) or `ValueError` (a number no float can hold) naming the
argument. A value of the right kind but outside its domain (a negative horizon, a seed
past 2**64 - 1) is not refused here: the program's checks say it with a position, as
for the command line.

A `bool` is refused where a number is meant (`horizon=True` is a mistake, never a
horizon of 1), except as a `sets` value, where True is 1 as in the reference (`pyserq`).
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable, Mapping
from typing import Any


def kind(value: object) -> str:
    """`value` as a message shows what was given: its type and a short repr."""
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{type(value).__name__} {shown}"


def path(function: str, value: object, name: str = "path") -> str | None:
    """A file's name, the argument `name`: a `str` or an `os.PathLike` of one (None: not
    given)."""
    if value is None:
        return None
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{function}: `{name}` is a file name (str or Path), not {kind(value)}")
    return value


def source(function: str, value: object) -> str | None:
    """A program's text: a `str` (None: not given)."""
    if value is None or isinstance(value, str):
        return value
    hint = " (decode it first: source=data.decode())" if isinstance(value, bytes) else ""
    raise TypeError(f"{function}: `source` is the program's text (str), not {kind(value)}{hint}")


def time(function: str, name: str, value: object) -> float | None:
    """`horizon` or `warmup`: a real number as a float (None: the program's own)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{function}: `{name}` is a number (a time), not {kind(value)}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{function}: `{name}` is past the largest float: {kind(value)}") from None


def whole(function: str, name: str, value: object) -> int | None:
    """`seed` or `arrivals`: a whole number as an int (None: the program's own)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{function}: `{name}` is a whole number, not {kind(value)}")
    return int(value)


def number(value: object) -> int | float | str | None:
    """One `sets` value as serq reads it: text as it is, a number as Python's `int` or
    `float` (a numpy scalar too; True and False as 1 and 0); None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):  # bool included: True is 1, as in the reference
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return None


def sets(function: str, value: object, *, many: bool = False) -> dict[str, Any] | None:
    """`sets`: a mapping of names to values (numbers or expression text; for a sweep,
    `many`, also a list, tuple, range or numpy array of them), numbers made Python's."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{function}: `sets` is a dict of names to values, such as "
            f"{{'lambda': 0.5}}, not {kind(value)}"
        )
    out: dict[str, Any] = {}
    for name, given in value.items():
        if not isinstance(name, str):
            raise TypeError(f"{function}: a name in `sets` is a str, not {kind(name)}")
        one = number(given)
        values = [one]
        if one is None and many and _sequence(given):
            values = [number(item) for item in given]  # type: ignore[union-attr]
            if all(item is not None for item in values):
                one = values  # type: ignore[assignment]
        if one is None:
            what = "a number, an expression's text or a list of them" if many else ""
            what = what or "a number or an expression's text"
            raise TypeError(f"{function}: `sets[{name!r}]` is {what}, not {kind(given)}")
        if many and any(isinstance(v, float) and math.isnan(v) for v in values):
            raise ValueError(f"{function}: `sets[{name!r}]` holds NaN, which no let takes")
        out[name] = one
    return out


def _sequence(value: object) -> bool:
    """Whether `value` is an ordered collection of values (a list, tuple, range or numpy
    array; not a str, a mapping or a set, whose order is not the user's)."""
    if isinstance(value, (str, bytes, Mapping, set, frozenset)):
        return False
    return isinstance(value, Iterable) and hasattr(value, "__len__")


def defs(function: str, value: object) -> dict[str, str] | None:
    """`defs`: a mapping of expression definitions' names to their bodies' text."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{function}: `defs` is a dict of names to bodies, such as "
            f"{{'cost': 'x * 2'}}, not {kind(value)}"
        )
    for name, body in value.items():
        if not isinstance(name, str):
            raise TypeError(f"{function}: a name in `defs` is a str, not {kind(name)}")
        if not isinstance(body, str):
            raise TypeError(
                f"{function}: `defs[{name!r}]` is an expression's text (str), not {kind(body)}"
            )
    return dict(value)


def seeds(function: str, value: object) -> int | list[Any] | None:
    """A sweep's `seeds`: a count N (seeds 1..N) or the seeds themselves, as ints (numpy's
    too); None for the program's own seed."""
    if value is None:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if not isinstance(value, Iterable) or isinstance(value, (str, bytes, Mapping)):
        raise TypeError(
            f"{function}: `seeds` is a count N (seeds 1..N) or a list of seeds, not {kind(value)}"
        )
    # a listed seed that is no whole number (1.5, True) is left for the sweep's own check,
    # a ValueError with the others' (`serq.sweeps.plan`)
    return [
        int(seed) if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) else seed
        for seed in value
    ]


def jobs(function: str, value: object) -> int | None:
    """A sweep's `jobs`: a number of worker processes ≥ 1 (None: the CPU count)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{function}: `jobs` is a number of processes, not {kind(value)}")
    if value < 1:
        raise ValueError(f"{function}: `jobs` is a number of processes ≥ 1, not {value}")
    return int(value)
