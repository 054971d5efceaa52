"""Lowering: what the IR of a program holds, and that every corpus program links cleanly.

The reference comparison (tests/ir/test_ir_reference.py) pins the whole IR of the corpus;
the cases here state the lowering's rules one at a time on small programs: the block
table's order, attribute slots, folding, defaults, families joined member for member,
the arrival, the run block, origins, and how `link` combines its passes.
"""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass, replace
from pathlib import Path

import pytest

from serq import api, ir
from serq.diagnostics import Diagnostic, Span
from serq.link import link
from serq.syntax import ast

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
PROGRAMS = [
    *sorted((CORPUS / "valid").glob("*.sq")),
    *sorted((CORPUS / "valid_main").glob("*.sq")),
    *sorted((ROOT / "examples").glob("*.sq")),
]
RUN = "run { horizon 10; }\n"


def linked(text: str) -> ir.Program:
    program, diagnostics = api.link_source(text, "t.sq")
    assert [f"{d.span.line}:{d.span.column} {d.message}" for d in diagnostics] == []
    assert program is not None
    return program


def errors(text: str) -> list[tuple[int, int, str, str]]:
    program, diagnostics = api.link_source(text, "t.sq")
    assert program is None
    return [(d.span.line, d.span.column, d.code, d.message) for d in diagnostics]


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_corpus_program_links_without_a_diagnostic(path):
    text = path.read_text(encoding="utf-8")
    kernel, expanded = api.expand_source(text, str(path))
    if kernel is None or expanded:  # a program that does not expand is the expander's test
        pytest.skip(f"does not expand: {expanded[0].message if expanded else '?'}")
    program, diagnostics = api.link_source(text, str(path))
    assert [f"{d.span.line}:{d.span.column} {d.message}" for d in diagnostics] == []
    assert isinstance(program, ir.Program)


# ------------------------------------------------------------------ blocks, slots


def test_blocks_init_turn_session_first_then_depth_first():
    p = linked(
        "stage s : delay;\n"
        "session {\n"
        "  branch (serial > 1) { loop { end; } } \n"
        "  hold kv (1) { branch (1) { run s (1); } else { end; } }\n"
        "  loop { turn; }\n"
        "}\n"
        "pool kv { cap 5; }\n"
        "workload { init { set a = 1; } turn { set b = 2; } }\n" + RUN
    )
    assert (p.init, p.turn, p.session) == (0, 1, 2)
    assert [type(s).__name__ for s in p.blocks[0]] == ["Set"]
    assert [type(s).__name__ for s in p.blocks[1]] == ["Set"]
    branch, hold, loop = p.blocks[2]
    assert (branch.then, branch.otherwise) == (3, 5)  # 4 is the loop inside the then
    assert p.blocks[3] == (ir.Loop(4, p.blocks[3][0].origin),)
    assert p.blocks[5] == ()  # an absent else is an empty block
    assert hold.body == 6
    assert (p.blocks[6][0].then, p.blocks[6][0].otherwise) == (7, 8)
    assert loop.body == 9
    assert len(p.blocks) == 10


def test_attribute_slots_builtins_then_init_turn_session_whatever_the_source_order():
    p = linked(
        "stage s : delay;\n"
        "session { set c = 1; choose k in 2 by (1); set serial = 4; set a = c; }\n"
        "workload { turn { set b = 1; } init { set a = 2; } }\n" + RUN
    )
    assert p.attrs == (*ir.BUILTIN_ATTRS, "a", "b", "c", "k")
    assert p.blocks[2][2] == ir.Set(ir.SLOT["serial"], ir.Num(4.0), p.blocks[2][2].origin)


def test_observes_are_numbered_in_the_same_order():
    p = linked(
        "stage s : delay;\nsession { observe y = 1; observe x = 2; observe y = 3; }\n"
        "workload { init { observe x = 0; } }\n" + RUN
    )
    assert p.observes == ("x", "y")
    assert [s.stat for s in p.blocks[2]] == [1, 0, 1]


