"""Did-you-mean: the one candidate close to a misspelled name, and the fix that puts it in."""

from __future__ import annotations

from collections.abc import Iterable

from serq.diagnostics.span import Span


def close_names(name: str, candidates: Iterable[str]) -> list[str]:
    """The candidates close to `name`: alike by difflib's ratio (a short name's one typo is
    a large part of it, so the bar is lower) and of about its length, closest first."""
    cutoff = 0.75 if len(name) > 3 else 0.5
    slack = max(1, len(name) // 3)
    near = [c for c in dict.fromkeys(candidates) if abs(len(c) - len(name)) <= slack and c != name]
    import difflib  # only when a name is misspelt: not at start-up

    return difflib.get_close_matches(name, near, n=2, cutoff=cutoff)


def did_you_mean(name: str, candidates: Iterable[str], span: Span | None = None) -> dict:
    """Keyword arguments for a diagnostic (`help`, and a `fix` replacing `span` when `span`
    is the name as written) when exactly one candidate is close to `name`; else `{}`."""
    from serq.diagnostics import Edit, Fix

    close = close_names(name, candidates)
    if len(close) != 1:
        return {}
    kw: dict = {"help": f"did you mean `{close[0]}`?"}
    if span is not None and span.end - span.start == len(name):
        kw["fix"] = Fix(f"change `{name}` to `{close[0]}`", (Edit(span, close[0]),), "unsafe")
    return kw
