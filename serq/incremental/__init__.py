"""The front end re-run on what an edit changed: a 2 MB document, edited one character at a
time, is analysed in time proportional to what the edit touches.

One parser, one expander, one linker serve every consumer; this package only decides what
to run them on, and keeps what they said before. What is kept, from the text up, with
what it is keyed by:

1. Parses, by a chunk's kind, text and next token (`serq.syntax.ItemCache`; a parse that
   read to the end of the file also by how far the file goes on past it), and each
   file's last layout (`serq.syntax.layout`): an edit rescans the units around it; a unit
   whose text and place in the cut did not change is the same object, with its parse
   (its nodes moved to where it is when read, the last move kept: `Unit.at`).
2. On each unit, what does not depend on where it is: its summary, the names it declares
   and reads (`serq.incremental.summary`), and its part of the index where it was first
   parsed; and its part of the index where it is, by its place (`serq.incremental.index`).
3. Each file's last `Version` (`serq.incremental.versions`): its layout, the units
   declaring, reading and binding each name (`serq.incremental.names`, shared with the
   version before but for the units that changed), and what each `use` read (read again
   at every version and compared: a `use` whose libraries changed counts as changed).
4. The program's reports for the last version that parsed (`serq.incremental.program`):
   every diagnostic of the expander and the linker as reported, every origin, the
   folded constants. An edit runs the front end on the units that may see it and on what
   they read, before and after, and takes the difference: the units tied to no changed
   name keep their reports, moved to where they are now. The order of diagnostics that
   sort alike is kept by their content.

Why it is sound: everything one item makes the expander or linker say about another goes
through a name, or through the core, and `serq.incremental.names` closes every set it
runs on under those ties, so a run over a unit and its context says of it exactly what a
run over the whole file says. `tests/incremental/` holds the output to a whole analysis
of the final text after random edits of every kind.

`analyze(text, path, cache, load)` is `serq.api.check_source` with caches: the same
diagnostics, in the same order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from serq.diagnostics import Diagnostic
from serq.incremental.program import Outcome, Program
from serq.incremental.runs import Failed, Loader, Stopped, has_error, internal
from serq.incremental.versions import Version, track
from serq.syntax import ItemCache, ParseResult, parse
from serq.syntax.document import reparse

__all__ = ["Analysed", "Cache", "Stopped", "Version", "analyze", "analyze_whole"]


class Cache:
    """What the analysis keeps between versions: the item cache (with each file's last
    layout), each file's last `Version` and each file's `Program`."""

    def __init__(self, items: ItemCache | None = None) -> None:
        self.items = items if items is not None else ItemCache()
        self.versions: dict[str, Version] = {}
        self.programs: dict[str, Program] = {}

    def program(self, path: str, load: Loader) -> Program:
        program = self.programs.get(path)
        if program is None:
            program = self.programs[path] = Program(load)
        program.load = load
        return program

    def forget(self, path: str) -> None:
        """Drop what is kept of the file at `path` (its document was closed)."""
        self.programs.pop(path, None)
        self.versions.pop(path, None)
        self.items.layouts.pop(path, None)


@dataclass
class Analysed:
    """One version's analysis: its parse, its `version` (units, names, libraries), its
    diagnostics (as `serq check` reports them) and, when it parsed, the program's part
    (`outcome`; None after syntax errors)."""

    parsed: ParseResult
    version: Version | None
    diagnostics: list[Diagnostic]
    outcome: Outcome | None

    @property
    def linked(self) -> bool:
        """Whether the linker's diagnostics are among them (no syntax or expansion error)."""
        return self.outcome is not None and not has_error(self.outcome.expand)


def analyze(
    text: str,
    path: str,
    cache: Cache,
    load: Loader,
    stop: Callable[[], bool] | None = None,
    on_parse: Callable[[Analysed], None] | None = None,
) -> Analysed:
    """The diagnostics of `text` (the contents of `path`), `use`d files read by `load`,
    from what `cache` kept of the last version of `path`. Raises `Stopped` before a run
    when `stop()` says the result is no longer wanted. `on_parse` is given the version as
    far as its parse, before the expander and the linker run: its syntax diagnostics and
    no outcome (what needs only the tree and the names may answer from it)."""
    parsed = parse(text, path, cache.items)
    version = track(cache.versions.get(path), parsed.layout, load)
    cache.versions[path] = version
    diagnostics = list(parsed.diagnostics)
    if on_parse is not None:
        on_parse(Analysed(parsed, version, list(diagnostics), None))
    if has_error(diagnostics):
        return Analysed(parsed, version, diagnostics, None)
    if stop is not None and stop():
        raise Stopped
    program = cache.program(path, load)
    try:
        outcome = program.analyze(version, stop)
    except Failed:
        whole = analyze_whole(parsed, text, path, load)
        whole.version = version
        return whole
    diagnostics.extend(outcome.expand)
    if has_error(diagnostics):
        return Analysed(parsed, version, diagnostics, outcome)
    from serq.link.checks.removal import keep_parsing_fixes

    layout = parsed.layout

    def syntax(edited: str) -> tuple[Diagnostic, ...]:
        return reparse(layout, edited, cache.items)

    diagnostics.extend(keep_parsing_fixes(outcome.link, text, path, syntax))
    return Analysed(parsed, version, diagnostics, outcome)


def analyze_whole(parsed: ParseResult, text: str, path: str, load: Loader) -> Analysed:
    """The diagnostics of the parsed `text`, as `serq check` finds them (with `load`), in
    one run: what `analyze` does when a run raised (its error then in the diagnostics)."""
    diagnostics = list(parsed.diagnostics)
    if has_error(diagnostics):
        return Analysed(parsed, None, diagnostics, None)
    try:
        from serq.expand import expand

        expansion = expand(parsed.module, load)
    except Exception as error:  # a bug in serq, not in the program
        return Analysed(parsed, None, [*diagnostics, internal(path, "expanding", error)], None)
    diagnostics.extend(expansion.diagnostics)
    if has_error(diagnostics):
        return Analysed(parsed, None, diagnostics, None)
    try:
        from serq.link import link
        from serq.link.checks.removal import keep_parsing_fixes

        linked = link(expansion.kernel)
        found = keep_parsing_fixes(linked.diagnostics, text, path)
    except Exception as error:  # a bug in serq, not in the program
        return Analysed(parsed, None, [*diagnostics, internal(path, "linking", error)], None)
    return Analysed(parsed, None, [*diagnostics, *found], None)
