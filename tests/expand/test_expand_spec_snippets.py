"""The spec's own snippets as complete programs (tests/expand/programs/), and the kernel oracle.

Snippets (serq-language.txt §2): vLLM's request with `at admission` (the serving
vocabulary), the two sides, `queue P[NP] : prefill` (Queues) and the NIXL transfer with
`lease` (A KV transfer). Each expands with no diagnostic and no sugar left, into the
kernel the spec says it stands for; two of them are checked against the same program
written out by hand (`*_by_hand.sq`, `vllm_one_sided.sq`).

The oracle: for every program without a queue, the printed kernel compiles with pyserq
0.1.2 to the IR of the original, field for field (the sugar is the parser's: "the AST,
the IR ... know nothing of them"). The queue programs are left out because their kernel
names (`P.kv`) are not names the reference reads.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from serq.expand import expand
from serq.syntax import ast, parse

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
CORPUS = HERE.parent / "corpus"


def expand_file(path: Path):
    parsed = parse(path.read_text(), str(path))
    assert [d.message for d in parsed.diagnostics] == [], f"{path.name} must parse"
    return expand(parsed.module)


def has_queue(path: Path) -> bool:
    module = parse(path.read_text(), str(path)).module
    return any(isinstance(i, (ast.Queue, ast.Pull)) for i in module.all_items())


def session_statements(expansion, render) -> list[str]:
    (session,) = [i for i in expansion.kernel.items if isinstance(i, ast.Session)]
    return [render(s) for s in session.body.body]


SNIPPETS = sorted(PROGRAMS.glob("*.sq"))


@pytest.mark.parametrize("path", SNIPPETS, ids=lambda p: p.name)
def test_snippet_expands_with_no_diagnostic_and_no_sugar(path, sugar_left):
    expansion = expand_file(path)
    assert [(d.code, d.span.line, d.span.column, d.message) for d in expansion.diagnostics] == []
    assert sugar_left(expansion.kernel) == []


# ------------------------------------------------- vLLM's request, at admission


class TestVllmAdmission:
    """§2: hold reqs (1), kv (min(prompt, hit + budget_left(engine)))
    at admission (hit = min(cachedin(kv), hitmax)) { prefill …; decode …; } cache (prompt + o);"""

    def test_the_binding_is_in_the_units_and_the_forms_run_on_the_engine(self, render):
        expansion = expand_file(PROGRAMS / "vllm_admission.sq")
        (session,) = [i for i in expansion.kernel.items if isinstance(i, ast.Session)]
        (loop,) = session.body.body
        hold = next(s for s in loop.body.body if isinstance(s, ast.Hold))
        assert [render(p.pool) for p in hold.pools] == ["reqs", "kv"]
        assert render(hold.pools[1].units) == (
            "min(prompt, (min(cachedin(kv), hitmax) + budget_left(engine)))"
        )
        assert hold.bindings == () and hold.at_admission is None
        # The body does not read `hit`, so nothing is set for it (it reads `cached`).
        assert [render(s) for s in hold.body.body] == [
            "set c = cached;",
            "run engine prefill ((prompt - c)) growing kv;",
            "run engine decode ((o - 1)) growing kv;",
        ]
        assert render(hold.cache) == "(prompt + o)"

    def test_the_kernel_is_the_program_inlined_by_hand(self, render):
        sugared = expand_file(PROGRAMS / "vllm_admission.sq")
        by_hand = expand_file(PROGRAMS / "vllm_admission_by_hand.sq")
        assert session_statements(sugared, render) == session_statements(by_hand, render)

    def test_the_at_admission_form_records_its_origin(self):
        expansion = expand_file(PROGRAMS / "vllm_admission.sq")
        kinds = sorted(o.kind for o in expansion.origins)
        assert kinds.count("at admission") == 1
        assert {"prefill", "decode", "tool"} <= set(kinds)


# ------------------------------------------------------------------ two sides


class TestTwoSides:
    """§2 The two sides: `request;` runs the server once; the parser splices its statements."""

    def test_the_server_is_spliced_into_the_workload_s_session(self, render):
        expansion = expand_file(PROGRAMS / "vllm_two_sided.sq")
        kinds = [type(i).__name__ for i in expansion.kernel.items]
        assert kinds.count("Session") == 1 and "Server" not in kinds
        (workload,) = [i for i in expansion.kernel.items if isinstance(i, ast.Workload)]
        assert not any(isinstance(c, ast.WorkloadSession) for c in workload.clauses)
        statements = session_statements(expansion, render)
        assert statements[0] == "turn;"
        assert statements[1].startswith(
            "loop { set prompt = (K + n); set hitmax = (floor(((prompt - 1) / bs)) * bs);"
            " hold reqs (1), kv (min(prompt, (min(cachedin(kv), hitmax) + budget_left(engine))))"
        )
        assert statements[1].endswith(
            "set K = (prompt + o); branch (more) { run tool (~exp(Z)); turn; } else { end; } }"
        )

    def test_the_kernel_is_the_one_sided_program(self, render):
        two = expand_file(PROGRAMS / "vllm_two_sided.sq")
        one = expand_file(PROGRAMS / "vllm_one_sided.sq")
        assert session_statements(two, render) == session_statements(one, render)

    def test_the_request_records_the_server_statements_as_its_origin(self):
        expansion = expand_file(PROGRAMS / "vllm_two_sided.sq")
        (request,) = [o for o in expansion.origins if o.kind == "request"]
        assert (request.span.line, request.span.column) == (20, 7)
        assert [type(n).__name__ for n in request.nodes] == ["Set", "Set", "Hold"]


# ------------------------------------------------------------ the NIXL transfer


class TestNixlTransfer:
    """§2 A KV transfer: `lease kvP (inf)` on the prefiller's hold, then
    `transfer on egress, ingress (X) from kvP to kvD (n)` inside the decoder's."""

    def test_the_transfer_is_a_run_over_both_nics_a_load_and_a_release(self, render):
        expansion = expand_file(PROGRAMS / "nixl_transfer.sq")
        statements = session_statements(expansion, render)
        hit = "min(cachedin(kvP), (floor(((prompt - 1) / bs)) * bs))"
        assert statements == [
            "turn;",
            f"hold reqsP (1), kvP (min(prompt, ({hit} + budget_left(P)))) reserve (prompt) {{"
            " set c = cached; run P prefill ((prompt - c)) growing kvP; }"
            " cache (prompt) lease kvP (inf)",
            "hold kvD (prompt) reserve (prompt), reqsD (0) reserve (1) reuse (0) {"
            " run setup (x0);"
            " run egress, ingress ((prompt - c));"
            " load kvD (((prompt - 1) - c));"
            " release kvP;"
            " hold reqsD (1) {"
            " run D prefill (1) growing kvD;"
            " run D decode ((o - 1)) growing kvD; } }"
            " cache ((prompt + o))",
            "end;",
        ]

    def test_the_transfer_s_statements_carry_the_form_s_span(self):
        expansion = expand_file(PROGRAMS / "nixl_transfer.sq")
        (origin,) = [o for o in expansion.origins if o.kind == "transfer"]
        assert (origin.span.line, origin.span.column) == (32, 5)
        assert [type(n).__name__ for n in origin.nodes] == ["Run", "Load", "Release"]
        assert all(n.span == origin.span for n in origin.nodes)


