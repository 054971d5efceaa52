"""Name resolution: every error of a program in one pass, each at its line:column.

Each case is a few items after the same four declarations (HEAD, lines 1-4), so the case's
own text is line 5. The expected diagnostics are `(line, column, code)`. Where pyserq
0.1.2 rejects the program too, the case says so and the test confirms it (the reference
stops at its first error, so only that it fails, and its line when it gives one); the
cases marked OURS are stricter than the reference on purpose (see `STRICTER`).
"""

from __future__ import annotations

import re

import pytest

from serq import api
from serq.diagnostics import Diagnostic

HEAD = (
    "stage svc : fifo;\nstage sa[2] : fifo;\npool kv { cap 10; block 4; }\npool ka[2] { cap 10; }\n"
)
RUN = "\nrun { horizon 1; }\n"
UNKNOWN, CLASH, KIND = "E-unknown-name", "E-name-clash", "E-wrong-kind"
ARITY, INDEX, CONSTANT, STRUCTURE = "E-arity", "E-index", "E-constant", "E-structure"
BOTH, OURS = "both", "ours"  # rejected by the reference too / by serq-py only

CASES = [
    # unknown names: values, functions, distributions, pools, stages
    ("unknown name", "session { run svc (foo); }", [(5, 20, UNKNOWN)], BOTH),
    ("unknown function", "session { run svc (foo(1)); }", [(5, 20, UNKNOWN)], BOTH),
    ("a distribution called", "session { run svc (uniform(1, 2)); }", [(5, 20, UNKNOWN)], BOTH),
    ("unknown distribution", "session { run svc (~foo(1)); }", [(5, 21, UNKNOWN)], BOTH),
    ("unknown pool", "session { hold kx (1) { } }", [(5, 16, UNKNOWN)], BOTH),
    ("unknown stage in admit via", "pool q { admit via sv; }", [(5, 20, UNKNOWN)], BOTH),
    ("unknown memory", "stage e : step { budget 1; cost 1; memory zz; }", [(5, 43, UNKNOWN)], BOTH),
    # every error of the program, not only the first
    (
        "three unknown names",
        "session { run svc (foo); run svc (bar); set x = baz; }",
        [(5, 20, UNKNOWN), (5, 35, UNKNOWN), (5, 49, UNKNOWN)],
        BOTH,
    ),
    (
        "errors of every kind at once",
        "let a = 0/0; session { run sa (min(1)); hold svc (1) { run svc (foo); } }",
        [(5, 9, CONSTANT), (5, 28, INDEX), (5, 32, ARITY), (5, 46, KIND), (5, 65, UNKNOWN)],
        BOTH,
    ),
    # arity of functions, observables, distributions
    ("min with one argument", "session { run svc (min(1)); }", [(5, 20, ARITY)], BOTH),
    ("floor with two", "session { run svc (floor(1, 2)); }", [(5, 20, ARITY)], BOTH),
    ("used with two", "session { run svc (used(kv, 1)); }", [(5, 20, ARITY)], BOTH),
    ("price with two", "session { run svc (price(svc, 1)); }", [(5, 20, ARITY)], BOTH),
    ("~exp with two", "session { run svc (~exp(1, 2)); }", [(5, 21, ARITY)], BOTH),
    ("~uniform with one", "session { run svc (~uniform(1)); }", [(5, 21, ARITY)], BOTH),
    # a pool where a stage goes, and the other way round, and either as a value
    ("used of a stage", "session { run svc (used(svc)); }", [(5, 25, KIND)], BOTH),
    ("queue of a pool", "session { run svc (queue(kv)); }", [(5, 26, KIND)], BOTH),
    ("run a pool", "session { run kv (1); }", [(5, 15, KIND)], BOTH),
    ("hold a stage", "session { hold svc (1) { } }", [(5, 16, KIND)], BOTH),
    ("grow a stage", "session { hold kv (1) { grow svc (1); } }", [(5, 30, KIND)], BOTH),
    ("growing a stage", "session { run svc (1) growing svc; }", [(5, 31, KIND)], BOTH),
    ("memory a stage", "stage e : step { budget 1; cost 1; memory svc; }", [(5, 43, KIND)], BOTH),
    ("admit via a pool", "pool q { admit via kv; }", [(5, 20, KIND)], BOTH),
    ("spill via a pool", "pool q { spill kv via kv (1) when (1); }", [(5, 23, KIND)], BOTH),
    ("a pool as a value", "session { run svc (kv); }", [(5, 20, KIND)], BOTH),
    ("a stage as a value", "session { run svc (svc + 1); }", [(5, 20, KIND)], BOTH),
    (
        "blocksize without block",
        "pool b { cap 3; } session { run svc (blocksize(b)); }",
        [(5, 38, KIND)],
        BOTH,
    ),
    # indices
    ("an array without index", "session { run sa (1); }", [(5, 15, INDEX)], BOTH),
    ("a pool array without index", "session { run svc (used(ka)); }", [(5, 25, INDEX)], BOTH),
    ("index out of range", "session { run sa[2] (1); }", [(5, 18, INDEX)], BOTH),
    ("negative index", "session { run sa[-1] (1); }", [(5, 18, INDEX)], BOTH),
    ("fractional index", "session { run sa[0.5] (1); }", [(5, 18, INDEX)], BOTH),
    ("constant index over lets", "let n = 2; session { run sa[n] (1); }", [(5, 29, INDEX)], BOTH),
    ("NaN index", "session { run sa[0/0] (1); }", [(5, 18, INDEX)], BOTH),
    ("a scalar indexed", "session { run svc[0] (1); }", [(5, 19, INDEX)], OURS),
    # constants
    ("let NaN", "let x = 0/0; session { run svc (x); }", [(5, 9, CONSTANT)], BOTH),
    ("cap NaN", "pool z { cap inf - inf; }", [(5, 14, CONSTANT)], BOTH),
    ("let of an attribute", "let x = serial;", [(5, 9, CONSTANT)], BOTH),
    ("let of a later let", "let a = b; let b = 1;", [(5, 9, CONSTANT)], BOTH),
    ("let of a draw", "let a = ~exp(1);", [(5, 9, CONSTANT)], BOTH),
    ("cap of an attribute", "pool z { cap serial; }", [(5, 14, CONSTANT)], BOTH),
    ("cap of an observable", "pool z { cap used(kv); }", [(5, 14, CONSTANT)], BOTH),
    ("cap of a context variable", "pool z { cap now; }", [(5, 14, CONSTANT)], BOTH),
    ("block of an attribute", "pool z { block serial; }", [(5, 16, CONSTANT)], BOTH),
    ("fifo of an attribute", "stage z : fifo(serial);", [(5, 16, CONSTANT)], BOTH),
    ("fifo of 1.5", "stage z : fifo(1.5);", [(5, 16, CONSTANT)], BOTH),
    ("fifo of 0", "stage z : fifo(0);", [(5, 16, CONSTANT)], BOTH),
    ("family of 0", "stage z[0] : fifo;", [(5, 9, CONSTANT)], BOTH),
    ("family of an attribute", "pool z[serial] { cap 1; }", [(5, 8, CONSTANT)], BOTH),
    ("poisson rate NaN", "workload { arrive poisson(0/0); }", [(5, 27, CONSTANT)], BOTH),
    (
        "poisson rate of an attribute",
        "workload { arrive poisson(serial); }",
        [(5, 27, CONSTANT)],
        BOTH,
    ),
    ("renewal of an attribute", "workload { arrive renewal(serial); }", [(5, 27, CONSTANT)], BOTH),
    ("closed of 2.5", "workload { arrive closed(2.5); }", [(5, 26, CONSTANT)], OURS),
    ("horizon of an attribute", "run { horizon serial; }", [(5, 15, CONSTANT)], BOTH),
    ("warmup NaN", "run { horizon 1; warmup 0/0; }", [(5, 25, CONSTANT)], BOTH),
    ("seed of 1.5", "run { horizon 1; seed 1.5; }", [(5, 23, CONSTANT)], OURS),
    # clashes in the one namespace of values and resources
    ("let present", "let present = 1;", [(5, 5, CLASH)], BOTH),
    ("let now", "let now = 1;", [(5, 5, CLASH)], BOTH),
    ("let inf", "let inf = 1;", [(5, 5, CLASH)], BOTH),
    ("set present", "session { set present = 1; }", [(5, 15, CLASH)], BOTH),
    ("set inf", "session { set inf = 1; }", [(5, 15, CLASH)], BOTH),
    ("choose tokens", "session { choose tokens in 2 by (1); }", [(5, 18, CLASH)], BOTH),
    ("set a let", "let a = 1; session { set a = 2; }", [(5, 26, CLASH)], BOTH),
    ("choose a let", "let a = 1; session { choose a in 2 by (1); }", [(5, 29, CLASH)], BOTH),
    ("let serial", "let serial = 1;", [(5, 5, CLASH)], BOTH),
    ("let out", "let out = 1;", [(5, 5, CLASH)], BOTH),
    ("a pool twice", "pool kv { cap 2; }", [(5, 6, CLASH)], BOTH),
    ("a stage twice", "stage svc : delay;", [(5, 7, CLASH)], BOTH),
    ("a gauge twice", "gauge x = used(kv); gauge x = used(kv);", [(5, 27, CLASH)], BOTH),
    (
        "a gauge and an observe",
        "gauge x = used(kv); session { observe x = 1; }",
        [(5, 7, CLASH)],
        BOTH,
    ),
    # a definition and a let, a pool or a stage (found in round 23: serq took them)
    ("a def and a let", "let f = 1; def f() = 2; session { run svc (f()); }", [(5, 16, CLASH)], BOTH),
    ("a def and a pool", "def kv() = 2; session { run svc (kv()); }", [(5, 5, CLASH)], BOTH),
    ("a def and a stage", "def sa(w) { run svc (w); } session { sa(1); }", [(5, 5, CLASH)], BOTH),
    ("a let twice", "let a = 1; let a = 2;", [(5, 16, CLASH)], OURS),
    ("a let and a stage", "let svc = 1;", [(5, 5, CLASH)], OURS),
    ("a pool and a stage", "pool svc { cap 1; }", [(5, 6, CLASH)], OURS),
    # a built-in attribute's name taken by a stage or a pool twice: a clash serq missed,
    # as a built-in is no one's declaration and a stage no value (§66; once is no clash)
    ("a stage named think twice", "stage think : delay; stage think : delay;", [(5, 28, CLASH)], BOTH),
    ("a pool named serial twice", "pool serial { cap 1; } pool serial { cap 2; }", [(5, 29, CLASH)], BOTH),
    ("a pool and a stage named out", "pool out { cap 1; } stage out : delay;", [(5, 27, CLASH)], OURS),
    ("an attribute and a pool", "session { set kv = 1; }", [(5, 15, CLASH)], OURS),
    ("a stage named now", "stage now : delay;", [(5, 7, CLASH)], OURS),
    # families joined member for member
    ("admit via 2 for 3", "pool q[3] { admit via sa; }", [(5, 23, STRUCTURE)], BOTH),
    (
        "memory 2 for 3",
        "stage e[3] : step { budget 1; cost 1; memory ka; }",
        [(5, 46, STRUCTURE)],
        BOTH,
    ),
]

