"""The AST of each production of serq-language.txt §2: a representative source, a few asserts.

Statements are parsed inside `session { … }`, expressions as `let x = …;`. Every
source here is valid, so each helper first checks that it parsed without a
diagnostic. Cases marked `xfail` record parser bugs (see the reason).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

import pytest

from serq.diagnostics import LineIndex, Span
from serq.syntax import ast, parse


def bug(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


def items(source: str) -> tuple:
    result = parse(source, "ast.sq")
    assert [d.message for d in result.diagnostics] == []
    return result.module.items


def item(source: str):
    (only,) = items(source)
    return only


def stmts(source: str) -> tuple:
    session = item("session {\n" + source + "\n}")
    assert isinstance(session, ast.Session)
    return session.body.body


def stmt(source: str):
    (only,) = stmts(source)
    return only


def expr(source: str):
    let = item(f"let x = {source};")
    assert isinstance(let, ast.Let)
    return let.value


def names(refs) -> list[str]:
    return [r.dotted for r in refs]


# ------------------------------------------------------------------ items


def test_let():
    let = item("let rate = 2.5;")
    assert isinstance(let, ast.Let) and let.name.name == "rate"
    assert let.value == ast.Number(2.5, "2.5", let.value.span)


def test_use():
    use = item('use "lib/common.sq";')
    assert isinstance(use, ast.Use) and use.path == "lib/common.sq"
    assert use.path_span.end - use.path_span.start == len('"lib/common.sq"')


def test_def_expression_and_block():
    def_expr, def_block = items("def cost2(a, b) = a * b;\ndef serve_on(w) { run s (w); turn; }")
    assert isinstance(def_expr, ast.DefExpr)
    assert [p.name for p in def_expr.params] == ["a", "b"]
    assert isinstance(def_expr.body, ast.Binary) and def_expr.body.op == "*"
    assert isinstance(def_block, ast.DefBlock) and def_block.name.name == "serve_on"
    assert [type(s) for s in def_block.body.body] == [ast.Run, ast.Turn]


def test_def_without_parameters():
    d = item("def now2() = now * 2;")
    assert isinstance(d, ast.DefExpr) and d.params == ()


def test_pool_options():
    pool = item(
        "pool kv[4] { cap 100 * bs; block bs; evict lru; preempt lifo; queue fifo;"
        " admit via engine; }"
    )
    assert isinstance(pool, ast.Pool) and pool.name.name == "kv"
    assert isinstance(pool.size, ast.Number) and pool.size.value == 4
    keys = [o.key for o in pool.options]
    assert keys == ["cap", "block", "evict lru", "preempt lifo", "queue fifo", "admit via"]
    assert isinstance(pool.options[0].value, ast.Binary)
    assert pool.options[5].target.name == "engine"


def test_pool_keyed_options_and_spill():
    pool = item(
        "pool kv { evict by (price(s, 0.1, 0.5) * size, age); preempt none; queue by (size);"
        " spill host via pcie (size) when (age > 2); }"
    )
    evict, preempt, queue, spill = pool.options
    assert evict.key == "evict by" and len(evict.keys) == 2
    assert preempt.key == "preempt none"
    assert queue.key == "queue by" and isinstance(queue.keys[0], ast.Name)
    assert isinstance(spill, ast.Spill)
    assert (spill.pool.name, spill.stage.name) == ("host", "pcie")
    assert isinstance(spill.when, ast.Binary) and spill.when.op == ">"


def test_stage_kinds():
    fifo, fifo2, ps, delay = items(
        "stage a : fifo;\nstage b[3] : fifo(2);\nstage c : ps(min(present, 16));\nstage d : delay;"
    )
    assert isinstance(fifo.kind, ast.Fifo) and fifo.kind.servers is None
    assert isinstance(fifo2.kind, ast.Fifo) and fifo2.kind.servers.value == 2
    assert fifo2.size.value == 3
    assert isinstance(ps.kind, ast.Ps) and isinstance(ps.kind.capacity, ast.Call)
    assert isinstance(delay.kind, ast.Delay)


def test_step_stage():
    stage = item(
        "stage e : step { budget 512; cost 0.01 + 0.0001 * tokens; chunk 128;"
        " serve by (remaining, age); memory kv; };"
    )
    assert isinstance(stage.kind, ast.Step)
    keys = [o.key for o in stage.kind.options]
    assert keys == ["budget", "cost", "chunk", "serve by", "memory"]
    assert len(stage.kind.options[3].keys) == 2
    assert stage.kind.options[4].target.name == "kv"


@pytest.mark.parametrize(
    ("option", "key"),
    [
        ("serve admission;", "serve admission"),
        ("serve decode first;", "serve decode first"),
        ("serve exclusive prefill;", "serve exclusive prefill"),
    ],
)
def test_step_serve_options(option, key):
    stage = item(f"stage e : step {{ budget 8; cost 1; {option} }};")
    assert stage.kind.options[2].key == key


def test_step_stage_without_semicolon():
    first, second = items("stage e : step { budget 8; cost 1; }\nstage s : fifo;")
    assert isinstance(first.kind, ast.Step) and isinstance(second.kind, ast.Fifo)


def test_workload_clauses():
    workload = item(
        'workload {\n  arrive poisson(2);\n  trace "turns.csv" ordered;\n'
        "  init { set K = 0; }\n  turn { set n = 3; }\n  session { turn; request; }\n"
        "  hidden o, think;\n}"
    )
    arrive, trace, init, turn, session, hidden = workload.clauses
    assert arrive == ast.Arrive("poisson", arrive.arg, arrive.span) and arrive.arg.value == 2
    assert isinstance(trace, ast.Trace) and trace.path == "turns.csv" and trace.ordered
    assert isinstance(init, ast.Init) and isinstance(init.body.body[0], ast.Set)
    assert isinstance(turn, ast.TurnBlock)
    assert isinstance(session, ast.WorkloadSession)
    assert [type(s) for s in session.body.body] == [ast.Turn, ast.Request]
    assert [n.name for n in hidden.names] == ["o", "think"]


@pytest.mark.parametrize(
    ("source", "process", "has_arg"),
    [
        ("arrive poisson(1);", "poisson", True),
        ("arrive renewal(~h2(2, 4));", "renewal", True),
        ("arrive closed(8);", "closed", True),
        ("arrive batch(2);", "batch", True),
        ("arrive none;", "none", False),
    ],
)
def test_arrivals(source, process, has_arg):
    (arrive,) = item(f"workload {{ {source} }}").clauses
    assert arrive.process == process
    assert (arrive.arg is not None) == has_arg


def test_trace_without_ordered():
    (trace,) = item('workload { trace "t.csv"; }').clauses
    assert not trace.ordered


def test_session_and_server():
    session, server = items("session { turn; }\nserver { run s (1); }")
    assert isinstance(session, ast.Session) and isinstance(server, ast.Server)
    assert isinstance(server.body.body[0], ast.Run)


def test_queue_members():
    queue = item(
        "queue P[NP] : prefill, decode {\n"
        "  pool kv { cap 100; evict lru; }\n"
        "  serve fifo(2) latency 0.5;\n"
        "  nic ps(BwP);\n"
        "  prefill (prompt) { run (prompt); }\n"
        "  decode (prompt, n) from P { run (n); }\n"
        "  route { set y = 1; }\n"
        "}"
    )
    assert isinstance(queue, ast.Queue) and queue.name.name == "P"
    assert isinstance(queue.size, ast.Name) and queue.size.name == "NP"
    assert [r.name for r in queue.roles] == ["prefill", "decode"]
    pool, serve, nic, prefill, decode, route = queue.members
    assert isinstance(pool, ast.QueuePool) and [o.key for o in pool.options] == ["cap", "evict lru"]
    assert isinstance(serve, ast.QueueServe) and isinstance(serve.kind, ast.Fifo)
    assert serve.latency.value == 0.5
    assert isinstance(nic, ast.QueueNic) and isinstance(nic.kind, ast.Ps)
    assert isinstance(prefill, ast.Entry) and prefill.verb.name == "prefill"
    assert [p.name for p in decode.params] == ["prompt", "n"] and decode.source.name == "P"
    assert route.verb.name == "route" and route.params == ()


def test_queue_without_roles_and_serve_step():
    queue = item("queue L { serve step { budget 4; cost 1; }; transfer (n) { run (n); } }")
    assert queue.roles == () and queue.size is None
    serve, entry = queue.members
    assert isinstance(serve.kind, ast.Step) and serve.latency is None
    assert entry.verb.name == "transfer"


def test_run_settings():
    run = item("run { horizon 100; warmup 10; seed 7; arrivals 50; }")
    assert isinstance(run, ast.RunSettings)
    assert [(s.key, s.value.value) for s in run.settings] == [
        ("horizon", 100),
        ("warmup", 10),
        ("seed", 7),
        ("arrivals", 50),
    ]


def test_share_pull_gauge():
    share, pull, pull2, gauge = items(
        "share maxmin;\nD pull P latency 0.002 share bottleneck;\nD pull P share maxmin;\n"
        "gauge mem = used(kv) / 100;"
    )
    assert share == ast.Share("maxmin", share.span)
    assert isinstance(pull, ast.Pull)
    assert (pull.reader.name, pull.source.name, pull.policy) == ("D", "P", "bottleneck")
    assert pull.latency.value == 0.002 and pull2.latency is None
    assert isinstance(gauge, ast.Gauge) and gauge.name.name == "mem"


def test_fn_main():
    module = parse(
        "let a = 1;\nfn main() {\n  stage s : delay;\n  server { run s (a); }\n}\n"
    ).module
    assert [type(i) for i in module.items] == [ast.Let]
    assert module.main is not None and module.main.name.name == "main"
    assert [type(i) for i in module.main.items] == [ast.Stage, ast.Server]
    assert [type(i) for i in module.all_items()] == [ast.Let, ast.Stage, ast.Server]


# ------------------------------------------------------------- statements


def test_simple_statements():
    turn, request, request_q, set_, observe, end, mark = stmts(
        "turn; request; request gw; set x = 1; observe t = now; end; mark first;"
    )
    assert isinstance(turn, ast.Turn) and isinstance(end, ast.End)
    assert request.gateway is None and request_q.gateway.name == "gw"
    assert set_.target.name == "x" and observe.target.name == "t"
    assert mark.name.name == "first"


def test_pool_statements():
    grow, drop, release, load = stmts("grow kv (2); drop kv; release P[i].kv; load kv[j] (n);")
    assert isinstance(grow, ast.Grow) and grow.pool.dotted == "kv" and grow.amount.value == 2
    assert isinstance(drop, ast.Drop)
    assert isinstance(release, ast.Release) and release.pool.dotted == "P.kv"
    assert isinstance(release.pool.parts[0].index, ast.Name)
    assert isinstance(load, ast.Load) and isinstance(load.pool.parts[0].index, ast.Name)


def test_hold_with_two_pools_reserve_admission_cache_lease():
    hold = stmt(
        "hold reqs (1), kv (min(prompt, hit + 4)) reserve (prompt) reuse (r)\n"
        "     at admission (hit = min(cachedin(kv), m), z = 2) {\n"
        "  prefill (prompt - c) growing kv;\n"
        "} cache (prompt + o) lease kv (inf);"
    )
    assert isinstance(hold, ast.Hold)
    assert names(p.pool for p in hold.pools) == ["reqs", "kv"]
    assert hold.pools[0].reserve is None and isinstance(hold.pools[1].reserve, ast.Name)
    assert isinstance(hold.pools[1].units, ast.Call)
    assert isinstance(hold.reuse, ast.Name)
    assert [b.name.name for b in hold.bindings] == ["hit", "z"]
    assert hold.at_admission is not None
    assert isinstance(hold.body.body[0], ast.Serving)
    assert isinstance(hold.cache, ast.Binary)
    assert hold.lease.pool.dotted == "kv" and hold.lease.duration.name == "inf"


def test_bare_hold():
    hold = stmt("hold kv (1) { turn; }")
    assert hold.reuse is None and hold.bindings == () and hold.at_admission is None
    assert hold.cache is None and hold.lease is None


def test_hold_without_then_with_semicolon():
    first, second = stmts("hold a (1) { turn; } hold b (2) { turn; };")
    assert isinstance(first, ast.Hold) and isinstance(second, ast.Hold)


def test_run_with_mode_and_growing():
    run = stmt("run engine prefill (n - c) growing kv;")
    assert isinstance(run, ast.Run)
    assert names(run.stages) == ["engine"] and run.mode == "prefill"
    assert run.growing.dotted == "kv"


def test_run_forms():
    several, own, indexed = stmts("run egress[i], ingress[j] (x); run (4); run D[j] decode (1);")
    assert names(several.stages) == ["egress", "ingress"] and several.mode is None
    assert own.stages == () and own.mode is None
    assert indexed.mode == "decode" and indexed.stages[0].parts[0].index.name == "j"


def test_branches_loop_choose():
    branch, branch_with, loop, choose = stmts(
        "branch (x > 1) { end; } else { turn; }\n"
        "branch with (0.3) { turn; }\n"
        "loop { turn; }\n"
        "choose j in N by (queue(s[j]), j);"
    )
    assert isinstance(branch, ast.Branch) and isinstance(branch.otherwise, ast.Block)
    assert isinstance(branch_with, ast.BranchWith) and branch_with.otherwise is None
    assert branch_with.probability.value == 0.3
    assert isinstance(loop, ast.Loop)
    assert choose.target.name == "j" and choose.count.name == "N" and len(choose.keys) == 2


def test_entry_call_and_def_call():
    entry, plain, bare, dotted = stmts(
        "Q[i].verb(x) from P[j] to kv(3); f(x); g(); D.decode(prompt);"
    )
    assert isinstance(entry, ast.EntryCall)
    assert entry.target.dotted == "Q.verb" and isinstance(entry.target.parts[0].index, ast.Name)
    assert [a.name for a in entry.args] == ["x"]
    assert entry.source.dotted == "P" and entry.source.parts[0].index.name == "j"
    assert entry.to.pool.dotted == "kv" and entry.to.amount.value == 3
    assert isinstance(plain, ast.DefCall) and plain.name.name == "f" and len(plain.args) == 1
    assert isinstance(bare, ast.DefCall) and bare.args == ()
    assert isinstance(dotted, ast.EntryCall) and dotted.source is None and dotted.to is None


def test_serving_forms():
    plain, indexed, on, tool = stmts(
        "prefill (n) growing kv; decode[j] (o - 1); prefill on A, B (n); tool ~exp(2);"
    )
    assert isinstance(plain, ast.Serving) and plain.verb == "prefill"
    assert plain.index is None and plain.on == () and plain.growing.dotted == "kv"
    assert indexed.verb == "decode" and indexed.index.name == "j"
    assert names(on.on) == ["A", "B"] and on.index is None
    assert tool.verb == "tool" and isinstance(tool.work, ast.Draw)


def test_transfer():
    plain, on, indexed = stmts(
        "transfer (x) from kvP to kvD (n - 1);\n"
        "transfer on egress[i], ingress[j] (x) from P[i].kv to kv (n);\n"
        "transfer [k] 5 from a to b (3);"
    )
    assert isinstance(plain, ast.Transfer)
    assert plain.source.dotted == "kvP" and plain.dest.dotted == "kvD"
    assert isinstance(plain.amount, ast.Binary)
    assert names(on.on) == ["egress", "ingress"] and on.source.dotted == "P.kv"
    assert indexed.index.name == "k" and indexed.work.value == 5


# ------------------------------------------------------------ expressions


def test_power_binds_tighter_than_unary_minus():
    e = expr("-2 ^ 2")
    assert isinstance(e, ast.Unary) and e.op == "-"
    assert isinstance(e.operand, ast.Binary) and e.operand.op == "^"


def test_power_is_right_associative():
    e = expr("2 ^ 3 ^ 2")
    assert e.op == "^" and isinstance(e.right, ast.Binary) and e.right.op == "^"


def test_product_binds_tighter_than_sum():
    e = expr("1 + 2 * 3")
    assert e.op == "+" and e.left.value == 1
    assert e.right.op == "*" and (e.right.left.value, e.right.right.value) == (2, 3)


def test_sum_is_left_associative():
    e = expr("1 - 2 - 3")
    assert e.op == "-" and isinstance(e.left, ast.Binary) and e.right.value == 3


def test_and_binds_tighter_than_or():
    e = expr("a || b && c")
    assert e.op == "||" and e.left.name == "a"
    assert e.right.op == "&&"


def test_comparison_between_sums_and_logic():
    e = expr("a + 1 < b && !c")
    assert e.op == "&&" and e.left.op == "<" and e.left.left.op == "+"
    assert isinstance(e.right, ast.Unary) and e.right.op == "!"


def test_conditional_is_right_associative():
    e = expr("x ? 1 : y ? 2 : 3")
    assert isinstance(e, ast.Conditional) and e.then.value == 1
    assert isinstance(e.otherwise, ast.Conditional) and e.otherwise.test.name == "y"


def test_conditional_takes_the_whole_or_expression_as_test():
    e = expr("a || b ? 1 : 2")
    assert isinstance(e, ast.Conditional) and e.test.op == "||"


def test_comparisons_do_not_chain():
    result = parse("let x = 1 < 2 < 3;")
    assert [(d.code, d.span.column) for d in result.diagnostics] == [("E-parse", 15)]


def test_parentheses():
    e = expr("(1 + 2) * 3")
    assert e.op == "*" and e.left.op == "+"


def test_aggregate_call_and_name_max():
    aggregate = expr("max j in 3 (used(kv[j]))")
    assert isinstance(aggregate, ast.Aggregate) and aggregate.func == "max"
    assert aggregate.var.name == "j" and aggregate.count.value == 3
    assert isinstance(aggregate.body, ast.Call) and aggregate.body.func.name == "used"
    call = expr("max(a, b)")
    assert isinstance(call, ast.Call) and call.func.name == "max" and len(call.args) == 2
    name = expr("max")
    assert isinstance(name, ast.Name) and name.name == "max"
    assert expr("max + 1").left.name == "max"


def test_aggregate_counts():
    by_name = expr("sum k in N (k)")
    assert isinstance(by_name.count, ast.Name) and by_name.count.name == "N"
    assert expr("min k in 2 (k)").func == "min"


def test_aggregate_count_in_parentheses():
    e = expr("sum g in (N * 2 - 3) (g)")
    assert isinstance(e, ast.Aggregate) and isinstance(e.count, ast.Binary)


def test_draws_calls_refs_numbers():
    draw = expr("~uniform(1, 2)")
    assert isinstance(draw, ast.Draw) and draw.dist.name == "uniform" and len(draw.args) == 2
    call = expr("price(s, 0.1, ds)")
    assert isinstance(call, ast.Call) and len(call.args) == 3
    ref = expr("D[j].nic")
    assert isinstance(ref, ast.Ref) and ref.dotted == "D.nic"
    assert isinstance(expr("kv"), ast.Name)
    assert [expr(n).value for n in ("1e-3", ".5", "2.", "42")] == [0.001, 0.5, 2.0, 42.0]
    assert expr("1e-3").text == "1e-3"


# ---------------------------------------------------- contextual keywords


def test_keyword_as_attribute_name():
    s = stmt("set hold = 1;")
    assert isinstance(s, ast.Set) and s.target.name == "hold"
    s = stmt("set cache = hold + cap;")
    assert s.value.left.name == "hold" and s.value.right.name == "cap"


def test_keywords_as_declared_names():
    prefill, decode, let = items("stage prefill : fifo;\nstage decode : delay;\nlet turn = 2;")
    assert prefill.name.name == "prefill" and decode.name.name == "decode"
    assert let.name.name == "turn"
    pool = item("pool block { cap 1; }")
    assert pool.name.name == "block"


def test_run_on_a_stage_named_prefill_parses():
    run = stmt("run prefill (1);")
    assert isinstance(run, ast.Run) and run.work.value == 1


def test_run_on_a_stage_named_prefill_names_the_stage():
    run = stmt("run prefill (1);")
    assert names(run.stages) == ["prefill"] and run.mode is None


def test_run_on_a_stage_named_prefill_with_a_mode():
    run = stmt("run prefill decode (1);")
    assert names(run.stages) == ["prefill"] and run.mode == "decode"


def test_run_on_an_indexed_stage_named_prefill():
    run = stmt("run prefill[j] prefill (2);")
    assert names(run.stages) == ["prefill"] and run.mode == "prefill"


def test_queue_entries_named_after_serving_verbs():
    queue = item(
        "queue Q : prefill, decode {\n  prefill (p) { run (p); }\n  decode (p) { run (p); }\n}"
    )
    assert [m.verb.name for m in queue.members] == ["prefill", "decode"]


def test_serving_verb_as_attribute():
    s = stmt("set decode = prefill + tool;")
    assert s.target.name == "decode" and s.value.left.name == "prefill"


# ------------------------------------------------------------------ spans


def test_spans_are_the_source_text():
    source = (
        "session {\n"
        "  hold kv (n) at admission (h = 1) {\n"
        "    set x = -(1 + y) * kv[2].z;\n"
        "  } cache (n) lease kv (inf);\n"
        "}"
    )
    (session,) = items(source)
    hold = session.body.body[0]

    def text(node):
        return source[node.span.start : node.span.end]

    assert text(session) == source
    assert text(hold).startswith("hold kv (n)") and text(hold).endswith("lease kv (inf);")
    assert text(hold.lease) == "lease kv (inf)"
    assert text(hold.bindings[0]) == "h = 1"
    assert source[hold.at_admission.start : hold.at_admission.end] == "at admission (h = 1)"
    set_ = hold.body.body[0]
    assert text(set_) == "set x = -(1 + y) * kv[2].z;"
    assert text(set_.target) == "x"
    assert text(set_.value) == "-(1 + y) * kv[2].z"
    assert text(set_.value.left.operand) == "1 + y"
    assert text(set_.value.right) == "kv[2].z"
    assert text(set_.value.right.parts[0]) == "kv[2]"
    assert (set_.span.line, set_.span.column) == (3, 5)
    assert (set_.span.end_line, set_.span.end_column) == (3, 32)


def _spans(node):
    if isinstance(node, Span):
        yield node
    elif isinstance(node, tuple):
        for child in node:
            yield from _spans(child)
    elif is_dataclass(node) and not isinstance(node, type):
        for f in fields(node):
            yield from _spans(getattr(node, f.name))


def test_every_span_agrees_with_its_offsets():
    source = (
        "let a = 1;\r\n"
        "pool kv { cap 10 * a; }\n"
        "fn main() {\n"
        "  stage s : ps(2);\n"
        "  session {\n"
        "    hold kv (1) { run s (~exp(1)); } cache (1);\n"
        "    transfer on e, f (x) from kv to kv (1);\n"
        "  }\n"
        "}\n"
    )
    module = parse(source, "m.sq").module
    lines = LineIndex(source)
    spans = list(_spans(module))
    assert len(spans) > 30
    for span in spans:
        assert span == lines.span("m.sq", span.start, span.end)


def test_a_lone_carriage_return_ends_a_line_and_a_comment():
    # as an editor shows it (and LSP counts lines): the `let` after the `\r` is code, on
    # line 2, and every span after it agrees with the line index
    source = "let a = 1; // one\rlet b = a;\rlet c = d;\n"
    result = parse(source, "m.sq")
    assert [i.name.name for i in result.module.items] == ["a", "b", "c"]
    b = result.module.items[1]
    assert (b.span.line, b.span.column) == (2, 1)
    lines = LineIndex(source)
    for span in _spans(result.module):
        assert span == lines.span("m.sq", span.start, span.end)


def test_names_are_idents_with_spans():
    pool = item("pool kv { admit via engine; }")
    target = pool.options[0].target
    assert isinstance(target, ast.Ident)
    assert (target.span.column, target.span.end_column) == (21, 27)