# -------------------------------------------------------------------- folding


def test_lets_and_blocksize_fold_and_the_rest_keeps_its_shape():
    p = linked(
        "let bs = 16;\nlet half = bs / 2;\npool kv { cap 64 * bs; block half; }\n"
        "stage s[4] : fifo(bs / 8);\n"
        "session { set x = 1 + bs; run s[half - 6] (blocksize(kv) * x); run s[x] (inf); }\n" + RUN
    )
    assert p.pools[0].cap == 1024.0 and p.pools[0].block == 8.0
    assert [st.kind for st in p.stages] == [ir.Fifo(2)] * 4
    set_x, run_2, run_x = p.blocks[2]
    assert set_x.value == ir.Binary("+", ir.Num(1.0), ir.Num(16.0))  # not folded: no need
    assert run_2.stages[0].index == ir.Num(2.0)  # a constant index is folded
    assert run_2.work == ir.Binary("*", ir.Num(8.0), ir.Attr(9))
    assert run_x.stages[0].index == ir.Attr(9)
    assert run_x.work == ir.Num(math.inf)


def test_constant_positions_and_their_defaults():
    p = linked(
        "let r = 2;\nstage s : fifo;\npool plain { }\n"
        "workload { arrive poisson(r * 1.5); }\nsession { run s (1); }\n"
    )
    assert p.pools[0] == ir.Pool(
        "plain", None, math.inf, None, ir.Lru(), "none", ir.By(()), None, None, p.pools[0].origin
    )
    assert p.stages[0].kind == ir.Fifo(1)
    assert p.arrival == ir.Poisson(3.0, p.arrival.origin)
    assert (p.horizon, p.warmup, p.seed, p.arrivals, p.share) == (None, 0.0, 1, None, None)


def test_the_run_block_the_last_setting_wins():
    p = linked(
        "stage s : fifo;\nsession { run s (1); }\n"
        "run { horizon 5; seed 3; }\nrun { horizon 2 * 10; warmup 1; arrivals 7; }\n"
    )
    assert (p.horizon, p.warmup, p.seed, p.arrivals) == (20.0, 1.0, 3, 7)


@pytest.mark.parametrize(
    ("clause", "arrival"),
    [
        ("arrive poisson(0.5);", ir.Poisson(0.5, None)),
        (
            "arrive renewal(~h2(2, 4));",
            ir.Renewal(ir.Draw("h2", (ir.Num(2.0), ir.Num(4.0)), None), None),
        ),
        ("arrive renewal(3);", ir.Renewal(ir.Num(3.0), None)),
        ("arrive closed(4);", ir.Closed(4, None)),
        ("arrive batch(2 * 3);", ir.Batch(6, None)),
        ("arrive none;", None),
        ("", None),
    ],
)
def test_arrivals(clause, arrival):
    p = linked(f"stage s : fifo;\nworkload {{ {clause} }}\nsession {{ run s (1); }}\n" + RUN)
    assert _without_origins(p.arrival) == _without_origins(arrival)


def _without_origins(node):
    """`node` with every origin set to None, to compare shapes."""
    if isinstance(node, tuple):
        return tuple(_without_origins(n) for n in node)
    if not is_dataclass(node):
        return node
    changes = {f.name: _without_origins(getattr(node, f.name)) for f in fields(node)}
    if "origin" in changes:
        changes["origin"] = None
    return replace(node, **changes)


def test_a_trace_and_the_hidden_slots():
    p = linked(
        'stage s : fifo;\nworkload { trace "turns.csv" ordered; hidden out, o; '
        "turn { set o = 1; } }\nsession { turn; run s (o + out); }\n" + RUN
    )
    assert (p.trace.path, p.trace.ordered) == ("turns.csv", True)
    assert p.hidden == (ir.SLOT["out"], 9)


# ----------------------------------------------------------- pools and stages


