"""A pool or stage member whose index draws (`hold p[floor(~uniform(0, 2))]`, `drop`,
`release`, `run s[...]`) draws from the session's stream, in the statement's order, as
the statement's other expressions do: the index drawn in place gives the report that a
`set` of it just before gives (a hold resolves its pools before its units; a run draws
its work before its stage), on the interpreter and on the compiled path alike.

Before, the interpreter compiled such an index with whatever stream the expression
compiler had last been given (another statement's, or a stream of its own), so the
draw moved with the order statements were compiled in and the two paths disagreed."""

from __future__ import annotations

import pytest

import serq

HEAD = """pool p[3] { cap 2; block 1; evict lru; }
stage s[2] : fifo(1);
stage think : delay;
workload {
  arrive poisson(1.5);
}
"""
TAIL = "run { horizon 300; warmup 0; seed 11; }\n"

IN_PLACE = {
    "hold": "hold p[floor(~uniform(0, 3))] (1) { run s[0] (~exp(2)); } cache (1);",
    "two pools": "hold p[floor(~uniform(0, 3))] (1), q (0.5) { run s[0] (~exp(2)); };",
    "run": "run s[floor(~uniform(0, 2))] (~exp(2));",
    "drop": "hold p[0] (1) { run s[0] (~exp(2)); } cache (1); drop p[floor(~uniform(0, 3))];",
}
SET_FIRST = {
    "hold": "set k = floor(~uniform(0, 3)); hold p[k] (1) { run s[0] (~exp(2)); } cache (1);",
    "two pools": "set k = floor(~uniform(0, 3)); hold p[k] (1), q (0.5) { run s[0] (~exp(2)); };",
    # a run draws its work first, then its stage's index
    "run": "set w = ~exp(2); set k = floor(~uniform(0, 2)); run s[k] (w);",
    "drop": "hold p[0] (1) { run s[0] (~exp(2)); } cache (1); set k = floor(~uniform(0, 3)); "
    "drop p[k];",
}


def _program(body: str, tmp_path, name: str) -> str:
    head = HEAD + ("pool q { cap 2; }\n" if "q (" in body else "")
    # the statement first: nothing compiled before it in the session gives the stream
    text = head + "session {\n  " + body + "\n  run think (~exp(1));\n}\n" + TAIL
    path = tmp_path / f"{name}.sq"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _report(path: str, codegen: bool) -> str:
    return serq.run(serq.compile(path, codegen=codegen)).json()


@pytest.mark.parametrize("case", sorted(IN_PLACE))
def test_an_index_drawn_in_place_draws_from_the_session_stream(case, tmp_path):
    in_place = _program(IN_PLACE[case], tmp_path, "in_place")
    set_first = _program(SET_FIRST[case], tmp_path, "set_first")
    reports = {
        (where, codegen): _report(path, codegen)
        for where, path in (("in place", in_place), ("set first", set_first))
        for codegen in (True, False)
    }
    assert len(set(reports.values())) == 1, sorted(reports)