# --------------------------------------------------------------- queue P[NP]


class TestQueuePrefill:
    """§2 Queues: the pools are the queue's (`P.kv`), the stage is named after the queue,
    an entry call is its body in place, and what the body sets is the queue's (`P.c`)."""

    def test_the_queue_s_pools_and_stage_are_the_program_s_under_long_names(self, render):
        expansion = expand_file(PROGRAMS / "queue_prefill.sq")
        items = expansion.kernel.items
        pools = [(i.name.name, render(i.size)) for i in items if isinstance(i, ast.Pool)]
        assert pools == [("P.reqs", "NP"), ("P.kv", "NP")]
        stages = {i.name.name: i for i in items if isinstance(i, ast.Stage)}
        assert set(stages) == {"P", "decode"}
        assert isinstance(stages["P"].kind, ast.Step) and render(stages["P"].size) == "NP"
        (reqs,) = [i for i in items if isinstance(i, ast.Pool) and i.name.name == "P.reqs"]
        (admit,) = [o for o in reqs.options if isinstance(o, ast.Option) and o.key == "admit via"]
        assert admit.target.name == "P"

    def test_the_entry_call_is_the_entry_s_body_for_the_chosen_member(self, render):
        expansion = expand_file(PROGRAMS / "queue_prefill.sq")
        statements = session_statements(expansion, render)
        assert statements[:3] == [
            "turn;",
            "set prompt = n;",
            "choose i in NP by (queued(P.reqs[i]));",
        ]
        assert statements[4:] == ["run decode ((o * 0.01));", "end;"]
        hold = statements[3]
        hit = "min(cachedin(P.kv[i]), (floor(((prompt - 1) / bs)) * bs))"
        assert hold.startswith(
            f"hold P.reqs[i] (1), P.kv[i] (min(prompt, ({hit} + budget_left(P[i]))))"
            " reserve (prompt) {"
        )
        assert "run P[i] prefill ((prompt - P.c)) growing P.kv[i];" in hold
        assert "set P.c = cached;" in hold
        assert hold.endswith("} cache (prompt) lease P.kv[i] (inf)")