def test_a_family_is_its_members_and_a_reference_its_base_and_count():
    p = linked(
        "stage a : delay;\nstage b[3] : ps(2);\npool x[2] { cap 1; }\npool y { }\n"
        "session { choose i in 2 by (used(x[i])); hold x[i] (1), y (1) { run b[2] (1); } }\n" + RUN
    )
    assert [(s.name, s.index) for s in p.stages] == [("a", None), ("b", 0), ("b", 1), ("b", 2)]
    assert [(q.name, q.index) for q in p.pools] == [("x", 0), ("x", 1), ("y", None)]
    choose, hold = p.blocks[2]
    used = choose.keys[0]
    assert (used.func, used.target.kind, used.target.base, used.target.count) == (
        "used",
        "pool",
        0,
        2,
    )
    assert used.target.index == ir.Attr(9)
    assert [(hp.pool.base, hp.pool.count, hp.pool.index) for hp in hold.pools] == [
        (0, 2, ir.Attr(9)),
        (2, 1, None),
    ]
    run = p.blocks[hold.body][0]
    assert (run.stages[0].base, run.stages[0].count, run.stages[0].index) == (1, 3, ir.Num(2.0))


def test_families_join_one_for_one_or_one_for_all():
    p = linked(
        "pool q[2] { admit via e; }\npool r[2] { admit via one; spill h via link (size) when (1); }\n"
        "pool kv[2] { cap 8; }\npool h { cap 8; }\n"
        "stage e[2] : step { budget 1; cost 1; memory kv; }\n"
        "stage one : step { budget 1; cost 1; memory h; }\nstage link : fifo;\n"
        "session { }\n" + RUN
    )
    e0, e1, one, link_ = range(4)
    assert [q.admit_via for q in p.pools[:4]] == [e0, e1, one, one]
    assert [(q.spill.to, q.spill.via) for q in p.pools[2:4]] == [(6, link_), (6, link_)]
    assert [s.kind.memory for s in p.stages[:3]] == [4, 5, 6]


def test_the_serve_orders_and_the_step_defaults():
    p = linked(
        "stage a : step { budget 8; cost 1; }\n"
        "stage b : step { budget 8; cost 1; serve decode first; chunk 4; }\n"
        "stage c : step { budget 8; cost tokens; serve by (remaining, admission); }\n"
        "stage d : step { budget 8; cost 1; serve exclusive prefill; }\n"
        "stage e : step { budget 8; cost 1; serve admission; }\n"
        "stage f : step { cost 1; }\n"
        "session { }\n" + RUN
    )
    a, b, c, d, e, f = (s.kind for s in p.stages)
    assert (a.serve, a.chunk, a.memory) == (ir.By(()), None, None)
    assert f.budget == ir.Num(math.inf)  # as the reference: no budget is no limit
    assert b.serve == ir.By((ir.Cond(ir.Ctx("decoding"), ir.Num(0.0), ir.Num(1.0)),))
    assert b.chunk == ir.Num(4.0)
    assert c.serve == ir.By((ir.Ctx("remaining"), ir.Ctx("admission")))
    assert c.cost == ir.Ctx("tokens")
    assert d.serve == ir.ExclusivePrefill()
    assert e.serve == ir.By(())


def test_pool_orders():
    p = linked(
        "pool a { evict by (last, -size); queue by (waited); preempt lifo; }\n"
        "pool b { evict lru; queue fifo; preempt none; }\nsession { }\n" + RUN
    )
    a, b = p.pools
    assert a.evict == ir.By((ir.Ctx("last"), ir.Unary("-", ir.Ctx("size"))))
    assert (a.queue, a.preempt) == (ir.By((ir.Ctx("waited"),)), "lifo")
    assert (b.evict, b.queue, b.preempt) == (ir.Lru(), ir.By(()), "none")