# Where serq-py refuses what pyserq 0.1.2 accepts, and why.
STRICTER = {
    "a scalar indexed": "the spec: an array needs an index and a scalar takes none",
    "closed of 2.5": "a population is a whole number (the reference truncates it)",
    "seed of 1.5": "a seed is a whole number (the reference truncates it)",
    "a let twice": "two declarations of one name are a clash, as for pools and stages",
    "a let and a stage": "values and resources share one namespace (the brief of serq-py)",
    "a pool and a stage": "values and resources share one namespace",
    "a pool and a stage named out": "values and resources share one namespace",
    "an attribute and a pool": "values and resources share one namespace",
    "a stage named now": "a context variable's name is the language's",
}
POSITION = re.compile(r"^(\d+):(\d+):")
_DECLARE = "declare it with `let`, or assign it with `set` to make it an attribute"


def diagnostics_of(text: str) -> list[Diagnostic]:
    program, diagnostics = api.link_source(text, "t.sq")
    assert (program is None) == any(d.code.startswith("E-") for d in diagnostics)
    return diagnostics


def program_text(case: str) -> str:
    return HEAD + case + ("" if case.startswith("run {") else RUN)


@pytest.mark.parametrize(("source", "expected"), [c[1:3] for c in CASES], ids=[c[0] for c in CASES])
def test_each_error_at_its_position(source, expected):
    got = [(d.span.line, d.span.column, d.code) for d in diagnostics_of(program_text(source))]
    assert got == expected


