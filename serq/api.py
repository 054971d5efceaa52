"""The pipeline as the command line and the language server call it.

Each function takes source text (or a path) and returns results and
diagnostics; none raises on bad input.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from serq.diagnostics import Diagnostic, Label, Severity, Span, codes, spelling
from serq.syntax import ItemCache, ParseResult, ast, parse
from serq.syntax.source_text import decode

if TYPE_CHECKING:
    from serq.expand.loader import Loader
    from serq.ir import Program


def read_source(path: str) -> str | Diagnostic:
    """The text of the file at `path`, or an `E-io` diagnostic saying why it cannot be read.

    A byte-order mark is dropped; invalid UTF-8 is not a failure to read: the bytes are
    escaped (`serq.syntax.source_text`) and the parser reports the first with `E-utf8`."""
    try:
        if not path:  # Path("") is the working directory
            raise FileNotFoundError
        from serq.expand.loader import text_path

        return decode(Path(text_path(path)).read_bytes())
    except OSError as e:  # the empty path too, raised above
        from serq.expand.loader import unreadable_text

        reason = unreadable_text(path, e)
    except ValueError as e:  # a path the system cannot name: "embedded null byte"
        reason = str(e)
    return Diagnostic.error(codes.IO, Span.point(path, 0, 1, 1), f"cannot read `{path}`: {reason}")


STDIN = "<stdin>"  # the name of a program a command reads from `-`


def read_program(path: str) -> tuple[str, str | Diagnostic]:
    """A command's FILE argument: its name and `read_source`'s text or diagnostic. `-` is
    standard input, named `<stdin>` (its `use`s and traces are read from the working
    directory, as for any `<...>` name), for the editors that lint a buffer through a pipe."""
    if path != "-":
        return path, read_source(path)
    data = read_stdin()
    return STDIN, data if isinstance(data, Diagnostic) else decode(data)


def read_stdin() -> bytes | Diagnostic:
    """Standard input's bytes (its text as UTF-8 when it has no byte stream, in tests), or
    an `E-io` diagnostic when there is none to read (closed: `<&-`)."""
    import sys

    stream = sys.stdin
    try:
        if stream is None:
            raise OSError("standard input is closed")
        raw = getattr(stream, "buffer", None)
        if raw is not None:
            return raw.read()
        return stream.read().encode("utf-8", "surrogateescape")
    except (OSError, ValueError) as e:  # ValueError: a stream closed inside the process
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        where = Span.point(STDIN, 0, 1, 1)
        return Diagnostic.error(codes.IO, where, f"cannot read standard input: {reason}")


def library_sources(sources: dict[str, str], diagnostics: Iterable[Diagnostic]) -> None:
    """Add to `sources` the text of each file `diagnostics` point into, by their spans or
    their labels', that is not there yet: the `use`d libraries (`<...>` names are no file)."""
    for d in diagnostics:
        for file in (d.span.file, *(label.span.file for label in d.labels)):
            if file not in sources and not file.startswith("<"):
                library = read_source(file)
                if isinstance(library, str):
                    sources[file] = library


def parse_source(text: str, path: str = "<input>", cache: ItemCache | None = None) -> ParseResult:
    """Parse `text` (the contents of `path`); pass a `cache` to reparse edits incrementally."""
    return parse(text, path, cache)


def check_source(
    text: str, path: str = "<input>", cache: ItemCache | None = None
) -> list[Diagnostic]:
    """Every diagnostic of the program `text`: syntax, then expansion, then link errors."""
    return link_source(text, path, cache)[1]