def test_statements():
    p = linked(
        "pool kv { cap 100; block 4; }\nstage e : step { budget 8; cost 1; memory kv; }\n"
        "stage up : ps(2);\nstage down : ps(3);\nshare bottleneck;\n"
        "session {\n"
        "  hold kv (1) reserve (2) reuse (0) { run e prefill (3) growing kv; grow kv (1); "
        "load kv (2); release kv; run e decode (1); } cache (4) lease kv (inf);\n"
        "  drop kv; run up, down (5); end;\n"
        "}\n" + RUN
    )
    hold, drop, flow, end = p.blocks[2]
    (hp,) = hold.pools
    assert (hp.units, hp.reserve, hold.reuse, hold.cache) == (
        ir.Num(1.0),
        ir.Num(2.0),
        ir.Num(0.0),
        ir.Num(4.0),
    )
    assert hold.lease.duration == ir.Num(math.inf)
    body = p.blocks[hold.body]
    assert [type(s).__name__ for s in body] == ["Run", "Grow", "Load", "Release", "Run"]
    assert (body[0].mode, body[0].growing.base, body[4].mode) == ("prefill", 0, "decode")
    assert isinstance(drop, ir.Drop) and isinstance(end, ir.End)
    assert [s.base for s in flow.stages] == [1, 2] and flow.mode == "plain"
    assert p.share == "bottleneck"


def test_gauges():
    p = linked(
        "pool kv[2] { cap 4; }\ngauge u = used(kv[0]) + used(kv[1]);\n"
        "gauge f = max j in 2 (free(kv[j]) == 0);\nsession { }\n" + RUN
    )
    assert [g.name for g in p.gauges] == ["u", "f"]
    assert p.gauges[1].value.func == "max"


def test_cost_names_a_family_or_a_member():
    p = linked(
        "fn main() {\n  stage up[2] : fifo;\n  pool kv { cap 9; }\n"
        "  workload { arrive poisson(1); session { turn; } }\n"
        "  server { hold kv (cost(kv, 2)) { run up[0] (cost(up, 1)); run up[1] (cost(up[1], 1)); } }\n"
        "}\n"
    )
    hold = p.blocks[2][1]
    assert hold.pools[0].units == ir.Cost(
        ir.Ref("pool", 0, 1, None, hold.pools[0].units.target.origin), ir.Num(2.0)
    )
    run0, run1 = p.blocks[hold.body]
    assert (run0.work.target.count, run0.work.target.index) == (2, None)
    assert run1.work.target.index == ir.Num(1.0)


# -------------------------------------------------------------------- origins


def test_origins_are_the_surface_forms():
    text = (
        "stage engine : step { budget 8; cost 1; }\n"
        "pool kv { cap 9; }\n"
        "session {\n"
        "  hold kv (1) {\n"
        "    prefill (4);\n"
        "  }\n"
        "}\n" + RUN
    )
    p = linked(text)
    hold = p.blocks[2][0]
    (run,) = p.blocks[hold.body]
    assert (hold.origin.line, hold.origin.column) == (4, 3)
    assert (hold.pools[0].origin.line, hold.pools[0].origin.column) == (4, 8)
    assert (run.origin.line, run.origin.column, run.origin.end_column) == (5, 5, 17)
    assert text[run.origin.start : run.origin.end] == "prefill (4);"
    assert (p.pools[0].origin.line, p.pools[0].origin.column) == (2, 6)
    assert (p.stages[0].origin.line, p.stages[0].origin.column) == (1, 7)


# ---------------------------------------------------------- errors of lowering


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "stage e : step { budget 1; }\nsession { }\n",
            [(1, 7, "E-structure", "step stage `e` has no `cost`")],
        ),
        (
            "stage s : delay;\nsession { run s (1); }\nsession { end; }\n",
            [(3, 1, "E-structure", "a program has one session")],
        ),
        (
            "pool q[3] { spill h via l (1) when (1); }\npool h[2] { }\nstage l : fifo;\nsession { }\n",
            [(1, 19, "E-structure", "`spill` names a family of 2, and pool `q` is a family of 3")],
        ),
        (
            "stage s[3000000] : fifo;\nsession { }\n",
            [
                (
                    1,
                    9,
                    "E-constant",
                    "the size of stage `s` must be a whole number from 1 to 1000000, not 3e+06",
                )
            ],
        ),
        (
            "workload { arrive closed(-1); }\nsession { }\n",
            [
                (
                    1,
                    26,
                    "E-constant",
                    "the closed population must be a whole number from 1 to 1000000000, not -1",
                )
            ],
        ),
    ],
)
def test_what_the_ir_cannot_exist_without(text, expected):
    assert errors(text + RUN) == expected