# ------------------------------------------------- the oracle: kernel == original


ORACLE = [p for p in sorted((CORPUS / "valid").glob("*.sq")) if not has_queue(p)] + [
    p for p in SNIPPETS if not has_queue(p)
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A copy of the corpus (libraries and traces included) and of the snippet programs."""
    root = tmp_path_factory.mktemp("oracle")
    shutil.copytree(CORPUS / "valid", root / "valid")
    shutil.copytree(PROGRAMS, root / "programs")
    return root


def test_the_oracle_covers_the_corpus():
    names = {p.name for p in ORACLE}
    assert len(names) >= 30
    assert {"vllm_engine.sq", "vllm_two_sided.sq", "use_library.sq", "serving_forms.sq"} <= names


@pytest.mark.parametrize("path", ORACLE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_printed_kernel_compiles_to_the_ir_of_the_original(
    path, reference_ir, workdir, sugar_left
):
    printer = pytest.importorskip("serq.expand.printer")
    expansion = expand_file(path)
    assert [d.message for d in expansion.diagnostics] == []
    assert sugar_left(expansion.kernel) == []
    # Next to the copy of the original, so that traces resolve as they do for it.
    kernel = workdir / path.parent.name / f"_kernel_{path.name}"
    kernel.write_text(printer.print_module(expansion.kernel))
    original = reference_ir(workdir / path.parent.name / path.name)
    try:
        printed = reference_ir(kernel)
    except ValueError as e:
        pytest.fail(f"the printed kernel does not compile: {e}\n{kernel.read_text()}")
    assert printed == original


@pytest.mark.parametrize(
    "sugared, by_hand",
    [
        ("vllm_admission.sq", "vllm_admission_by_hand.sq"),
        ("vllm_two_sided.sq", "vllm_one_sided.sq"),
    ],
)
def test_the_reference_agrees_with_the_programs_written_by_hand(sugared, by_hand, reference_ir):
    assert reference_ir(PROGRAMS / sugared) == reference_ir(PROGRAMS / by_hand)


VALID_MAIN = [p for p in sorted((CORPUS / "valid_main").glob("*.sq")) if not has_queue(p)]


@pytest.mark.parametrize("path", VALID_MAIN, ids=lambda p: p.name)
def test_fn_main_programs_expand_to_a_kernel_with_no_sugar(path, sugar_left):
    # No oracle here: pyserq 0.1.4 reads only `fn main` with a workload and a server, and
    # the kernel is a top-level session.
    expansion = expand_file(path)
    assert [d.message for d in expansion.diagnostics] == []
    assert sugar_left(expansion.kernel) == []
