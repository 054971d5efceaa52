"""Names of any script (§66): pyserq reads `let λ = 0.5;`, `stage 思考`, `set séjour`, and
serq refused them ("unexpected character `λ`"), though docs/language.md says a name is
letters, digits and `_`. They are names now, read as written (no normalisation: `ｘ` and
`x` are two), on both event paths; an emoji or a combining mark is still refused, as by
the reference."""

from __future__ import annotations

import pytest

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