def test_the_rule_checks_run_too():
    found = errors(
        "stage s : fifo;\npool kv { cap 9; }\nworkload { hidden o; turn { set o = 1; } }\n"
        "session { turn; hold kv (o) { run s (foo); } }\n" + RUN
    )
    assert [(line, col, code) for line, col, code, _ in found] == [
        (4, 26, "E-hidden"),
        (4, 38, "E-unknown-name"),
    ]


def test_a_failing_rule_check_is_an_internal_error_and_the_rest_stays():
    def broken(kernel, lets):
        raise RuntimeError("boom")

    def finds(kernel, lets):
        yield Diagnostic.error("E-structure", kernel.items[0].span, "found")

    kernel = _kernel("stage s : fifo;\nsession { run s (foo); }\n" + RUN)
    result = link(kernel, rules=(broken, finds))
    assert result.program is None
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("E-internal", "serq's rule check `broken` failed: RuntimeError: boom"),
        ("E-structure", "found"),
        ("E-unknown-name", "unknown name `foo`"),
    ]


def test_a_rule_finding_at_a_place_lowering_reported_is_dropped():
    def same_place(kernel, lets):
        let = kernel.items[0]
        yield Diagnostic.error("E-constant", let.value.span, "`let a` is NaN, again")

    result = link(_kernel("let a = 0/0;\nsession { }\n" + RUN), rules=(same_place,))
    assert [d.message for d in result.diagnostics] == ["`let a` is NaN"]


def _kernel(text: str) -> ast.Module:
    kernel, diagnostics = api.expand_source(text, "t.sq")
    assert kernel is not None and diagnostics == []
    return kernel


def test_sugar_left_in_the_kernel_is_an_internal_error():
    s = Span("k.sq", 0, 1, 1, 1, 1, 2)
    kernel = ast.Module(
        "k.sq",
        (
            ast.Server(ast.Block((), s), s),
            ast.Session(ast.Block((ast.Request(None, s),), s), s),
        ),
        None,
        s,
    )
    result = link(kernel, rules=())
    assert result.program is None
    assert [d.code for d in result.diagnostics] == ["E-internal", "E-internal"]
    assert "`Server`" in result.diagnostics[0].message


def test_text_the_parser_skipped_gives_no_program_and_no_more_errors():
    s = Span("k.sq", 0, 1, 1, 1, 1, 2)
    kernel = ast.Module(
        "k.sq", (ast.ErrorItem(s), ast.Session(ast.Block((ast.ErrorStmt(s),), s), s)), None, s
    )
    result = link(kernel, rules=())
    assert result.program is None and result.diagnostics == ()  # the parser reported it


def test_the_scope_says_what_the_program_declares():
    result = link(
        _kernel(
            "let n = 2;\npool kv[n] { cap 1; }\nstage s : fifo;\n"
            "session { set x = 1; observe y = x; }\ngauge g = used(kv[0]);\n" + RUN
        )
    )
    scope = result.scope
    assert scope.lets == {"n": 2.0}
    assert (scope.pools["kv"].base, scope.pools["kv"].count, scope.pools["kv"].array) == (
        0,
        2,
        True,
    )
    assert scope.attrs["x"] == 9 and (scope.attr_spans["x"].line, scope.attr_spans["x"].column) == (
        4,
        15,
    )
    assert list(scope.observes) == ["y"] and list(scope.gauges) == ["g"]
    assert result.ok
