"""A `def` whose body has a syntax error: its calls add no error of their own.

Half typing `a +` in the block of a library's `def level(a, b) { a + b }` made the
library's parse error appear on the program, as it should, and then one E-def "`level`
names statements, called here as an expression" at every call (600 in an editor on a
long program): the parser's recovery reads a block with an error as statements, whatever
the user meant. A call of such a `def` now says nothing more.
"""

from __future__ import annotations

import pytest

from serq import api
from serq_lsp.analysis import analyze

PROGRAM = """use "lib.sq";
stage s : fifo(1);
workload { arrive poisson(1); }
session { run s (level(1, 2)); observe x = level(2, 3); }
run { horizon 5; }
"""


@pytest.mark.parametrize("body", ["{\n  a +\n}\n", "{\n  a + b\n  set\n}\n"])
def test_calls_of_a_def_with_a_syntax_error(tmp_path, body):
    (tmp_path / "lib.sq").write_text(f"def level(a, b) {body}")
    path = str(tmp_path / "main.sq")
    found = api.link_source(PROGRAM, path)[1]
    assert found and {str(d.code) for d in found} == {"E-parse"}, [d.message for d in found]
    assert {str(d.code) for d in analyze(PROGRAM, path).diagnostics} == {"E-parse"}


def test_calls_of_a_statement_def_as_an_expression_are_still_errors(tmp_path):
    (tmp_path / "lib.sq").write_text("def level(a, b) {\n  set x = a;\n}\n")
    found = api.link_source(PROGRAM, str(tmp_path / "main.sq"))[1]
    assert [str(d.code) for d in found] == ["E-def", "E-def"]
    assert "names statements" in found[0].message