def expand_source(
    text: str,
    path: str = "<input>",
    cache: ItemCache | None = None,
    sets: Mapping[str, str | float] | None = None,
    defs: Mapping[str, str] | None = None,
    load: Loader | None = None,
) -> tuple[ast.Module | None, list[Diagnostic]]:
    """The kernel of the program `text` (the contents of `path`), with the program's
    arguments and `let` constants named in `sets` given those values (see
    `override_lets`), the expression definitions named in `defs` given those bodies (see
    `override_defs`), and every diagnostic so far. `use`d files are read by `load`
    (default: from disk; the language server reads the open ones from their buffers).

    The kernel is None when `text` has syntax errors, which the expander does not
    read past, or when serq itself failed (an `E-internal` diagnostic says so)."""
    parsed = parse_source(text, path, cache)
    diagnostics = list(parsed.diagnostics)
    module = parsed.module
    if sets:
        module, overridden = override_lets(module, sets)
        diagnostics.extend(overridden)
    if defs:
        module, overridden, load = override_defs(module, defs, load)
        diagnostics.extend(overridden)
    if any(d.severity >= Severity.ERROR for d in diagnostics):
        return None, diagnostics
    try:
        from serq.expand import expand  # the expander loads only when a command needs it

        expansion = expand(module) if load is None else expand(module, load)
    except Exception as error:  # a bug in serq, not in the program: say so, never raise
        return None, [*diagnostics, _internal(path, "expanding", error)]
    return expansion.kernel, [*diagnostics, *expansion.diagnostics]


def link_source(
    text: str,
    path: str = "<input>",
    cache: ItemCache | None = None,
    sets: Mapping[str, str | float] | None = None,
    defs: Mapping[str, str] | None = None,
    load: Loader | None = None,
) -> tuple[Program | None, list[Diagnostic]]:
    """The IR of the program `text` (the contents of `path`), with the overrides `sets`
    and `defs` (see `expand_source`, which reads `use`d files by `load`), and every
    diagnostic so far.

    The program is None when any phase found an error: the linker does not run on a
    program with syntax or expansion errors, and it reports every error of its own."""
    kernel, diagnostics = expand_source(text, path, cache, sets, defs, load)
    if kernel is None or any(d.severity >= Severity.ERROR for d in diagnostics):
        return None, diagnostics
    try:
        from serq.link import link  # the linker loads only when a command needs it
        from serq.link.checks.removal import keep_parsing_fixes

        linked = link(kernel)
        found = keep_parsing_fixes(linked.diagnostics, text, path)
    except Exception as error:  # a bug in serq, not in the program: say so, never raise
        return None, [*diagnostics, _internal(path, "linking", error)]
    return linked.program, [*diagnostics, *found]


def set_source(name: str, value: str | float) -> tuple[str, str]:
    """The file name and text `override_lets` parses `--set name=value` from (its
    diagnostics point into it: give it to the renderer with the program's own text)."""
    if isinstance(value, bool):
        value = int(value)
    text = value if isinstance(value, str) else repr(value)
    return spelling.source_name("set", name), f"let {name} = {text};"


def def_source(name: str, body: str) -> tuple[str, str]:
    """The file name and text `override_defs` parses `--def name=body` from."""
    return spelling.source_name("def", name), f"let {name} = {body};"


def is_override_error(diagnostic: Diagnostic) -> bool:
    """Whether `diagnostic` is about a `--set` or `--def` option rather than the program: it
    points into the option's own text (a name given twice or not declared, a value that
    does not parse, reads what it may not, or is of the wrong kind). The commands exit
    with their usage status for it; a value the program cannot take is reported at its
    `let` instead, an error of the program. A `--trace` for a program that replays no
    trace points at its option too."""
    return spelling.override_of(diagnostic.span.file) is not None


