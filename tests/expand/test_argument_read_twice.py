"""A program argument read by two `let`s is an error, as in the reference.

`let r = args.number("r", 0.5); let q = args.number("r", 0.7);` ran, and `--set r=2` gave
`q` 2 and left `r` at 0.5 (the override looked the argument up in a dict, where the
second let won): a silent wrong number. pyserq 0.1.4 refuses the program ("argument `r`
is declared twice; read it once and reuse its binding"). Now an `E-name-clash` at the
second reading, labelled at the first; the incremental analysis ties the two `let`s by
the argument's name, so an edit that makes two readings of one name is caught there too.
"""

from __future__ import annotations

import pytest

from serq import api
from serq.expand.loader import read_file
from serq.incremental import Cache, analyze
from tests.conftest import COMPILES_014

PATH = "/tmp/args_twice.sq"
ONE = """use "std/args";
fn main() {
  let r = args.number("r", 0.5);
  let q = args.number("q", 0.7);
  stage s : fifo(1);
  workload { arrive poisson(r); }
  server { run s (cost(s, q)); }
}
"""
TWICE = ONE.replace('args.number("q"', 'args.number("r"')


def test_the_second_reading_is_the_error():
    (d,) = api.check_source(TWICE, PATH)
    assert (d.code, d.span.line, d.span.column) == ("E-name-clash", 4, 23)
    assert d.message == "the program argument `r` is read twice"
    assert [(label.span.line, label.span.column, label.text) for label in d.labels] == [
        (3, 23, "first read here")
    ]
    assert api.check_source(ONE, PATH) == []


def test_with_a_set_too():
    diagnostics = api.link_source(TWICE, PATH, sets={"r": "2"})[1]
    assert [d.code for d in diagnostics] == ["E-name-clash"]


@pytest.mark.parametrize(("first", "then"), [(ONE, TWICE), (TWICE, ONE)])
def test_an_edit_between_one_and_two_readings(first, then):
    cache = Cache()
    analyze(first, PATH, cache, read_file)
    got = analyze(then, PATH, cache, read_file).diagnostics
    assert got == api.check_source(then, PATH)


def test_the_reference_refuses_it_too(run014):
    child = COMPILES_014
    said = run014(child, TWICE)
    assert said.startswith("4:") and "argument `r` is declared twice" in said, said
    assert run014(child, ONE) == "ran"
