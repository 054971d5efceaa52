"""Snapshot tests of render_full, render_concise, to_json/render_json and print_diagnostics."""

import io
import json

from serq.diagnostics import (
    Diagnostic,
    Edit,
    Fix,
    Label,
    LineIndex,
    Span,
    print_diagnostics,
    render_concise,
    render_full,
    render_json,
    to_json,
)

PROG = "pool kv { capacity 4 }\nstage s {\n    set x = 1\n}\n"


def at(text: str, needle: str, file: str = "prog.sq", occurrence: int = 0) -> Span:
    """Return the span of the `occurrence`-th `needle` in `text`."""
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(needle, start + 1)
    return LineIndex(text).span(file, start, start + len(needle))


def point(text: str, offset: int, file: str = "prog.sq") -> Span:
    return LineIndex(text).span(file, offset, offset)


def parse_error() -> Diagnostic:
    span = at(PROG, "set")
    return Diagnostic.error(
        "E-parse",
        span,
        "expected `;` or `}`, found `set`",
        labels=(Label(span, "unexpected `set`"),),
        notes=("a stage body holds only steps",),
        help="end the previous step with `;`",
    )


def test_full_primary_label_note_help() -> None:
    assert render_full(parse_error(), PROG) == (
        "error[E-parse]: expected `;` or `}`, found `set`\n"
        " --> prog.sq:3:5\n"
        "  |\n"
        "3 |     set x = 1\n"
        "  |     ^^^ unexpected `set`\n"
        "  |\n"
        "  = note: a stage body holds only steps\n"
        "  = help: end the previous step with `;`"
    )


def test_full_without_label_text_or_notes() -> None:
    diag = Diagnostic.warning("E-parse", at(PROG, "capacity"), "odd `capacity`")
    assert render_full(diag, PROG) == (
        "warning[E-parse]: odd `capacity`\n"
        " --> prog.sq:1:11\n"
        "  |\n"
        "1 | pool kv { capacity 4 }\n"
        "  |           ^^^^^^^^"
    )


def test_full_empty_span_gets_one_caret_past_the_line() -> None:
    text = "stage s {\n  hold kv 1"
    diag = Diagnostic.error(
        "E-parse",
        point(text, len(text)),
        "unexpected end of file",
        labels=(Label(point(text, len(text)), "expected `}`"),),
    )
    assert render_full(diag, text) == (
        "error[E-parse]: unexpected end of file\n"
        " --> prog.sq:2:12\n"
        "  |\n"
        "2 |   hold kv 1\n"
        "  |            ^ expected `}`"
    )


def test_full_multiline_span_underlines_rest_of_first_line() -> None:
    span = LineIndex(PROG).span("prog.sq", PROG.index("stage"), PROG.index("}\n", 30) + 1)
    diag = Diagnostic.error(
        "E-parse", span, "bad stage", labels=(Label(span, "never closed by a `}`"),)
    )
    assert render_full(diag, PROG) == (
        "error[E-parse]: bad stage\n"
        " --> prog.sq:2:1\n"
        "  |\n"
        "2 | stage s {\n"
        "  | ^^^^^^^^^ never closed by a `}`"
    )


def test_full_label_in_same_file_and_skipped_line() -> None:
    text = "pool kv { capacity 4 }\nstage s {\n  hold kvv 1\n}\n"
    diag = Diagnostic.error(
        "E-parse",
        at(text, "kvv"),
        "unknown pool `kvv`",
        labels=(Label(at(text, "kv"), "declared here"), Label(at(text, "kvv"), "not declared")),
        help="did you mean `kv`?",
    )
    assert render_full(diag, text) == (
        "error[E-parse]: unknown pool `kvv`\n"
        " --> prog.sq:3:8\n"
        "  |\n"
        "1 | pool kv { capacity 4 }\n"
        "  |      -- declared here\n"
        "2 | stage s {\n"
        "3 |   hold kvv 1\n"
        "  |        ^^^ not declared\n"
        "  |\n"
        "  = help: did you mean `kv`?"
    )


def test_full_gutter_width_and_elided_lines() -> None:
    text = "".join(f"line{n}\n" for n in range(1, 13))
    diag = Diagnostic.error(
        "E-parse", at(text, "line12"), "late", labels=(Label(at(text, "line2"), "early"),)
    )
    assert render_full(diag, text) == (
        "error[E-parse]: late\n"
        "  --> prog.sq:12:1\n"
        "   |\n"
        " 2 | line2\n"
        "   | ----- early\n"
        "...\n"
        "12 | line12\n"
        "   | ^^^^^^"
    )


