"""The queues pass (serq/expand/queues.py) on its own: queues, pull relations, entry calls and
`request gw;` rewritten into kernel pools, stages and statements.

Each test parses a program, folds its lets into a `Context` and runs `expand_queues` on the
items, with no other pass: serving forms, `at admission` and `branch with` stay as written.
The corpus's queue programs are compared with pyserq 0.1.2's IR (the order and sizes of the
pools and stages, the attributes the entries set); rewrites are checked by rendering the
statements (`render`, in conftest.py); each error by its code and line:column, and where the
reference reports the same mistake at the same place, by the reference too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from serq.diagnostics import codes
from serq.expand.context import Context
from serq.expand.queues import expand_queues
from serq.expand.walk import walk
from serq.syntax import ast, parse

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "valid"
QUEUE_PROGRAMS = ["queues_pd.sq", "queues_gateway.sq", "queues_link.sq", "llmd_pd.sq"]
QUEUE = codes.QUEUE.id
SIDES = codes.SIDES.id


def lines(*source: str) -> str:
    return "\n".join(source) + "\n"


class Expanded:
    """A program after the queues pass alone."""

    def __init__(self, text: str, file: str = "main.sq") -> None:
        parsed = parse(text, file)
        assert [d.message for d in parsed.diagnostics] == [], "the test program must parse"
        self.ctx = Context()
        for item in parsed.module.items:
            if isinstance(item, ast.Let):
                value = self.ctx.const(item.value)
                if value is not None:
                    self.ctx.lets[item.name.name] = value
        self.items = expand_queues(list(parsed.module.items), self.ctx)

    @property
    def diagnostics(self) -> list[tuple[str, int, int]]:
        return [(str(d.code), d.span.line, d.span.column) for d in self.ctx.diagnostics]

    def declared(self, kind: type) -> list[tuple[str, int | None]]:
        """(name, index) of every pool or stage the kernel declares, families written out."""
        out = []
        for item in self.items:
            if isinstance(item, kind):
                if item.size is None:
                    out.append((item.name.name, None))
                else:
                    out.extend((item.name.name, k) for k in range(int(self.ctx.const(item.size))))
        return out

    def item(self, kind: type, name: str):
        (found,) = [i for i in self.items if isinstance(i, kind) and i.name.name == name]
        return found

    def block(self, clause: type = ast.WorkloadSession) -> ast.Block:
        """The body of the workload's `session` (or another clause), or of a top-level one."""
        for item in self.items:
            if isinstance(item, ast.Workload):
                for c in item.clauses:
                    if isinstance(c, clause):
                        return c.body
            if isinstance(item, clause):
                return item.body
        raise AssertionError(f"no {clause.__name__}")


def sugar_left(items) -> list[str]:
    """What this pass must have removed, wherever it was."""
    left = []
    for item in items:
        for n in walk(item):
            if isinstance(n, (ast.Queue, ast.Pull, ast.EntryCall, ast.Mark)) or (
                isinstance(n, ast.Request) and n.gateway is not None
            ):
                left.append(f"{type(n).__name__} at {n.span.line}:{n.span.column}")
            elif isinstance(n, ast.Run) and not n.stages:
                left.append(f"Run without a stage at {n.span.line}:{n.span.column}")
    return left


@pytest.fixture(scope="module")
def pyserq():
    mod = pytest.importorskip("pyserq", reason="pyserq 0.1.2 is not installed")
    if not mod.__version__.startswith("0.1.2"):
        pytest.skip(f"needs pyserq 0.1.2, found {mod.__version__}")
    return mod


def reference_ir(pyserq, path: Path) -> dict:
    return json.loads(pyserq.compile(str(path), horizon=10).to_json())


