"""Names of any script (§66): pyserq reads `let λ = 0.5;`, `stage 思考`, `set séjour`, and
serq refused them ("unexpected character `λ`"), though docs/language.md says a name is
letters, digits and `_`. They are names now, read as written (no normalisation: `ｘ` and
`x` are two), on both event paths; an emoji or a combining mark is still refused, as by
the reference."""

from __future__ import annotations

import pytest

import serq
from serq import api
from serq.formatter import format_source
from tests.sim.both_paths import report_json

PROGRAM = """\
// débit λ
let λ = 0.5;
let débit_2 = λ * 2;
stage serveur : fifo(1);
stage 思考 : delay;
workload { arrive poisson(λ); }
session {
  set taille = ~exp(1);
  run serveur (taille);
  run 思考 (débit_2);
  observe séjour = now;
  end;
}
run { horizon 200; }
"""

DISTINCT = """\
let ｋ = 3;
let k = 5;
stage s : delay;
workload { arrive batch(2); }
session {
  set x = 1;
  set ｘ = 2;
  set ﬁ = 10;
  set fi = 20;
  observe both = x * 100 + ｘ;
  observe lig = ﬁ * 100 + fi;
  observe lets = ｋ * 10 + k;
  run s (1);
  end;
}
run { horizon 10; }
"""


def test_names_of_any_script_check_and_format() -> None:
    assert api.check_source(PROGRAM, "p.sq") == []
    once = format_source(PROGRAM, "p.sq").text
    assert "let débit_2 = λ * 2;" in once and "stage 思考 : delay;" in once
    assert format_source(once, "p.sq").text == once
    assert api.check_source(once, "p.sq") == []


@pytest.mark.parametrize("codegen", [True, False])
def test_names_are_read_as_written(codegen: bool) -> None:
    means = {k: v["mean"] for k, v in report_json(DISTINCT, codegen)["observes"].items()}
    assert means == {"both": 102, "lig": 1020, "lets": 35}  # pyserq 0.1.2 says the same


@pytest.mark.parametrize(
    ("name", "column"),
    [("😀", 5), ("e\u0301", 6), ("a\u200db", 6)],
    ids=["emoji", "combining mark", "zero-width joiner"],
)
def test_what_is_no_letter_is_still_refused(name: str, column: int) -> None:
    (d,) = api.check_source(f"let {name} = 0.5;\n", "p.sq")
    assert (d.code, d.span.column) == ("E-parse", column)
    assert d.message.startswith("unexpected character")


# §68: as the reference reads a name (Unicode's Alphabetic property or `_` to begin, that
# and numbers after), not as Python's `\w` does. A vowel sign (`मान`, `கி`) or a circled
# letter is Alphabetic and not `\w`: serq refused those names; a number that is no digit
# (`²`, `½`, `①`) is `\w` and not Alphabetic: serq took it as a name's first character.
# pyserq 0.1.2 agrees with each case below.
NAMED = "stage s : delay;\nworkload { arrive batch(1); }\nsession { run s (1); end; }\n"


@pytest.mark.parametrize("name", ["मान", "கி", "வரி", "x²", "a٣", "Ⓐb", "ⅷ", "ʰx", "_٣"], ids=repr)
def test_names_the_reference_reads(name: str) -> None:
    source = NAMED + f"let {name} = 1;\nlet y_{name} = {name} + 1;\nrun {{ horizon 1; }}\n"
    assert api.check_source(source, "p.sq") == []
    once = format_source(source, "p.sq").text
    assert f"let y_{name} = {name} + 1;" in once


@pytest.mark.parametrize(
    ("text", "char"),
    [("²x", "²"), ("½", "½"), ("①", "①"), ("٣x", "٣")],
    ids=["superscript", "fraction", "circled digit", "digit of another script"],
)
def test_a_number_does_not_begin_a_name(text: str, char: str) -> None:
    (d,) = api.check_source(NAMED + f"let {text} = 1;\nrun {{ horizon 1; }}\n", "p.sq")
    assert (d.code, d.span.line, d.span.column) == ("E-parse", 4, 5)
    assert d.message == f"unexpected character `{char}`"


@pytest.mark.parametrize("number", ["٣", "1٣", "３", "٣.5", "1_٣"])
def test_digits_of_other_scripts_are_no_number(number: str) -> None:
    """`let x = ٣;` was 3 (Python's float reads any script's digits); the reference and
    the grammar's NUMBER take ASCII digits only."""
    (d,) = api.check_source(NAMED + f"let x = {number};\nrun {{ horizon 1; }}\n", "p.sq")
    assert d.code == "E-parse" and d.span.line == 4
    assert d.message == f"unexpected character `{'３' if '３' in number else '٣'}`"


def test_the_grammar_reads_names_and_blanks_as_source_text_does() -> None:
    """grammar/serq.lark cannot import serq/syntax/source_text.py: the same text."""
    import re
    from pathlib import Path

    from serq.syntax import source_text

    lark = (Path(__file__).resolve().parents[2] / "grammar" / "serq.lark").read_text("utf-8")
    assert re.search(r"^NAME: /(.*)/$", lark, re.M).group(1) == source_text.NAME
    assert re.search(r"^WS: /(.*)/$", lark, re.M).group(1) == source_text.BLANK + "+"


ARGUMENT = """\
use "std/args";
fn main() {
  let a = args.number("{name}", 1);
  stage s : delay;
  workload { arrive batch(1); }
  session { run s (1); observe v = a; end; }
  run { horizon 10; }
}
"""


@pytest.mark.parametrize("name", ["x²", "Ⓐb", "मान", "λ"])
def test_a_program_argument_is_named_as_a_let_is(name: str) -> None:
    """`args.number("x²", 1)` was "`x²` is not a name an argument can have" (Python's
    `isidentifier`, which refuses `²` and `Ⓐ`); pyserq 0.1.4 takes the names its `let`s
    take, and `--set x²=7` gives it."""
    source = ARGUMENT.replace("{name}", name)
    assert api.check_source(source, "p.sq") == []
    compiled = serq.compile(source=source, sets={name: "7"})
    assert serq.run(compiled).observes["v"].mean == 7


@pytest.mark.parametrize("name", ["²x", "1a", "a-b", "é\u0301"[1:] + "x"])
def test_what_is_no_name_is_no_argument(name: str) -> None:
    (d,) = api.check_source(ARGUMENT.replace("{name}", name), "p.sq")
    assert d.message == f"`{name}` is not a name an argument can have"