def test_full_two_marks_on_one_line() -> None:
    text = "route a -> a;"
    diag = Diagnostic.error(
        "E-parse",
        at(text, "a", occurrence=1),
        "route to itself",
        labels=(Label(at(text, "a"), "from here"),),
    )
    assert render_full(diag, text) == (
        "error[E-parse]: route to itself\n"
        " --> prog.sq:1:12\n"
        "  |\n"
        "1 | route a -> a;\n"
        "  |       - from here\n"
        "  |            ^"
    )


def test_full_label_in_other_file() -> None:
    lib = "pool kv { capacity 4 }\n"
    text = "use lib;\nhold kv 1;\n"
    diag = Diagnostic.error(
        "E-parse",
        at(text, "kv"),
        "pool `kv` is full",
        labels=(Label(at(lib, "kv", file="lib.sq"), "declared here"),),
    )
    assert render_full(diag, text, sources={"lib.sq": lib}) == (
        "error[E-parse]: pool `kv` is full\n"
        " --> prog.sq:2:6\n"
        "  |\n"
        "2 | hold kv 1;\n"
        "  |      ^^\n"
        " ::: lib.sq:1:6\n"
        "  |\n"
        "1 | pool kv { capacity 4 }\n"
        "  |      -- declared here"
    )
    assert render_full(diag, text) == (
        "error[E-parse]: pool `kv` is full\n"
        " --> prog.sq:2:6\n"
        "  |\n"
        "2 | hold kv 1;\n"
        "  |      ^^\n"
        " ::: lib.sq:1:6: declared here"
    )


def test_full_without_source() -> None:
    assert render_full(parse_error(), None) == (
        "error[E-parse]: expected `;` or `}`, found `set`\n"
        " --> prog.sq:3:5: unexpected `set`\n"
        "  |\n"
        "  = note: a stage body holds only steps\n"
        "  = help: end the previous step with `;`"
    )


def test_full_tabs_wide_characters_and_controls() -> None:
    text = "\tpool \u00e9\U0001f600 x\x1by = 1\n"
    diag = Diagnostic.error("E-parse", at(text, "x"), "bad `x`")
    assert render_full(diag, text) == (
        "error[E-parse]: bad `x`\n"
        " --> prog.sq:1:10\n"
        "  |\n"
        "1 |     pool \u00e9\U0001f600 x\u241by = 1\n"
        "  |              ^"
    )
    diag = Diagnostic.error("E-parse", at(text, "\U0001f600"), "emoji")
    assert render_full(diag, text).endswith("\n  |           ^^")


def test_full_multiline_note_and_fix_title() -> None:
    span = at(PROG, "4")
    diag = Diagnostic.warning(
        "E-parse",
        span,
        "small pool",
        notes=("first line\nsecond line",),
        fix=Fix("raise the capacity to 8", (Edit(span, "8"),), "unsafe"),
    )
    assert render_full(diag, PROG) == (
        "warning[E-parse]: small pool\n"
        " --> prog.sq:1:20\n"
        "  |\n"
        "1 | pool kv { capacity 4 }\n"
        "  |                    ^\n"
        "  |\n"
        "  = note: first line\n"
        "          second line\n"
        "  = help: raise the capacity to 8"
    )


def test_color() -> None:
    plain = render_full(parse_error(), PROG)
    colored = render_full(parse_error(), PROG, color=True)
    assert "\x1b" not in plain
    assert "\x1b[1;31m" in colored  # error: bold red
    assert "\x1b[1;34m" in colored  # gutter: bold blue
    assert "\x1b[1;36m" in colored  # note/help: bold cyan
    warning = Diagnostic.warning("E-parse", at(PROG, "kv"), "w")
    assert "\x1b[1;33m" in render_full(warning, PROG, color=True)


def test_color_false_keeps_source_escapes_out() -> None:
    text = "x\x1b[31m = 1"
    diag = Diagnostic.error("E-parse", at(text, "x"), "m")
    assert "\x1b" not in render_full(diag, text)