# The base program of the error table and of several rewrites: a gateway, a prefill family that
# leases its KV, a decode family with a local entry and one `from src`, a pull relation.
BASE = lines(
    "let NP = 2;",  # 1
    "let ND = 2;",  # 2
    "queue gw : gateway {",  # 3
    "  route {",  # 4
    "    set prompt = n;",  # 5
    "    choose i in NP by (work(P[i]));",  # 6
    "    choose j in ND by (work(D[j]));",  # 7
    "    P[i].prefill(prompt);",  # 8
    "    D[j].decode(prompt) from P[i];",  # 9
    "  }",  # 10
    "}",  # 11
    "queue P[NP] : prefill {",  # 12
    "  pool kv { cap 1000; }",  # 13
    "  serve fifo;",  # 14
    "  nic ps(100000);",  # 15
    "  prefill (prompt) {",  # 16
    "    hold kv (prompt) { run (prompt * 0.001); } cache (prompt) lease kv (inf);",  # 17
    "  }",  # 18
    "}",  # 19
    "queue D[ND] : decode {",  # 20
    "  pool kv { cap 1000; }",  # 21
    "  serve fifo;",  # 22
    "  nic ps(100000);",  # 23
    "  decode (prompt) {",  # 24
    "    hold kv (prompt) { run (prompt * 0.001); } cache (prompt + o);",  # 25
    "  }",  # 26
    "  decode (prompt) from src {",  # 27
    "    hold kv (prompt) {",  # 28
    "      transfer (prompt) from src to kv (prompt - 1);",  # 29
    "      run (o * 0.01);",  # 30
    "    } cache (prompt + o);",  # 31
    "  }",  # 32
    "}",  # 33
    "stage zz : delay;",  # 34
    "D pull P latency 0.5 share maxmin;",  # 35
    "stage yy : delay;",  # 36
    "workload {",  # 37
    "  arrive poisson(1);",  # 38
    "  hidden o;",  # 39
    "  turn { set n = 100; set o = 10; }",  # 40
    "  session { turn; request gw; }",  # 41
    "}",  # 42
    "run { horizon 10; }",  # 43
)


def edit(changes: dict[int, str], text: str = BASE) -> str:
    """`text` with line N (1-based) replaced by `changes[N]`, which may hold several lines."""
    out = text.splitlines()
    for n, new in changes.items():
        out[n - 1] = new
    return "\n".join(out) + "\n"


# =================================================================== the corpus