@pytest.mark.parametrize(
    ("label", "source", "verdict"), [(c[0], c[1], c[3]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_reference_agrees(label, source, verdict):
    pyserq = pytest.importorskip("pyserq")
    text = program_text(source)
    try:
        pyserq.compile(source=text)
    except ValueError as error:
        assert verdict == BOTH, f"the reference rejects it too: {error}"
        position = POSITION.match(str(error))
        ours = diagnostics_of(text)[0]
        if position:
            assert int(position.group(1)) == ours.span.line
        return
    assert verdict == OURS and label in STRICTER, "the reference accepts it"


def test_did_you_mean_with_the_declaration_labelled():
    text = program_text("session { set prompt = 1; run svc (prompt2); }")
    (d,) = diagnostics_of(text)
    assert d.message == "unknown name `prompt2`"
    assert d.help == "did you mean `prompt`?"
    assert [(label.span.line, label.span.column, label.text) for label in d.labels] == [
        (5, 15, "`prompt` is declared here")
    ]


def test_no_suggestion_when_two_names_are_close():
    text = program_text("session { set prompt1 = 1; set prompt2 = 1; run svc (prompt); }")
    (d,) = diagnostics_of(text)
    assert d.help is not None and "did you mean" not in d.help
    assert d.labels == ()


@pytest.mark.parametrize(
    ("source", "help", "labelled"),
    [
        ("session { run svc (~exp(usde(kv))); }", "did you mean `used`?", False),
        ("session { run svc (budgetleft(svc)); }", "did you mean `budget_left`?", False),
        ("session { run svc (~expo(1)); }", "did you mean `exp`?", False),
        ("session { run svcc (1); }", "did you mean `svc`?", True),
        ("session { hold kvv (1) { } }", "did you mean `kv`?", True),
        ("session { hold kb (1) { } }", None, False),  # `kv` and `ka` are as close
        ("session { run svc (a); }", _DECLARE, False),  # not `age`: too short to be a typo
        ("let Lambda = 1; workload { arrive poisson(Lamda); }", "did you mean `Lambda`?", True),
        (
            "session { run svc (uniform(1, 2)); }",
            "`~uniform(...)` draws from a distribution",
            False,
        ),
    ],
)
def test_suggestions_come_from_the_right_namespace(source, help, labelled):
    """Functions and distributions are the language's, with no declaration to label."""
    (d,) = diagnostics_of(program_text(source))
    assert d.help == help
    assert len(d.labels) == labelled


@pytest.mark.parametrize(
    "source",
    [
        "def f() = 2; session { set f = 1; run svc (f() + f); }",
        "def f() = 2; gauge f = used(kv); session { run svc (f()); }",
        "def f() = 2; session { run svc (f()); observe f = 1; }",
    ],
    ids=["an attribute", "a gauge", "an observation"],
)
def test_a_def_may_share_a_name_with(source):
    """...what is not a `let`, a pool, a stage or a queue, as in both references."""
    assert diagnostics_of(program_text(source)) == []
    pyserq = pytest.importorskip("pyserq")
    pyserq.compile(source=program_text(source))


def test_a_clash_labels_the_declaration_it_clashes_with():
    (d,) = diagnostics_of(program_text("let a = 1; session { set a = 2; }"))
    assert d.message == "`a` is both a `let` constant and a session attribute"
    assert [(label.span.column, label.text) for label in d.labels] == [
        (5, "the `let` constant is declared here"),
        (26, "assigned here, so a session attribute"),
    ]
    (d,) = diagnostics_of(program_text("pool kv { cap 2; }"))
    assert d.message == "pool `kv` is declared twice"
    assert [(label.span.line, label.span.column) for label in d.labels] == [(3, 6)]


def test_a_name_the_language_supplies_has_no_declaration_to_label():
    (d,) = diagnostics_of(program_text("session { set present = 1; }"))
    assert d.message == "`present` is a context variable; a session attribute may not take its name"
    assert [label.span for label in d.labels] == [d.span]  # the text under the carets
    (d,) = diagnostics_of(program_text("let inf = 1;"))
    assert (
        d.message == "`inf` is a name the language supplies; a `let` constant may not take its name"
    )
    assert d.labels == ()


def test_an_attribute_clashes_once_however_often_it_is_set():
    ds = diagnostics_of(
        program_text("let a = 1; session { set a = 2; set a = 3; choose a in 2 by (1); }")
    )
    assert [(d.span.column, d.code) for d in ds] == [(26, CLASH)]


def test_a_failed_let_is_reported_once_not_at_every_use():
    text = program_text("let a = foo; pool z { cap a; } session { run sa[a] (a); }")
    assert [(d.span.column, d.code) for d in diagnostics_of(text)] == [(9, UNKNOWN)]


def test_a_failed_reference_does_not_hide_the_rest_of_the_statement():
    text = program_text("session { hold kx (foo) reserve (bar) { run sx (baz); } cache (qux); }")
    got = [(d.span.column, d.message) for d in diagnostics_of(text)]
    assert got == [
        (16, "unknown pool `kx`"),
        (20, "unknown name `foo`"),
        (34, "unknown name `bar`"),
        (45, "unknown stage `sx`"),
        (49, "unknown name `baz`"),
        (64, "unknown name `qux`"),
    ]


@pytest.mark.parametrize(
    "source",
    [
        "session { set min = 1; run svc (min(min, 2)); }",  # functions have their own names
        "session { set exp = 1; run svc (~exp(exp)); }",
        "session { set x = 1; observe x = 2; }",  # observe names are statistics
        "let x = 1; session { observe x = 2; }",
        "session { observe kv = used(kv); observe now = now; }",
        "session { set serial = 1; set cached = 0; }",  # built-ins are attributes
        "gauge g = used(kv); session { set g = 1; }",
        "stage s1[1] : fifo; pool p1[1] { cap 1; } session { run s1 (1); hold p1 (1) { } }",
        "stage s1[1] : fifo; session { run s1[0] (1); }",
        "pool z { admit via later; } stage later : step { budget 1; cost 1; memory z2; } "
        "pool z2 { cap 1; }",  # declarations may come in any order
        "pool z { cap c; } let c = 3;",  # a pool reads every let
    ],
)
def test_what_links(source):
    assert diagnostics_of(program_text(source)) == []


def test_the_trace_columns_are_always_names():
    # they link without a trace, and read 0 there: nothing sets them (W-unset, a warning)
    source = "session { run svc (new + out + think + more + forced); }"
    found = [(d.code, d.span.line, d.span.column) for d in diagnostics_of(program_text(source))]
    assert found == [("W-unset", 5, c) for c in (20, 26, 32, 40, 47)]
