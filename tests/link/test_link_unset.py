"""W-unset: an attribute read on a path where nothing has set it yet, at the read, with the path.

Each case is a program with the expected warnings as (line, column, message); the
programs where every read is surely set (every example and corpus program among them)
give none."""

from __future__ import annotations

from pathlib import Path

import pytest

from serq import api
from serq.diagnostics import Severity

ROOT = Path(__file__).resolve().parents[2]

HEAD = "stage s : fifo(1);\npool kv { cap 100; }\n"
RUN = "run { horizon 10; }\n"
READ = "is read here before anything sets it, so it reads 0"


def unset(text: str, path: str = "t.sq") -> list[tuple[int, int, str]]:
    program, diagnostics = api.link_source(text, path)
    found = [d for d in diagnostics if d.code == "W-unset"]
    assert all(d.severity == Severity.WARNING for d in found)
    assert [d for d in diagnostics if d.code != "W-unset"] == []
    assert program is not None  # a warning: the program links and runs
    return [(d.span.line, d.span.column, d.message) for d in found]


def program(workload: str, session: str) -> str:
    return HEAD + f"workload {{\n{workload}}}\n" + f"session {{\n{session}}}\n" + RUN


ARRIVE = "  arrive poisson(1);\n"

CASES = {
    "straight line": (
        program(ARRIVE, "  run s (x + 1);\n  set x = 2;\n  observe y = x;\n"),
        [(7, 10, f"`x` {READ}")],
    ),
    "if without else": (
        program(ARRIVE, "  branch (~bernoulli(0.5)) {\n    set x = 1;\n  }\n  run s (x);\n"),
        [(10, 10, f"`x` {READ}: on the path past the `branch` at 7:3 with its test false")],
    ),
    "the else arm sets it": (
        program(
            ARRIVE,
            "  branch (serial > 2) {\n    run s (1);\n  } else {\n    set x = 1;\n  }\n"
            "  run s (x);\n",
        ),
        [(12, 10, f"`x` {READ}: on the path through the `branch` at 7:3 with its test true")],
    ),
    "the first arm sets it": (
        program(
            ARRIVE,
            "  branch (serial > 2) {\n    set x = 1;\n  } else {\n    run s (1);\n  }\n"
            "  run s (-x);\n",
        ),
        [(12, 11, f"`x` {READ}: on the path through the `else` of the `branch` at 7:3")],
    ),
    "both arms set it": (
        program(
            ARRIVE,
            "  branch (serial > 2) {\n    set x = 1;\n  } else {\n    set x = -0.5;\n  }\n"
            "  run s (x);\n",
        ),
        [],
    ),
    "nested arms": (
        program(
            ARRIVE,
            "  branch (serial > 2) {\n    branch (serial > 5) {\n      set x = inf;\n    }\n"
            "  } else {\n    set x = 1;\n  }\n  run s (x);\n",
        ),
        [
            (
                14,
                10,
                f"`x` {READ}: on the path through the `branch` at 7:3 with its test true, "
                "then past the `branch` at 8:5 with its test false",
            )
        ],
    ),
    "an arm that ends": (
        program(
            ARRIVE,
            "  branch (serial > 2) {\n    end;\n  } else {\n    set x = 1;\n  }\n  run s (x);\n",
        ),
        [],
    ),
    "loop first iteration": (
        program(
            ARRIVE,
            "  loop {\n    run s (total + 1);\n    set total = total + 1;\n"
            "    branch (~bernoulli(0.5)) { end; }\n  }\n",
        ),
        [
            (8, 12, f"`total` {READ}: on the path into the first pass of the `loop` at 7:3"),
            (9, 17, f"`total` {READ}: on the path into the first pass of the `loop` at 7:3"),
        ],
    ),
    "a loop body's later passes see what the first set": (
        program(
            ARRIVE,
            "  loop {\n    set k = 0;\n    run s (k);\n    branch (~bernoulli(0.5)) { end; }\n"
            "    run s (k + 1);\n  }\n",
        ),
        [],
    ),
    "set in init": (
        program(
            ARRIVE + "  init { set K = 0; }\n",
            "  loop {\n    set K = K + 1;\n    run s (K);\n    branch (K > 3) { end; }\n  }\n",
        ),
        [],
    ),
    "init reads what it sets later": (
        program(ARRIVE + "  init { set a = b; set b = 1; }\n", "  run s (a + b);\n"),
        [(5, 18, f"`b` {READ}")],
    ),
    "the turn block reads what nothing set before the first turn": (
        program(
            ARRIVE + "  turn { set n = K + 1; }\n",
            "  turn;\n  loop {\n    set K = n;\n    run s (n);\n    turn;\n"
            "    branch (~bernoulli(0.5)) { end; }\n  }\n",
        ),
        [(5, 18, f"`K` {READ}: on the path to the `turn;` at 8:3")],
    ),
    "what the turn block sets is set after `turn;`": (
        program(ARRIVE + "  turn { set n = ~exp(2); }\n", "  run s (n);\n  turn;\n  run s (n);\n"),
        [(8, 10, f"`n` {READ}")],
    ),
    "a choose's keys read its target as the candidate": (
        program(ARRIVE, "  choose j in 2 by (used(kv) + j);\n  run s (j);\n"),
        [],
    ),
    "a hold's cache is read at its end": (
        program(ARRIVE, "  hold kv (1) {\n    set c = 3;\n  } cache (c);\n  run s (c);\n"),
        [],
    ),
    "a hold's header is read before its body": (
        program(ARRIVE, "  hold kv (c + 1) {\n    set c = 3;\n  } cache (c);\n"),
        [(7, 12, f"`c` {READ}")],
    ),
    "the built-ins always have a value": (
        program(ARRIVE, "  run s (serial + turn_no + cached + computed);\n"),
        [],
    ),
    "a def's read is at the def's text, with the caller's path": (
        "def go(w) {\n  branch (w > 1) {\n    set x = w;\n  }\n  run s (x);\n}\n"
        + program(ARRIVE, "  go(~exp(1));\n  go(2);\n"),
        [(5, 10, f"`x` {READ}: on the path past the `branch` at 2:3 with its test false")],
    ),
    "a def that sets before the read": (
        "def start() {\n  set x = 1;\n}\n" + program(ARRIVE, "  start();\n  run s (x);\n"),
        [],
    ),
}