def repeated_overrides(
    flag: str, pairs: Iterable[tuple[str, object]], help_: str | None = None
) -> tuple[list[Diagnostic], dict[str, str]]:
    """An `E-name-clash` for each name that `pairs` (the `flag` options, `--set` or
    `--def`, as given, in order) gives more than once, naming every occurrence, and the
    texts the errors point into: `<FLAG NAME>` holds the occurrences one after another.
    `help_` replaces the help line (`serq sweep` says how to give several values).

    Every command that takes `--set` or `--def` calls it before anything else: a name
    given twice is a usage error (`serq.cli.EXIT_USAGE`), never the last one winning."""
    given: dict[str, list[str]] = {}
    for name, value in pairs:
        given.setdefault(name, []).append(f"{name}={_shown(value)}")
    diagnostics: list[Diagnostic] = []
    sources: dict[str, str] = {}
    for name, occurrences in given.items():
        if len(occurrences) < 2:
            continue
        file, text = f"<{flag} {name}>", " ".join(f"{flag} {o}" for o in occurrences)
        spans, at = [], 0
        for occurrence in occurrences:
            at += len(flag) + 1
            spans.append(Span.of_text(file, text, at, at + len(occurrence)))
            at += len(occurrence) + 1
        times = "twice" if len(occurrences) == 2 else f"{len(occurrences)} times"
        listed = ", ".join(f"`{o}`" for o in occurrences[:-1]) + f" and `{occurrences[-1]}`"
        labels = [Label(spans[0], "first given here")]
        labels += [Label(span, "given again here") for span in spans[2:]]
        diagnostics.append(
            Diagnostic.error(
                codes.NAME_CLASH,
                spans[1],
                f"`{flag} {name}` is given {times}: {listed}",
                labels=tuple(labels),
                help=help_ or f"give `{flag} {name}` once, with the value you mean",
            )
        )
        sources[file] = text
    return diagnostics, sources


def _shown(value: object) -> str:
    """An override's value as the command line shows it (a number from Python as `repr`)."""
    if isinstance(value, bool):
        return str(int(value))
    return value if isinstance(value, str) else repr(value)


def override_lets(
    module: ast.Module, sets: Mapping[str, str | float]
) -> tuple[ast.Module, list[Diagnostic]]:
    """`module` with the value of each program argument (`let x = args.number("NAME",
    default);`) or else `let NAME` named in `sets` replaced by the value given there (an
    expression's text or a number), and the diagnostics of the values that cannot be: a
    name no argument or `let` declares (with the close one, if any), text that is not
    one expression, NaN.

    This is `serq run --set NAME=VALUE`: the value is parsed as the `let` would be and
    replaces the declared one (an argument's default) before expansion, so it is folded
    wherever the let is."""
    lets = [item for item in module.all_items() if isinstance(item, ast.Let)]
    arguments = {i.argument.name: i.name.name for i in lets if i.argument is not None}
    declared = [item.name.name for item in lets]
    values: dict[str, ast.Expr] = {}
    diagnostics: list[Diagnostic] = []
    spans = {item.name.name: item.name.span for item in reversed(lets)}  # the first
    given: dict[str, tuple[str, Span]] = {}  # a let -> the --set that gave it, where
    for name, value in sets.items():
        file, text = set_source(name, value)
        start = Span(file, 0, len(text), 1, 1, 1, len(text) + 1)
        target = arguments.get(name, name if name in declared else None)
        if isinstance(value, float) and math.isnan(value) and target is not None:
            diagnostics.append(
                Diagnostic.error(
                    codes.CONSTANT,
                    spans[target],
                    f"`let {target}` is NaN: `{spelling.option('set', name)}` makes it so",
                    help=f"give `{spelling.option('set', name)}` a number or `inf`",
                )
            )
            continue
        let = _override_let(text, file, spelling.option("set", name), value, start, diagnostics)
        if let is None:
            continue
        if target is None:
            names = [*arguments, *(n for n in declared if n not in arguments.values())]
            unknown = _unknown_override(name, let.name.span, names)
            if name in _def_names(module):
                unknown = replace(
                    unknown,
                    message=f"`{name}` is a `def`, not a {spelling.option('set')} argument or "
                    "constant",
                    help=f"`{spelling.option('def', name, 'EXPR')}` replaces its body",
                )
            diagnostics.append(unknown)
            continue
        if target in given:
            diagnostics.append(_same_target(target, given[target], (name, let.name.span)))
            continue
        given[target] = (name, let.name.span)
        values[target] = let.value

    def override(item: ast.Item) -> ast.Item:
        if isinstance(item, ast.Let) and item.name.name in values:
            return replace(item, value=values[item.name.name])
        return item

    return _rewrite_items(module, override), diagnostics