def test_concise() -> None:
    assert render_concise(parse_error()) == (
        "prog.sq:3:5: error[E-parse]: expected `;` or `}`, found `set`"
    )
    warning = Diagnostic.warning("E-io", Span.point("a.sq", 0, 1, 1), "cannot\nread")
    assert render_concise(warning) == "a.sq:1:1: warning[E-io]: cannot read"


def test_to_json_shape() -> None:
    span = at(PROG, "4")
    diag = Diagnostic.error(
        "E-parse",
        span,
        "m",
        labels=(Label(at(PROG, "kv"), "here"),),
        notes=("n",),
        fix=Fix("t", (Edit(span, "8"),)),
    )
    data = to_json(diag)
    assert list(data) == ["code", "severity", "message", "span", "labels", "notes", "help", "fix"]
    assert data["span"] == {
        "file": "prog.sq",
        "start": {"line": 1, "column": 20, "offset": 19},
        "end": {"line": 1, "column": 21, "offset": 20},
    }
    assert data["severity"] == "error"
    assert data["labels"] == [{"span": to_json_span(at(PROG, "kv")), "text": "here"}]
    assert data["notes"] == ["n"]
    assert data["help"] is None
    assert data["fix"] == {
        "title": "t",
        "applicability": "safe",
        "edits": [{"span": to_json_span(span), "replacement": "8"}],
    }
    assert to_json(parse_error())["fix"] is None


def to_json_span(span: Span) -> dict:
    return {
        "file": span.file,
        "start": {"line": span.line, "column": span.column, "offset": span.start},
        "end": {"line": span.end_line, "column": span.end_column, "offset": span.end},
    }


def test_render_json() -> None:
    diags = [parse_error(), Diagnostic.note("E-io", Span.point("b.sq", 0, 1, 1), "\u00e9")]
    text = render_json(diags)
    assert json.loads(text) == [to_json(d) for d in diags]
    assert text.startswith('[\n  {\n    "code": "E-parse",\n    "severity": "error",')
    assert "\u00e9" in text
    assert render_json([]) == "[]"


def test_print_diagnostics_summary(monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = io.StringIO()
    second = Diagnostic.error("E-parse", at(PROG, "kv"), "first in file")
    warn = Diagnostic.warning("E-parse", at(PROG, "}", occurrence=1), "w")
    print_diagnostics([parse_error(), second, warn], {"prog.sq": PROG}, file=out)
    text = out.getvalue()
    assert "\x1b" not in text  # StringIO is not a tty
    blocks = text.split("\n\n")
    assert blocks[0] == render_full(second, PROG)  # sorted by position
    assert blocks[1] == render_full(parse_error(), PROG)
    assert text.endswith("\n\nerror: 2 errors, 1 warning in prog.sq\n")


def test_print_diagnostics_summary_forms() -> None:
    def summary(diags) -> str:
        out = io.StringIO()
        print_diagnostics(diags, {}, file=out, color=False)
        return out.getvalue().rstrip("\n").rsplit("\n", 1)[-1]

    one = Diagnostic.warning("E-parse", Span.point("a.sq", 0, 1, 1), "w")
    other = Diagnostic.warning("E-parse", Span.point("b.sq", 0, 1, 1), "w")
    assert summary([one]) == "warning: 1 warning in a.sq"
    assert summary([one, other]) == "warning: 2 warnings in 2 files"
    out = io.StringIO()
    print_diagnostics([], {}, file=out)
    assert out.getvalue() == ""


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_print_diagnostics_auto_color(monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    out = _Tty()
    print_diagnostics([parse_error()], {"prog.sq": PROG}, file=out)
    assert "\x1b[" in out.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    out = _Tty()
    print_diagnostics([parse_error()], {"prog.sq": PROG}, file=out)
    assert "\x1b" not in out.getvalue()


def test_no_color_on_a_dumb_terminal(monkeypatch) -> None:
    # a terminal that says it cannot show escapes (TERM=dumb: Emacs' shell, some CI logs)
    # got colored diagnostics, where the report beside them (rich) was plain
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "dumb")
    out = _Tty()
    print_diagnostics([parse_error()], {"prog.sq": PROG}, file=out)
    assert "\x1b" not in out.getvalue()
    out = _Tty()
    print_diagnostics([parse_error()], {"prog.sq": PROG}, file=out, color=True)  # --color always
    assert "\x1b[" in out.getvalue()
