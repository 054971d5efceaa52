"""A `choose` whose keys meet a NaN before they differ: the NaN is equal to nothing.

The spec compares a `choose`'s keys in order, then takes the smallest index; it says
nothing of NaN. pyserq 0.1.2 scans with `<` on the keys (a NaN is neither less nor equal,
so a candidate whose keys meet a NaN before a smaller key never replaces the best so far),
and NOTES.md §21 keeps that rule. serq compared the keys as Python tuples, whose `<` takes
an element for equal to itself when it is the same object before it compares: a NaN
attribute read for every candidate, or the one NaN that `0 / 0`, `sqrt(-1)`, `ln(-1)` and
`pow(-1, 0.5)` give (`arith.DEFAULT_NAN`), counted as a tie there, and the next key chose
(the last candidate for `(z, -j)`), while `z * 1` or `inf - inf`, new objects each time,
kept the first. Both event paths now compare the keys as the reference does
(`exprs.keys_less`; NOTES.md §27). Each program runs on the generated code and on the
interpreter, three candidates (written out) and twenty (past `UNROLL`: a loop), and
against pyserq.
"""

from __future__ import annotations

import json

import pytest

from serq.sim import api as sim_api

PROGRAM = """
stage s[{n}] : fifo(1);
workload {{ arrive renewal(1); init {{ set z = inf - inf; }} }}
session {{
  choose j in {n} by ({keys});
  observe pick = j;
  run s[j] (0.5);
}}
run {{ horizon 10; warmup 0; seed 1; }}
"""

# keys, and the candidate every session picks among three (the same among twenty: a NaN
# first meets nothing less, so candidate 0 stays; a key that differs before it decides)
CASES = [
    ("z, -j", 0),  # an attribute's NaN, the same object for every candidate
    ("0 / 0, -j", 0),  # arith's one NaN
    ("(j - j) / 0, -j", 0),
    ("sqrt(j - 5), -j", 0),
    ("ln(j - 5), -j", 0),
    ("pow(j - 5, 0.5), -j", 0),
    ("floor(z), -j", 0),
    ("z, z, -j", 0),
    ("z, queue(s[j]), -j", 0),
    ("z * 1, -j", 0),  # a new NaN each time: already so
    ("inf - inf, -j", 0),
    ("-j, z", 2),  # the keys differ before the NaN: it decides nothing
    ("j == 0 ? 1 : 0, z, -j", 1),  # 1 and 2 tie on the first key, then meet the NaN
    ("z", 0),  # one key alone
]


def _picks(text: str, codegen: bool) -> list[float]:
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    report, ran = sim_api.execute(compiled, codegen=codegen)
    assert report is not None, ran
    return list(report.observe("pick").samples)


@pytest.mark.parametrize("n", [3, 20])
@pytest.mark.parametrize(("keys", "picked"), CASES)
def test_a_nan_key_is_equal_to_nothing(keys, picked, n):
    text = PROGRAM.format(n=n, keys=keys)
    expected = float(n - 1 if picked == 2 else picked)
    for codegen in (True, False):
        assert set(_picks(text, codegen)) == {expected}, (keys, codegen)


@pytest.mark.parametrize(("keys", "picked"), CASES)
def test_the_reference_chooses_alike(keys, picked, same_as_reference):
    same_as_reference(PROGRAM.format(n=3, keys=keys), "choose.sq")


def test_both_paths_give_one_report():
    """A router whose first key is a ratio of counts, 0 / 0 while a replica is idle, with
    a tie-breaker after it: every field of the report the same on both paths."""
    text = """
pool p[4] { cap 2; }
stage s[4] : ps(1);
workload { arrive poisson(1.5); }
session {
  set t0 = now;
  choose i in 4 by (queued(p[i]) / holders(p[i]), -i, queue(s[i]));
  hold p[i] (1) { run s[i] (~exp(1)); }
  observe r = now - t0;
  observe at = i;
}
run { horizon 300; warmup 0; seed 4; }
"""
    reports = []
    for codegen in (True, False):
        compiled, _ = sim_api.compile_program(text, "t.sq")
        report, ran = sim_api.execute(compiled, codegen=codegen)
        assert report is not None, ran
        samples = {n: (list(o.samples), list(o.times)) for n, o in report.observes.items()}
        reports.append((json.loads(report.json()), samples))
    assert reports[0] == reports[1]
    # an idle replica's key is NaN: the first candidate stays unless a later one is less
    assert 0.0 in reports[0][1]["at"][0]
