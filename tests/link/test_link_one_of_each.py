"""What a program has one of: `fn main`, and in a workload `arrive`, `trace`, `init` and
`turn`; in `fn main`, a workload needs a server and a server a workload.

Found in round 23 by writing the shapes the reference refuses next to serq's answer:

- two `fn main() { }`: serq took the first's items and said nothing (both pyserq 0.1.4's
  "a program has exactly one `fn main()`");
- a `fn main` workload with no `server`, or a `server` with no workload: serq ran sessions
  that do nothing, or no session at all (0.1.4: "a workload needs a `server` block to
  handle its turns", "`server` needs a `workload`");
- two `turn` (or `init`) blocks in one workload: serq ran both, the references keep the
  last and drop the first silently (its `observe x` gone from their report, in serq's),
  and two `arrive`s kept the last in both. The spec's workload lists each clause once;
  a second is now an `E-structure` at its word, labelled at the first.
"""

from __future__ import annotations

import pytest

from serq import api
from tests.conftest import COMPILES_014

PATH = "/tmp/one_of_each.sq"
SERVER = "  server { run s (cost(s, 1)); }\n"
WORKLOAD = "  workload { arrive poisson(1); }\n"


def _main(*items: str) -> str:
    return "fn main() {\n  stage s : fifo(1);\n" + "".join(items) + "}\n"


CASES = [
    ("two mains", _main(WORKLOAD, SERVER) + "fn main() { }\n", [(6, 1, "E-parse")]),
    ("two empty mains", "fn main() { }\nfn main() { }\n", [(2, 1, "E-parse")]),
    ("no server", _main(WORKLOAD), [(3, 3, "E-sides")]),
    ("no server, no arrivals", _main("  workload { }\n"), [(3, 3, "E-sides")]),
    ("no workload", _main(SERVER), [(3, 3, "E-sides")]),
    (
        "two turns",
        _main(
            "  workload { arrive poisson(1); turn { set a = 1; } turn { set b = 2; } }\n", SERVER
        ),
        [(3, 53, "E-structure")],
    ),
    (
        "two inits",
        _main(
            "  workload { arrive poisson(1); init { set a = 1; } init { set b = 2; } }\n", SERVER
        ),
        [(3, 53, "E-structure")],
    ),
    (
        "two arrives",
        _main("  workload { arrive poisson(1); arrive poisson(2); }\n", SERVER),
        [(3, 33, "E-structure")],
    ),
]
ACCEPTED = [
    ("one of each", _main(WORKLOAD, SERVER)),
    ("an empty main", "fn main() { }\n"),
    (
        "two hiddens",
        _main(
            "  workload { arrive poisson(1); turn { set a = 1; set b = 2; } hidden a; hidden b; }\n",
            SERVER,
        ),
    ),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_at_its_place(source, expected):
    got = [(d.span.line, d.span.column, d.code) for d in api.check_source(source, PATH)]
    assert got == expected


@pytest.mark.parametrize("source", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_accepted(source):
    assert api.check_source(source, PATH) == []


def test_the_old_dialect_too():
    text = (
        "stage s : fifo(1);\nworkload { arrive poisson(1); turn { observe x = 1; } "
        "turn { set b = 2; } }\nsession { turn; run s (b); }\nrun { horizon 10; }\n"
    )
    (d,) = api.check_source(text, PATH)
    assert (d.code, d.span.line, d.span.column) == ("E-structure", 2, 55)
    assert d.message == "a second `turn` in `workload`: a workload has one"
    assert [(label.span.column, label.text) for label in d.labels] == [(31, "the first is here")]


_REFUSES = {"two mains", "two empty mains", "no server", "no server, no arrivals", "no workload"}


@pytest.mark.parametrize(
    ("label", "source"), [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_what_the_reference_does(run014, label, source):
    child = COMPILES_014
    said = run014(child, source)
    if label in _REFUSES:
        assert said != "ran"
    else:  # the last clause kept, the first dropped (a link error when it is read)
        assert said == "ran" or "unknown name `a`" in said, said