class TestCorpus:
    """The corpus's queue programs: what remains, and the declarations the reference makes."""

    @pytest.mark.parametrize("name", QUEUE_PROGRAMS)
    def test_no_queue_form_remains_and_no_error(self, name):
        e = Expanded((CORPUS / name).read_text(), name)
        assert e.diagnostics == []
        assert sugar_left(e.items) == []

    @pytest.mark.parametrize("name", QUEUE_PROGRAMS)
    def test_pools_and_stages_in_the_reference_order(self, name, pyserq):
        e = Expanded((CORPUS / name).read_text(), name)
        ir = reference_ir(pyserq, CORPUS / name)
        assert e.declared(ast.Pool) == [(p["name"], p.get("index")) for p in ir["pools"]]
        assert e.declared(ast.Stage) == [(s["name"], s.get("index")) for s in ir["stages"]]

    @pytest.mark.parametrize("name", QUEUE_PROGRAMS)
    def test_the_attributes_entries_set_are_the_references(self, name, pyserq):
        e = Expanded((CORPUS / name).read_text(), name)
        ir = reference_ir(pyserq, CORPUS / name)
        dotted = {
            n.target.name
            for item in e.items
            for n in walk(item)
            if isinstance(n, (ast.Set, ast.Choose)) and "." in n.target.name
        }
        # an entry's binding the body reads becomes a set only in the admission pass
        bound = {b.name.name for item in e.items for b in walk(item) if isinstance(b, ast.Binding)}
        assert dotted | (bound & {a for a in ir["attrs"] if "." in a}) == {
            a for a in ir["attrs"] if "." in a
        }

    def test_queues_pd_declarations_in_order(self):
        e = Expanded((CORPUS / "queues_pd.sq").read_text())
        kinds = [
            (type(i).__name__, i.name.name if hasattr(i, "name") else i.policy)
            for i in e.items
            if isinstance(i, (ast.Pool, ast.Stage, ast.Share))
        ]
        assert kinds == [
            ("Pool", "P.reqs"),
            ("Pool", "P.kv"),
            ("Stage", "P"),
            ("Stage", "P.nic"),
            ("Pool", "D.reqs"),
            ("Pool", "D.kv"),
            ("Stage", "D"),
            ("Stage", "D.nic"),
            ("Stage", "D.nic.latency"),
            ("Share", "maxmin"),
        ]
        p_kv = e.item(ast.Pool, "P.kv")
        assert isinstance(p_kv.size, ast.Name) and p_kv.size.name == "NP"
        assert isinstance(e.item(ast.Stage, "D.nic.latency").kind, ast.Delay)

    def test_queues_pd_session(self, render):
        e = Expanded((CORPUS / "queues_pd.sq").read_text())
        body = [render(s) for s in e.block().body]
        assert body[:4] == [
            "turn;",
            "set prompt = n;",
            "choose i in NP by (work(P[i]));",
            "choose j in ND by (work(D[j]));",
        ]
        assert body[4] == (
            "hold P.reqs[i] (1), P.kv[i] (min(prompt, (P.hit + budget_left(P[i])))) "
            "reserve (prompt) at admission (P.hit = min(cachedin(P.kv[i]), "
            "reusable(prompt, bs))) { set P.c = cached; <Serving> } cache (prompt) "
            "lease P.kv[i] (inf)"
        )
        (prefill,) = [n for n in walk(e.block().body[4]) if isinstance(n, ast.Serving)]
        assert [render(r) for r in prefill.on] == ["P[i]"]
        assert render(prefill.work) == "(prompt - P.c)"
        assert render(prefill.growing) == "P.kv[i]"
        hold = e.block().body[5]
        assert [render(s) for s in hold.body.body[:4]] == [
            "run D.nic.latency[j] (x0);",
            "run P.nic[i], D.nic[j] (prompt);",
            "load D.kv[j] ((prompt - 1));",
            "release P.kv[i];",
        ]
        assert render(hold.pools[0].pool) == "D.kv[j]"

    def test_the_gateway_program(self, render):
        e = Expanded((CORPUS / "queues_gateway.sq").read_text())
        (loop,) = e.block().body
        assert [render(s) for s in loop.body.body[:6]] == [
            "turn;",
            "run gw (0.001);",
            "set prompt = n;",
            "choose j in 2 by (queue(X[j]), holders(X.kv[j]));",
            "hold X.kv[j] (prompt) { run X[j] (((prompt * 0.001) + (j * 0))); "
            "set X.first_token = now; } cache (prompt)",
            "hold X.kv[j] (prompt) reuse (prompt) { run X[j] ((o * 0.01)); "
            "set X.known = (prompt + o); } cache ((prompt + o))",
        ]
        assert [render(s) for s in loop.body.body[6:8]] == [
            "observe ttft = X.first_token;",
            "observe seen = X.known;",
        ]
        observe = loop.body.body[6]
        assert isinstance(observe.value, ast.Name), "a mark is read as the attribute `X.m`"

    def test_the_link_program(self, render):
        e = Expanded((CORPUS / "queues_link.sq").read_text())
        hold = e.block().body[-1]
        branch = hold.body.body[0]
        assert [render(s) for s in branch.then.body] == [
            "run L[j] (prompt);",
            "load D.kv[j] ((prompt - 1));",
            "release P.kv[i];",
        ]
        other = branch.otherwise.body
        assert [render(s) for s in other[:2]] == [
            "run E.latency[i] (0.002);",
            "run I.latency[j] (0.001);",
        ]
        assert isinstance(other[2], ast.Transfer)
        assert [render(r) for r in other[2].on] == ["E[i]", "I[j]"]
        assert render(other[2].source) == "P.kv[i]" and render(other[2].dest) == "D.kv[j]"

    def test_llmd_pull_without_latency_reads_without_a_wait(self, render):
        e = Expanded((CORPUS / "llmd_pd.sq").read_text())
        names = [i.name.name for i in e.items if isinstance(i, ast.Stage)]
        assert "D.nic.latency" not in names
        reads = [render(n) for item in e.items for n in walk(item) if isinstance(n, ast.Run)]
        assert "run P.nic[i], D.nic[j] (prompt);" in reads
        assert not any("latency" in r for r in reads)

    def test_origins_of_queues_pulls_calls_and_requests(self):
        e = Expanded((CORPUS / "queues_pd.sq").read_text())
        kinds = [o.kind for o in e.ctx.origins]
        assert kinds.count("queue") == 3
        assert kinds.count("pull") == 1
        assert kinds.count("entry call") == 2
        assert kinds.count("gateway request") == 1
        (request,) = [o for o in e.ctx.origins if o.kind == "gateway request"]
        assert (request.span.line, request.span.column) == (93, 5)
        assert [type(n).__name__ for n in request.nodes] == [
            "Set",
            "Choose",
            "Choose",
            "Hold",
            "Hold",
        ]


