"""A `{` that nothing closes before the end of the file is reported at that `{`.

The error stood at the end of the file, where there is nothing to act on ("expected `}`
to close `fn main`, found end of file" under a 600-line program, with nothing at the `{`
the user had just typed; "expected `}` or a statement, found end of file" with the `{`
as a label only). Now the error is at the outermost `{` never closed, the end of the file
a label (in the editor, related information), as rustc and TypeScript name an unclosed
delimiter; an item inside `fn main` whose last `}` is indented less than its first line
is named as the likely culprit (the `}` it took was `fn main`'s). The parse of the items
after the `{` recovers as before.
"""

from __future__ import annotations

from serq import api
from serq.syntax import ast, parse
from serq_lsp.analysis import analyze
from serq_lsp.convert import lsp_diagnostics

FN_MAIN = """let lambda = 0.8;

fn main() {
  stage server : fifo(1);

  workload {
    arrive poisson(lambda);
  }

  server {
    run server (cost(server, ~exp(1)));
    observe sojourn = now;

}
"""

SESSION = """stage s : fifo(1);
workload { arrive poisson(1); }
session {
  run s (1);
  observe w = now;
"""


def test_a_block_open_at_the_end_of_the_file_is_reported_at_its_brace():
    (error,) = api.check_source(SESSION, "p.sq")
    assert error.code == "E-parse"
    assert (error.span.line, error.span.column) == (3, 9)
    assert error.message == "this `{` is never closed: the file ends before its `}`"
    (end,) = error.labels
    assert end.span.start == len(SESSION)
    assert end.text == "expected `}` or a statement, found end of file"


def test_fn_main_open_at_the_end_names_its_brace_and_the_item_that_took_its_close():
    (error,) = parse(FN_MAIN, "p.sq").diagnostics
    assert (error.span.line, error.span.column) == (3, 11)
    assert "`fn main` is never closed" in error.message
    labels = [(label.span.line, label.span.column, label.text) for label in error.labels]
    assert labels[0] == (15, 1, "expected `}` to close `fn main`, found end of file")
    assert (10, 10, "perhaps this `{` is the one never closed") in labels
    assert (14, 1, "as this `}` that closes it is indented less than its line") in labels
    # the items after the `{` are still read
    main = parse(FN_MAIN, "p.sq").module.main
    assert [type(i) for i in main.items] == [ast.Stage, ast.Workload, ast.Server]


def test_a_well_indented_fn_main_left_open_names_no_item():
    text = FN_MAIN.replace("\n\n}\n", "\n  }\n")
    (error,) = parse(text, "p.sq").diagnostics
    assert [label.text for label in error.labels] == [
        "expected `}` to close `fn main`, found end of file"
    ]


def test_the_editor_shows_it_at_the_brace_with_the_end_as_related_information():
    analysis = analyze(SESSION, "/nowhere/p.sq")
    (diag,) = lsp_diagnostics(analysis, "file:///nowhere/p.sq")
    assert (diag.range.start.line, diag.range.start.character) == (2, 8)
    (related,) = diag.related_information
    assert (related.location.range.start.line, related.location.range.start.character) == (5, 0)


def test_an_error_inside_the_block_keeps_its_place():
    # an error met before the end of the file stays where it was met
    text = SESSION + "stage t : fifo(1) x;\n"
    errors = [d for d in api.check_source(text, "p.sq") if d.code == "E-parse"]
    assert all("file ends" not in d.message for d in errors)
