"""How the caller wrote an override or a run setting, for the messages about it.

The command line gives them as options (`--set lambda=-1`, `--arrivals -1`); the Python
API as arguments (`sets={"lambda": -1}`, `arrivals=-1`). `serq.compile` and `serq.sweep`
check their arguments inside `python()`, and every message that names an override or a
setting asks `option` for its words, so a user reads the names they wrote. The texts of
`--set` and `--def` values are parsed from files named by `source_name` (`<--set lambda>`,
`<sets["lambda"]>`), which `override_of` reads back wherever a finding needs to know that
a value was an override's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_PYTHON: ContextVar[bool] = ContextVar("serq_python_spelling", default=False)

_PLURAL = {"set": "sets", "def": "defs"}  # the API's mapping for each repeatable option


@contextmanager
def python() -> Iterator[None]:
    """Within: the messages name the Python API's arguments, not the command line's."""
    token = _PYTHON.set(True)
    try:
        yield
    finally:
        _PYTHON.reset(token)


def in_python() -> bool:
    """Whether the messages now name the Python API's arguments."""
    return _PYTHON.get()


def option(kind: str, name: str | None = None, value: str | None = None) -> str:
    """The override or setting `kind` (`set`, `def`, `trace`, `seed`, `horizon`,
    `warmup`, `arrivals`) as the caller wrote it, for `name` (a `set` or `def`) and with
    `value` when given: `--set lambda=-1` or `sets["lambda"] = -1`, `--arrivals -1` or
    `arrivals=-1`; with neither, the option itself, `--set` or "`sets`" (quoted, as the
    mapping is named in a sentence: the one form not meant to go inside backticks)."""
    if not _PYTHON.get():
        words = f"--{kind}"
        if name is not None:
            words += f" {name}"
        if value is not None:
            words += f"={value}" if name is not None else f" {value}"
        return words
    if kind in _PLURAL:
        if name is None:
            return f"`{_PLURAL[kind]}`"  # the mapping, in a sentence
        words = f'{_PLURAL[kind]}["{name}"]'
        return words if value is None else f"{words} = {value}"
    if kind == "trace" and value is not None:
        return f"trace={value!r}"
    return f"{kind}=" if value is None else f"{kind}={value}"


def source_name(kind: str, name: str | None = None) -> str:
    """The name of the file the value of the `set` or `def` override `name` is parsed
    from, or (`trace`, no name) the file a diagnostic about the trace option points into."""
    if kind == "trace":
        return "<trace=>" if _PYTHON.get() else "<--trace>"
    return f"<{option(kind, name)}>"


def override_of(file: str) -> tuple[str, str] | None:
    """The kind (`set`, `def`, `trace`) and name (`""` for the trace) of the override
    whose value `file` holds (a `source_name` in either spelling), or None when it holds
    none."""
    if file in ("<--trace>", "<trace=>"):
        return "trace", ""
    for kind, plural in _PLURAL.items():
        for head, tail in ((f"<--{kind} ", ">"), (f'<{plural}["', '"]>')):
            if file.startswith(head) and file.endswith(tail) and len(file) > len(head + tail):
                return kind, file[len(head) : -len(tail)]
    return None


def holds_set(file: str) -> bool:
    """Whether `file` holds the value of a `--set` (`sets=`) override."""
    override = override_of(file)
    return override is not None and override[0] == "set"
