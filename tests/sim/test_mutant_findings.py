"""Programs the differential mutation search (tests/oracle/mutants.py) found, each reduced
to what it needs, with what serq must answer on both of its event paths (tests/sim/NOTES.md
§22 has the round)."""

from __future__ import annotations

import pytest

from serq.sim.api import compile_program, execute

# `choose j in 8` over an array of 4: the keys of j = 4 .. 7 name no member. The compiled
# path wrote `s[j]` out with j a constant and subscripted the program's whole list of
# stages (an IndexError, E-internal; with more stages declared, another stage's member);
# the interpreter reports the index. pyserq 0.1.2 refuses it too ("index 7 out of range").
CHOOSE_PAST_THE_ARRAY = """\
stage s[4] : fifo(1);
stage other : delay;
workload { arrive batch(2); }
session {
  choose j in 8 by (queue(s[j]) + busy(s[j]));
  run s[j] (1);
}
run { horizon 10; }
"""


@pytest.mark.parametrize("codegen", [True, False])
def test_a_choose_past_its_array_is_an_index_error_at_the_key(codegen):
    compiled, diagnostics = compile_program(CHOOSE_PAST_THE_ARRAY, "choose.sq")
    assert compiled is not None, diagnostics
    report, diagnostics = execute(compiled, codegen=codegen)
    assert report is None
    (error,) = [d for d in diagnostics if d.severity.name == "ERROR"]
    assert error.code == "E-run"
    assert error.message == "index 4 is out of range: the array has 4 members, 0 .. 3"
    at = CHOOSE_PAST_THE_ARRAY[error.span.start : error.span.end]
    assert at == "s[j]" and error.span.line == 5