# ==================================================================== rewrites


class TestDeclarations:
    """A queue's members become kernel pools and stages under long names."""

    def test_options_name_the_queues_own(self, render):
        e = Expanded(
            lines(
                "stage pcie[2] : ps(5);",
                "queue Q[2] {",
                "  pool host { cap 100; }",
                "  pool kv { cap 1000; admit via Q; spill host via pcie (size) when (1); }",
                "  serve step { budget 8; cost 1; memory kv; }",
                "}",
            )
        )
        assert e.diagnostics == []
        kv = e.item(ast.Pool, "Q.kv")
        admit = [o for o in kv.options if isinstance(o, ast.Option) and o.key == "admit via"]
        assert admit[0].target.name == "Q"
        (spill,) = [o for o in kv.options if isinstance(o, ast.Spill)]
        assert (spill.pool.name, spill.stage.name) == ("Q.host", "pcie")
        stage = e.item(ast.Stage, "Q")
        memory = [o for o in stage.kind.options if o.key == "memory"]
        assert memory[0].target.name == "Q.kv"
        assert render(stage.size) == "2"

    def test_nic_before_serve_keeps_member_order_and_latency_comes_last(self):
        e = Expanded(
            lines(
                "queue L[2] : link { nic ps(5); serve ps(10) latency 0.1; }",
                "queue M : link { serve ps(10); }",
            )
        )
        assert e.declared(ast.Stage) == [
            ("L.nic", 0),
            ("L.nic", 1),
            ("L", 0),
            ("L", 1),
            ("L.latency", 0),
            ("L.latency", 1),
            ("M", None),
        ]

    def test_a_family_of_one_is_a_family_and_a_let_size_stays_a_name(self, render):
        e = Expanded(
            edit({2: "let ND = 1;"}),
        )
        assert e.diagnostics == []
        assert e.declared(ast.Pool)[-1] == ("D.kv", 0)
        assert render(e.item(ast.Stage, "D").size) == "ND"
        assert render(e.item(ast.Stage, "D.nic.latency").size) == "ND"

    def test_a_pull_gives_the_share_once(self):
        e = Expanded(
            edit(
                {
                    36: lines(
                        "queue Q[2] : decode { pool kv { cap 10; } serve fifo; nic ps(3);",
                        "  decode (p) { hold kv (p) { run (1); } } }",
                        "Q pull P share maxmin;",
                    ).rstrip("\n")
                }
            )
        )
        assert e.diagnostics == []
        assert [i.policy for i in e.items if isinstance(i, ast.Share)] == ["maxmin"]
        stages = [i.name.name for i in e.items if isinstance(i, ast.Stage)]
        assert stages[-3:] == ["D.nic.latency", "Q", "Q.nic"]


