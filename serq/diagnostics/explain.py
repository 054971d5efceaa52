"""The long explanation of every diagnostic code: what it means and how to fix it.

One source serves both readers: `serq explain CODE` prints an explanation, and
docs/diagnostics.md is `render_page()` written out (`python -m serq.diagnostics.explain
> docs/diagnostics.md`; a test keeps the two equal). Each code's text is the Markdown
file `explanations/<id>.md` beside this module; its heading and one-line summary come
from `codes`. A fenced block whose info string is `serq E-<name>` is a program that
reports that code, and a plain `serq` block after it is that program fixed; the tests
check that the first reports its code and the second checks clean.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from serq.diagnostics import codes

DIRECTORY = Path(__file__).with_name("explanations")

_PAGE_HEAD = """\
# Diagnostic codes

Every message `serq check`, `serq run` and the language server print carries a
stable code, such as `E-unknown-name`. The code's first letter says how serious
it is: `E` an error (the program does not run), `W` a warning, `L` a lint, which
serq also reports as an error because it flags a program that is well formed but
almost certainly not what its author meant.

`serq explain CODE` prints the section below for one code (`serq explain` alone
lists them all). Each section says what the code means, what usually causes it
and how to fix it, with a small program that reports it and the same program
fixed.

This page is generated from `serq/diagnostics/explanations/` by
`python -m serq.diagnostics.explain > docs/diagnostics.md`: edit those files, not
this page.
"""

_CATEGORY_TITLES = {
    "syntax": "Syntax",
    "expand": "Expansion (the sugar's rules)",
    "link": "Linking (names and the language's rules)",
    "lint": "Lints",
    "run": "Running",
    "io": "Files",
    "internal": "serq itself",
}


def resolve(text: str) -> codes.Code | None:
    """The code `text` names: its id in any case, or the id without its `E-`/`W-`/`L-`."""
    wanted = text.strip().lower()
    for code in codes.ALL.values():
        if code.id.lower() == wanted or code.id.lower()[2:] == wanted:
            return code
    return None


def suggestions(text: str) -> list[str]:
    """The ids closest to an unknown `text`, best first."""
    ids = {code.id.lower(): code.id for code in codes.ALL.values()}
    ids.update({code.id.lower()[2:]: code.id for code in codes.ALL.values()})
    close = difflib.get_close_matches(text.strip().lower(), list(ids), n=3, cutoff=0.6)
    return list(dict.fromkeys(ids[c] for c in close))


def body(code: codes.Code) -> str | None:
    """The explanation text of `code` (Markdown), or None when none is written."""
    path = DIRECTORY / f"{code.id}.md"
    try:
        return path.read_text(encoding="utf-8").strip() + "\n"
    except OSError:
        return None


def explain(code: codes.Code) -> str:
    """The text `serq explain` prints for `code`: its id, category and summary, then
    its explanation."""
    text = body(code) or "No explanation is written for this code yet.\n"
    return f"{code.id} ({code.category}): {code.description}\n\n{text}"


def listing() -> str:
    """Every code with its one-line summary, one a line, in declaration order."""
    width = max(len(code.id) for code in codes.ALL.values())
    return "".join(f"{code.id:<{width}}  {code.description}\n" for code in codes.ALL.values())


def render_page() -> str:
    """docs/diagnostics.md: every code under its category, in declaration order."""
    parts = [_PAGE_HEAD]
    for category in codes.CATEGORIES:
        members = [code for code in codes.ALL.values() if code.category == category]
        if not members:
            continue
        parts.append(f"\n## {_CATEGORY_TITLES.get(category, category)}\n")
        for code in members:
            text = body(code) or "No explanation is written for this code yet.\n"
            parts.append(f"\n### `{code.id}`\n\n*{code.description}*\n\n{text}")
    return "".join(parts)


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_page())