def _same_target(let: str, first: tuple[str, Span], second: tuple[str, Span]) -> Diagnostic:
    """A usage error: two `--set`s, a program argument's and its `let`'s, give one `let`."""
    argument = first[0] if first[0] != let else second[0]
    return Diagnostic.error(
        codes.NAME_CLASH,
        second[1],
        f"`{spelling.option('set', first[0])}` and `{spelling.option('set', second[0])}` "
        f"both give `let {let}`",
        labels=(Label(first[1], "first given here"),),
        help=f"`{argument}` is the program argument `let {let}` reads: give one of the two",
    )


def _unknown_override(name: str, span: Span, names: list[str]) -> Diagnostic:
    """A usage error: `--set name` names no argument and no `let` of `names`."""
    import difflib

    close = difflib.get_close_matches(name, names, n=1)
    known = ", ".join(dict.fromkeys(names)) or "none"
    flag = spelling.option("set")
    help_ = f"{flag} gives a program argument (`args.number`) or a `let`; the program has: {known}"
    if close:
        help_ = f"did you mean `{close[0]}`? " + help_
    return Diagnostic.error(
        codes.UNKNOWN_NAME, span, f"unknown {flag} argument or constant `{name}`", help=help_
    )


def override_defs(
    module: ast.Module, defs: Mapping[str, str], load: Loader | None = None
) -> tuple[ast.Module, list[Diagnostic], Loader]:
    """`module` with the body of each expression definition (`def NAME(...) { expr }`)
    named in `defs` replaced by the expression text given there, which reads the def's
    parameters, and the diagnostics of those that cannot be: a name no `def` declares
    (with the close one), a `def` of statements, text that is not one expression. A
    definition may be the program's or a library's it `use`s (at any depth, read by
    `load`, default from disk): the loader returned reads the libraries with theirs
    replaced (each read once, here).

    This is `serq run --def NAME=EXPR` (pyserq 0.1.4's `defs=`)."""
    libraries = _libraries(module, load)
    everything = [
        *module.all_items(),
        *(i for _, result in libraries.values() for i in result.module.all_items()),
    ]
    declared = {i.name.name: i for i in everything if isinstance(i, ast.DefExpr)}
    blocks = {i.name.name: i for i in everything if isinstance(i, ast.DefBlock)}
    bodies: dict[str, ast.Expr] = {}
    diagnostics: list[Diagnostic] = []
    for name, body in defs.items():
        file, text = def_source(name, body)
        start = Span(file, 0, len(text), 1, 1, 1, len(text) + 1)
        if name in blocks:
            diagnostics.append(
                Diagnostic.error(
                    codes.WRONG_KIND,
                    start,
                    f"{spelling.option('def', name)}: `def {name}` is statements; "
                    f"{spelling.option('def')} replaces the body of an expression definition",
                    labels=(Label(blocks[name].name.span, "a definition of statements"),),
                )
            )
            continue
        if name not in declared:
            import difflib

            close = difflib.get_close_matches(name, list(declared), n=1)
            known = ", ".join(declared) or "none"
            help_ = f"{spelling.option('def')} replaces the body of a `def NAME(...) {{ expr }}`; "
            help_ += f"the program has: {known}"
            if close:
                help_ = f"did you mean `{close[0]}`? " + help_
            what = "`defs` name" if spelling.in_python() else "--def"
            diagnostics.append(
                Diagnostic.error(codes.UNKNOWN_NAME, start, f"unknown {what} `{name}`", help=help_)
            )
            continue
        let = _override_let(text, file, spelling.option("def", name), body, start, diagnostics)
        if let is not None:
            bodies[name] = let.value

    def override(item: ast.Item) -> ast.Item:
        if isinstance(item, ast.DefExpr) and item.name.name in bodies:
            return replace(item, body=bodies[item.name.name])
        return item

    rewritten = {
        key: ParseResult(_rewrite_items(result.module, override), result.diagnostics)
        for key, (_, result) in libraries.items()
    }

    def load_overridden(path: str) -> ParseResult | str:
        from serq.expand.loader import library_key, read_file

        found = rewritten.get(library_key(path))
        if found is not None:
            return found
        return (load or read_file)(path)

    return _rewrite_items(module, override), diagnostics, load_overridden