class TestEntryCalls:
    """An entry call is the entry's body in place, at the member it names."""

    def test_self_own_names_sets_marks_and_parameters(self, render):
        e = Expanded(
            lines(
                "let bs = 16;",
                "queue X[2] : prefill {",
                "  pool kv { cap 100; }",
                "  serve step { budget 8; cost 1; memory kv; }",
                "  prefill (p) {",
                "    set k = self + p;",
                "    hold kv (p) at admission (hit = min(cachedin(kv), bs)) {",
                "      run (k + hit);",
                "      prefill (p) growing kv;",
                "      mark first;",
                "    } cache (p + used(kv) + budget_left(X));",
                "  }",
                "}",
                "session { set m = 3; X[m - 1].prefill(m * 2); observe t = X.first + X.k; }",
            )
        )
        assert e.diagnostics == []
        body = e.block(ast.Session).body
        assert [render(s) for s in body] == [
            "set m = 3;",
            "set X.k = ((m - 1) + (m * 2));",
            "hold X.kv[(m - 1)] ((m * 2)) at admission (X.hit = min(cachedin(X.kv[(m - 1)]), bs)) "
            "{ run X[(m - 1)] ((X.k + X.hit)); <Serving> set X.first = now; } "
            "cache ((((m * 2) + used(X.kv[(m - 1)])) + budget_left(X[(m - 1)])))",
            "observe t = (X.first + X.k);",
        ]
        (serving,) = [n for n in walk(body[2]) if isinstance(n, ast.Serving)]
        assert [render(r) for r in serving.on] == ["X[(m - 1)]"]
        assert render(serving.growing) == "X.kv[(m - 1)]"

    def test_the_callers_expressions_are_not_the_entrys_names(self, render):
        e = Expanded(
            lines(
                "queue X[2] : prefill {",
                "  serve fifo;",
                "  prefill (p) { set c = p; run (self + p + c); }",
                "}",
                "session { set p = 1; set c = 5; X[p].prefill(c); }",
            )
        )
        assert e.diagnostics == []
        assert [render(s) for s in e.block(ast.Session).body] == [
            "set p = 1;",
            "set c = 5;",
            "set X.c = c;",
            "run X[p] (((p + c) + X.c));",
        ]

    def test_a_single_queue_keeps_names_unindexed(self, render):
        e = Expanded(
            lines(
                "stage tool : delay;",
                "queue S : decode {",
                "  pool kv { cap 100; }",
                "  serve fifo;",
                "  decode (p) { hold kv (p) { run (p); decode on tool (1); tool (2); } }",
                "}",
                "session { S.decode(4); }",
            )
        )
        assert e.diagnostics == []
        (hold,) = e.block(ast.Session).body
        assert render(hold).startswith("hold S.kv (4) { run S (4); <Serving> <Serving> }")
        decode, tool = hold.body.body[1:]
        assert [render(r) for r in decode.on] == ["tool"], "an explicit `on` stays"
        assert tool.on == (), "`tool` is the client's stage, found by the which-stage rule"

    def test_from_names_the_leased_pool_and_the_source_member(self, render):
        e = Expanded(
            edit(
                {
                    29: "      run zz[src] (1); set q = used(src); release src;",
                    35: "",
                }
            )
        )
        hold = e.block().body[-1]
        assert [render(s) for s in hold.body.body[:3]] == [
            "run zz[i] (1);",
            "set D.q = used(P.kv[i]);",
            "release P.kv[i];",
        ]

    def test_a_link_call_is_its_body_then_load_and_release(self, render):
        e = Expanded(
            edit(
                {
                    29: "      L[self].transfer(prompt) from P[src] to kv (prompt - 1);",
                    34: "queue L[ND] : link { serve ps(1000); transfer (n) { run (n * 2); } }",
                    35: "",
                }
            )
        )
        assert e.diagnostics == []
        hold = e.block().body[-1]
        assert [render(s) for s in hold.body.body[:3]] == [
            "run L[j] ((prompt * 2));",
            "load D.kv[j] ((prompt - 1));",
            "release P.kv[i];",
        ]

    def test_a_caller_reads_member_pools_and_stages_by_long_name(self, render):
        e = Expanded(
            edit(
                {
                    9: "    D[j].decode(prompt) from P[i];"
                    " observe u = used(D[j].kv) + work(D[j].nic.latency) + work(P[i].nic);"
                }
            )
        )
        assert e.diagnostics == []
        observe = e.block().body[-1]
        assert render(observe) == (
            "observe u = ((used(D.kv[j]) + work(D.nic.latency[j])) + work(P.nic[i]));"
        )

    def test_an_entry_calls_another(self, render):
        e = Expanded(
            lines(
                "queue A : prefill { serve fifo; prefill (p) { run (p); B.prefill(p + 1); } }",
                "queue B : prefill { serve delay; prefill (q) { run (q * 2); } }",
                "session { A.prefill(3); }",
            )
        )
        assert e.diagnostics == []
        assert [render(s) for s in e.block(ast.Session).body] == [
            "run A (3);",
            "run B (((3 + 1) * 2));",
        ]
        assert [o.kind for o in e.ctx.origins].count("entry call") == 2

    def test_the_route_sets_the_requests_attributes(self, render):
        e = Expanded(
            lines(
                "queue gw : gateway { pool a { cap 3; } serve delay;",
                "  route { run (1); set x = 2; hold a (1) { mark m; } } }",
                "workload { arrive poisson(1); session { turn; request gw; observe t = gw.m + x; } }",
            )
        )
        assert e.diagnostics == []
        assert [render(s) for s in e.block().body] == [
            "turn;",
            "run gw (1);",
            "set x = 2;",
            "hold gw.a (1) { set gw.m = now; }",
            "observe t = (gw.m + x);",
        ]

    def test_transfer_on_a_link_with_latency_waits_first(self, render):
        e = Expanded(
            lines(
                "pool a { cap 10; } pool b { cap 10; }",
                "queue E[2] : link { serve ps(2000) latency 0.002; }",
                "queue I : link { serve ps(2000) latency 0.001; }",
                "session { hold a (1) { hold b (1) { transfer on I, E[1] (5) from a to b (1); } } }",
            )
        )
        assert e.diagnostics == []
        (outer,) = e.block(ast.Session).body
        inner = outer.body.body[0].body.body
        assert [render(s) for s in inner[:2]] == [
            "run I.latency (0.001);",
            "run E.latency[1] (0.002);",
        ]
        assert isinstance(inner[2], ast.Transfer)