@pytest.mark.parametrize(("text", "expected"), CASES.values(), ids=CASES.keys())
def test_unset_reads_are_warned_with_their_path(text, expected):
    assert unset(text) == expected


def test_the_warning_points_at_the_first_set():
    text = program(ARRIVE, "  run s (x + 1);\n  set x = 2;\n")
    _, diagnostics = api.link_source(text, "t.sq")
    (d,) = diagnostics
    assert [(lb.span.line, lb.span.column, lb.text) for lb in d.labels] == [
        (8, 7, "first set here")
    ]
    assert "`init`" in d.help


def test_a_program_the_parser_could_not_read_is_not_judged():
    text = program(ARRIVE, "  run s (x + 1);\n  set x = 2 2;\n")
    _, diagnostics = api.link_source(text, "t.sq")
    assert "W-unset" not in {d.code for d in diagnostics}


PROGRAMS = sorted(
    p
    for folder in ("examples", "tests")
    for p in (ROOT / folder).rglob("*.sq")
    if "/fuzz/" not in p.as_posix()
)


def test_no_program_of_the_examples_or_the_corpus_reads_an_unset_attribute():
    # every read of these programs is surely set (reviewed: the check gives none on them)
    assert len(PROGRAMS) > 200
    warned = []
    for path in PROGRAMS:
        text = path.read_text(encoding="utf-8", errors="replace")
        warned += [
            f"{d.span.file}:{d.span.line}:{d.span.column}"
            for d in api.check_source(text, str(path))
            if d.code == "W-unset"
        ]
    assert warned == []


def test_a_step_in_another_file_than_the_read_names_its_file(tmp_path):
    (tmp_path / "lib.sq").write_text("def serve_x() {\n  run s (x);\n}\n", encoding="utf-8")
    main = tmp_path / "main.sq"
    text = 'use "lib.sq";\n' + program(
        ARRIVE, "  branch (serial > 0) {\n    set x = 1;\n  }\n  serve_x();\n"
    )
    _, diagnostics = api.link_source(text, str(main))
    (d,) = diagnostics
    assert (Path(d.span.file).name, d.span.line, d.span.column) == ("lib.sq", 2, 10)
    assert (
        d.message == f"`x` {READ}: on the path past the `branch` at main.sq:8:3 with its test false"
    )


def test_a_trace_gives_its_columns_at_each_turn(tmp_path):
    (tmp_path / "t.csv").write_text(
        "session,turn,new,out,think\n0,0,10,5,0.5\n0,1,-2,0,inf\n", encoding="utf-8"
    )
    text = program(
        '  trace "t.csv";\n  init { set first = new; }\n',
        "  run s (out);\n  turn;\n  run s (new + out + think + more + forced);\n",
    )
    found = unset(text, str(tmp_path / "main.sq"))
    given = "is the trace's column, given at each `turn;`"
    assert found == [
        (5, 22, f"`new` {READ} (`new` {given})"),
        (8, 10, f"`out` {READ} (`out` {given})"),
    ]
    # the `turn` block runs after its `turn;` gave them (serq-workload.txt, trace)
    text = program(
        '  trace "t.csv";\n  turn { set n = new; set o = out + 1; set z = more; }\n',
        "  turn;\n  run s (n + o + z);\n",
    )
    assert unset(text, str(tmp_path / "main.sq")) == []
    # without a trace nothing gives them: every read is 0
    bare = unset(program(ARRIVE, "  turn;\n  run s (more);\n"))
    assert bare == [
        (8, 10, f"`more` {READ} (`more` is a trace's column, and this workload has no `trace`)")
    ]


def test_the_scheduler_keys_are_read_where_the_session_waits_or_runs():
    text = (
        "pool kv { cap 4; queue by (prio, waited); }\n"
        "stage e : step { budget 8; cost 1; serve by (rank, -remaining); memory kv; }\n"
        "workload { arrive poisson(5); }\n"
        "session {\n"
        "  hold kv (1) { run e decode (3); }\n"
        "  set prio = 0.25;\n"
        "  set rank = -1;\n"
        "  hold kv (1) { run e decode (3); }\n"
        "}\n" + RUN
    )
    assert unset(text) == [
        (1, 28, f"`prio` {READ}: on the path to the `hold` at 5:3"),
        (2, 46, f"`rank` {READ}: on the path to the `run` at 5:17"),
    ]
    # set before the first hold, they are read set
    fixed = text.replace("session {\n", "session {\n  set prio = inf;\n  set rank = 0;\n")
    assert unset(fixed) == []