def _def_names(module: ast.Module) -> set[str]:
    """The names of the `def`s of `module` and of the libraries it uses."""
    files = [
        module.all_items(),
        *(r.module.all_items() for _, r in _libraries(module, None).values()),
    ]
    return {
        i.name.name for items in files for i in items if isinstance(i, (ast.DefExpr, ast.DefBlock))
    }


def _libraries(module: ast.Module, load: Loader | None) -> dict[str, tuple[str, ParseResult]]:
    """The libraries `module` uses, at any depth, as the expander finds them (by
    `serq.expand.loader`'s rules), read by `load`: key -> (path, parse). One that cannot be
    read is left out (the expander says so)."""
    from serq.expand.loader import library_key, library_path, read_file

    found: dict[str, tuple[str, ParseResult]] = {}

    def walk(items: Iterable[ast.Item], file: str) -> None:
        for item in items:
            if not isinstance(item, ast.Use):
                continue
            path = library_path(item, file)
            if path is None or library_key(path) in found:
                continue
            result = (load or read_file)(path)
            if isinstance(result, str):
                continue
            found[library_key(path)] = (path, result)
            walk(result.module.all_items(), path)

    walk(module.all_items(), module.file)
    return found


def _override_let(
    text: str, file: str, flag: str, shown: object, start: Span, diagnostics: list[Diagnostic]
) -> ast.Let | None:
    """The one `let` an override's text (`let NAME = VALUE;`) parses to, or None with the
    diagnostics added: its syntax errors, or that `shown` is not one expression."""
    parsed = parse(text, file)
    items = parsed.module.items
    if not parsed.diagnostics and len(items) == 1 and isinstance(items[0], ast.Let):
        return items[0]
    diagnostics.extend(parsed.diagnostics)
    if not parsed.diagnostics:
        message = f"{flag}: `{shown}` is not one expression"
        diagnostics.append(Diagnostic.error(codes.PARSE, start, message))
    return None


def _rewrite_items(module: ast.Module, rewrite: Callable[[ast.Item], ast.Item]) -> ast.Module:
    """`module` with `rewrite(item)` in place of each item, at top level and in `fn main`."""
    main = module.main
    if main is not None:
        main = replace(main, items=tuple(rewrite(item) for item in main.items))
    return replace(module, items=tuple(rewrite(item) for item in module.items), main=main)


def format_kernel(kernel: ast.Module, path: str = "<input>") -> str | Diagnostic:
    """The text of `kernel` (expanded from `path`), or an `E-internal` diagnostic if that fails."""
    try:
        from serq.expand.printer import print_module

        return print_module(kernel)
    except Exception as error:  # a bug in serq, not in the program
        return _internal(path, "printing the kernel of", error)


def format_ir(
    program: Program,
    path: str = "<input>",
    *,
    horizon: float | None = None,
    arrivals: int | None = None,
    compact: bool = False,
) -> str | Diagnostic:
    """The JSON of `program` (linked from `path`), with the run's `horizon` and `arrivals`
    overridden when given, or an `E-internal` diagnostic if that fails."""
    try:
        from dataclasses import replace

        from serq import ir

        if horizon is not None:
            program = replace(program, horizon=horizon)
        if arrivals is not None:
            program = replace(program, arrivals=arrivals)
        return ir.to_json(program, indent=None if compact else 2)
    except Exception as error:  # a bug in serq, not in the program
        return _internal(path, "printing the IR of", error)


def _internal(path: str, stage: str, error: Exception) -> Diagnostic:
    return Diagnostic.error(
        codes.INTERNAL,
        Span.point(path, 0, 1, 1),
        f"serq failed while {stage} `{path}`: {type(error).__name__}: {error}",
    )