# ====================================================================== errors

L17 = "hold kv (prompt) { run (prompt * 0.001); } cache (prompt) lease kv (inf);"

# (case, edits of BASE, [(code, line, column)], whether pyserq 0.1.2 reports the first there)
ERRORS = [
    ("pool after serve", {14: "  serve fifo; pool b { cap 3; }"}, [(QUEUE, 14, 15)], True),
    ("share with a pull", {36: "share maxmin;"}, [(QUEUE, 36, 1)], True),
    (
        "latency on a serve that is not a link's",
        {14: "  serve fifo latency 1;"},
        [(QUEUE, 14, 22)],
        False,
    ),
    ("serve twice", {14: "  serve fifo; serve fifo;"}, [(QUEUE, 14, 15)], True),
    ("nic twice", {15: "  nic ps(100000); nic ps(1);"}, [(QUEUE, 15, 19)], True),
    (
        "duplicate pool",
        {13: "  pool kv { cap 1000; } pool kv { cap 1; }"},
        [(QUEUE, 13, 25)],
        False,
    ),
    ("unknown role", {12: "queue P[NP] : prefil {"}, [(QUEUE, 12, 15)], True),
    ("role twice", {12: "queue P[NP] : prefill, prefill {"}, [(QUEUE, 12, 24)], True),
    (
        "entry of a role not played",
        {24: "  prefill (x) { run (1); } decode (prompt) {"},
        [(QUEUE, 24, 3)],
        True,
    ),
    ("entry of no role", {24: "  foo (x) { run (1); } decode (prompt) {"}, [(QUEUE, 24, 3)], True),
    ("entry twice", {24: "  decode (x) { run (1); } decode (prompt) {"}, [(QUEUE, 24, 27)], False),
    ("entry parameters", {24: "  decode (prompt, x) {"}, [(QUEUE, 24, 3)], True),
    (
        "role without its entry",
        {24: "  decode2 (prompt) {"},
        [(QUEUE, 24, 3), (QUEUE, 20, 7)],
        False,
    ),
    ("from on a prefill entry", {16: "  prefill (prompt) from zz {"}, [(QUEUE, 16, 25)], False),
    (
        "link with an entry and a latency",
        {34: "queue L[2] : link { serve ps(10) latency 0.1; transfer (n) { run (n); } }"},
        [(QUEUE, 34, 42)],
        False,
    ),
    (
        "link latency not constant",
        {34: "queue L[2] : link { serve ps(10) latency n; }"},
        [(QUEUE, 34, 42)],
        True,
    ),
    ("link with nothing", {34: "queue L[2] : link { }"}, [(QUEUE, 34, 7)], False),
    ("gateway family", {3: "queue gw[2] : gateway {"}, [(QUEUE, 3, 10)], False),
    ("gateway without route", {34: "queue g2 : gateway { serve delay; }"}, [(QUEUE, 34, 7)], False),
    ("size not a constant", {12: "queue P[n] : prefill {"}, [(QUEUE, 12, 9)], True),
    ("size zero", {12: "queue P[0] : prefill {"}, [(QUEUE, 12, 9)], True),
    ("a second queue", {34: "queue P { serve fifo; }"}, [(QUEUE, 34, 7)], False),
    ("unknown queue", {9: "    Z[j].decode(prompt) from P[i];"}, [(QUEUE, 9, 5)], True),
    ("unknown verb", {9: "    D[j].foo(prompt) from P[i];"}, [(QUEUE, 9, 10)], False),
    (
        "verb of a role not played",
        {9: "    D[j].prefill(prompt) from P[i];"},
        [(QUEUE, 9, 10)],
        False,
    ),
    ("argument count", {9: "    D[j].decode(prompt, 1) from P[i];"}, [(QUEUE, 9, 5)], True),
    ("family called without index", {9: "    D.decode(prompt) from P[i];"}, [(QUEUE, 9, 5)], True),
    ("one queue called with an index", {8: "    gw[0].route();"}, [(QUEUE, 8, 5)], False),
    ("route called", {8: "    P[i].prefill(prompt); gw.route();"}, [(QUEUE, 8, 27)], False),
    ("from a stage", {9: "    D[j].decode(prompt) from zz;"}, [(QUEUE, 9, 30)], False),
    (
        "from a family without index",
        {9: "    D[j].decode(prompt) from P;"},
        [(QUEUE, 9, 30)],
        False,
    ),
    (
        "from on an entry without from",
        {8: "    P[i].prefill(prompt) from P[i];"},
        [(QUEUE, 8, 10)],
        False,
    ),
    ("argument draws", {9: "    D[j].decode(~exp(1)) from P[i];"}, [(QUEUE, 9, 17)], False),
    ("to on a prefill", {8: "    P[i].prefill(prompt) to D[j].kv (3);"}, [(QUEUE, 8, 26)], False),
    (
        "link call without to",
        {
            29: "      L[self].transfer(prompt) from src;",
            34: "queue L[ND] : link { serve ps(1); transfer (n) { run (n); } }",
        },
        [(QUEUE, 29, 7)],
        False,
    ),
    ("request of no queue", {41: "  session { turn; request gx; }"}, [(QUEUE, 41, 27)], True),
    (
        "request of a queue that is no gateway",
        {41: "  session { turn; request P; }"},
        [(QUEUE, 41, 27)],
        True,
    ),
    (
        "request in a turn block",
        {40: "  turn { set n = 100; set o = 10; } init { request gw; }"},
        [(SIDES, 40, 44)],
        False,
    ),
    (
        "source leases nothing",
        {17: "    hold kv (prompt) { run (prompt * 0.001); } cache (prompt);"},
        [(QUEUE, 9, 30)],
        False,
    ),
    (
        "source leases on one way only",
        {17: "    branch (prompt > 3) { hold kv (prompt) { run (1); } lease kv (inf); }"},
        [(QUEUE, 9, 30)],
        False,
    ),
    ("transfer without on, no pull", {35: ""}, [(QUEUE, 29, 7)], False),
    ("reader with two sources", {36: "D pull P share maxmin;"}, [(QUEUE, 36, 1)], True),
    (
        "reader called from another queue",
        {9: "    D[j].decode(prompt) from D[i];"},
        [(QUEUE, 9, 30)],
        False,
    ),
    ("pull from a queue without nic", {15: ""}, [(QUEUE, 35, 8)], False),
    (
        "pull of an undeclared queue",
        {35: "D pull Z latency 0.5 share maxmin;"},
        [(QUEUE, 35, 8)],
        True,
    ),
    ("pull from itself", {35: "D pull D latency 0.5 share maxmin;"}, [(QUEUE, 35, 8)], True),
    (
        "pull above its queues",
        {35: "", 1: "D pull P share maxmin; let NP = 2;"},
        [(QUEUE, 1, 1), (QUEUE, 1, 8)],
        True,
    ),
    (
        "pull latency not constant",
        {35: "D pull P latency n share maxmin;"},
        [(QUEUE, 35, 18)],
        True,
    ),
    (
        "two policies",
        {
            36: "queue Q : decode { serve fifo; nic ps(1); decode (p) { run (p); } } Q pull P share bottleneck;"
        },
        [(QUEUE, 36, 69)],
        False,
    ),
    (
        "self in one queue",
        {20: "queue D : decode {", 7: "", 9: "    D.decode(prompt + self);"},
        [(QUEUE, 9, 23)],
        False,
    ),
    (
        "self in a session",
        {41: "  session { turn; set k = self; request gw; }"},
        [(QUEUE, 41, 27)],
        False,
    ),
    (
        "a member's attribute",
        {
            9: "    D[j].decode(prompt) from P[i]; observe t = D[j].q;",
            30: "      run (o * 0.01); mark q;",
        },
        [(QUEUE, 9, 48)],
        False,
    ),
    (
        "an attribute no entry sets",
        {9: "    D[j].decode(prompt) from P[i]; observe t = D.zzz;"},
        [(QUEUE, 9, 48)],
        True,
    ),
    ("entry reads a session attribute", {17: "    set c = n; " + L17}, [(QUEUE, 17, 13)], False),
    (
        "entry reads a sibling's attribute",
        {25: "    set y = 1;", 30: "      run (o * 0.01 + y);"},
        [(QUEUE, 30, 23)],
        False,
    ),
    (
        "entry reads another queue's attribute",
        {17: "    set c = D.y; " + L17, 25: "    set y = 1;"},
        [(QUEUE, 17, 13)],
        False,
    ),
    ("own pool with an index", {17: "    set c = used(kv[1]); " + L17}, [(QUEUE, 17, 18)], False),
    ("own stage with an index", {17: "    run P[1] (1); " + L17}, [(QUEUE, 17, 9)], False),
    (
        "another queue's stage read",
        {17: "    set c = work(D[1]); " + L17},
        [(QUEUE, 17, 18)],
        False,
    ),
    (
        "another queue's pool read",
        {17: "    set c = used(D[1].kv); " + L17},
        [(QUEUE, 17, 18)],
        False,
    ),
    (
        "another queue's pool held",
        {17: "    hold D[1].kv (1) { run (1); } lease kv (inf);"},
        [(QUEUE, 17, 10)],
        True,
    ),
    (
        "entry holds a top-level pool",
        {34: "pool g { cap 3; }", 17: "    hold g (1) { run (1); } " + L17},
        [(QUEUE, 17, 10)],
        False,
    ),
    (
        "entry reads a top-level pool",
        {34: "pool g { cap 3; } stage zz : delay;", 17: "    set c = used(g); " + L17},
        [(QUEUE, 17, 18)],
        False,
    ),
    (
        "entry sets its parameter",
        {17: "    set prompt = 1; hold kv (1) { run (1); } lease kv (inf);"},
        [(QUEUE, 17, 9)],
        False,
    ),
    # a mark outside every entry was left in the kernel, and the linker said "a bug in
    # serq's expander"; pyserq 0.1.2 refuses it at the mark
    ("mark in a session", {41: "  session { turn; mark t; request gw; }"}, [(QUEUE, 41, 19)], True),
    ("turn in an entry", {25: "    turn;"}, [(SIDES, 25, 5)], True),
    ("request in an entry", {25: "    request gw;"}, [(SIDES, 25, 5)], True),
    (
        "source pool read as a number",
        {29: "      set q = src; transfer (prompt) from src to kv (prompt - 1);"},
        [(QUEUE, 29, 15)],
        False,
    ),
    (
        "source pool with an index",
        {29: "      set q = used(src[0]); transfer (prompt) from src to kv (1);"},
        [(QUEUE, 29, 20)],
        False,
    ),
    ("run with no stage in a queue without serve", {14: ""}, [(QUEUE, 17, 24)], False),
    (
        "entries call each other",
        {17: "    P[self].prefill(prompt); hold kv (1) { run (1); } lease kv (inf);"},
        [(QUEUE, 17, 5)],
        False,
    ),
    (
        "transfer on a link that has an entry",
        {
            29: "      transfer on L[self] (prompt) from src to kv (1);",
            34: "queue L[ND] : link { serve ps(1); transfer (n) { run (n); } }",
        },
        [(QUEUE, 29, 19)],
        False,
    ),
]


@pytest.mark.parametrize(
    ("changes", "expected"), [(c, e) for _, c, e, _ in ERRORS], ids=[c[0] for c in ERRORS]
)
def test_error(changes, expected):
    assert Expanded(edit(changes)).diagnostics == expected


@pytest.mark.parametrize(
    ("changes", "expected"),
    [(c, e) for _, c, e, agree in ERRORS if agree],
    ids=[c[0] for c in ERRORS if c[3]],
)
def test_error_where_the_reference_reports_it(changes, expected, tmp_path, reference_error):
    path = tmp_path / "main.sq"
    path.write_text(edit(changes))
    assert reference_error(path) == expected[0][1:]


def test_the_base_program_is_clean_for_both(tmp_path, reference_error):
    path = tmp_path / "main.sq"
    path.write_text(BASE)
    assert reference_error(path) is None
    e = Expanded(BASE)
    assert e.diagnostics == [] and sugar_left(e.items) == []
